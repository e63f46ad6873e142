/**
 * A stored schedule is validated again, in full, on every read (issue finding 5): the node may have
 * been written by anything, not only by `put`. A raw write of `catchUpLimit: 200000, activeSince: 0`
 * used to stall a scheduler's event loop for many seconds per pass (200 000 fire times computed),
 * then fail every pass on a 2.8 MB cursor, its session (and the claims of a worker running
 * `--schedules` with it) expiring meanwhile. Now such a node is refused with a MalformedNodeError
 * naming it and what to do, at the cost of reading it: no fire time is computed for it and nothing
 * is written for it; the other schedules go on firing; `put` replaces it and `remove` removes it.
 * A valid definition at the documented limits is bounded too: one decision names at most
 * catchUpLimit (10 000) + 1 000 ticks, computed from about as many fire times.
 */
import { Cron } from 'croner';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MalformedNodeError } from '../../src/errors/task-errors.js';
import { cronTimes } from '../../src/schedule/cron-times.js';
import {
  MAX_CATCH_UP_LIMIT,
  MAX_DEFINITION_BYTES,
  type StoredSchedule,
} from '../../src/schedule/schedule-definition.js';
import { ScheduleStore } from '../../src/schedule/schedule-store.js';
import { MAX_ON_TIME_TICKS, dueTicks } from '../../src/schedule/tick-decisions.js';
import { cronTickId } from '../../src/schedule/tick-record.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { scheduleNodes } from '../../src/zk/layout.js';
import {
  PULSE,
  SCHEDULES,
  T0,
  TICK_SPEC,
  plansOn,
  useSchedulerProcesses,
  type SchedulerProcess,
} from '../schedule/schedule-harness.js';

const start = useSchedulerProcesses();

afterEach(() => {
  vi.restoreAllMocks();
});

/** Fire times croner computes from now on: one per nextRun, n per previousRuns(n). */
function countFireTimes(): () => number {
  const nextRun = vi.spyOn(Cron.prototype, 'nextRun');
  const previousRuns = vi.spyOn(Cron.prototype, 'previousRuns');
  return () =>
    nextRun.mock.calls.length +
    previousRuns.mock.calls.reduce((sum, [count]) => sum + (count ?? 0), 0);
}

/** The operations the server applies for `proc` from now on, by path. */
function countOperations(
  server: MemoryZooKeeper,
  proc: SchedulerProcess,
): { readonly paths: string[] } {
  const seen = { paths: [] as string[] };
  server.onApplied = (event) => {
    if (event.clientName === proc.name) seen.paths.push(`${event.op} ${event.path}`);
  };
  return seen;
}

/** `pulse` put (a tick every second from T0 on), and a raw write of `value` as the schedule `name` next to it. */
async function besideAValidOne(
  server: MemoryZooKeeper,
  name: string,
  value: (pulse: StoredSchedule) => unknown,
): Promise<SchedulerProcess> {
  const a = start(server, 'a');
  const pulse = await a.schedules.put(PULSE);
  const data = value(pulse);
  // Written as a raw write would: no size limit but the server's.
  await a.zk.create(
    scheduleNodes(SCHEDULES, name).node,
    Buffer.isBuffer(data) ? data : encodeValue(data, 'test', undefined, Number.POSITIVE_INFINITY),
  );
  return a;
}

/** The errors `proc` reported, as (code, path, message). */
function reported(
  proc: SchedulerProcess,
): { code: string; path: string | undefined; message: string }[] {
  return proc.errors.map((error) => {
    expect(error).toBeInstanceOf(MalformedNodeError);
    const malformed = error as MalformedNodeError;
    return { code: malformed.code, path: malformed.path, message: malformed.message };
  });
}

const FORGED = '/schedules/forged';
const PULSE_TICKS = [1, 2, 3].map(
  (second) => `pulse@${new Date(T0 + second * 1000).toISOString().replace(/[-:]/g, '')}`,
);

