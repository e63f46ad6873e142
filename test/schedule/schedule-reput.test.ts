/**
 * Review: a scheduler acting on an older read of a schedule that was removed and put again.
 *
 * 1. It read the old definition (czxid c1), then reads the *new* schedule's cursor: it makes the
 *    records that cursor names with `scheduleNode: c1`, and the firing skips them as "decided for an
 *    earlier schedule" — a tick of the new schedule is lost (no plan at all).
 * 2. It read the old cursor (version 0) and commits a decision made from the old definition: the
 *    versioned setData's *first* try lands on the new schedule's cursor, if that is at version 0 too
 *    (the incarnation only guards a resend; NODE_REPLACED is reported after the write landed). The
 *    new schedule then fires ticks of the old cron, which are not its own.
 */
import { describe, expect, it } from 'vitest';
import { ManualScheduler, MemoryZooKeeper } from '../../src/testing/index.js';
import { scheduleNodes } from '../../src/zk/layout.js';
import {
  PLANS,
  PULSE,
  SCHEDULES,
  T0,
  drain,
  plansOn,
  stepUntil,
  useSchedulerProcesses,
} from './schedule-harness.js';

const start = useSchedulerProcesses();

const NODE = scheduleNodes(SCHEDULES, 'pulse').node;
const CURSOR = scheduleNodes(SCHEDULES, 'pulse').cursor;
const TICKS = scheduleNodes(SCHEDULES, 'pulse').ticks;

const planAt = (second: number): string =>
  `${PLANS}/pulse@20261125T0200${String(second).padStart(2, '0')}.000Z`;

describe('a scheduler acting on an older read of a schedule removed and put again', () => {
  it('a stale scheduler that reads the new cursor does not make the new schedule lose its tick', async () => {
    const manual = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler: manual });
    const [a, b] = [start(server, 'a'), start(server, 'b')];
    const put = b.schedules.put(PULSE);
    await drain(manual, ['b']);
    await put;

    a.clock.now = T0 + 1_020;
    const aPass = a.scheduler.pass();
    await stepUntil(manual, 'a', 'getData', NODE); // a has read the old definition

    const removed = b.schedules.remove('pulse');
    await drain(manual, ['b']);
    await removed;
    const putAgain = b.schedules.put(PULSE); // b's clock: T0, so tick 1 (T0 + 1 s) is the new schedule's
    await drain(manual, ['b']);
    await putAgain;

    b.clock.now = T0 + 1_020;
    const bPass = b.scheduler.pass();
    await stepUntil(manual, 'b', 'create', CURSOR); // b decided tick 1 for the new schedule, has not made its record yet
    await drain(manual, ['a']); // a reads that cursor and makes the record, with the old schedule's czxid
    await aPass;
    await drain(manual, ['b']);
    await bPass;
    b.clock.now = T0 + 1_100;
    const again = b.scheduler.pass();
    await drain(manual, ['a', 'b']);
    await again;

    const listing = b.schedules.list();
    await drain(manual, ['b']);
    const [summary] = await listing;
    // The new schedule's tick 1 must fire once: one plan.
    expect({
      plans: plansOn(server),
      run: summary?.recentRuns[0]?.state,
      reason: summary?.recentRuns[0]?.reason,
    }).toEqual({
      plans: [planAt(1).slice(PLANS.length + 1)],
      run: 'fired',
      reason: undefined,
    });
  });

  it("a stale decision's first try does not move the new schedule's cursor (no tick off the new cron fires)", async () => {
    const manual = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler: manual });
    const [a, b] = [start(server, 'a'), start(server, 'b')];
    const put = b.schedules.put(PULSE); // every second
    await drain(manual, ['b']);
    await put;
    b.clock.now = T0 + 1_020;
    const first = b.scheduler.pass(); // cursor created (version 0), tick 1 fired
    await drain(manual, ['b']);
    await first;

    a.clock.now = T0 + 5_020;
    const aPass = a.scheduler.pass();
    // a holds the old cursor at version 0 and the old (every second) definition, and has seen the old schedule node still there.
    await stepUntil(manual, 'a', 'exists', scheduleNodes(SCHEDULES, 'pulse').node);

    const removed = b.schedules.remove('pulse');
    await drain(manual, ['b']);
    await removed;
    b.clock.now = T0 + 1_500;
    const putAgain = b.schedules.put({ ...PULSE, cron: '*/2 * * * * *' }); // every 2 s, from 1.5 s on
    await drain(manual, ['b']);
    await putAgain;
    b.clock.now = T0 + 2_020;
    const second = b.scheduler.pass(); // the new cursor is made (version 0), tick 2 fired
    await drain(manual, ['b']);
    await second;

    // a decides from the old cursor and the old cron: ticks 2, 3, 4, 5. Its versioned set meets a cursor at version 0.
    let landed = false;
    server.onApplied = (event) => {
      if (event.clientName === 'a' && event.op === 'setData' && event.path === CURSOR && event.ok) {
        landed = true;
        a.zk.crash(); // a dies right after (its records are never made by it)
        server.expireSession(event.sessionId);
      }
    };
    await drain(manual, ['a']);
    void aPass.catch(() => undefined);
    server.onApplied = undefined;

    b.clock.now = T0 + 5_100;
    const later = b.scheduler.pass();
    await drain(manual, ['b']);
    await later;

    const fired = plansOn(server).map((plan) => Number(plan.slice(-7, -5)));
    expect({ landed, ticks: server.children(TICKS).length }).toMatchObject({ landed: true });
    // Only even seconds are ticks of the new schedule (and second 1 of the old one).
    expect(fired.filter((second) => second !== 1 && second % 2 === 1)).toEqual([]);
  });
});
