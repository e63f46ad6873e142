/**
 * Faults an outside review found in the scheduler, each reproduced over the in-memory ZooKeeper
 * (and fixed): a decision lost with its committer, a plan deleted before its tick was recorded, a
 * takeover whose spec check fails, a lost reply on the final write, pruning under 'skip', a stale
 * decision from a slow or skewed scheduler, a malformed definition.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { ManualScheduler, MemoryZooKeeper } from '../../src/testing/index.js';
import { scheduleNodes } from '../../src/zk/layout.js';
import { ScheduleStore } from '../../src/schedule/schedule-store.js';
import {
  PLANS,
  PULSE,
  SCHEDULES,
  T0,
  drain,
  flush,
  plansOn,
  stepUntil,
  useSchedulerProcesses,
  type SchedulerProcess,
} from './schedule-harness.js';

/** The store of the test's schedules' parent over another client. */
const ScheduleStoreOf = class extends ScheduleStore {
  constructor(zk: ConstructorParameters<typeof ScheduleStore>[0]) {
    super(zk, SCHEDULES);
  }
};

const start = useSchedulerProcesses();

const TICK_1 = 'tick-001795572001000';
const PLAN_1 = `${PLANS}/pulse@20261125T020001.000Z`;

/** Crashes `proc` (its session expires) right after its write that `matches`. */
function crashAfter(
  server: MemoryZooKeeper,
  proc: SchedulerProcess,
  matches: (op: string, path: string) => boolean,
): void {
  server.onApplied = (event) => {
    if (event.clientName !== proc.name || !event.ok || !matches(event.op, event.path)) return;
    proc.zk.crash();
    server.expireSession(event.sessionId);
  };
}

/**
 * Scheduler a dies while building the plan of the first tick, after its record says planCreated;
 * b, whose registry lacks the spec's function (so its spec check fails), is about to take over.
 */
async function diesMidBuild(
  server: MemoryZooKeeper,
): Promise<{ readonly a: SchedulerProcess; readonly b: SchedulerProcess }> {
  const a = start(server, 'a');
  const b = start(
    server,
    'b',
    new FunctionRegistry().register('other', () => 1),
  );
  await a.schedules.put({ ...PULSE, misfireGraceMs: 5_000 });
  crashAfter(
    server,
    a,
    (op, path) => op === 'create' && path.startsWith(`${PLAN_1}/task-`) && path.endsWith('/ready'),
  );
  a.clock.now = b.clock.now = T0 + 1_020;
  void a.scheduler.pass().catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { a, b };
}

