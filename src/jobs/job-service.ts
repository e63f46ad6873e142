/**
 * A running job worker (`startJobWorker`): the worker's loop and, unless told otherwise, the
 * manager's, each a pass at a time, woken by their watches and timers. A session that expires
 * drops every item at once (job-worker.ts); both loops then start over on the new session.
 */
import type { EventEmitter } from 'node:events';
import type { FunctionRegistry } from '../exec/function-registry.js';
import { sleepUnless } from '../util/abort-signals.js';
import type { ZkPlanEvents } from '../worker/worker-events.js';
import type { Zk } from '../zk/zk.js';
import { GONE_WORKER_FLAG_GRACE_MS, JobManager } from './job-manager.js';
import { JobStore } from './job-store.js';
import { TaskLogs } from '../logs/task-logs.js';
import { resolveTaskLogOptions } from '../config/task-log-options.js';
import { JobWorker, SYSTEM_CLOCK, newJobWorkerId, type JobClock } from './job-worker.js';
import { resolveJobWorkerOptions, type JobWorkerOptions } from '../config/job-worker-options.js';
import { StrategyRegistry } from './strategies.js';
import type { JobRunRecord } from './job-run-record.js';

/**
 * A running job worker.
 *
 * @category Jobs
 */
export interface JobWorkerHandle {
  readonly id: string;
  /** True while this worker is the manager. */
  isManager(): boolean;
  /** The items it holds now, by job. */
  held(): Record<string, string[]>;
  /** Stops every run, gives its leases back (the items move at once) and leaves the cluster. */
  stop(): Promise<void>;
}

export interface JobServiceParts {
  readonly zk: Zk;
  readonly functions: FunctionRegistry;
  readonly events: EventEmitter<ZkPlanEvents>;
  /** Injectable for tests and the simulation. @defaultValue the system clocks */
  readonly clock?: JobClock;
}

/** A loop that runs `pass` now, then again after what it resolves (or `pollMs`), or at once when woken. */
class PassLoop {
  private wakeUp = new AbortController();
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(
    pass: () => Promise<number | undefined>,
    onError: (error: unknown) => void,
    pollMs: number,
  ) {
    this.done = (async () => {
      while (!this.stopped) {
        if (this.wakeUp.signal.aborted) this.wakeUp = new AbortController();
        let next: number | undefined;
        try {
          next = await pass();
        } catch (error) {
          onError(error);
          next = Math.min(pollMs, 1_000); // ZooKeeper unreachable, a session being replaced: look again soon
        }
        if (!this.stopped) await sleepUnless(Math.min(next ?? pollMs, pollMs), this.wakeUp.signal);
      }
    })();
  }

  wake(): void {
    this.wakeUp.abort();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.done;
  }
}