describe('a forged definition (catchUpLimit 200000, activeSince 0) next to a valid schedule', () => {
  it('is refused on read, naming its node and what to do; the pass computes no fire time for it and writes nothing for it; the valid one fires', async () => {
    const server = new MemoryZooKeeper();
    const a = await besideAValidOne(server, 'forged', (pulse) => ({
      ...pulse,
      name: 'forged',
      catchUpLimit: 200_000,
      activeSince: 0,
    }));
    a.clock.now = T0 + 3_020;
    const fireTimes = countFireTimes();
    const operations = countOperations(server, a);
    await a.scheduler.pass();

    expect(reported(a)).toEqual([
      {
        code: 'MALFORMED_NODE',
        path: FORGED,
        message:
          `Znode ${FORGED} is malformed: not a schedule zk-plan runs (Invalid catchUpLimit: schedule "forged": expected a whole number from 1 to 10000, got 200000): ` +
          `no tick of it fires. Put the schedule again (zk-plan schedule put <file> --schedules /schedules, or schedules('/schedules').put) or remove it (zk-plan schedule rm forged --schedules /schedules)`,
      },
    ]);
    expect(plansOn(server)).toEqual(PULSE_TICKS);
    expect(a.fired).toEqual([1, 2, 3].map((second) => cronTickId(T0 + second * 1000)));
    // The forged schedule cost one read: no cursor, no tick record, no lock.
    expect(operations.paths.filter((path) => path.includes(FORGED))).toEqual([`getData ${FORGED}`]);
    expect(server.exists(scheduleNodes(SCHEDULES, 'forged').cursor)).toBe(false);
    expect(server.exists(scheduleNodes(SCHEDULES, 'forged').ticks)).toBe(false);
    // The whole pass, pulse's three ticks included, computes a handful of fire times (the forged one would have taken 200 000 and more).
    expect(fireTimes()).toBeLessThan(20);
    expect(operations.paths.length).toBeLessThan(300);

    // Every later pass: refused again (reported, one watch on it), and pulse goes on.
    a.clock.now = T0 + 5_020;
    await a.scheduler.pass();
    expect(reported(a).map((error) => error.path)).toEqual([FORGED, FORGED]);
    expect(plansOn(server)).toHaveLength(5);
    expect(server.watchCount(FORGED)).toBe(1);
    expect(fireTimes()).toBeLessThan(40);
  });

  it('list() leaves it out, get() refuses it, put() replaces it (firing only from then on) and remove() removes it', async () => {
    const server = new MemoryZooKeeper();
    const a = await besideAValidOne(server, 'forged', (pulse) => ({
      ...pulse,
      name: 'forged',
      catchUpLimit: 200_000,
      activeSince: 0,
    }));
    expect((await a.schedules.list()).map((summary) => summary.schedule.name)).toEqual(['pulse']);
    await expect(a.schedules.get('forged')).rejects.toThrow(MalformedNodeError);
    await expect(a.schedules.trigger('forged')).rejects.toThrow(MalformedNodeError);
    await expect(a.schedules.pause('forged')).rejects.toThrow(MalformedNodeError);

    a.clock.now = T0 + 10_000;
    const put = await a.schedules.put({ ...PULSE, name: 'forged' });
    expect(put).toMatchObject({ catchUpLimit: 10, activeSince: T0 + 10_000 });
    a.clock.now = T0 + 12_020;
    await a.scheduler.pass();
    expect(a.errors).toEqual([]);
    expect(plansOn(server).filter((plan) => plan.startsWith('forged@'))).toEqual(
      [11, 12].map(
        (second) => `forged@${new Date(T0 + second * 1000).toISOString().replace(/[-:]/g, '')}`,
      ),
    );

    await a.zk.setData(FORGED, encodeValue({ ...put, catchUpLimit: 200_000 }, 'test'), -1);
    await a.schedules.remove('forged');
    expect(server.exists(FORGED)).toBe(false);
  });
});

