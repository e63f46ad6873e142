import { getEventListeners, setMaxListeners } from 'node:events';
import type { ResolvedRetention, ResolvedWorkerOptions } from '../config/options.js';
import { RetentionSweeper } from './retention.js';
import { WorkerRegistration } from '../registry/worker-registry.js';
import type { Claim } from '../store/task-store.js';
import { runWorkerLoop, type WorkerLoopRuntime } from './worker-loop.js';
import { sleepUnless } from '../util/abort-signals.js';
import { DEFAULTS } from '../config/defaults.js';
import { DrainTimeoutError } from '../errors/task-errors.js';

/**
 * A pool's lifecycle: `running` until `stop()`, `stopping` while running tasks drain, then `stopped`.
 *
 * @category Workers
 */
export type WorkerPoolState = 'running' | 'stopping' | 'stopped';

/** After the drain timeout aborts tasks, how long their functions get to notice before their claims are released anyway. */
const ABORT_GRACE_MS = 1_000;

/**
 * `count` worker loops sharing one ZooKeeper session. `stop()` stops taking tasks, lets running
 * ones finish for up to `drainTimeoutMs`, then aborts their signals and releases their tasks
 * (their late writes are refused) so other workers take them at once.
 *
 * @category Workers
 */
export class WorkerPool {
  private currentState: WorkerPoolState = 'running';
  private readonly stopController = new AbortController();
  private readonly abortTasksController = new AbortController();
  private readonly running = new Map<number, Claim>();
  private readonly loops: Promise<void>[];
  private stopping: Promise<void> | undefined;
  /** Deletes finished plans under `parent` past their retention (one process of the cluster at a time). */
  private readonly sweeper: RetentionSweeper | undefined;
  /** The pool's node in the live worker registry. */
  private readonly registration: WorkerRegistration;
  /** Stops removing the log sink's files of deleted plans. */
  private readonly stopPruningLogs: () => void;

  /**
   * Made by `zkPlan.startWorkers(parent, options)`, which resolves the options and shares the
   * ZkPlan's runtime; neither is public API.
   *
   * @internal
   */
  constructor(
    /** The parent whose plans the pool's loops take tasks from. */
    readonly parent: string,
    /** The pool's worker id (its loops are `<poolId>/1`, …), and its name in the worker registry. */
    readonly poolId: string,
    loopOptions: readonly ResolvedWorkerOptions[],
    private readonly drainTimeoutMs: number,
    private readonly runtime: WorkerLoopRuntime,
    retention?: ResolvedRetention,
  ) {
    this.sweeper =
      retention &&
      new RetentionSweeper(runtime.zk, runtime.store, parent, retention, (error) =>
        runtime.events.emit('worker:error', {
          workerId: loopOptions[0]?.workerId ?? 'retention',
          error: error instanceof Error ? error : new Error(String(error)),
        }),
      );
    this.sweeper?.start();
    this.stopPruningLogs = runtime.taskLogs.startPruning(
      retention?.sweepIntervalMs ?? DEFAULTS.retention.sweepIntervalMs,
    );
    const first = loopOptions[0];
    this.registration = new WorkerRegistration(
      runtime.zk,
      parent,
      {
        id: poolId,
        functions: runtime.execution.functions.names(),
        loops: loopOptions.length,
        allowInline: first?.allowInline ?? false,
        allowShell: first?.allowShell ?? false,
      },
      (error) =>
        runtime.events.emit('worker:error', {
          workerId: poolId,
          error: error instanceof Error ? error : new Error(String(error)),
        }),
    );
    this.registration.start();
    setMaxListeners(0, this.abortTasksController.signal, this.stopController.signal); // a listener per loop or running task
    this.loops = loopOptions.map((options, index) =>
      runWorkerLoop(parent, options, this.stopController.signal, runtime, {
        abortTasks: this.abortTasksController.signal,
        onClaim: (claim) => {
          if (claim) this.running.set(index, claim);
          else this.running.delete(index);
          this.registration.runningChanged(this.runningTasks);
        },
      }).catch((error: unknown) => {
        runtime.events.emit('worker:error', {
          workerId: options.workerId,
          error: error instanceof Error ? error : new Error(String(error)),
        });
      }),
    );
  }

  /** Where the pool is in its lifecycle (see WorkerPoolState). */
  get state(): WorkerPoolState {
    return this.currentState;
  }

  /** Number of worker loops. */
  get size(): number {
    return this.loops.length;
  }

  /** Tasks being run right now. */
  get runningTasks(): string[] {
    return [...this.running.values()].map((claim) => claim.task);
  }

  /** Listeners attached to the pool's stop and abort signals (one per loop, plus one per loop sleeping or running a task). */
  signalListenerCount(): number {
    return (
      getEventListeners(this.stopController.signal, 'abort').length +
      getEventListeners(this.abortTasksController.signal, 'abort').length
    );
  }

  /** Stops the loops; idempotent. Resolves when every loop has ended or its task was released. */
  stop(options: { drainTimeoutMs?: number } = {}): Promise<void> {
    this.stopping ??= this.drainAndStop(options.drainTimeoutMs ?? this.drainTimeoutMs);
    return this.stopping;
  }

  private async drainAndStop(drainTimeoutMs: number): Promise<void> {
    this.currentState = 'stopping';
    this.stopController.abort();
    const sweeperStopped = this.sweeper?.stop();
    this.stopPruningLogs();
    const allEnded = Promise.all(this.loops).then(() => true);
    if (!(await endsWithin(allEnded, drainTimeoutMs))) {
      this.abortTasksController.abort(new DrainTimeoutError(drainTimeoutMs));
      if (!(await endsWithin(allEnded, ABORT_GRACE_MS))) {
        // Functions that ignore their signal: give their tasks back; a claim given back writes nothing more.
        // One already storing and handing on its result is left to complete: giving it back could let
        // another worker claim the task while this one still deletes its nodes.
        const stillRunning = [...this.running.values()].filter(
          (claim) => claim.progress.phase === 'running',
        );
        await Promise.all(
          stillRunning.map((claim) => this.runtime.store.release(claim).catch(() => undefined)),
        );
      }
    }
    await Promise.all([sweeperStopped, this.registration.stop()]);
    this.currentState = 'stopped';
  }
}

/** True when `ended` resolves within `ms`; the timer is cleared either way, so it never holds the process open. */
async function endsWithin(ended: Promise<boolean>, ms: number): Promise<boolean> {
  const timer = new AbortController();
  try {
    return await Promise.race([ended, sleepUnless(ms, timer.signal).then(() => false)]);
  } finally {
    timer.abort();
  }
}
