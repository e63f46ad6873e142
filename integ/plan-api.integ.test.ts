import { describe, expect, it } from 'vitest';
import {
  ArgTaskNotFoundError,
  ForeignArgTaskError,
  FunctionRegistry,
  IllegalStateError,
  InvalidArgumentError,
  PlanNotFoundError,
  ResultNotFoundError,
  UnknownFunctionError,
  UnserializableValueError,
  ValueTooLargeError,
  WaitTimeoutError,
  ZkConnectTimeoutError,
  ZkPlan,
  call,
} from '../src/index.js';
import { decodeValue } from '../src/testing/index.js';
import { childrenOf } from './support/raw-nodes.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('plan-api');

const arithmetic = () =>
  new FunctionRegistry()
    .register('constant', (ctx) => ctx.params[0])
    .register('add', (ctx, ...args: number[]) =>
      args.reduce((a, b) => a + b, (ctx.params[0] as number | undefined) ?? 0),
    )
    .register('list', (_ctx, ...args: unknown[]) => args);

describe('createPlan', () => {
  it('creates the parent when missing and returns a sequential plan- path under it', async () => {
    const zkPlan = await env.zkPlan();
    const parent = `${env.root()}/nested/plans`;
    const first = await zkPlan.createPlan(parent);
    const second = await zkPlan.createPlan(parent);
    expect(first).toMatch(new RegExp(`^${parent}/plan-\\d{10}$`));
    expect(second > first).toBe(true);
    expect(await childrenOf(zkPlan.zk, parent)).toEqual(
      [first, second].map((path) => path.slice(parent.length + 1)),
    );
  });

  it('rejects a path that is not an absolute znode path', async () => {
    const zkPlan = await env.zkPlan();
    await expect(zkPlan.createPlan('plans')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(zkPlan.createPlan('/plans/')).rejects.toThrow(/must not end with/);
  });
});

describe('addTask', () => {
  it('stores the definition as superjson, one dep-* per input in order, a prov-* on each input pointing at its dep, then ready', async () => {
    const zkPlan = await env.zkPlan({ functions: arithmetic() });
    const plan = await zkPlan.createPlan(env.root());
    const a = await zkPlan.addTask(plan, call('constant', 1));
    const b = await zkPlan.addTask(plan, call('constant', new Date(5)));
    const c = await zkPlan.addTask(plan, call('list'), [b, a, b]);
    const node = await zkPlan.zk.getData(c);
    // The definition, plus the stamp of the session and batch that added it (see settleOrphan).
    expect(JSON.parse(node.data?.toString('utf8') ?? '')).toEqual({
      json: { fn: 'list', params: [], builder: zkPlan.zk.session.id, batch: expect.any(String) },
    });
    expect(decodeValue(b, (await zkPlan.zk.getData(b)).data)).toEqual({
      fn: 'constant',
      params: [new Date(5)],
      builder: zkPlan.zk.session.id,
      batch: expect.any(String),
    });
    const children = (await childrenOf(zkPlan.zk, c)) ?? [];
    const deps = children.filter((name) => name.startsWith('dep-'));
    expect(deps).toHaveLength(3);
    expect(children).toContain('ready');
    const provsOf = async (task: string) =>
      Promise.all(
        ((await childrenOf(zkPlan.zk, task)) ?? [])
          .filter((name) => name.startsWith('prov-'))
          .map(async (name) =>
            decodeValue(name, (await zkPlan.zk.getData(`${task}/${name}`)).data),
          ),
      );
    expect(await provsOf(a)).toEqual([`${c}/${deps[1]}`]);
    expect(await provsOf(b)).toEqual([`${c}/${deps[0]}`, `${c}/${deps[2]}`]);
  });

  it('runs the dependent with its inputs in the order given to addTask, duplicates included', async () => {
    const zkPlan = await env.zkPlan({ functions: arithmetic() });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const tasks = [];
    for (const value of ['a', 'b', 'c'])
      tasks.push(await zkPlan.addTask(plan, call('constant', value)));
    const [a, b, c] = tasks as [string, string, string];
    const list = await zkPlan.addTask(plan, call('list'), [c, a, b, a], { keepResult: true });
    const sum = await zkPlan.addTask(plan, call('add', 10), [], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, { count: 3, backoff: { initial: 10, max: 100 } });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    await pool.stop();
    expect(await zkPlan.getResult(list)).toEqual(['c', 'a', 'b', 'a']);
    expect(await zkPlan.getResult(sum)).toBe(10);
    expect(await zkPlan.planCompleted(plan)).toBe(true);
    expect((await childrenOf(zkPlan.zk, plan))?.filter((name) => name.startsWith('task-'))).toEqual(
      [],
    );
  });

  it('rejects an input task that does not exist, and leaves nothing behind', async () => {
    const zkPlan = await env.zkPlan({ functions: arithmetic() });
    const plan = await zkPlan.createPlan(env.root());
    const error = await zkPlan
      .addTask(plan, call('list'), [`${plan}/task-0000000042`])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ArgTaskNotFoundError);
    expect((error as ArgTaskNotFoundError).code).toBe('ARG_TASK_NOT_FOUND');
    expect((error as ArgTaskNotFoundError).path).toBe(`${plan}/task-0000000042`);
    expect(await childrenOf(zkPlan.zk, plan)).toEqual(['history', 'runnable']);
  });

  it('rejects an input task of another plan', async () => {
    const zkPlan = await env.zkPlan({ functions: arithmetic() });
    const plan = await zkPlan.createPlan(env.root());
    const other = await zkPlan.createPlan(env.root());
    const foreign = await zkPlan.addTask(other, call('constant', 1));
    await expect(zkPlan.addTask(plan, call('list'), [foreign])).rejects.toBeInstanceOf(
      ForeignArgTaskError,
    );
    expect(await childrenOf(zkPlan.zk, plan)).toEqual(['history', 'runnable']);
  });

  it('rejects a function name the local registry does not know', async () => {
    const zkPlan = await env.zkPlan({ functions: arithmetic() });
    const plan = await zkPlan.createPlan(env.root());
    const error = await zkPlan
      .addTask(plan, call('multiply', 2))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnknownFunctionError);
    expect((error as Error).message).toContain('add, constant, list');
  });

  it('accepts any function name when the registry is empty (a client that only builds plans)', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    await expect(zkPlan.addTask(plan, call('defined-on-the-workers'))).resolves.toMatch(
      /task-\d{10}$/,
    );
  });

  it('rejects params superjson cannot store, naming where they are', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    class Connection {}
    const spec = { kind: 'call', fn: 'f', params: [1, { client: new Connection() }] } as const;
    const error = await zkPlan.addTask(plan, spec).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnserializableValueError);
    expect((error as Error).message).toContain('[1].client');
    expect(() => call('f', () => 1)).toThrow(UnserializableValueError);
    expect(await childrenOf(zkPlan.zk, plan)).toEqual(['history', 'runnable']);
  });

  it('rejects params larger than a znode holds, before writing anything', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    await expect(zkPlan.addTask(plan, call('f', 'x'.repeat(1_100_000)))).rejects.toBeInstanceOf(
      ValueTooLargeError,
    );
    expect(await childrenOf(zkPlan.zk, plan)).toEqual(['history', 'runnable']);
  });

  it('rejects a missing plan, bad arguments and a bad task spec', async () => {
    const zkPlan = await env.zkPlan();
    await expect(zkPlan.addTask(`${env.root()}/plan-0000000000`, call('f'))).rejects.toBeInstanceOf(
      PlanNotFoundError,
    );
    const plan = await zkPlan.createPlan(env.root());
    await expect(
      zkPlan.addTask(plan, call('f'), 'not-an-array' as unknown as string[]),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      zkPlan.addTask(plan, call('f'), ['relative/task-0000000001']),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      zkPlan.addTask(plan, { kind: 'shell', command: 'rm' } as never),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      zkPlan.addTask(plan, call('f'), [], { keepResult: 'yes' as unknown as boolean }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('can add a task depending on a completed task whose result was kept', async () => {
    const zkPlan = await env.zkPlan({ functions: arithmetic() });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    const first = await zkPlan.addTask(plan, call('constant', 20), [], { keepResult: true });
    const lost = await zkPlan.addTask(plan, call('constant', 1));
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 50 } });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const later = await zkPlan.addTask(plan, call('add', 1), [first], { keepResult: true });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const error = await zkPlan
      .addTask(plan, call('add'), [lost])
      .catch((caught: unknown) => caught);
    await pool.stop();
    expect(await zkPlan.getResult(later)).toBe(21);
    expect(error).toBeInstanceOf(ArgTaskNotFoundError);
    expect((error as Error).message).toMatch(/keepResult/);
    expect(await zkPlan.planCompleted(plan)).toBe(true);
  });

  it('adding tasks to a running plan never loses an input (producers finishing while dependents are added)', async () => {
    const functions = arithmetic().register('slowConstant', async (ctx) => {
      await new Promise((resolve) => setTimeout(resolve, (ctx.params[1] as number) ?? 0));
      return ctx.params[0];
    });
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(parent, { count: 4, backoff: { initial: 5, max: 20 } });
    const sums: { task: string; expected: number }[] = [];
    for (let round = 0; round < 20; round++) {
      const producer = await zkPlan.addTask(plan, call('slowConstant', round, round % 4), [], {
        keepResult: true,
      });
      const dependent = await zkPlan.addTask(plan, call('add', 100), [producer], {
        keepResult: true,
      });
      sums.push({ task: dependent, expected: 100 + round });
    }
    await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
    await pool.stop();
    for (const { task, expected } of sums) expect(await zkPlan.getResult(task)).toBe(expected);
  });
});

