/**
 * Backfills over the in-memory ZooKeeper, moved on by scheduler passes while workers run the
 * plans: one plan per tick of the range, at the pace of the mode, together with live ticks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { BackfillNotFoundError, ScheduleNotFoundError } from '../../src/errors/schedule-errors.js';
import type { BackfillStatus } from '../../src/backfill/backfill-options.js';
import { TickRuns, passUntilFinished, pastTicks, planOf } from './backfill-fixture.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import {
  PLANS,
  PULSE,
  T0,
  plansOn,
  useSchedulerProcesses,
  tickFunctions,
  type SchedulerProcess,
} from '../schedule/schedule-harness.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

/** Scheduler processes (closed after each test). */
const start = useSchedulerProcesses();

function workers(
  server: MemoryZooKeeper,
  functions: FunctionRegistry = tickFunctions(),
): MemoryProcess {
  const proc = memoryProcess(server, 'workers', functions);
  open.push(proc);
  proc.zkPlan.startWorkers(PLANS, { count: 4, backoff: FAST_BACKOFF, retention: false });
  return proc;
}

const { from: FROM, to: TO, plans: BACKFILLED } = pastTicks(10);

describe('a backfill', () => {
  it.each([
    { mode: 'serial' as const, concurrency: undefined, most: 1 },
    { mode: 'parallel' as const, concurrency: 3, most: 3 },
  ])(
    '$mode: one plan per tick of the range, at most $most at a time, beside the live ticks of two schedulers',
    async ({ mode, concurrency, most }) => {
      const server = new MemoryZooKeeper();
      const [a, b] = [start(server, 'a'), start(server, 'b')];
      await a.schedules.put(PULSE);
      const atOnce = new TickRuns();
      const runner = workers(server, atOnce.functions());
      a.clock.now = T0 + 20;
      const made = await a.schedules.backfill('pulse', {
        from: new Date(FROM),
        to: new Date(TO).toISOString(),
        mode,
        ...(concurrency === undefined ? {} : { concurrency }),
      });
      expect(made).toMatchObject({ state: 'running', total: 10, started: concurrency ?? 1 });
      const final = await passUntilFinished([a, b], made.id);
      expect(final).toMatchObject({
        state: 'completed',
        total: 10,
        started: 10,
        completed: 10,
        failed: 0,
        notRun: 0,
      });
      expect(atOnce.most).toBeLessThanOrEqual(most);
      if (mode === 'parallel') expect(atOnce.most).toBeGreaterThan(1);
      else expect(atOnce.most).toBe(1);
      const plans = plansOn(server);
      expect(plans.filter((plan) => BACKFILLED.includes(plan))).toEqual(BACKFILLED);
      // The live ticks fired meanwhile, each once: every plan is a backfilled tick's or a live one's after T0.
      const live = plans.filter((plan) => !BACKFILLED.includes(plan));
      expect(live.length).toBeGreaterThan(0);
      expect(new Set(live).size).toBe(live.length);
      for (const plan of live) expect(plan > planOf(T0)).toBe(true);
      for (const plan of BACKFILLED)
        expect(await runner.zkPlan.plans.status(`${PLANS}/${plan}`)).toMatchObject({
          state: 'completed',
        });
    },
  );

  it('run twice over the same range makes nothing new, and a tick the live scheduler fired stays its one plan', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    const runner = workers(server);
    // Live ticks 1…3 s past T0 fire first; the backfill then covers them and ten earlier ones.
    for (let second = 1; second <= 3; second++) {
      a.clock.now = T0 + second * 1_000 + 20;
      await a.scheduler.pass();
    }
    const livePlans = plansOn(server);
    expect(livePlans).toHaveLength(3);
    const first = await a.schedules.backfill('pulse', {
      from: FROM,
      to: T0 + 3_000,
      mode: 'parallel',
      concurrency: 5,
    });
    expect((await passUntilFinished([a], first.id))?.state).toBe('completed');
    const afterFirst = plansOn(server);
    const second = await a.schedules.backfill('pulse', {
      from: FROM,
      to: T0 + 3_000,
      mode: 'parallel',
      concurrency: 5,
    });
    expect((await passUntilFinished([a], second.id))?.state).toBe('completed');
    const afterSecond = plansOn(server).filter((plan) => plan <= planOf(T0 + 3_000));
    expect(afterSecond).toEqual(afterFirst.filter((plan) => plan <= planOf(T0 + 3_000)));
    for (const plan of livePlans) expect(afterSecond).toContain(plan);
  });

  it('cancelled midway: no tick starts any more, the plan under way is cancelled, and each started tick is counted once', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    // The first past tick's plan stays under way until the cancel has been made.
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const functions = new FunctionRegistry().register(
      'stamp',
      async (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
        if (Date.parse(String(ctx.params[0])) < T0) await held;
        return [String(ctx.params[0]), ...inputs].join('<');
      },
    );
    const runner = workers(server, functions);
    a.clock.now = T0 + 20;
    const made = await a.schedules.backfill('pulse', { from: FROM, to: TO });
    const firstPlan = `${PLANS}/${BACKFILLED[0] ?? ''}`;
    for (let second = 1; second <= 50; second++) {
      a.clock.now = T0 + second * 1_000 + 20;
      await a.scheduler.pass();
      const status = await runner.zkPlan.plans.status(firstPlan).catch(() => undefined);
      if (status?.state === 'running') break;
      await pause(5);
    }
    expect(await runner.zkPlan.plans.status(firstPlan)).toMatchObject({ state: 'running' });
    const cancelled = await a.schedules.cancelBackfill('pulse', made.id, 'wrong range');
    expect(cancelled).toMatchObject({ state: 'cancelled', reason: 'wrong range', started: 1 });
    expect(await runner.zkPlan.plans.status(firstPlan)).toMatchObject({ state: 'cancelled' });
    release();
    const final = await passUntilFinished([a], made.id);
    expect(final).toMatchObject({
      state: 'cancelled',
      started: 1,
      running: [],
      completed: 0,
      failed: 1,
      notRun: 0,
    });
    expect(plansOn(server).filter((plan) => BACKFILLED.includes(plan))).toEqual([BACKFILLED[0]]);
    // Safe to repeat: a finished backfill is left as it is.
    expect(await a.schedules.cancelBackfill('pulse', made.id)).toMatchObject({
      state: 'cancelled',
      reason: 'wrong range',
    });
  });

  it('cancelled while a started tick has no plan yet: the tick makes none', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    a.clock.now = T0 + 20;
    // The call records the backfill and its first tick's record; no scheduler has fired it yet.
    const made = await a.schedules.backfill('pulse', { from: FROM, to: TO });
    expect(made).toMatchObject({ started: 1, running: [new Date(FROM).toISOString()] });
    await a.schedules.cancelBackfill('pulse', made.id);
    const final = await passUntilFinished([a], made.id);
    expect(final).toMatchObject({ state: 'cancelled', started: 1, notRun: 1, failed: 0 });
    expect(plansOn(server).filter((plan) => BACKFILLED.includes(plan))).toEqual([]);
    const [run] =
      (await a.schedules.list())[0]?.recentRuns.filter((r) => r.kind === 'backfill') ?? [];
    expect(run).toMatchObject({
      state: 'skipped',
      reason: `its backfill ${made.id} was cancelled`,
    });
  });

  it('refuses a bad request with a coded error that says what to do, and writes nothing', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    a.clock.now = T0 + 20;
    const refused = async (options: unknown): Promise<InvalidArgumentError> => {
      const error = await a.schedules
        .backfill('pulse', options as Parameters<typeof a.schedules.backfill>[1])
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(InvalidArgumentError);
      return error as InvalidArgumentError;
    };
    expect((await refused({ from: FROM, to: T0 + 60_000 })).message).toMatch(/in the future/);
    expect((await refused({ from: TO, to: FROM })).message).toMatch(/after to/);
    expect((await refused({ from: 'yesterday', to: TO })).argument).toBe('from');
    expect((await refused({ from: FROM, to: TO, concurrency: 2 })).message).toMatch(/parallel/);
    expect((await refused({ from: FROM, to: TO, mode: 'parallel', concurrency: 0 })).argument).toBe(
      'concurrency',
    );
    expect((await refused({ from: FROM, to: TO, mode: 'fast' })).argument).toBe('mode');
    expect((await refused({ from: FROM, to: TO, form: 1 })).message).toMatch(/did you mean from/);
    expect((await refused({ from: FROM + 100, to: FROM + 900 })).message).toMatch(/no tick/);
    expect((await refused({ from: T0 - 20_000_000, to: T0 })).message).toMatch(/more than 10000/);
    await expect(a.schedules.backfill('nope', { from: FROM, to: TO })).rejects.toBeInstanceOf(
      ScheduleNotFoundError,
    );
    await expect(
      a.schedules.cancelBackfill('pulse', 'backfill-001795571950000-00000000'),
    ).rejects.toBeInstanceOf(BackfillNotFoundError);
    await expect(a.schedules.cancelBackfill('pulse', 'b1')).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(await a.schedules.backfills('pulse')).toEqual([]);
  });
});
