import { PlanWriter } from '../src/plan/plan-writer.js';
import { TaskSpawner } from '../src/spawn/task-spawner.js';
import { rootContainer as container } from '../src/di/container.js';
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../src/index.js';
import { decodeValue, encodeValue, type ZkClient } from '../src/testing/index.js';
import { performTask } from '../src/worker/perform-task.js';
import { TaskStore, type Claim } from '../src/store/task-store.js';
import { childrenOf, put, putTask } from './support/raw-nodes.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('spec-perform-task');

function context(zk: ZkClient, functions = new FunctionRegistry()) {
  const store = new TaskStore(zk);
  return {
    store,
    spawner: new TaskSpawner(zk, store, new PlanWriter(zk, store, functions)),
    container: container.createChildContainer(),
    execution: {
      functions,
      allowInline: false,
      inlineTimeoutMs: 1_000,
      allowShell: false,
      shellKillGraceMs: 1_000,
      maxResultBytes: 16 * 1024 * 1024,
    },
  };
}

async function claimed(zk: ZkClient, task: string): Promise<Claim> {
  const claim = await new TaskStore(zk).claim(task, 'test-worker', new AbortController().signal);
  if (claim === undefined) throw new Error(`could not claim ${task}`);
  return claim;
}

async function valueAt(zk: ZkClient, path: string): Promise<unknown> {
  return decodeValue(path, (await zk.getData(path)).data);
}

