/**
 * Review: a removal cut off part-way leaves the definition marked `removing`; `put` and
 * `pause`/`resume` do not know the mark.
 *
 * 1. `put` over a marked definition clears the mark (resolveSchedule drops it) and keeps the old
 *    `activeSince` (same cron): the schedule comes back without the cursor and tick records the
 *    removal already deleted, so ticks it fired before are decided and fired again (their plans
 *    gone by then: retention, or a user).
 * 2. `pause`/`resume` of a marked definition throw InvalidArgumentError 'unknown field "removing"'
 *    (update() hands the stored fields back to resolveSchedule) instead of ScheduleNotFoundError.
 */
import { describe, expect, it } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { ScheduleStore } from '../../src/schedule/schedule-store.js';
import { scheduleNodes } from '../../src/zk/layout.js';
import { PLANS, SCHEDULES, T0, TICK_SPEC, useSchedulerProcesses } from './schedule-harness.js';

const start = useSchedulerProcesses();

const PULSE = {
  name: 'pulse',
  cron: '* * * * * *',
  spec: TICK_SPEC,
  planParent: PLANS,
  overlap: 'allow',
  misfire: 'fireOnce',
  misfireGraceMs: 500,
} as const;
const NODES = scheduleNodes(SCHEDULES, 'pulse');
const PLAN_1 = `${PLANS}/pulse@20261125T020001.000Z`;

describe('a removal cut off part-way', () => {
  it('put over a half-removed schedule does not fire again a tick it fired before', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    let creations = 0;
    server.onApplied = (event) => {
      if (event.op === 'create' && event.ok && event.path === PLAN_1) creations += 1;
    };
    a.clock.now = T0 + 1_020;
    await a.scheduler.pass(); // tick 1 fired
    expect(creations).toBe(1);
    await a.zk.deleteRecursive(PLAN_1); // it ran; retention (or zk-plan rm) deleted it

    // remove() marks the definition, deletes the cursor and the tick records, and is cut off before the node.
    const remover = server.connect({ name: 'remover' });
    const previous = server.onApplied;
    server.onApplied = (event) => {
      previous(event);
      if (
        event.clientName === 'remover' &&
        event.op === 'delete' &&
        event.ok &&
        event.path === NODES.ticks
      ) {
        remover.crash();
        server.expireSession(event.sessionId);
      }
    };
    void new ScheduleStore(remover, SCHEDULES).remove('pulse').catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([
      server.exists(NODES.node),
      server.exists(NODES.cursor),
      server.exists(NODES.ticks),
    ]).toEqual([true, false, false]);

    // The user puts the schedule (again) before a scheduler finished the removal.
    a.clock.now = T0 + 1_100;
    await a.schedules.put(PULSE);
    const b = start(server, 'b'); // any other scheduler (a's own cache of final ticks hides the new record from a alone)
    b.clock.now = T0 + 1_100;
    await b.scheduler.pass();

    expect(creations).toBe(1); // tick 1's plan was built once
  });

  it('pause of a half-removed schedule says it is not found', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    const remover = server.connect({ name: 'remover' });
    remover.failNextSend((op) => op === 'delete', { reconnect: false }); // marked, then cut off
    void new ScheduleStore(remover, SCHEDULES).remove('pulse').catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(a.schedules.pause('pulse')).rejects.toMatchObject({ code: 'SCHEDULE_NOT_FOUND' });
  });
});