describe('any out-of-range or ill-formed stored field is refused the same way', () => {
  const huge = 'x'.repeat(MAX_DEFINITION_BYTES);
  it.each<[string, string, (pulse: StoredSchedule) => unknown, string]>([
    [
      'a name not its node’s',
      'bad',
      (pulse) => ({ ...pulse, name: 'pulse' }),
      'its name "pulse" is not its node\'s, "bad"',
    ],
    [
      'a name no schedule may have',
      'bad~name',
      (pulse) => ({ ...pulse, name: 'bad~name' }),
      'expected a schedule name of letters',
    ],
    [
      'a catchUpLimit of 0',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', catchUpLimit: 0 }),
      'catchUpLimit',
    ],
    [
      'a fractional catchUpLimit',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', catchUpLimit: 2.5 }),
      'catchUpLimit',
    ],
    [
      'a catchUpLimit over the maximum',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', catchUpLimit: MAX_CATCH_UP_LIMIT + 1 }),
      'from 1 to 10000',
    ],
    [
      'a negative misfireGraceMs',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', misfireGraceMs: -1 }),
      'misfireGraceMs',
    ],
    [
      'a misfireGraceMs over the maximum',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', misfireGraceMs: 2 ** 31 }),
      'misfireGraceMs',
    ],
    [
      'a negative activeSince',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', activeSince: -1 }),
      'activeSince',
    ],
    [
      'an activeSince that is text',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', activeSince: '0' }),
      'activeSince',
    ],
    [
      'no timezone',
      'bad',
      ({ timezone: _zone, ...pulse }) => ({ ...pulse, name: 'bad' }),
      'it has no "timezone"',
    ],
    [
      'an unknown time zone',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', timezone: 'Mars/Olympus' }),
      'is not an IANA time zone',
    ],
    [
      'a cron expression croner refuses',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', cron: 'every day' }),
      'not a cron expression',
    ],
    [
      'a relative planParent',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', planParent: 'plans' }),
      'must start with "/"',
    ],
    [
      'a planParent with a ".." segment',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', planParent: '/plans/../etc' }),
      '".." segment',
    ],
    [
      'an unknown overlap policy',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', overlap: 'sometimes' }),
      'overlap',
    ],
    [
      'an unknown misfire policy',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', misfire: 'always' }),
      'misfire',
    ],
    ['paused as text', 'bad', (pulse) => ({ ...pulse, name: 'bad', paused: 'no' }), 'paused'],
    ['removing: false', 'bad', (pulse) => ({ ...pulse, name: 'bad', removing: false }), 'removing'],
    [
      'an unknown field',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', shell: 'rm -rf /' }),
      'unknown field "shell"',
    ],
    [
      'params as a list',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', params: [1] }),
      'expected an object of named values',
    ],
    [
      'params binding firedAt',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', params: { firedAt: 'never' } }),
      '"firedAt" is the tick\'s time',
    ],
    [
      'a huge params value (over what a definition may take)',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', params: { huge } }),
      `over the ${MAX_DEFINITION_BYTES} a schedule may take`,
    ],
    [
      'a spec whose inputs form a cycle',
      'bad',
      (pulse) => ({
        ...pulse,
        name: 'bad',
        spec: { tasks: { a: { fn: 'stamp', inputs: ['a'] } } },
      }),
      'form a cycle',
    ],
    [
      'a spec with a placeholder without a value',
      'bad',
      (pulse) => ({
        ...pulse,
        name: 'bad',
        spec: { tasks: { a: { fn: 'stamp', params: [{ $param: 'region' }] } } },
      }),
      '$param: "region"',
    ],
    [
      'a spec that is not one',
      'bad',
      (pulse) => ({ ...pulse, name: 'bad', spec: { tasks: {} } }),
      'at least one task',
    ],
    [
      'a value that is not superjson',
      'bad',
      () => Buffer.from('{ not json'),
      'its value is not superjson text',
    ],
    ['a value that is not an object', 'bad', () => [1, 2], 'expected a schedule { name, cron'],
  ])('%s', async (_what, name, value, problem) => {
    const server = new MemoryZooKeeper();
    const a = await besideAValidOne(server, name, value);
    a.clock.now = T0 + 3_020;
    const fireTimes = countFireTimes();
    await a.scheduler.pass();
    const path = scheduleNodes(SCHEDULES, name).node;
    const errors = reported(a);
    expect(errors.map((error) => [error.code, error.path])).toEqual([['MALFORMED_NODE', path]]);
    expect(errors[0]?.message).toContain(problem);
    expect(errors[0]?.message).toContain(`zk-plan schedule rm ${name} --schedules ${SCHEDULES}`);
    expect(server.exists(scheduleNodes(SCHEDULES, name).cursor)).toBe(false);
    expect(plansOn(server)).toEqual(PULSE_TICKS);
    expect(fireTimes()).toBeLessThan(20);
    // The same refusal for every reader: no caller gets the definition.
    await expect(new ScheduleStore(a.zk, SCHEDULES).read(name)).rejects.toThrow(MalformedNodeError);
  });

  it('a stored definition as put writes it, at the limits, is read back as it is', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    const put = await a.schedules.put({
      ...PULSE,
      name: 'x'.repeat(100),
      catchUpLimit: MAX_CATCH_UP_LIMIT,
      misfireGraceMs: 2 ** 31 - 1,
      timezone: 'Europe/Berlin',
      params: { region: 'eu' },
      spec: {
        tasks: { ...TICK_SPEC.tasks, extra: { fn: 'stamp', params: [{ $param: 'region' }] } },
      },
      paused: true,
    });
    expect(await a.schedules.get('x'.repeat(100))).toEqual(put);
    const removing = { ...put, removing: true };
    await a.zk.setData(scheduleNodes(SCHEDULES, put.name).node, encodeValue(removing, 'test'), -1);
    expect((await new ScheduleStore(a.zk, SCHEDULES).read(put.name))?.schedule).toEqual(removing);
  });
});