describe('markAsReady, planCompleted, waitForCompletion, getResult', () => {
  it('markAsReady is idempotent and rejects a missing plan', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    await zkPlan.markAsReady(plan);
    await zkPlan.markAsReady(plan);
    expect(await childrenOf(zkPlan.zk, plan)).toEqual(['history', 'ready', 'runnable']);
    await expect(zkPlan.markAsReady(`${env.root()}/plan-0000000099`)).rejects.toBeInstanceOf(
      PlanNotFoundError,
    );
  });

  it('planCompleted is true with no task-* child and false with one; ignores other children', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    await zkPlan.markAsReady(plan);
    await zkPlan.zk.create(`${plan}/foo`);
    expect(await zkPlan.planCompleted(plan)).toBe(true);
    await zkPlan.addTask(plan, call('f'));
    expect(await zkPlan.planCompleted(plan)).toBe(false);
    await expect(zkPlan.planCompleted(`${env.root()}/plan-0000000099`)).rejects.toBeInstanceOf(
      PlanNotFoundError,
    );
  });

  it('waitForCompletion rejects with WaitTimeoutError saying how many tasks remain when no worker runs', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    await zkPlan.addTask(plan, call('f'));
    await zkPlan.addTask(plan, call('f'));
    const error = await zkPlan
      .waitForCompletion(plan, { timeoutMs: 300 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as WaitTimeoutError).remainingTasks).toBe(2);
    expect((error as Error).message).toContain(plan);
  });

  it('waitForCompletion is driven by a watch: one read per change of the plan, no polling', async () => {
    const functions = arithmetic();
    const watcher = await env.zkPlan();
    const worker = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await worker.createPlan(parent);
    const task = await worker.addTask(plan, call('constant', 1));
    await worker.markAsReady(plan);
    const waiting = watcher.waitForCompletion(plan, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 500)); // idle period: a poller would read here
    const readsWhileIdle = watcher.zk.counts.reads;
    const pool = worker.startWorkers(parent, { backoff: { initial: 10 } });
    await waiting;
    await pool.stop();
    expect(readsWhileIdle).toBe(1);
    expect(watcher.zk.counts.reads).toBe(2); // the initial listing, then one after the task node went away
    expect(await worker.zk.exists(task)).toBeUndefined();
  });

  it('getResult rejects with ResultNotFoundError for a task without a kept result', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    const task = await zkPlan.addTask(plan, call('f'));
    const error = await zkPlan.getResult(task).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResultNotFoundError);
    expect((error as Error).message).toMatch(/keepResult/);
    await expect(zkPlan.getResult('/not/a/task')).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('lifecycle', () => {
  it('close() stops the pools it started and refuses further calls', async () => {
    const zkPlan = await env.zkPlan();
    const pool = zkPlan.startWorkers(env.root(), { count: 2 });
    await zkPlan.close();
    expect(pool.state).toBe('stopped');
    expect(zkPlan.state).toBe('closed');
    expect(() => zkPlan.createPlan('/x')).toThrow(IllegalStateError);
  });

  it('connect fails within the connect timeout when no server answers', async () => {
    const started = performance.now();
    await expect(
      ZkPlan.connect({ connect: '127.0.0.1:1', connectTimeoutMs: 500 }),
    ).rejects.toBeInstanceOf(ZkConnectTimeoutError);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('connect validates its options', async () => {
    await expect(ZkPlan.connect({ connect: '' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      ZkPlan.connect({ connect: env.connectString, sessionTimeoutMs: -1 }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
