/**
 * Defects an adversarial review found in the job protocol, each driven pass by pass over the
 * in-memory ZooKeeper with injected clocks, asserting the behaviour that holds now.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { ASSIGNMENT_BUDGET_BYTES, fitAssignment } from '../../src/jobs/assignment.js';
import type { JobContext } from '../../src/jobs/job-context.js';
import { resolveJob } from '../../src/jobs/job-definition.js';
import type { LeaseRecord } from '../../src/jobs/lease.js';
import { StrategyRegistry, type AssignmentStrategy } from '../../src/jobs/strategies.js';
import { decodeValue, encodeValue } from '../../src/serialization/codec.js';
import { ManualScheduler, MemoryZooKeeper } from '../../src/testing/index.js';
import { jobsNodes } from '../../src/zk/layout.js';
import { expectThrows } from '../support/expect-error.js';
import {
  JOBS,
  TIMING,
  World,
  activity,
  holder,
  run,
  sleep,
  workingOn,
  type Proc,
} from './support/job-harness.js';

const forever = (): Promise<never> => new Promise(() => undefined);

async function rounds(
  world: World,
  procs: readonly Proc[],
  count = 3,
  stepMs = 100,
): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (let i = 0; i < count; i++) {
    for (const proc of procs)
      await proc.worker.pass().catch((error: unknown) => failures.push(error));
    for (const proc of procs)
      await proc.manager.pass().catch((error: unknown) => failures.push(error));
    for (const proc of procs)
      await proc.worker.pass().catch((error: unknown) => failures.push(error));
    world.advance(stepMs);
    await sleep(10);
  }
  return failures;
}

/** A strategy that gives every item to the worker whose id sorts last (so a test decides who gets what by naming). */
const toLastNamed: AssignmentStrategy = ({ items, workers }) => {
  const sorted = [...workers].sort();
  const last = sorted.at(-1);
  return Object.fromEntries(
    sorted.map((worker) => [worker, worker === last ? [...items].sort() : []]),
  );
};

