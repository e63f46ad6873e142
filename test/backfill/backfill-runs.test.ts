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
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import {
  PLANS,
  PULSE,
  T0,
  plansOn,
  schedulerProcess,
  tickFunctions,
  type SchedulerProcess,
} from '../schedule/schedule-harness.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function start(server: MemoryZooKeeper, name: string): SchedulerProcess {
  const proc = schedulerProcess(server, name);
  open.push(proc);
  return proc;
}

function workers(
  server: MemoryZooKeeper,
  functions: FunctionRegistry = tickFunctions(),
): MemoryProcess {
  const proc = memoryProcess(server, 'workers', functions);
  open.push(proc);
  proc.zkPlan.startWorkers(PLANS, { count: 4, backoff: FAST_BACKOFF, retention: false });
  return proc;
}

/** The plan path a tick of PULSE at `ms` makes. */
function planOf(ms: number): string {
  return `pulse@${new Date(ms).toISOString().replace(/[-:]/g, '')}`;
}

/** Ten past ticks, a minute before T0: 10 … 19 s past T0 − 60 s. */
const FROM = T0 - 60_000 + 10_000;
const TO = FROM + 9_000;
const BACKFILLED = Array.from({ length: 10 }, (_, index) => planOf(FROM + index * 1_000));

/**
 * Plans of past ticks under way at once, as their tasks see it: a tick's plan is under way from the
 * start of its first task (`load`, whose param is the tick's time) to the end of its last
 * (`report`, whose input carries that time). Each task takes a few ms, so plans that may overlap do.
 */
class PlansAtOnce {
  private readonly active = new Set<string>();
  most = 0;

  functions(): FunctionRegistry {
    return new FunctionRegistry().register(
      'stamp',
      async (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
        const param = String(ctx.params[0]);
        const firedAt = param === 'report' ? (String(inputs[0]).split('<')[0] ?? '') : param;
        const past = Date.parse(firedAt) < T0;
        if (past && param !== 'report') {
          this.active.add(firedAt);
          this.most = Math.max(this.most, this.active.size);
        }
        await pause(3);
        if (past && param === 'report') this.active.delete(firedAt);
        return [param, ...inputs].join('<');
      },
    );
  }
}

interface Watched {
  final: BackfillStatus | undefined;
}

/**
 * Passes of every scheduler, a second of their clock apart (live ticks fire too), until the
 * backfill is finished.
 */
async function runUntilFinished(
  schedulers: readonly SchedulerProcess[],
  id: string,
): Promise<Watched> {
  const watched: Watched = { final: undefined };
  for (let second = 1; second <= 200; second++) {
    for (const proc of schedulers) proc.clock.now = T0 + second * 1_000 + 20;
    await Promise.all(schedulers.map((proc) => proc.scheduler.pass()));
    const status = (await schedulers[0]?.schedules.backfills('pulse'))?.find(
      (backfill) => backfill.id === id,
    );
    if (status !== undefined && status.state !== 'running' && status.running.length === 0) {
      watched.final = status;
      return watched;
    }
    await pause(5); // the workers run the plans meanwhile
  }
  return watched;
}

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
      const atOnce = new PlansAtOnce();
      const runner = workers(server, atOnce.functions());
      a.clock.now = T0 + 20;
      const made = await a.schedules.backfill('pulse', {
        from: new Date(FROM),
        to: new Date(TO).toISOString(),
        mode,
        ...(concurrency === undefined ? {} : { concurrency }),
      });
      expect(made).toMatchObject({ state: 'running', total: 10, started: concurrency ?? 1 });
      const watched = await runUntilFinished([a, b], made.id);
      expect(watched.final).toMatchObject({
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
    const watched = await runUntilFinished([a], first.id);
    expect(watched.final?.state).toBe('completed');
    const afterFirst = plansOn(server);
    const second = await a.schedules.backfill('pulse', {
      from: FROM,
      to: T0 + 3_000,
      mode: 'parallel',
      concurrency: 5,
    });
    const again = await runUntilFinished([a], second.id);
    expect(again.final?.state).toBe('completed');
    const afterSecond = plansOn(server).filter((plan) => plan <= planOf(T0 + 3_000));
    expect(afterSecond).toEqual(afterFirst.filter((plan) => plan <= planOf(T0 + 3_000)));
    for (const plan of livePlans) expect(afterSecond).toContain(plan);
  });

  it('cancelled midway: no tick starts any more, the plan under way is cancelled, and nothing is lost from the count', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    const runner = workers(server);
    a.clock.now = T0 + 20;
    const made = await a.schedules.backfill('pulse', { from: FROM, to: TO });
    for (let second = 1; second <= 3; second++) {
      a.clock.now = T0 + second * 1_000 + 20;
      await a.scheduler.pass();
      await pause(20);
    }
    const cancelled = await a.schedules.cancelBackfill('pulse', made.id, 'wrong range');
    expect(cancelled).toMatchObject({ state: 'cancelled', reason: 'wrong range' });
    const startedAtCancel = cancelled.started;
    expect(startedAtCancel).toBeLessThan(10);
    const watched = await runUntilFinished([a], made.id);
    expect(watched.final).toMatchObject({
      state: 'cancelled',
      started: startedAtCancel,
      running: [],
    });
    const final = watched.final as BackfillStatus;
    expect(final.completed + final.failed + final.notRun).toBe(startedAtCancel);
    expect(plansOn(server).filter((plan) => BACKFILLED.includes(plan)).length).toBeLessThanOrEqual(
      startedAtCancel,
    );
    // Safe to repeat: a finished backfill is left as it is.
    expect(await a.schedules.cancelBackfill('pulse', made.id)).toMatchObject({
      state: 'cancelled',
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
