import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { FunctionRegistry, ZkPlan, type ConnectOptions } from '../../src/index.js';
import { ZkClient, startZooKeeper, type ZooKeeperServer } from '../../src/testing/index.js';

/** Scales waits on slow machines (Curator's Timing): ZK_PLAN_TIMING=2 doubles every timeout. */
export const TIMING = Number(process.env['ZK_PLAN_TIMING'] ?? '1');

export interface ZkTestEnv {
  /** Connect string of this file's own server. */
  readonly connectString: string;
  /** A root znode of its own for the current test, derived from the file and the test's title. */
  root(): string;
  /** A raw client on a new session, closed after the test. */
  client(options?: { sessionTimeoutMs?: number }): Promise<ZkClient>;
  /** A ZkPlan on a new session, closed (with its pools) after the test. */
  zkPlan(options?: Partial<ConnectOptions>): Promise<ZkPlan>;
}

/**
 * Starts a ZooKeeper server for this test file on a free loopback port with a fresh data dir,
 * gives each test its own root znode, and closes every client and ZkPlan the test opened.
 */
export function useZooKeeper(fileName: string): ZkTestEnv {
  let server: ZooKeeperServer | undefined;
  const clients: ZkClient[] = [];
  const plans: ZkPlan[] = [];
  let rootIndex = 0;

  beforeAll(async () => {
    server = await startZooKeeper();
  });
  afterEach(async () => {
    await Promise.all(plans.splice(0).map((plan) => plan.close()));
    for (const client of clients.splice(0)) client.close();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const connectString = (): string => {
    if (server === undefined) throw new Error('ZooKeeper server not started: call useZooKeeper() at the top of the file');
    return server.connectString;
  };

  return {
    get connectString() {
      return connectString();
    },
    root() {
      const title = expect.getState().currentTestName ?? 'outside-test';
      const digest = createHash('sha1').update(`${fileName}\u0000${title}`).digest('hex').slice(0, 10);
      return `/t-${digest}-${++rootIndex}`;
    },
    async client(options = {}) {
      const client = await ZkClient.connect({
        connect: connectString(),
        sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
        connectTimeoutMs: 10_000 * TIMING,
      });
      clients.push(client);
      return client;
    },
    async zkPlan(options = {}) {
      const zkPlan = await ZkPlan.connect({ connect: connectString(), functions: new FunctionRegistry(), ...options });
      plans.push(zkPlan);
      return zkPlan;
    },
  };
}

/** Resolves with the first event `name` whose payload passes `accept`, or rejects after `timeoutMs`. */
export function nextEvent<T>(
  emitter: { on(name: string, listener: (payload: T) => void): unknown; off(name: string, listener: (payload: T) => void): unknown },
  name: string,
  accept: (payload: T) => boolean = () => true,
  timeoutMs = 10_000 * TIMING,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(name, listener);
      reject(new Error(`no '${name}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (payload: T): void => {
      if (!accept(payload)) return;
      clearTimeout(timer);
      emitter.off(name, listener);
      resolve(payload);
    };
    emitter.on(name, listener);
  });
}

/** Resolves once `condition()` holds, checking every few ms; rejects after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 10_000 * TIMING): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
