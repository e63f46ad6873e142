/** A job worker and its manager on one client, as the job simulations run them (nothing reported, nothing woken). */
import type { FunctionRegistry } from '../../../src/exec/function-registry.js';
import type { JobContext } from '../../../src/jobs/job-context.js';
import { JobManager } from '../../../src/jobs/job-manager.js';
import { JobStore } from '../../../src/jobs/job-store.js';
import { JobWorker, type JobClock, type JobWorkerEvents } from '../../../src/jobs/job-worker.js';
import type { LeaseTiming } from '../../../src/jobs/lease.js';
import { StrategyRegistry } from '../../../src/jobs/strategies.js';
import type { MemoryZkClient } from '../../../src/testing/index.js';

/**
 * How long a simulated manager keeps the flag of a disabled worker that has no live node: shorter
 * than a long detach, so that the simulations see flags of gone workers deleted, and the flag of a
 * worker detached that long deleted under it (the worker is then assigned items again).
 */
const FLAG_GRACE_MS = 2_000;

const QUIET: JobWorkerEvents = {
  itemStarted: () => undefined,
  itemStopped: () => undefined,
  leaseRenewed: () => undefined,
  error: () => undefined,
};

export interface JobParticipants {
  readonly worker: JobWorker;
  readonly manager: JobManager;
}

/** What both job simulations keep of one simulated process; `State` is the states that simulation puts it in. */
export interface SimulatedJobProcess<State extends string> extends JobParticipants {
  readonly name: string;
  readonly zk: MemoryZkClient;
  /** Its wall clock's offset from simulated time (kept within ±driftMs / 2, the assumption). */
  skew: number;
  state: State;
  /** The step of the simulation it is in the middle of, if any. */
  busy: Promise<unknown> | undefined;
  /** The runs of its job function now, by item. */
  readonly active: Map<string, JobContext>;
}

/** The worker drops its items when its session expires, as the job service wires it. */
export function jobParticipants(
  zk: MemoryZkClient,
  options: {
    readonly jobs: string;
    readonly id: string;
    readonly functions: FunctionRegistry;
    readonly timing: LeaseTiming;
    readonly clock: JobClock;
    readonly restartDelayMs: number;
    readonly events?: Partial<JobWorkerEvents>;
  },
): JobParticipants {
  const { jobs, id, functions, timing, clock, restartDelayMs } = options;
  const store = new JobStore(zk, jobs);
  const worker = new JobWorker({
    zk,
    store,
    functions,
    id,
    timing,
    clock,
    restartDelayMs,
    events: { ...QUIET, ...options.events },
    changed: () => undefined,
  });
  const manager = new JobManager({
    zk,
    store,
    strategies: new StrategyRegistry(),
    id,
    timing,
    goneWorkerFlagGraceMs: FLAG_GRACE_MS,
    now: clock.wall,
    changed: () => undefined,
    onRebalance: () => undefined,
    onError: () => undefined,
  });
  zk.on('session:expired', () => worker.sessionExpired());
  return { worker, manager };
}

/**
 * The items more than one live process works on now (a run neither aborted nor past its lease),
 * each with who works on it and with which token: what both job simulations check after every step.
 */
export function itemsWorkedByTwo(
  processes: readonly SimulatedJobProcess<string>[],
): { readonly item: string; readonly by: string[] }[] {
  // Who works on what first, and words only for an item with more than one worker: this runs after every step.
  const workers = new Map<
    string,
    { readonly proc: SimulatedJobProcess<string>; readonly ctx: JobContext }[]
  >();
  for (const proc of processes) {
    if (proc.state === 'dead') continue;
    for (const [item, ctx] of proc.active) {
      if (ctx.signal.aborted || !ctx.holding()) continue;
      const working = workers.get(item);
      if (working === undefined) workers.set(item, [{ proc, ctx }]);
      else working.push({ proc, ctx });
    }
  }
  return [...workers]
    .filter(([, working]) => working.length > 1)
    .map(([item, working]) => ({
      item,
      by: working.map(
        ({ proc, ctx }) =>
          `${proc.name} (token ${ctx.items.find((entry) => entry.id === item)?.token})`,
      ),
    }));
}

/** Stops a process as its service does on a clean shutdown (worker first, then its manager), after the step it is in. */
export function stopCleanly(proc: SimulatedJobProcess<string>): void {
  proc.state = 'stopping';
  proc.busy = (async () => {
    await proc.busy;
    await proc.worker.stop();
    await proc.manager.leave();
    proc.state = 'dead';
    proc.zk.close();
  })().catch(() => (proc.state = 'dead'));
}