describe('a forged cursor is refused too', () => {
  it('one naming more ticks than a decision can: refused, naming the cursor; no record made for them; the other schedules fire', async () => {
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    await a.schedules.put({ ...PULSE, name: 'other' });
    a.clock.now = T0 + 1_020;
    await a.scheduler.pass();
    const { cursor, node, ticks } = scheduleNodes(SCHEDULES, 'pulse');
    const fire = Array.from(
      { length: MAX_CATCH_UP_LIMIT + MAX_ON_TIME_TICKS + 1 },
      (_, at) => T0 + (at + 2) * 1000,
    );
    await a.zk.setData(
      cursor,
      encodeValue(
        { tick: T0 + 1000, skipped: 0, fire, scheduleNode: server.stat(node)?.czxid },
        'test',
      ),
      -1,
    );
    a.clock.now = T0 + 3_020;
    await a.scheduler.pass();
    expect(reported(a).map((error) => [error.code, error.path])).toEqual([
      ['MALFORMED_NODE', cursor],
    ]);
    expect(a.errors[0]).toHaveProperty(
      'message',
      expect.stringContaining('zk-plan schedule rm pulse'),
    );
    expect(server.children(ticks)).toEqual([cronTickId(T0 + 1000)]);
    expect(plansOn(server).filter((plan) => plan.startsWith('other@'))).toHaveLength(3);
  });
});

describe('a valid definition at the documented maximum is bounded per pass', () => {
  it(`one decision names at most catchUpLimit + ${MAX_ON_TIME_TICKS} ticks, from about as many fire times, and its cursor is read back`, async () => {
    const fireTimes = countFireTimes();
    const decision = dueTicks(cronTimes('* * * * * *', 'UTC', 'test'), {
      cursor: undefined,
      activeSince: 0, // the longest range there is: every second since 1970
      now: T0,
      misfire: 'fireAll',
      catchUpLimit: MAX_CATCH_UP_LIMIT,
      misfireGraceMs: 2 ** 31 - 1, // the most on-time ticks too
    });
    expect(decision.fire).toHaveLength(MAX_CATCH_UP_LIMIT + MAX_ON_TIME_TICKS);
    expect(decision).toMatchObject({ skippedMore: true, cursor: T0 });
    // One when the expression is parsed, then for each of the two ranges (missed, on time) a few (65) forward
    // from its start and one more than its limit back from its end: never the limit forward and back again.
    expect(fireTimes()).toBeLessThanOrEqual(
      1 + 2 * 65 + MAX_CATCH_UP_LIMIT + 1 + MAX_ON_TIME_TICKS + 1,
    );
    vi.restoreAllMocks();

    // The cursor naming them all fits in a node with room to spare, and is read back (not refused).
    const server = new MemoryZooKeeper();
    const a = start(server, 'a');
    await a.schedules.put(PULSE);
    const store = new ScheduleStore(a.zk, SCHEDULES);
    const read = await store.cursor('pulse');
    const czxid = server.stat(scheduleNodes(SCHEDULES, 'pulse').node)?.czxid as number;
    expect(
      await store.commitDecision('pulse', read, T0, decision.fire, decision.skipped, czxid),
    ).toBe(true);
    expect(server.getData(scheduleNodes(SCHEDULES, 'pulse').cursor)?.length).toBeLessThan(200_000);
    expect((await store.cursor('pulse')).fire).toEqual(decision.fire);
  });
});