describe('a write of a live holder sent again after a reconnect', () => {
  it("never lands on the next holder's lease: the lease node of an item that left the pool is pruned while its holder lives, and the holder's late release stays off the new node", async () => {
    const manual = new ManualScheduler();
    const world = new World(new MemoryZooKeeper({ scheduler: manual }));
    const logs = { a: activity(), b: activity(), e: activity() };
    const a = world.spawn('a', { hold: holder(logs.a) });
    const b = world.spawn('b', { hold: holder(logs.b) });
    const leasePath = a.store.leasePath('j', 'm');
    const leaseOf = (): LeaseRecord =>
      decodeValue(leasePath, world.server.getData(leasePath)) as LeaseRecord;
    await run(
      manual,
      world.jobs.define({ name: 'j', fn: 'hold', workPool: { items: ['m'] }, mode: 'continuous' }),
    );
    await run(manual, a.worker.pass());
    await run(manual, b.worker.pass());
    await run(manual, b.manager.pass());
    await run(manual, a.worker.pass()); // a takes m
    await sleep(10);
    expect(a.worker.heldItems()).toEqual({ j: ['m'] });

    // m leaves the pool; a writes its lease released just as its connection drops (its session lives on).
    await run(manual, world.jobs.setWorkPool('j', ['n']));
    await run(manual, b.manager.pass());
    await run(manual, a.worker.pass());
    await sleep(10);
    const aPass = a.worker.pass();
    await run(manual, aPass, () => {
      const head = manual.queued('a')[0];
      if (head?.op !== 'setData' || head.path !== leasePath) return false;
      a.zk.disconnect();
      return true;
    });
    // a's lease runs out: its node is pruned, although a is still a live worker.
    world.advance(TIMING.leaseMs + TIMING.driftMs + 50);
    await run(manual, b.manager.pass());
    expect(world.server.exists(leasePath)).toBe(false);

    // m comes back and goes to b, which takes it on a new lease node (version 0, then 1).
    await run(manual, world.jobs.setWorkPool('j', ['c', 'd', 'm', 'n']));
    await run(manual, b.manager.pass());
    await run(manual, b.worker.pass());
    await sleep(10);
    expect(b.worker.heldItems()).toEqual({ j: ['d', 'm'] });
    const bToken = leaseOf().token;

    // a reconnects: its old release is not sent again (its node is gone), b's lease stays b's.
    a.zk.reconnect();
    await run(manual, aPass);
    expect(leaseOf()).toMatchObject({ holder: 'b', token: bToken });
    expect(leaseOf().released).toBeUndefined();
    const e = world.spawn('e', { hold: holder(logs.e) });
    for (let i = 0; i < 3; i++) {
      for (const proc of [e, b]) await run(manual, proc.worker.pass());
      await run(manual, b.manager.pass());
      await sleep(10);
      expect(
        workingOn(logs.b, 'm').length + workingOn(logs.e, 'm').length,
        'workers on m',
      ).toBeLessThanOrEqual(1);
    }
  });

  it('a take whose send was lost, sent again in the same session after the lease node was pruned and made again, never lands on the new holder’s lease (defect 4)', async () => {
    const manual = new ManualScheduler();
    const world = new World(new MemoryZooKeeper({ scheduler: manual }));
    const logs = { a: activity(), d: activity(), x: activity() };
    const manager = world.spawn('mgr', {}, { strategies: { toLastNamed } }); // no job function: it only manages
    const a = world.spawn('a', { hold: holder(logs.a) });
    const x = world.spawn('x', { hold: holder(logs.x) });
    const leasePath = a.store.leasePath('j', 'm');
    const leaseOf = (): LeaseRecord =>
      decodeValue(leasePath, world.server.getData(leasePath)) as LeaseRecord;
    const passes = async (...procs: Proc[]): Promise<void> => {
      for (const proc of procs) await run(manual, proc.worker.pass());
      await run(manual, manager.manager.pass());
      for (const proc of procs) await run(manual, proc.worker.pass());
      await sleep(10);
    };
    await run(
      manual,
      world.jobs.define({
        name: 'j',
        fn: 'hold',
        workPool: { items: ['m'] },
        mode: 'continuous',
        strategy: 'toLastNamed',
      }),
    );
    await run(manual, manager.worker.pass());
    await passes(a, x); // m goes to x, which takes it (version 1)
    expect(x.worker.heldItems()).toEqual({ j: ['m'] });
    await run(manual, x.worker.stop()); // x gives m back (version 2) and leaves
    await run(manual, manager.manager.pass()); // m goes to a

    // a reads the released lease (version 2) and sends its take, which never reaches the server.
    a.zk.failNextSend((op, path) => op === 'setData' && path === leasePath, { reconnect: false });
    const aPass = a.worker.pass();
    await run(manual, aPass, () => a.zk.state === 'suspended');

    // Meanwhile m leaves the pool (its released lease is pruned), comes back, and goes to d, which takes it and renews: version 2 again.
    await run(manual, world.jobs.setWorkPool('j', ['n']));
    await run(manual, manager.manager.pass());
    expect(world.server.exists(leasePath)).toBe(false);
    const d = world.spawn('d', { hold: holder(logs.d) });
    await run(manual, world.jobs.setWorkPool('j', ['m']));
    await run(manual, d.worker.pass());
    await run(manual, manager.manager.pass());
    await run(manual, d.worker.pass());
    world.advance(TIMING.leaseMs / 3);
    await run(manual, d.worker.pass());
    await sleep(10);
    expect(d.worker.heldItems()).toEqual({ j: ['m'] });
    expect(world.server.stat(leasePath)?.version).toBe(2);
    const dToken = leaseOf().token;

    // a is back: its take is not sent again onto d's node; d keeps m, and its token has not gone down.
    a.zk.reconnect();
    await run(manual, aPass);
    await sleep(10);
    expect(a.worker.heldItems()).toEqual({});
    expect(workingOn(logs.a, 'm').length + workingOn(logs.d, 'm').length).toBe(1);
    expect(leaseOf()).toMatchObject({ holder: 'd', token: dToken });
    world.advance(TIMING.leaseMs / 3);
    await run(manual, d.worker.pass());
    expect(d.worker.heldItems()).toEqual({ j: ['m'] });
  });

  it('lease nodes do not pile up while workers live and item ids come and go (defect 6)', async () => {
    const world = new World();
    const logs = { a: activity() };
    const a = world.spawn('a', { hold: holder(logs.a) });
    await world.jobs.define({
      name: 'j',
      fn: 'hold',
      workPool: { items: ['item-0'] },
      mode: 'continuous',
    });
    await rounds(world, [a], 2);
    for (let generation = 1; generation <= 6; generation++) {
      await world.jobs.setWorkPool('j', [`item-${generation}`]);
      await rounds(world, [a], 3);
    }
    expect(a.worker.heldItems()).toEqual({ j: ['item-6'] });
    expect(world.server.children(`${JOBS}/zk-plan-job-leases/j`)).toEqual(['item-6']);
  });
});