describe('perform-task (spec behaviours on real znodes)', () => {
  it("removes a task that has a 'result' and no prov-* children, without running it", async () => {
    const zk = await env.client();
    const plan = env.root();
    let ran = false;
    const functions = new FunctionRegistry().register('f', () => (ran = true));
    const task = await putTask(zk, `${plan}/task-0000001234`, ['ready'], { fn: 'f', params: [] });
    await zk.create(`${task}/result`, encodeValue(123, 'result'));
    expect(await performTask(await claimed(zk, task), context(zk, functions))).toBe(
      'finished-previous',
    );
    expect(await zk.exists(task)).toBeUndefined();
    expect(ran).toBe(false);
  });

  it('distributes an existing result to every dependent (arg-N with the dep serial, dep-N removed)', async () => {
    const zk = await env.client();
    const plan = env.root();
    const task = await putTask(zk, `${plan}/task-0000001234`, ['ready']);
    await zk.create(`${task}/result`, encodeValue(3.1415, 'result'));
    const first = await putTask(zk, `${plan}/task-0000002000`, ['ready', 'dep-0000000007']);
    const second = await putTask(zk, `${plan}/task-0000003000`, [
      'ready',
      'dep-0000000001',
      'dep-0000000002',
    ]);
    await put(zk, `${task}/prov-0000000000`, `${first}/dep-0000000007`);
    await put(zk, `${task}/prov-0000000001`, `${second}/dep-0000000002`);
    await performTask(await claimed(zk, task), context(zk));
    expect(await childrenOf(zk, first)).toEqual(['arg-0000000007', 'ready']);
    expect(await childrenOf(zk, second)).toEqual(['arg-0000000002', 'dep-0000000001', 'ready']);
    expect(await valueAt(zk, `${first}/arg-0000000007`)).toBe(3.1415);
    expect(await valueAt(zk, `${second}/arg-0000000002`)).toBe(3.1415);
    expect(await zk.exists(task)).toBeUndefined();
  });

  it('runs the function when there is no result, stores it, propagates it and deletes the task', async () => {
    const zk = await env.client();
    const plan = env.root();
    const seen: unknown[] = [];
    const functions = new FunctionRegistry().register('mul', (ctx, ...args: number[]) => {
      seen.push({ params: ctx.params, args, task: ctx.task, plan: ctx.plan });
      return (ctx.params[0] as number) * args.reduce((a, b) => a + b, 0);
    });
    const task = await putTask(zk, `${plan}/task-0000001234`, ['ready'], {
      fn: 'mul',
      params: [10],
    });
    await put(zk, `${task}/arg-0000000002`, 2);
    await put(zk, `${task}/arg-0000000001`, 1);
    const dependent = await putTask(zk, `${plan}/task-0000002000`, ['ready', 'dep-0000000005']);
    await put(zk, `${task}/prov-0000000003`, `${dependent}/dep-0000000005`);
    expect(await performTask(await claimed(zk, task), context(zk, functions))).toBe('completed');
    expect(seen).toEqual([{ params: [10], args: [1, 2], task, plan }]);
    expect(await valueAt(zk, `${dependent}/arg-0000000005`)).toBe(30);
    expect(await zk.exists(task)).toBeUndefined();
  });

  it('passes arguments in arg serial order, whatever order ZooKeeper lists them in', async () => {
    const zk = await env.client();
    const functions = new FunctionRegistry().register('list', (_ctx, ...args: unknown[]) => args);
    const task = await putTask(zk, `${env.root()}/task-0000001234`, ['ready'], {
      fn: 'list',
      params: [],
    });
    for (const serial of ['0000000010', '0000000002', '0000000001', '0000000100'])
      await put(zk, `${task}/arg-${serial}`, Number(serial));
    const dependent = await putTask(zk, `${env.root()}/task-0000002000`, [
      'ready',
      'dep-0000000001',
    ]);
    await put(zk, `${task}/prov-0000000000`, `${dependent}/dep-0000000001`);
    await performTask(await claimed(zk, task), context(zk, functions));
    expect(await valueAt(zk, `${dependent}/arg-0000000001`)).toEqual([1, 2, 10, 100]);
  });

  it('returns without doing anything when the task node is already gone', async () => {
    const zk = await env.client();
    const task = await putTask(zk, `${env.root()}/task-0000001234`, ['ready']);
    const { prefetched, ...claim } = await claimed(zk, task); // a claim taken a while ago: nothing read yet
    await prefetched;
    await zk.deleteRecursive(task);
    const writesBefore = zk.counts.writes;
    expect(await performTask(claim, context(zk))).toBe('gone');
    expect(zk.counts.writes).toBe(writesBefore);
  });

  it('does not write a result when the task disappears before its arguments are read', async () => {
    const zk = await env.client();
    let ran = false;
    const functions = new FunctionRegistry().register('f', () => (ran = true));
    const task = await putTask(zk, `${env.root()}/task-0000001234`, ['ready'], {
      fn: 'f',
      params: [],
    });
    await put(zk, `${task}/arg-0000000001`, 1);
    const claim = await claimed(zk, task);
    const ctx = context(zk, functions);
    const readArgs = ctx.store.reads.readArgs.bind(ctx.store.reads);
    ctx.store.reads.readArgs = async (path, children) => {
      await zk.deleteRecursive(task);
      return readArgs(path, children);
    };
    expect(await performTask(claim, ctx)).toBe('gone');
    expect(ran).toBe(false);
    expect(await zk.exists(task)).toBeUndefined();
  });

  it('keeps the result of a keepResult task in the plan after deleting the task', async () => {
    const zk = await env.client();
    const plan = env.root();
    const functions = new FunctionRegistry().register('answer', () => new Map([['answer', 42]]));
    const task = await putTask(zk, `${plan}/task-0000000007`, ['ready'], {
      fn: 'answer',
      params: [],
      keepResult: true,
    });
    await performTask(await claimed(zk, task), context(zk, functions));
    expect(await zk.exists(task)).toBeUndefined();
    expect(await valueAt(zk, `${plan}/result-0000000007`)).toEqual(new Map([['answer', 42]]));
  });

  it('gives the task back untouched when it is not runnable any more (deps appeared)', async () => {
    const zk = await env.client();
    const task = await putTask(zk, `${env.root()}/task-0000001234`, ['ready', 'dep-0000000001']);
    expect(await performTask(await claimed(zk, task), context(zk))).toBe('not-runnable');
    expect(await childrenOf(zk, task)).toEqual(['dep-0000000001', 'owner', 'ready']);
  });
});
