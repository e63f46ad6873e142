/**
 * exportPlan and importPlan against a plan that moves under them: tasks caught part-way through
 * the deletion that follows their completion, dependents part-way through deleting their inputs,
 * a plan cancelled or deleted while it is read, and an import whose write fails.
 */
import superjson from 'superjson';
import { afterEach, describe, expect, it } from 'vitest';
import { rootContainer as container } from '../../src/di/container.js';
import { FunctionRegistry } from '../../src/index.js';
import { ZkPlan } from '../../src/zk-plan.js';
import { encodeValue } from '../../src/serialization/codec.js';
import type { PlanSpec } from '../../src/spec/plan-spec.js';
import { MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';
import { writeValue } from '../../src/zk/chunked-value.js';
import {
  DEP_PREFIX,
  OWNER,
  READY,
  RESULT,
  childPath,
  keptResultPathFor,
  serialOf,
} from '../../src/zk/layout.js';
import { snapshotFunctions } from '../support/snapshot-fixture.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((plan) => plan.close()));
});

/**
 * p1 and p2 keep no result; d takes both, e takes p1, f takes p2. Uninterrupted: d = 4020,
 * e = 4001, f = 20.
 */
const SPEC: PlanSpec = {
  tasks: {
    p1: { fn: 'count', params: ['p1', 4000], options: { keepResult: false } },
    p2: { fn: 'count', params: ['p2', 20], options: { keepResult: false } },
    d: { fn: 'count', params: ['d', 0], inputs: ['p1', 'p2'] },
    e: { fn: 'count', params: ['e', 1], inputs: ['p1'] },
    f: { fn: 'count', params: ['f', 0], inputs: ['p2'] },
  },
};

interface Bench {
  readonly server: MemoryZooKeeper;
  /** A process with no workers: it submits, and edits nodes as a worker would. */
  readonly hand: MemoryProcess;
  readonly plan: string;
  readonly tasks: Readonly<Record<string, string>>;
}

async function bench(spec: PlanSpec = SPEC): Promise<Bench> {
  const server = new MemoryZooKeeper();
  const hand = memoryProcess(server, 'hand', snapshotFunctions([], false, Promise.resolve()));
  open.push(hand.zkPlan);
  const { plan, tasks } = await hand.zkPlan.submitPlan(PARENT, spec);
  return { server, hand, plan, tasks };
}

/** The dep-N of `dependent` that `producer` feeds (through the producer's prov-* link). */
async function depFedBy(b: Bench, producer: string, dependent: string): Promise<string> {
  const children = b.server
    .children(b.tasks[dependent] as string)
    .filter((name) => name.startsWith(DEP_PREFIX));
  for (const name of children) {
    const dep = childPath(b.tasks[dependent] as string, name);
    const links = b.server
      .children(b.tasks[producer] as string)
      .map((prov) => b.server.getData(childPath(b.tasks[producer] as string, prov))?.toString());
    if (links.some((link) => link !== undefined && link.includes(dep))) return dep;
  }
  throw new Error(`no dep of ${dependent} is fed by ${producer}`);
}

/** What a worker does when it hands `value` on to `dependent`: arg-N written, dep-N removed. */
async function handOn(b: Bench, dep: string, value: unknown): Promise<void> {
  const serial = serialOf(dep.slice(dep.lastIndexOf('/') + 1), DEP_PREFIX) as string;
  await writeValue(
    b.hand.zk,
    childPath(dep.slice(0, dep.lastIndexOf('/')), `arg-${serial}`),
    encodeValue(value, 'test'),
  );
  await b.hand.zk.delete(dep);
}

/** Leaves only `keep` of the task's children, as a deletion stopped at that point does. */
async function deleteAllBut(b: Bench, key: string, keep: readonly string[]): Promise<void> {
  const task = b.tasks[key] as string;
  for (const name of b.server.children(task))
    if (!keep.includes(name)) await b.hand.zk.deleteRecursive(childPath(task, name));
}

async function writeOwner(b: Bench, key: string): Promise<void> {
  await b.hand.zk.create(childPath(b.tasks[key] as string, OWNER), null, 'ephemeral');
}

/** An exporter whose reads run `before` first: a worker or user acting between two reads of the export. */
function exporterWithHook(
  b: Bench,
  before: (op: 'tryGetData' | 'tryGetChildren', path: string) => Promise<void>,
): ZkPlan<MemoryZkClient> {
  const client = b.server.connect({ name: 'exporter' });
  const hooked = new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property !== 'tryGetData' && property !== 'tryGetChildren') return value.bind(target);
      return async (path: string, ...rest: unknown[]) => {
        await before(property, path);
        return (value as (...args: unknown[]) => unknown).apply(target, [path, ...rest]);
      };
    },
  });
  const zkPlan = new ZkPlan(hooked, new FunctionRegistry(), {
    container: container.createChildContainer(),
  });
  open.push(zkPlan);
  return zkPlan;
}

