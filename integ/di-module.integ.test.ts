import { rootContainer } from '../src/di/container.js';
import { describe, expect, it } from 'vitest';
import {
  FUNCTION_REGISTRY,
  FunctionRegistry,
  IllegalStateError,
  InvalidArgumentError,
  WORKER_POOL,
  ZK_CLIENT,
  ZK_PLAN,
  ZkPlan,
  call,
  shutdown,
  startup,
  zkPlanModule,
} from '../src/index.js';
import { useZooKeeper, waitFor, withDeadline } from './support/zk-test-env.js';

const env = useZooKeeper('di-module');

const GREETING = Symbol('greeting');

describe('the DI module (tsyringe)', () => {
  it('startup connects, spawns the configured worker loops, and tasks resolve services from the container', async () => {
    const functions = new FunctionRegistry()
      .register(
        'greet',
        (ctx) => `${ctx.container.resolve<string>(GREETING)}, ${String(ctx.params[0])}`,
      )
      .register('join', (_ctx, ...parts: string[]) => parts.join(' / '));
    const container = rootContainer.createChildContainer();
    container.register(GREETING, { useValue: 'hello' });
    const parent = env.root();
    zkPlanModule(container, {
      zookeeper: { connect: env.connectString },
      zkPlan: { workers: 3, parent, backoff: { initial: 10, max: 100 } },
      functions,
    });
    const zkPlan = await startup(container);
    try {
      expect(zkPlan).toBeInstanceOf(ZkPlan);
      expect(container.resolve(ZK_PLAN)).toBe(zkPlan);
      expect(container.resolve(FUNCTION_REGISTRY)).toBe(functions);
      expect(container.resolve(ZK_CLIENT).state).toBe('connected');
      expect(container.resolve(WORKER_POOL).size).toBe(3);
      const plan = await zkPlan.createPlan(parent);
      const a = await zkPlan.addTask(plan, call('greet', 'a'));
      const b = await zkPlan.addTask(plan, call('greet', 'b'));
      const joined = await zkPlan.addTask(plan, call('join'), [b, a], { keepResult: true });
      await zkPlan.markAsReady(plan);
      await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
      expect(await zkPlan.getResult(joined)).toBe('hello, b / hello, a');
    } finally {
      await shutdown(container);
    }
    expect(container.resolve(WORKER_POOL).state).toBe('stopped');
    expect(container.resolve(ZK_CLIENT).state).toBe('closed');
    expect(zkPlan.state).toBe('closed');
  });

  it('without zkPlan config, startup only connects (a client that builds plans) and spawns no worker', async () => {
    const container = rootContainer.createChildContainer();
    zkPlanModule(container, { zookeeper: { connect: env.connectString } });
    const zkPlan = await startup(container);
    expect(container.isRegistered(WORKER_POOL)).toBe(false);
    expect(await zkPlan.createPlan(env.root())).toMatch(/plan-\d{10}$/);
    await shutdown(container);
    expect(zkPlan.state).toBe('closed');
  });

  it('shutdown lets a running task finish before closing the session', async () => {
    let finished = false;
    let markRunning: () => void = () => undefined;
    let release: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const functions = new FunctionRegistry().register('slow', async () => {
      markRunning();
      await released; // the test lets it finish only once shutdown has begun
      finished = true;
      return 'done';
    });
    const container = rootContainer.createChildContainer();
    const parent = env.root();
    zkPlanModule(container, {
      zookeeper: { connect: env.connectString },
      zkPlan: { workers: 1, parent, backoff: { initial: 10 } },
      functions,
    });
    const zkPlan = await startup(container);
    const plan = await zkPlan.createPlan(parent);
    await zkPlan.addTask(plan, call('slow'));
    await zkPlan.markAsReady(plan);
    await withDeadline(running, 10_000, () => 'the task did not start');
    const observer = await env.zkPlan();
    const closing = shutdown(container);
    await waitFor(
      'shutdown to start draining the pool',
      () => container.resolve(WORKER_POOL).state === 'stopping',
    );
    release();
    await closing;
    expect(finished).toBe(true);
    expect(await observer.planCompleted(plan)).toBe(true);
  });

  it('can be started again after shutdown, on a new session', async () => {
    const container = rootContainer.createChildContainer();
    zkPlanModule(container, { zookeeper: { connect: env.connectString } });
    const first = await startup(container);
    await expect(startup(container)).rejects.toBeInstanceOf(IllegalStateError);
    await shutdown(container);
    const second = await startup(container);
    expect(second).not.toBe(first);
    expect(second.state).toBe('open');
    expect(container.resolve(ZK_PLAN)).toBe(second);
    expect(await second.createPlan(env.root())).toMatch(/plan-\d{10}$/);
    await shutdown(container);
    expect(second.state).toBe('closed');
  });

  it('reports misuse clearly', async () => {
    const container = rootContainer.createChildContainer();
    await expect(startup(container)).rejects.toBeInstanceOf(IllegalStateError);
    expect(() => zkPlanModule(container, { zookeeper: { connect: '' } })).toThrow(
      InvalidArgumentError,
    );
    expect(() =>
      zkPlanModule(container, {
        zookeeper: { connect: env.connectString },
        zkPlan: { workers: 2, parent: 'relative' },
      }),
    ).toThrow(InvalidArgumentError);
  });
});