describe('a job defined again', () => {
  const start = async (
    world: World,
    fns: Record<string, (ctx: JobContext) => unknown>,
  ): Promise<Proc> => {
    const a = world.spawn('a', fns);
    await rounds(world, [a], 1);
    return a;
  };

  it('with another function: the run is aborted and the new function runs', async () => {
    const world = new World();
    const calls: string[] = [];
    const hold = (name: string) => async (ctx: JobContext) => {
      calls.push(name);
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    };
    await world.jobs.define({
      name: 'j',
      fn: 'old',
      workPool: { items: ['x'] },
      mode: 'continuous',
    });
    const a = await start(world, { old: hold('old'), new: hold('new') });
    expect(calls).toEqual(['old']);
    await world.jobs.define({
      name: 'j',
      fn: 'new',
      workPool: { items: ['x'] },
      mode: 'continuous',
    });
    await rounds(world, [a]);
    expect(calls).toEqual(['old', 'new']);
  });

  it('with new shard params: the next runs get them', async () => {
    const world = new World();
    const seen: unknown[] = [];
    await world.jobs.define({
      name: 'j',
      fn: 'f',
      workPool: { shards: 1, params: ['v1'] },
      mode: { everyMs: 10 },
    });
    const a = await start(world, { f: (ctx: JobContext) => void seen.push(ctx.items[0]?.params) });
    await world.jobs.define({
      name: 'j',
      fn: 'f',
      workPool: { shards: 1, params: ['v2'] },
      mode: { everyMs: 10 },
    });
    await rounds(world, [a]);
    await sleep(50);
    expect(seen.at(-1)).toBe('v2');
  });

  it('from continuous to everyMs: the continuous run stops and timed runs follow', async () => {
    const world = new World();
    const runs: (Date | undefined)[] = [];
    const fn = async (ctx: JobContext) => {
      runs.push(ctx.firedAt);
      if (ctx.firedAt === undefined)
        await new Promise((resolve) =>
          ctx.signal.addEventListener('abort', resolve, { once: true }),
        );
    };
    await world.jobs.define({ name: 'j', fn: 'f', workPool: { items: ['x'] }, mode: 'continuous' });
    const a = await start(world, { f: fn });
    await world.jobs.define({
      name: 'j',
      fn: 'f',
      workPool: { items: ['x'] },
      mode: { everyMs: 10 },
    });
    await rounds(world, [a]);
    await sleep(50);
    expect(runs.some((firedAt) => firedAt !== undefined)).toBe(true);
  });
});

describe('malformed or oversized state', () => {
  it('a malformed assignment node: workers keep (and renew) what they hold, and the manager writes it again', async () => {
    const world = new World();
    const a = world.spawn('a', { f: forever });
    await world.jobs.define({
      name: 'j',
      fn: 'f',
      workPool: { items: ['x', 'y'] },
      mode: 'continuous',
    });
    await rounds(world, [a]);
    expect(a.worker.heldItems()).toEqual({ j: ['x', 'y'] });
    await world.admin.setData(jobsNodes(JOBS).assignment, encodeValue({ jobs: {} }, 'x'));
    await a.worker.pass(); // reads the broken node: keeps its items
    expect(a.worker.heldItems()).toEqual({ j: ['x', 'y'] });
    const failures = await rounds(world, [a], 15, 300); // 4.5 s: far past the lease
    expect(failures).toEqual([]);
    expect(a.worker.heldItems()).toEqual({ j: ['x', 'y'] });
    const record = decodeValue('a', world.server.getData(jobsNodes(JOBS).assignment)) as {
      jobs: Record<string, Record<string, string[]>>;
    };
    expect(record.jobs['j']).toEqual({ a: ['x', 'y'] });
  });

  it('an assignment of every job together too big for one node: the largest job is left unassigned, named, and the others are assigned', () => {
    const ids = (prefix: string, count: number): string[] =>
      Array.from({ length: count }, (_, i) => `${prefix}-${'x'.repeat(80)}-${i}`);
    const decision = {
      jobs: {
        big: { w1: ids('big', 6_000) },
        mid: { w1: ids('mid', 5_000) },
        small: { w1: ['s1'] },
      },
      problems: {},
    };
    const fitted = fitAssignment(decision, ASSIGNMENT_BUDGET_BYTES);
    expect(Object.keys(fitted.jobs).sort()).toEqual(['mid', 'small']);
    expect(fitted.problems['big']).toContain('left unassigned');
    expect(
      fitAssignment({ jobs: { small: { w1: ['s1'] } }, problems: {} }, ASSIGNMENT_BUDGET_BYTES)
        .jobs,
    ).toEqual({ small: { w1: ['s1'] } });
    const error = expectThrows(
      () =>
        resolveJob(
          { name: 'huge', fn: 'f', workPool: { items: ids('h', 6_000) }, mode: 'continuous' },
          new Date(0),
        ),
      InvalidArgumentError,
    );
    expect(error.message).toContain('at most 400000');
  });

  it('a strategy that answers with a promise is refused, not left to reject unhandled', () => {
    const strategies = new StrategyRegistry().register(
      'async',
      () => Promise.reject(new Error('late')) as never,
    );
    expect(() => strategies.assign('async', { items: ['a'], workers: ['w'], current: {} })).toThrow(
      'decides synchronously',
    );
  });
});