/** Imports on a new server and runs it to the end; the labels of the functions that ran, and each key's result. */
async function runElsewhere(
  snapshot: unknown,
): Promise<{ runs: string[]; results: Record<string, unknown> }> {
  const runs: string[] = [];
  const proc = memoryProcess(
    new MemoryZooKeeper(),
    'elsewhere',
    snapshotFunctions(runs, false, Promise.resolve()),
  );
  open.push(proc.zkPlan);
  proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
  const imported = await proc.zkPlan.snapshots.import(
    PARENT,
    superjson.parse(superjson.stringify(snapshot)),
  );
  await proc.zkPlan.waitForCompletion(imported.plan, { timeoutMs: 10_000 });
  const results = Object.fromEntries(
    await Promise.all(
      Object.entries(imported.tasks).map(
        async ([key, task]) => [key, await proc.zkPlan.getResult(task)] as const,
      ),
    ),
  );
  return { runs: runs.sort(), results };
}

describe('exportPlan of a task whose deletion has begun', () => {
  it('gives it done, not running or runnable, in each shape a deletion stopped part-way leaves, with its result from where it still is', async () => {
    const b = await bench();
    // p1 and p2 finished and handed their results on; p1 is left with `owner` only, p2 with a `result` whose chunks went first.
    await handOn(b, await depFedBy(b, 'p1', 'd'), 4000);
    await handOn(b, await depFedBy(b, 'p1', 'e'), 4000);
    await handOn(b, await depFedBy(b, 'p2', 'd'), 20);
    await handOn(b, await depFedBy(b, 'p2', 'f'), 20);
    await writeOwner(b, 'p1');
    await deleteAllBut(b, 'p1', [OWNER]);
    await b.hand.zk.create(
      childPath(b.tasks['p2'] as string, RESULT),
      Buffer.from(
        superjson.stringify({ zkPlanChunked: 1, bytes: 9, chunks: 1, sha256: '0'.repeat(64) }),
      ),
    );
    await deleteAllBut(b, 'p2', [RESULT]);
    // d finished (its result kept) and is deleting: `owner` left, and so far nothing else removed but `ready`.
    await writeValue(
      b.hand.zk,
      keptResultPathFor(b.tasks['d'] as string),
      encodeValue(4020, 'test'),
    );
    await writeOwner(b, 'd');
    await b.hand.zk.delete(childPath(b.tasks['d'] as string, READY));

    const snapshot = await b.hand.zkPlan.snapshots.export(b.plan);
    expect(snapshot.tasks).toEqual({
      p1: { state: 'done', hasResult: true, result: 4000, resultFrom: 'input' },
      p2: { state: 'done', hasResult: true, result: 20, resultFrom: 'input' },
      d: { state: 'done', hasResult: true, result: 4020, resultFrom: 'kept' },
      e: { state: 'runnable', failedTries: 0 },
      f: { state: 'runnable', failedTries: 0 },
    });
    const elsewhere = await runElsewhere(snapshot);
    expect(elsewhere.runs).toEqual(['e', 'f']);
    expect(elsewhere.results).toMatchObject({ d: 4020, e: 4001, f: 20 });
  });

  it('tells a result half-written by a live task (it runs again) from one being deleted, also when the deletion happens between two reads', async () => {
    const b = await bench();
    // p1 is running and its result write stopped half-way: `ready` is still there.
    await writeOwner(b, 'p1');
    await b.hand.zk.create(
      childPath(b.tasks['p1'] as string, RESULT),
      Buffer.from(
        superjson.stringify({ zkPlanChunked: 1, bytes: 9, chunks: 1, sha256: '0'.repeat(64) }),
      ),
    );
    // p2 finished and handed on; its `result` is complete when listed, and gone (with `ready`) when read.
    await handOn(b, await depFedBy(b, 'p2', 'd'), 20);
    await handOn(b, await depFedBy(b, 'p2', 'f'), 20);
    await writeValue(
      b.hand.zk,
      childPath(b.tasks['p2'] as string, RESULT),
      encodeValue(20, 'test'),
    );
    await writeOwner(b, 'p2');
    const p2Result = childPath(b.tasks['p2'] as string, RESULT);
    let raced = false;
    const exporter = exporterWithHook(b, async (op, path) => {
      if (op !== 'tryGetData' || path !== p2Result || raced) return;
      raced = true;
      await deleteAllBut(b, 'p2', [OWNER]);
    });
    const snapshot = await exporter.snapshots.export(b.plan);
    expect(raced).toBe(true);
    expect(snapshot.tasks['p1']).toEqual({ state: 'running', failedTries: 0 });
    expect(snapshot.tasks['p2']).toEqual({
      state: 'done',
      hasResult: true,
      result: 20,
      resultFrom: 'input',
    });
    expect(snapshot.tasks['f']).toEqual({ state: 'runnable', failedTries: 0 });
  });
});