export function startJobWorker(
  parts: JobServiceParts,
  parent: string,
  options: JobWorkerOptions,
): JobWorkerHandle {
  const resolved = resolveJobWorkerOptions(options);
  const { zk, functions, events } = parts;
  const clock = parts.clock ?? SYSTEM_CLOCK;
  const id = newJobWorkerId(resolved.name);
  const store = new JobStore(zk, parent);
  const asError = (error: unknown): Error =>
    error instanceof Error ? error : new Error(String(error));
  // A listener that throws must not reach a job's runner or the worker's pass (it would end the
  // runner's loop): its error is reported as job:error, and one from a job:error listener dropped.
  const tell = <K extends keyof ZkPlanEvents>(name: K, ...payload: ZkPlanEvents[K]): void => {
    try {
      (events.emit as (event: K, ...args: ZkPlanEvents[K]) => boolean)(name, ...payload);
    } catch (error) {
      if (name === 'job:error') return;
      try {
        events.emit('job:error', { jobs: parent, workerId: id, error: asError(error) });
      } catch {
        // a job:error listener that throws too: nothing more to tell
      }
    }
  };
  /** What both `job:run` events say of a run. */
  const runEvent = (job: string, run: string, record: JobRunRecord) => ({
    jobs: parent,
    job,
    workerId: id,
    run,
    cause: record.cause,
    attempt: record.attempt,
    items: record.items,
  });
  const report = (error: unknown, job?: string): void => {
    tell('job:error', {
      jobs: parent,
      workerId: id,
      error: asError(error),
      ...(job === undefined ? {} : { job }),
    });
  };
  const strategies = new StrategyRegistry();
  for (const [name, strategy] of Object.entries(resolved.strategies))
    strategies.register(name, strategy);
  let loops: { worker: PassLoop; manager: PassLoop | undefined } | undefined;
  const worker = new JobWorker({
    zk,
    store,
    functions,
    id,
    timing: resolved.timing,
    clock,
    restartDelayMs: resolved.restartDelayMs,
    maxRestartDelayMs: resolved.maxRestartDelayMs,
    // Runs' logs in ZooKeeper only (no file sink: nothing would prune it), never echoed (job:log is).
    taskLogs: new TaskLogs(
      zk,
      resolveTaskLogOptions({ sink: false, echo: false, captureConsole: false }),
      report,
    ),
    changed: () => loops?.worker.wake(),
    events: {
      itemStarted: (job, item, token, failover) =>
        tell('job:item', {
          jobs: parent,
          job,
          item,
          workerId: id,
          state: 'started',
          token,
          failover,
        }),
      itemStopped: (job, item, reason) =>
        tell('job:item', {
          jobs: parent,
          job,
          item,
          workerId: id,
          state: 'stopped',
          reason,
        }),
      leaseRenewed: (latencyMs) =>
        tell('job:lease-renewed', { jobs: parent, workerId: id, latencyMs }),
      misfire: (job, tick, handling) =>
        tell('job:misfire', { jobs: parent, job, workerId: id, tick, handling }),
      runStarted: (job, run, record) =>
        tell('job:run', { ...runEvent(job, run, record), state: 'started' }),
      runEnded: (job, run, record, durationMs, error, final) =>
        tell('job:run', {
          ...runEvent(job, run, record),
          state: 'ended',
          ...(record.outcome === undefined ? {} : { outcome: record.outcome }),
          durationMs,
          ...(record.outcome === 'failed' ? { error: asError(error), final } : {}),
        }),
      log: (job, run, items, level, msg, fields) =>
        tell('job:log', {
          jobs: parent,
          job,
          workerId: id,
          run,
          items,
          level,
          msg,
          ...(fields === undefined ? {} : { fields }),
        }),
      error: report,
    },
  });
  const manager = resolved.manager
    ? new JobManager({
        zk,
        store,
        strategies,
        id,
        timing: resolved.timing,
        goneWorkerFlagGraceMs: GONE_WORKER_FLAG_GRACE_MS,
        now: () => clock.wall(),
        changed: () => loops?.manager?.wake(),
        onRebalance: (epoch, moved) => tell('job:rebalance', { jobs: parent, epoch, moved }),
        onError: report,
      })
    : undefined;
  const onExpired = (): void => {
    worker.sessionExpired();
    loops?.worker.wake();
    loops?.manager?.wake();
  };
  zk.on('session:expired', onExpired);
  loops = {
    worker: new PassLoop(() => worker.pass(), report, resolved.pollMs),
    manager:
      manager === undefined
        ? undefined
        : new PassLoop(async () => (await manager.pass(), undefined), report, resolved.pollMs),
  };
  let stopping: Promise<void> | undefined;
  return {
    id,
    isManager: () => manager?.isLeader === true,
    held: () => worker.heldItems(),
    stop: () =>
      (stopping ??= (async () => {
        const running = loops;
        await running?.manager?.stop();
        await running?.worker.stop();
        await worker.stop();
        await manager?.leave().catch(() => undefined);
        zk.off('session:expired', onExpired);
      })()),
  };
}
