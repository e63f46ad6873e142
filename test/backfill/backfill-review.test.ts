/**
 * What an outside review of backfills found, each reproduced over the in-memory ZooKeeper and
 * fixed: a cancel that cancelled a live run it never made, a tick two backfills shared skipped by
 * one's cancel, a backfill past the live cursor, a node someone put children under that stopped
 * every live tick, and forged or out-of-range times that surfaced as raw errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { encodeValue } from '../../src/serialization/codec.js';
import type { BackfillRecord } from '../../src/backfill/backfill-record.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { backfillNode, scheduleNodes } from '../../src/zk/layout.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import {
  PLANS,
  PULSE,
  SCHEDULES,
  T0,
  plansOn,
  useSchedulerProcesses,
  tickFunctions,
  type SchedulerProcess,
} from '../schedule/schedule-harness.js';
import { passUntilFinished, planOf } from './backfill-fixture.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

/** Scheduler processes (closed after each test). */
const start = useSchedulerProcesses();

/** Workers whose tasks of live ticks (at or after T0) hold until `release`. */
function heldWorkers(server: MemoryZooKeeper): { release: () => void } {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const functions = new FunctionRegistry().register(
    'stamp',
    async (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
      if (Date.parse(String(ctx.params[0])) >= T0) await held;
      return [String(ctx.params[0]), ...inputs].join('<');
    },
  );
  const proc = memoryProcess(server, 'workers', functions);
  open.push(proc);
  proc.zkPlan.startWorkers(PLANS, { count: 4, backoff: FAST_BACKOFF, retention: false });
  return { release };
}

/** A finished backfill record, as a scheduler writes one. */
function finished(overrides: Partial<BackfillRecord> = {}): BackfillRecord {
  const at = new Date(T0).toISOString();
  return {
    from: T0 - 60_000,
    to: T0 - 60_000,
    cron: '* * * * * *',
    timezone: 'UTC',
    mode: 'serial',
    concurrency: 1,
    total: 1,
    started: 1,
    last: T0 - 60_000,
    running: [],
    completed: 1,
    failed: 0,
    notRun: 0,
    state: 'completed',
    scheduleNode: 0,
    createdAt: at,
    updatedAt: at,
    by: 'test',
    ...overrides,
  };
}

function backfillId(n: number): string {
  return `backfill-${String(n).padStart(15, '0')}-0000000${n % 10}`;
}

describe('backfills: what the review found', () => {
  it('a cancelled backfill leaves a live run it covered running, and waits for it to end', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    const workers = heldWorkers(server);
    a.clock.now = T0 + 1_020;
    await a.scheduler.pass(); // the live tick of T0 + 1 s fires; its plan is held running
    const live = `${PLANS}/${planOf(T0 + 1_000)}`;
    const made = await a.schedules.backfill('pulse', { from: T0 + 1_000, to: T0 + 1_000 });
    await a.schedules.cancelBackfill('pulse', made.id, 'wrong range');
    await a.scheduler.pass();
    const reader = memoryProcess(server, 'reader');
    open.push(reader);
    expect((await reader.zkPlan.plans.status(live)).state).toBe('running');
    workers.release();
    const final = await passUntilFinished([a], made.id);
    expect(final).toMatchObject({ state: 'cancelled', started: 1, completed: 1, running: [] });
    expect((await reader.zkPlan.plans.status(live)).state).toBe('completed');
  });

  it("one backfill's cancel does not skip a tick another running backfill shares", async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    const runner = memoryProcess(server, 'workers', tickFunctions());
    open.push(runner);
    runner.zkPlan.startWorkers(PLANS, { count: 2, backoff: FAST_BACKOFF, retention: false });
    a.clock.now = T0 + 20;
    const range = { from: T0 - 60_000, to: T0 - 60_000 };
    const first = await a.schedules.backfill('pulse', range); // makes the tick's record
    const second = await a.schedules.backfill('pulse', range);
    await a.schedules.cancelBackfill('pulse', first.id);
    expect(await passUntilFinished([a], second.id)).toMatchObject({
      state: 'completed',
      completed: 1,
      notRun: 0,
    });
    expect(plansOn(server)).toContain(planOf(T0 - 60_000));
  });

  it('refuses a range past the last tick the live scheduler decided, so that it never takes ticks of the live schedule', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    a.clock.now = T0 + 20;
    await a.scheduler.pass();
    a.clock.now = T0 + 3_020; // no pass since: ticks of T0 + 1…3 s are still the live scheduler's
    const refused = await a.schedules
      .backfill('pulse', { from: T0 + 1_000, to: T0 + 3_000, mode: 'parallel', concurrency: 3 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as Error).message).toMatch(
      /the last tick the schedule's scheduler has decided/,
    );
    await a.scheduler.pass();
    expect(plansOn(server)).toEqual([1, 2, 3].map((s) => planOf(T0 + s * 1_000)));
  });

  it('a finished record someone put a child under is reported at each pass, and the live ticks still fire', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    const { backfills } = scheduleNodes(SCHEDULES, 'pulse');
    await a.zk.createIfAbsent(backfills);
    for (let n = 1; n <= 21; n++)
      await a.zk.createIfAbsent(
        backfillNode(SCHEDULES, 'pulse', backfillId(n)),
        encodeValue(finished(), 'backfill'),
      );
    await a.zk.createIfAbsent(`${backfillNode(SCHEDULES, 'pulse', backfillId(1))}/junk`);
    for (let second = 1; second <= 3; second++) {
      a.clock.now = T0 + second * 1_000 + 20;
      await a.scheduler.pass();
    }
    expect(plansOn(server)).toEqual([1, 2, 3].map((s) => planOf(T0 + s * 1_000)));
    expect(a.errors.length).toBeGreaterThan(0);
  });

  it('a forged record with a time no Date holds is left out of list(), and such a time given to backfill is refused', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    await a.zk.createIfAbsent(scheduleNodes(SCHEDULES, 'pulse').backfills);
    await a.zk.createIfAbsent(
      backfillNode(SCHEDULES, 'pulse', backfillId(1)),
      encodeValue(finished({ from: 8.7e15, to: 8.7e15 }), 'backfill'),
    );
    const [summary] = await a.schedules.list();
    expect(summary?.backfills).toEqual([]);
    expect(await a.schedules.backfills('pulse')).toEqual([]);
    a.clock.now = T0 + 20;
    for (const range of [
      { from: 9e15, to: T0 },
      { from: T0 - 1_000, to: 9e15 },
    ])
      await expect(a.schedules.backfill('pulse', range)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    await pause(0);
  });
});