describe('scheduler faults', () => {
  it('a scheduler that dies after committing a decision and before its records: the next one makes them (no tick lost)', async () => {
    const server = new MemoryZooKeeper();
    const [x, y] = [start(server, 'x'), start(server, 'y')];
    await x.schedules.put(PULSE);
    crashAfter(
      server,
      x,
      (op, path) =>
        (op === 'create' || op === 'setData') && path === scheduleNodes(SCHEDULES, 'pulse').cursor,
    );
    x.clock.now = T0 + 1_020;
    void x.scheduler.pass().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const second of [2, 3]) {
      y.clock.now = T0 + second * 1000 + 20;
      await y.scheduler.pass();
    }
    expect(server.children(scheduleNodes(SCHEDULES, 'pulse').ticks)).toContain(TICK_1);
    expect(plansOn(server)).toHaveLength(3);
  });

  it('a firer that dies after readying, whose plan then runs and is deleted: the tick is not built again', async () => {
    const server = new MemoryZooKeeper();
    const [a, b] = [start(server, 'a'), start(server, 'b')];
    await a.schedules.put(PULSE);
    let creations = 0;
    server.onApplied = (event) => {
      if (event.op === 'create' && event.ok && event.path === PLAN_1) creations += 1;
      if (
        event.clientName === 'a' &&
        event.op === 'create' &&
        event.ok &&
        event.path === `${PLAN_1}/ready`
      ) {
        a.zk.crash();
        server.expireSession(event.sessionId);
      }
    };
    a.clock.now = b.clock.now = T0 + 1_020;
    void a.scheduler.pass().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await b.zk.deleteRecursive(PLAN_1); // retention after a fast run, or zk-plan rm
    await b.scheduler.pass();
    expect(creations).toBe(1);
    const [summary] = await b.schedules.list();
    expect(summary?.recentRuns[0]).toMatchObject({ state: 'fired', outcome: 'deleted' });
  });

  it('a plan deleted while the next firer reads it is taken for deleted, never for a plan of no schedule', async () => {
    const manual = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler: manual });
    const [a, b] = [start(server, 'a'), start(server, 'b')];
    const remover = server.connect({ name: 'remover' });
    const put = a.schedules.put(PULSE);
    await drain(manual, ['a']);
    await put;
    crashAfter(server, a, (op, path) => op === 'create' && path === `${PLAN_1}/ready`); // readied, not yet recorded fired
    a.clock.now = b.clock.now = T0 + 1_020;
    void a.scheduler.pass().catch(() => undefined);
    await drain(manual, ['a']);
    expect(server.exists(`${PLAN_1}/ready`)).toBe(true);
    server.onApplied = undefined;
    // b takes the tick over; right after its first read of the plan, the plan is deleted (retention after a fast run).
    const bPass = b.scheduler.pass();
    for (let step = 0; step < 10_000; step++) {
      await flush();
      await flush();
      if (manual.step('b').path === PLAN_1) break;
    }
    const removing = remover.deleteRecursive(PLAN_1);
    await drain(manual, ['remover']);
    await removing;
    await drain(manual, ['b']);
    await bPass;
    expect(b.errors).toEqual([]);
    const listing = b.schedules.list();
    await drain(manual, ['b']);
    const [summary] = await listing;
    expect(summary?.recentRuns[0]).toMatchObject({ state: 'fired', outcome: 'deleted' });
  });

  it('a takeover whose spec check fails records the tick failed and leaves no half-built plan', async () => {
    const server = new MemoryZooKeeper();
    const { b } = await diesMidBuild(server);
    await b.scheduler.pass();
    const [summary] = await b.schedules.list();
    expect(summary?.recentRuns[0]).toMatchObject({
      state: 'failed',
      reason: expect.stringContaining('stamp'),
    });
    expect(server.exists(PLAN_1)).toBe(false);
  });

  it('a lost reply on the final record write is no error, and the tick is reported once', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put({ ...PULSE, misfireGraceMs: 5_000 });
    a.zk.loseNextReply(
      (op, path) =>
        op === 'setData' && path === `${scheduleNodes(SCHEDULES, 'pulse').ticks}/${TICK_1}`,
    );
    a.clock.now = T0 + 1_020;
    await a.scheduler.pass();
    await a.scheduler.pass();
    expect(a.errors).toEqual([]);
    expect(a.fired).toEqual([TICK_1]);
  });

  it("with overlap 'skip', pruning old records never drops the record of the run still going (one run at a time)", async () => {
    const server = new MemoryZooKeeper();
    const proc = start(server, 'a');
    await proc.schedules.put({
      ...PULSE,
      cron: '*/15 * * * * *',
      overlap: 'skip',
      misfireGraceMs: 60_000,
    }); // no workers: the run never ends
    for (let at = 15_000; at <= 52 * 15_000; at += 15_000) {
      proc.clock.now = T0 + at + 20;
      await proc.scheduler.pass();
    }
    expect(plansOn(server)).toHaveLength(1);
  });

  it("a decision made from a cursor another scheduler has moved never lands (misfire 'skip', clocks a second apart)", async () => {
    const manual = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler: manual });
    const [x, y] = [start(server, 'x'), start(server, 'y')];
    const put = x.schedules.put({ ...PULSE, overlap: 'skip', misfire: 'skip' });
    await drain(manual, ['x', 'y']);
    await put;
    y.clock.now = T0 + 1_020; // tick 1 on time for y
    x.clock.now = T0 + 2_020; // for x, tick 1 was missed and tick 2 is on time
    const yPass = y.scheduler.pass();
    await stepUntil(manual, 'y', 'getData', scheduleNodes(SCHEDULES, 'pulse').cursor); // y has read the cursor
    const xPass = x.scheduler.pass();
    await drain(manual, ['x']);
    await xPass;
    await drain(manual, ['y']);
    await yPass;
    expect(server.children(scheduleNodes(SCHEDULES, 'pulse').ticks)).toEqual([
      'tick-001795572002000',
    ]);
    expect(plansOn(server)).toHaveLength(1);
  });

  it('a malformed schedule node is reported each pass, with one watch on it however many passes', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    await a.zk.create(`${SCHEDULES}/bad`, encodeValue({ name: 'bad', cron: 42 }, 'test'));
    for (let pass = 0; pass < 20; pass++) await a.scheduler.pass();
    expect(server.watchCount(`${SCHEDULES}/bad`)).toBe(1);
    expect(a.errors).toHaveLength(20);
    expect(String(a.errors[0])).toContain(`${SCHEDULES}/bad`);
  });

  describe('pruned tick records are never made again (issue 19, defect 3)', () => {
    const HOURLY_TICKS = `${scheduleNodes(SCHEDULES, 'hourly').ticks}`;

    it("misfire 'fireAll' catching up on more ticks than the records kept: none is fired twice, even once its plan is gone", async () => {
      const server = new MemoryZooKeeper();
      const a = start(server, 'a');
      await a.schedules.put({
        ...PULSE,
        cron: '0 * * * * *',
        misfire: 'fireAll',
        catchUpLimit: 120,
        misfireGraceMs: 1_000,
      });
      a.clock.now = T0 + 120 * 60_000 + 30_000; // two hours of missed minutes: 120 ticks to catch up on, one decision
      await a.scheduler.pass();
      expect(plansOn(server)).toHaveLength(120);
      const builtOnce = new Set(plansOn(server));
      for (const plan of builtOnce) await a.zk.deleteRecursive(`${PLANS}/${plan}`); // they ran; retention deleted them
      for (const later of [1, 2, 15]) {
        a.clock.now = T0 + 120 * 60_000 + 30_000 + later * 1_000;
        await a.scheduler.pass();
      }
      const b = start(server, 'b'); // a scheduler started later has no cache to hide it
      b.clock.now = a.clock.now;
      await b.scheduler.pass();
      expect(plansOn(server)).toEqual([]);
    });

    it('a skipped cron tick followed by 50 manual runs is not fired once its record would be old enough to prune', async () => {
      const server = new MemoryZooKeeper();
      const a = start(server, 'a');
      await a.schedules.put({
        ...PULSE,
        name: 'hourly',
        cron: '0 0 * * * *',
        overlap: 'skip',
        misfireGraceMs: 60_000,
      });
      a.clock.now = T0 + 3_600_000 + 1_000; // 03:00: fires; its run never ends (no workers)
      await a.scheduler.pass();
      a.clock.now = T0 + 2 * 3_600_000 + 1_000; // 04:00: skipped, the 03:00 run is still going
      await a.scheduler.pass();
      const cronTicks = server.children(HOURLY_TICKS);
      expect(cronTicks).toHaveLength(2);
      for (let run = 0; run < 50; run++) await a.schedules.trigger('hourly');
      for (const plan of plansOn(server)) await a.zk.deleteRecursive(`${PLANS}/${plan}`); // every run ended
      for (const minutes of [11, 12, 20]) {
        a.clock.now = T0 + 2 * 3_600_000 + minutes * 60_000;
        await a.scheduler.pass();
      }
      const b = start(server, 'b');
      b.clock.now = a.clock.now;
      await b.scheduler.pass();
      expect(plansOn(server)).toEqual([]);
    });
  });

  it('a takeover whose spec check fails and that dies right after deleting the half-built plan never leaves a tick recorded fired with no plan (defect 7)', async () => {
    const server = new MemoryZooKeeper();
    // b takes over from a, its spec check fails, and b dies right after deleting a's plan.
    const { b } = await diesMidBuild(server);
    crashAfter(server, b, (op, path) => op === 'delete' && path === PLAN_1);
    void b.scheduler.pass().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.exists(PLAN_1)).toBe(false);
    server.onApplied = undefined;
    const c = start(server, 'c'); // has the spec's function
    c.clock.now = T0 + 1_020;
    await c.scheduler.pass();
    const [summary] = await c.schedules.list();
    const tick = summary?.recentRuns.find((run) => run.plan === PLAN_1);
    expect(tick?.state).toBe('fired');
    expect(server.exists(`${PLAN_1}/ready`)).toBe(true); // fired means a plan was made
  });

  describe('a schedule removed while a scheduler still acts on an older read of it (found by the long simulation)', () => {
    const CURSOR = scheduleNodes(SCHEDULES, 'pulse').cursor;
    const TICKS_NODE = scheduleNodes(SCHEDULES, 'pulse').ticks;

    /** a reads the cursor naming TICK_1 and stops there; returns its pass, to be let go later. */
    async function staleReader(
      manual: ManualScheduler,
      a: SchedulerProcess,
    ): Promise<{ readonly pass: Promise<unknown> }> {
      a.clock.now = T0 + 1_020;
      const aPass = a.scheduler.pass();
      for (let step = 0; step < 10_000; step++) {
        await flush();
        await flush();
        const applied = manual.step('a');
        if (applied.op === 'getData' && applied.path === CURSOR) break;
      }
      return { pass: aPass };
    }

    /**
     * b puts the schedule and fires tick 1, whose run ends (its plan is deleted); a has read the
     * cursor naming tick 1 and stops there. Returns a's pass, to be let go later.
     */
    async function tickFiredAndEndedWhileAHoldsItsCursor(): Promise<{
      readonly manual: ManualScheduler;
      readonly server: MemoryZooKeeper;
      readonly b: SchedulerProcess;
      readonly aPass: Promise<unknown>;
    }> {
      const manual = new ManualScheduler();
      const server = new MemoryZooKeeper({ scheduler: manual });
      const [a, b] = [start(server, 'a'), start(server, 'b')];
      const admin = server.connect({ name: 'admin' });
      const put = b.schedules.put({ ...PULSE, misfireGraceMs: 5_000 });
      await drain(manual, ['b']);
      await put;
      b.clock.now = T0 + 1_020;
      const bPass = b.scheduler.pass(); // decides tick 1 and fires it
      await drain(manual, ['b']);
      await bPass;
      expect(server.exists(PLAN_1)).toBe(true);
      const runnerDelete = admin.deleteRecursive(PLAN_1); // the run ended
      await drain(manual, ['admin']);
      await runnerDelete;
      const { pass: aPass } = await staleReader(manual, a);
      return { manual, server, b, aPass };
    }

    it('a record made again while the removal runs is never fired: its plan is not built again', async () => {
      const { manual, server, b, aPass } = await tickFiredAndEndedWhileAHoldsItsCursor();
      // b removes the schedule, up to the delete of its ticks node; then a makes tick 1's record again.
      const removing = b.schedules.remove('pulse');
      await stepUntil(manual, 'b', 'delete', TICKS_NODE);
      await drain(manual, ['a']);
      await aPass;
      await drain(manual, ['a', 'b']);
      await removing;
      expect(server.exists(PLAN_1)).toBe(false);
      expect(server.exists(scheduleNodes(SCHEDULES, 'pulse').node)).toBe(false);
    });

    it('a record made late for a schedule removed and put again is not fired by the new one', async () => {
      const { manual, server, b, aPass } = await tickFiredAndEndedWhileAHoldsItsCursor();
      const removed = b.schedules.remove('pulse');
      await drain(manual, ['b']);
      await removed;
      b.clock.now = T0 + 1_500;
      const putAgain = b.schedules.put({ ...PULSE, misfireGraceMs: 5_000 }); // active from 1.5 s on: tick 1 is not its own
      await drain(manual, ['b']);
      await putAgain;
      await drain(manual, ['a']);
      await aPass; // a makes tick 1's record in the new schedule, from its old cursor
      b.clock.now = T0 + 1_600;
      const later = b.scheduler.pass();
      await drain(manual, ['a', 'b']);
      await later;
      expect(server.exists(PLAN_1)).toBe(false);
    });

    it('a removal cut off after its mark is finished by a scheduler', async () => {
      const server = new MemoryZooKeeper();
      const a = start(server, 'a');
      await a.schedules.put(PULSE);
      const remover = server.connect({ name: 'remover' });
      remover.failNextSend((op) => op === 'delete', { reconnect: false }); // marked, then cut off before any delete
      void new ScheduleStoreOf(remover).remove('pulse').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(server.exists(scheduleNodes(SCHEDULES, 'pulse').node)).toBe(true);
      a.clock.now = T0 + 1_020;
      await a.scheduler.pass();
      expect(server.exists(scheduleNodes(SCHEDULES, 'pulse').node)).toBe(false);
      expect(plansOn(server)).toEqual([]);
    });
  });
});
