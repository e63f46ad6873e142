/** Schedulers over the in-memory ZooKeeper, each on its own session and clock, driven pass by pass. */
import { PlanControl } from '../../src/control/plan-control.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { PlanReader } from '../../src/plan/plan-reader.js';
import { PlanDescriber } from '../../src/plan/plan-describer.js';
import { CancelHistory } from '../../src/plan/cancel-history.js';
import { PlanWriter } from '../../src/plan/plan-writer.js';
import { Scheduler } from '../../src/schedule/scheduler.js';
import { Scheduling } from '../../src/schedule/scheduling.js';
import type { Schedules } from '../../src/schedule/schedules.js';
import type { PlanSpec } from '../../src/spec/plan-spec.js';
import { TaskStore } from '../../src/store/task-store.js';
import { afterEach } from 'vitest';
import type { ManualScheduler, MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import { stableHash } from '../sim-harness/prng.js';
import { isPlanName } from '../../src/zk/layout.js';

export const SCHEDULES = '/schedules';
export const PLANS = '/plans';
export const T0 = Date.UTC(2026, 10, 25, 2, 0, 0);

/** Two tasks, the second fed by the first; `firedAt` reaches both. */
export const TICK_SPEC: PlanSpec = {
  tasks: {
    load: { fn: 'stamp', params: [{ $param: 'firedAt' }] },
    report: { fn: 'stamp', params: ['report'], inputs: ['load'], options: { keepResult: true } },
  },
};

export function tickFunctions(): FunctionRegistry {
  return new FunctionRegistry().register(
    'stamp',
    (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) =>
      [String(ctx.params[0]), ...inputs].join('<'),
  );
}

export interface SchedulerProcess extends MemoryProcess {
  readonly clock: { now: number };
  readonly scheduler: Scheduler;
  readonly schedules: Schedules;
  readonly errors: unknown[];
  readonly fired: string[];
}

export function schedulerProcess(
  server: MemoryZooKeeper,
  name: string,
  now: number = T0,
  schedules: string = SCHEDULES,
  functions: FunctionRegistry = tickFunctions(),
): SchedulerProcess {
  const proc = memoryProcess(server, name, functions);
  const { zk } = proc;
  const store = new TaskStore(zk);
  const reader = new PlanReader(zk, store);
  const cancelHistory = new CancelHistory(zk, store, new PlanDescriber(zk, store, reader));
  const clock = { now };
  let triggers = 0;
  const scheduling = new Scheduling({
    now: () => clock.now,
    // Manual tick ids from the process's name and a count, not from crypto: a seed then replays the same ticks.
    tickNonce: () => stableHash(name, ++triggers).toString(16).padStart(8, '0'),
    zk,
    writer: new PlanWriter(zk, store, functions),
    reader,
    control: new PlanControl(
      zk,
      store,
      async (plan) => (await reader.planStatus(plan)).state,
      (plan, cancelledAt) => cancelHistory.record(plan, cancelledAt),
    ),
    functions,
    events: proc.zkPlan,
    identity: name,
    wake: () => undefined,
  });
  const errors: unknown[] = [];
  const fired: string[] = [];
  const scheduler = new Scheduler({
    firing: scheduling.firingContext(schedules),
    pollMs: 1_000,
    now: () => clock.now,
    onError: (error) => errors.push(error),
    onTick: (_schedule, id, state) => {
      if (state === 'fired') fired.push(id);
    },
  });
  return { ...proc, clock, scheduler, schedules: scheduling.schedules(schedules), errors, fired };
}

/** The plans under PLANS, sorted. */
export function plansOn(server: MemoryZooKeeper): string[] {
  return server.children(PLANS).filter(isPlanName).sort();
}

/** A schedule firing every second, every tick fired (the tests' usual one). */
export const PULSE = {
  name: 'pulse',
  cron: '* * * * * *',
  spec: TICK_SPEC,
  planParent: PLANS,
  overlap: 'allow',
  misfire: 'fireAll',
  misfireGraceMs: 500,
} as const;

const realSetImmediate = globalThis.setImmediate;
/** Lets the replies and watch events already due arrive (the real setImmediate, whatever timers a test fakes). */
export const flush = (): Promise<void> => new Promise((resolve) => realSetImmediate(resolve));

/** Scheduler processes a test starts under SCHEDULES, closed after each test of the file that calls this. */
export function useSchedulerProcesses(): (
  server: MemoryZooKeeper,
  name: string,
  functions?: FunctionRegistry,
) => SchedulerProcess {
  const open: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });
  return (server, name, functions) => {
    const proc = schedulerProcess(server, name, T0, SCHEDULES, functions);
    open.push(proc);
    return proc;
  };
}

/** Lets the given clients' operations land until none of theirs waits. */
export async function drain(manual: ManualScheduler, clients: readonly string[]): Promise<void> {
  for (let step = 0; step < 100_000; step++) {
    await flush();
    await flush();
    const next = manual.pending().find((client) => clients.includes(client));
    if (next === undefined) return;
    manual.step(next);
  }
}

/** Steps `client` until it has sent `op` on `path` (applied). */
export async function stepUntil(
  manual: ManualScheduler,
  client: string,
  op: string,
  path: string,
): Promise<void> {
  for (let step = 0; step < 10_000; step++) {
    await flush();
    await flush();
    const applied = manual.step(client);
    if (applied.op === op && applied.path === path) return;
  }
  throw new Error(`${client} never sent ${op} ${path}`);
}