describe('exportPlan of an input held by a dependent', () => {
  it('passes over a dependent deleting its inputs (the positions of the rest have shifted) and takes the input where every slot is there', async () => {
    const b = await bench();
    await handOn(b, await depFedBy(b, 'p1', 'd'), 4000);
    await handOn(b, await depFedBy(b, 'p1', 'e'), 4000);
    await handOn(b, await depFedBy(b, 'p2', 'd'), 20);
    await handOn(b, await depFedBy(b, 'p2', 'f'), 20);
    await b.hand.zk.deleteRecursive(b.tasks['p1'] as string);
    await b.hand.zk.deleteRecursive(b.tasks['p2'] as string);
    // d ran (4020, kept) and its deletion removed `ready` and p1's arg so far: its one slot left is p2's, at position 0.
    await writeValue(
      b.hand.zk,
      keptResultPathFor(b.tasks['d'] as string),
      encodeValue(4020, 'test'),
    );
    await writeOwner(b, 'd');
    const dChildren = b.server
      .children(b.tasks['d'] as string)
      .filter((name) => name.startsWith('arg-'));
    const first = dChildren.sort()[0] as string; // p1 is d's first input: its arg has the lower serial
    await b.hand.zk.delete(childPath(b.tasks['d'] as string, first));
    await b.hand.zk.delete(childPath(b.tasks['d'] as string, READY));

    const snapshot = await b.hand.zkPlan.snapshots.export(b.plan);
    expect(snapshot.tasks['p1']).toEqual({
      state: 'done',
      hasResult: true,
      result: 4000,
      resultFrom: 'input',
    });
    expect(snapshot.tasks['p2']).toEqual({
      state: 'done',
      hasResult: true,
      result: 20,
      resultFrom: 'input',
    });
    const elsewhere = await runElsewhere(snapshot);
    expect(elsewhere.runs).toEqual(['e', 'f']);
    expect(elsewhere.results).toMatchObject({ e: 4001, f: 20 });
  });
});

describe('exportPlan of a plan removed while it is read', () => {
  it.each([
    ['cancelled', (b: Bench) => b.hand.zkPlan.control.cancel(b.plan), 'SNAPSHOT_PLAN_CANCELLED'],
    ['deleted', (b: Bench) => b.hand.zkPlan.plans.delete(b.plan), 'PLAN_NOT_FOUND'],
  ] as const)(
    'refuses a plan %s after its first task was read, instead of giving never-run tasks as done',
    async (_what, remove, code) => {
      const b = await bench();
      let removed = false;
      const exporter = exporterWithHook(b, async (op, path) => {
        if (op !== 'tryGetChildren' || path !== b.tasks['e'] || removed) return;
        removed = true;
        await remove(b);
      });
      await expect(exporter.snapshots.export(b.plan)).rejects.toMatchObject({ code, path: b.plan });
      expect(removed).toBe(true);
    },
  );
});

describe('importPlan whose write fails', () => {
  it('deletes the unready plan it began, and a repeat imports it whole', async () => {
    const source = await bench();
    const snapshot = await source.hand.zkPlan.snapshots.export(source.plan);
    const target = new MemoryZooKeeper();
    const runs: string[] = [];
    const importer = memoryProcess(
      target,
      'importer',
      snapshotFunctions(runs, false, Promise.resolve()),
    );
    open.push(importer.zkPlan);
    importer.zk.loseNextReply(
      (op, path) => op === 'create' && path.includes('/task-') && path.endsWith(`/${DEP_PREFIX}`),
    );
    await expect(importer.zkPlan.snapshots.import(PARENT, snapshot)).rejects.toMatchObject({
      code: 'CONNECTION_LOSS',
    });
    expect(target.children(PARENT)).toEqual([]);
    importer.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    const imported = await importer.zkPlan.snapshots.import(PARENT, snapshot);
    await importer.zkPlan.waitForCompletion(imported.plan, { timeoutMs: 10_000 });
    expect(runs.sort()).toEqual(['d', 'e', 'f', 'p1', 'p2']);
    expect(target.children(PARENT).filter((name) => name.startsWith('plan-'))).toEqual([
      imported.plan.slice(PARENT.length + 1),
    ]);
  });
});
