/** Job workers and managers driven pass by pass over the in-memory ZooKeeper, with injected clocks (tests of the job protocol). */
import { FunctionRegistry } from '../../../src/exec/function-registry.js';
import type { JobContext, JobFunction } from '../../../src/jobs/job-context.js';
import { JobManager } from '../../../src/jobs/job-manager.js';
import { JobStore } from '../../../src/jobs/job-store.js';
import { JobWorker } from '../../../src/jobs/job-worker.js';
import { Jobs } from '../../../src/jobs/jobs.js';
import { StrategyRegistry, type AssignmentStrategy } from '../../../src/jobs/strategies.js';
import {
  MemoryZooKeeper,
  type ManualScheduler,
  type MemoryZkClient,
} from '../../../src/testing/index.js';

export const JOBS = '/jobs';
export const TIMING = { leaseMs: 1_000, marginMs: 200, driftMs: 100 };
export const T0 = Date.UTC(2026, 10, 25, 3, 0, 0);
/** How long a manager keeps the flag of a disabled worker that has no live node (GONE_WORKER_FLAG_GRACE_MS, shortened). */
export const FLAG_GRACE_MS = 5_000;

const realSetImmediate = globalThis.setImmediate;
export const flush = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => realSetImmediate(resolve));
};
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

export interface Proc {
  readonly name: string;
  readonly zk: MemoryZkClient;
  readonly worker: JobWorker;
  readonly manager: JobManager;
  readonly store: JobStore;
  readonly errors: unknown[];
  readonly events: string[];
  /** Offsets of this process's clocks from the shared simulated time. */
  skew: number;
  monoSkew: number;
}

export class World {
  readonly server: MemoryZooKeeper;
  now = T0;
  mono = 0;
  readonly admin: MemoryZkClient;
  readonly jobs: Jobs;
  constructor(server = new MemoryZooKeeper()) {
    this.server = server;
    this.admin = server.connect({ name: 'admin' });
    this.jobs = new Jobs(new JobStore(this.admin, JOBS), () => this.now);
  }
  advance(ms: number): void {
    this.now += ms;
    this.mono += ms;
  }
  spawn(
    name: string,
    fns: Record<string, JobFunction>,
    options: {
      strategies?: Record<string, AssignmentStrategy>;
      restartDelayMs?: number;
      timing?: typeof TIMING;
    } = {},
  ): Proc {
    const zk = this.server.connect({ name, sessionTimeoutMs: 2_000 });
    const functions = new FunctionRegistry();
    for (const [fnName, fn] of Object.entries(fns)) functions.registerJob(fnName, fn);
    const store = new JobStore(zk, JOBS);
    const errors: unknown[] = [];
    const events: string[] = [];
    const proc = { name, zk, store, errors, events, skew: 0, monoSkew: 0 } as unknown as Proc;
    const clock = { wall: () => this.now + proc.skew, mono: () => this.mono + proc.monoSkew };
    const strategies = new StrategyRegistry();
    for (const [n, s] of Object.entries(options.strategies ?? {})) strategies.register(n, s);
    const timing = options.timing ?? TIMING;
    Object.assign(proc, {
      worker: new JobWorker({
        zk,
        store,
        functions,
        id: name,
        timing,
        clock,
        restartDelayMs: options.restartDelayMs ?? 0,
        events: {
          itemStarted: (job, item, token) => events.push(`started ${job}/${item} token ${token}`),
          itemStopped: (job, item, reason) => events.push(`stopped ${job}/${item} ${reason}`),
          leaseRenewed: () => undefined,
          error: (error) => errors.push(error),
        },
        changed: () => undefined,
      }),
      manager: new JobManager({
        zk,
        store,
        strategies,
        id: name,
        timing,
        goneWorkerFlagGraceMs: FLAG_GRACE_MS,
        now: clock.wall,
        changed: () => undefined,
        onRebalance: () => undefined,
        onError: (error) => errors.push(error),
      }),
    });
    zk.on('session:expired', () => proc.worker.sessionExpired());
    return proc;
  }
}

/** A job function that records which items it works on, until aborted. */
export function holder(log: {
  active: Map<string, JobContext[]>;
  runs: JobContext[];
}): JobFunction {
  return async (ctx: JobContext) => {
    log.runs.push(ctx);
    for (const item of ctx.items)
      log.active.set(item.id, [...(log.active.get(item.id) ?? []), ctx]);
    await new Promise<void>((resolve) =>
      ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    for (const item of ctx.items)
      log.active.set(
        item.id,
        (log.active.get(item.id) ?? []).filter((c) => c !== ctx),
      );
  };
}

/** Steps every client's operations (head of pending() first) until `p` settles, or until `stopWhen` says so (checked before each step). */
export async function run(
  manual: ManualScheduler,
  p: Promise<unknown>,
  stopWhen?: () => boolean,
): Promise<void> {
  let settled = false;
  let failure: unknown;
  let failed = false;
  p.then(
    () => (settled = true),
    (error: unknown) => {
      settled = true;
      failed = true;
      failure = error;
    },
  );
  for (let i = 0; i < 20_000; i++) {
    await flush(2);
    if (stopWhen?.()) return;
    if (settled) {
      if (failed) throw failure;
      return;
    }
    const [next] = manual.pending();
    if (next === undefined) throw new Error('run: the promise waits on nothing pending');
    manual.step(next);
  }
  throw new Error('run: too many steps');
}

/** Per-process record of what its job function is working on. */
export interface Activity {
  active: Map<string, JobContext[]>;
  runs: JobContext[];
}
export const activity = (): Activity => ({ active: new Map(), runs: [] });
/** The contexts of `log` that work on `item` right now (not aborted, ctx.holding() true). */
export const workingOn = (log: Activity, item: string): JobContext[] =>
  (log.active.get(item) ?? []).filter((ctx) => !ctx.signal.aborted && ctx.holding());
