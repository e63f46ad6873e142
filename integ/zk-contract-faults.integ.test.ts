/**
 * The fault contract (test/support/zk-contract-faults.ts) against a real ZooKeeper server, with
 * the faulty client behind a loopback TCP proxy: a reply is lost by dropping the server's bytes
 * and then cutting the connection, a request by cutting before it is sent, and a session expires
 * by black-holing the client for longer than its session timeout (the server hears no ping).
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { fourLetterWord } from '../src/local-zookeeper/four-letter-word.js';
import type { ZkClient } from '../src/testing/index.js';
import {
  defineZkFaultContract,
  outcomeOf,
  type FaultScenario,
  type WriteOutcome,
} from '../test/support/zk-contract-faults.js';
import { TcpProxy } from '../src/testing/fault-harness/tcp-proxy.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

/** A short tick, so a session of the faulty client can expire within a test (its timeout is 2 to 20 ticks). */
const env = useZooKeeper('zk-contract-faults', { tickTimeMs: 200 });
const SESSION_TIMEOUT_MS = 2_000;
let proxy: TcpProxy | undefined;
let observer: ZkClient | undefined;
let markers = 0;

beforeAll(async () => {
  proxy = await TcpProxy.start(Number(env.connectString.split(':')[1]));
});
afterEach(() => {
  proxy?.restore();
  observer = undefined;
});
afterAll(async () => {
  await proxy?.stop();
});

function theProxy(): TcpProxy {
  if (proxy === undefined) throw new Error('the proxy did not start');
  return proxy;
}

async function theObserver(): Promise<ZkClient> {
  observer ??= await env.client();
  return observer;
}

/** An ephemeral node of `client`'s session, to see from outside when that session has expired. */
async function sessionMarker(client: ZkClient): Promise<string> {
  return client.create(`/alive-${process.pid}-${++markers}`, null, 'ephemeral');
}

/** Keeps `client` cut off until its session is gone on the server (its marker deleted), if `marker` is given. */
async function cutOff<T>(
  client: ZkClient,
  scenario: FaultScenario<T>,
  outcome: Promise<WriteOutcome<T>>,
  marker: string | undefined,
): Promise<WriteOutcome<T>> {
  const watcher = await theObserver();
  theProxy().setMode('blackhole');
  theProxy().cut();
  if (marker !== undefined)
    await waitFor(
      `the session of ${marker} to expire`,
      async () => (await watcher.exists(marker)) === undefined,
      { timeoutMs: 20_000 },
    );
  await scenario.meanwhile?.();
  theProxy().restore();
  return await outcome;
}

defineZkFaultContract<ZkClient>('real ZooKeeper behind a proxy', {
  faulty: () =>
    env.client({ connect: theProxy().connectString, sessionTimeoutMs: SESSION_TIMEOUT_MS }),
  observer: theObserver,
  root: () => env.root(),
  async replyLost(client, scenario) {
    const marker = scenario.expireSession === true ? await sessionMarker(client) : undefined;
    theProxy().setMode('drop-replies');
    const outcome = outcomeOf(scenario.write());
    const landed = scenario.landed;
    if (landed === undefined)
      throw new Error('a lost reply needs a way to see that the write landed');
    await waitFor('the write to land on the server', landed, { intervalMs: 10 });
    return cutOff(client, scenario, outcome, marker);
  },
  async sendLost(client, scenario) {
    const marker = scenario.expireSession === true ? await sessionMarker(client) : undefined;
    theProxy().setMode('blackhole');
    theProxy().cut();
    const outcome = outcomeOf(scenario.write());
    return cutOff(client, scenario, outcome, marker);
  },
  async dropConnection(client) {
    const suspended = new Promise<void>((resolve) => client.once('state', () => resolve()));
    theProxy().cut();
    await suspended;
    await waitFor('the client to reconnect', () => client.state === 'connected', { intervalMs: 5 });
  },
  async serverWatches(path) {
    const [host, port] = env.connectString.split(':') as [string, string];
    const listing = await fourLetterWord(host, Number(port), 'wchp', 5_000);
    // wchp: a path on a line of its own, then one indented 0x-prefixed session id per line.
    const watches: string[] = [];
    let current: string | undefined;
    for (const line of listing.split('\n')) {
      if (line.startsWith('/')) current = line.trim();
      else if (current === path && line.trim().startsWith('0x'))
        watches.push(`${line.trim().slice(2)} ${path}`);
    }
    return watches;
  },
});