describe('the manager election', () => {
  it('the first candidate (lowest serial) leads, and keeps leading when others join', async () => {
    const world = new World();
    const a = world.spawn('a', {});
    const b = world.spawn('b', {});
    await a.manager.pass();
    await b.manager.pass();
    await a.manager.pass();
    expect({ a: a.manager.isLeader, b: b.manager.isLeader }).toEqual({ a: true, b: false });
  });
});

describe('watches of a removed job', () => {
  it.each([
    ['never triggered', false],
    ['triggered', true],
  ])(
    '%s: the workers hold no watch on its nodes once they have let it go',
    async (_name, triggered) => {
      const world = new World();
      const runs: string[] = [];
      await world.jobs.define({
        name: 'j',
        fn: 'f',
        workPool: { items: ['x'] },
        mode: { everyMs: 60_000 },
      });
      const a = world.spawn('a', {
        f: (ctx: JobContext) => void runs.push(ctx.firedAt?.toISOString() ?? ''),
      });
      expect(await rounds(world, [a])).toEqual([]);
      expect(a.worker.heldItems()).toEqual({ j: ['x'] });
      if (triggered) {
        const before = runs.length;
        await world.jobs.trigger('j');
        await rounds(world, [a], 1);
        await sleep(20);
        expect(runs.length).toBeGreaterThan(before); // the watch that stays is the one that works
      }
      expect(world.server.watchCount(`${JOBS}/j`)).toBeGreaterThan(0);

      // remove() disables the job and waits until its items are given back, which passes of the worker do.
      let removed = false;
      const removing = world.jobs.remove('j').then(() => (removed = true));
      for (let i = 0; i < 50 && !removed; i++) {
        expect(await rounds(world, [a], 1)).toEqual([]);
        await sleep(50);
      }
      await removing;
      expect(await rounds(world, [a])).toEqual([]);
      expect(a.worker.heldItems()).toEqual({});
      expect(world.server.watches().filter((watch) => watch.path.startsWith(`${JOBS}/j`))).toEqual(
        [],
      );
    },
  );

  it('a job triggered between the two reads of a pass: its trigger node is watched, and the next trigger runs it', async () => {
    const world = new World();
    let runs = 0;
    await world.jobs.define({
      name: 'j',
      fn: 'f',
      workPool: { items: ['x'] },
      mode: { everyMs: 60_000 },
    });
    const a = world.spawn('a', { f: () => void (runs += 1) });
    // The first trigger lands between the worker's read of the trigger node and its listing of the job.
    const store = a.store;
    const triggers = store.triggers.bind(store);
    let injected = false;
    store.triggers = async (name, watcher) => {
      if (!injected) {
        injected = true;
        const zk = a.zk;
        const getData = zk.getData.bind(zk);
        zk.getData = async (path, w) => {
          try {
            return await getData(path, w);
          } finally {
            if (path.endsWith('/trigger')) {
              zk.getData = getData;
              await world.jobs.trigger(name);
            }
          }
        };
      }
      return triggers(name, watcher);
    };
    expect(await rounds(world, [a])).toEqual([]);
    await sleep(20);
    // The next trigger is a write to the trigger node: the worker hears of it through a watch there, not at its next poll.
    expect(
      world.server.watches().filter((watch) => watch.path === `${JOBS}/j/trigger`),
    ).toHaveLength(1);
    const afterFirst = runs;
    await world.jobs.trigger('j');
    expect(await rounds(world, [a], 1)).toEqual([]);
    await sleep(20);
    expect(runs).toBeGreaterThan(afterFirst);
  });
});
