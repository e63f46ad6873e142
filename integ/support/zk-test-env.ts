import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { FunctionRegistry, ZkPlan, type ConnectOptions } from '../../src/index.js';
import { ZkClient, startZooKeeper, type ZooKeeperServer } from '../../src/testing/index.js';
import { withDeadline as unscaledDeadline } from '../../src/testing/fault-harness/pause.js';

/** Scales waits on slow machines (Curator's Timing): ZK_PLAN_TIMING=2 doubles every timeout. */
export const TIMING = Number(process.env['ZK_PLAN_TIMING'] ?? '1');

export interface ZkTestEnv {
  /** Connect string of this file's own server. */
  readonly connectString: string;
  /** A root znode of its own for the current test, derived from the file and the test's title. */
  root(): string;
  /** A raw client on a new session (through `connect`, e.g. a proxy, when given), closed after the test. */
  client(options?: { sessionTimeoutMs?: number; connect?: string }): Promise<ZkClient>;
  /** A ZkPlan on a new session, closed (with its pools) after the test. */
  zkPlan(options?: Partial<ConnectOptions>): Promise<ZkPlan>;
}

/**
 * Starts a ZooKeeper server for this test file on a free loopback port with a fresh data dir,
 * gives each test its own root znode, and closes every client and ZkPlan the test opened.
 */
export function useZooKeeper(
  fileName: string,
  serverOptions: { readonly tickTimeMs?: number } = {},
): ZkTestEnv {
  let server: ZooKeeperServer | undefined;
  const clients: ZkClient[] = [];
  const plans: ZkPlan[] = [];
  let rootIndex = 0;

  beforeAll(async () => {
    server = await startZooKeeper(serverOptions);
  });
  afterEach(async () => {
    await Promise.all(plans.splice(0).map((plan) => plan.close()));
    for (const client of clients.splice(0)) client.close();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const connectString = (): string => {
    if (server === undefined)
      throw new Error('ZooKeeper server not started: call useZooKeeper() at the top of the file');
    return server.connectString;
  };

  return {
    get connectString() {
      return connectString();
    },
    root() {
      const title = expect.getState().currentTestName ?? 'outside-test';
      const digest = createHash('sha1')
        .update(`${fileName}\u0000${title}`)
        .digest('hex')
        .slice(0, 10);
      return `/t-${digest}-${++rootIndex}`;
    },
    async client(options = {}) {
      const client = await ZkClient.connect({
        connect: options.connect ?? connectString(),
        sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
        connectTimeoutMs: 10_000 * TIMING,
      });
      clients.push(client);
      return client;
    },
    async zkPlan(options = {}) {
      const zkPlan = await ZkPlan.connect({
        connect: connectString(),
        functions: new FunctionRegistry(),
        ...options,
      });
      plans.push(zkPlan);
      return zkPlan;
    },
  };
}

/** Resolves with the first event `name` whose payload passes `accept`, or rejects after `timeoutMs`. */
export function nextEvent<T>(
  emitter: {
    on(name: string, listener: (payload: T) => void): unknown;
    off(name: string, listener: (payload: T) => void): unknown;
  },
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

/**
 * Polls `probe` every `intervalMs` until it returns something other than undefined or false, and
 * resolves with that value; rejects after `timeoutMs` × TIMING naming `what` was awaited, or with
 * the signal's reason once `signal` aborts. The one helper integration tests wait on conditions with.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  {
    timeoutMs = 10_000,
    intervalMs = 50,
    signal,
  }: { timeoutMs?: number; intervalMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const scaledMs = timeoutMs * TIMING;
  const deadline = performance.now() + scaledMs;
  for (;;) {
    signal?.throwIfAborted();
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (performance.now() >= deadline)
      throw new Error(`timed out after ${scaledMs} ms waiting for ${what}`);
    await sleep(intervalMs, undefined, { signal });
  }
}

/**
 * Resolves with `promise`, or rejects with `message()` when it has not settled within `timeoutMs` ×
 * TIMING: a time limit on something already under way, where waitFor would poll a condition.
 */
export async function withDeadline<T>(
  promise: Promise<T>,
  timeoutMs: number,
  message: () => string,
): Promise<T> {
  return await unscaledDeadline(promise, timeoutMs * TIMING, message);
}
