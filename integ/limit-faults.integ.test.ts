/**
 * Concurrency limits on a real ZooKeeper server under the faults of issue 19 (defects 1 and 2),
 * with worker A behind a loopback proxy that loses the reply of A's slot delete or create and then
 * black-holes A: its session expires, and its client sends the write again through the next
 * session (or, for the delete, through the same one after a short cut). B and C talk to the server
 * directly. test/limits/concurrency-limit-faults.test.ts has the same cases over the in-memory ZooKeeper.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConcurrencyLimits, type SlotLease } from '../src/limits/concurrency-limits.js';
import type { SlotRecord } from '../src/limits/limit-record.js';
import type { ZkClient } from '../src/testing/index.js';
import { OP_CODE, TcpProxy } from '../src/testing/fault-harness/tcp-proxy.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('limit-faults', { tickTimeMs: 200 });
let proxy: TcpProxy | undefined;

beforeAll(async () => {
  proxy = await TcpProxy.start(Number(env.connectString.split(':')[1]));
});
afterEach(() => proxy?.restore());
afterAll(async () => {
  await proxy?.stop();
});

function theProxy(): TcpProxy {
  if (proxy === undefined) throw new Error('the proxy did not start');
  return proxy;
}

function record(task: string): SlotRecord {
  return { task: `/plans/plan-0000000001/${task}`, workerId: task, at: new Date() };
}

async function held(zk: ZkClient, parent: string, task: string): Promise<SlotLease> {
  const acquired = await new ConcurrencyLimits(zk, () => 0).acquire(
    parent,
    'k',
    record(task),
    zk.session,
  );
  if (acquired.kind !== 'held') throw new Error(`${task}: expected a slot, got ${acquired.kind}`);
  return acquired.lease;
}

async function setUp(): Promise<{
  parent: string;
  slot: string;
  a: ZkClient;
  b: ZkClient;
  c: ZkClient;
}> {
  const parent = env.root();
  const [a, b, c] = [
    await env.client({ connect: theProxy().connectString, sessionTimeoutMs: 2_000 }),
    await env.client(),
    await env.client(),
  ];
  await new ConcurrencyLimits(b).setLimit(parent, 'k', 1);
  return { parent, slot: `${parent}/zk-plan-limits/k/slot-0`, a, b, c };
}

describe('concurrency limits on a real server, with a lost reply and a session change', () => {
  it.each([
    ['the next session (A expired while cut off)', true],
    ['the same session (a short cut)', false],
  ])(
    'a slot release sent again through %s never deletes the slot B took meanwhile: a limit of 1 never runs two',
    { timeout: 60_000 },
    async (_label, expire) => {
      const { parent, slot, a, b, c } = await setUp();
      const marker = await a.create(`${parent}/alive`, null, 'ephemeral');
      const leaseA = await held(a, parent, 'one');
      theProxy().loseRepliesFrom(OP_CODE.delete);
      const releasing = leaseA.release();
      await waitFor("A's delete to land", async () => (await b.exists(slot)) === undefined, {
        intervalMs: 5,
      });
      theProxy().setMode('blackhole');
      theProxy().cut();
      if (expire)
        await waitFor("A's session to expire", async () => (await b.exists(marker)) === undefined, {
          timeoutMs: 20_000,
        });
      await held(b, parent, 'two');
      theProxy().restore();
      await releasing;
      await waitFor('A to be connected again', () => a.state === 'connected');
      await a.exists('/'); // a round trip on A after whatever it resent
      expect((await b.exists(slot))?.ephemeralOwner).toBe(b.session.id);
      expect(
        (await new ConcurrencyLimits(c).acquire(parent, 'k', record('three'), c.session)).kind,
      ).toBe('full');
    },
  );

  it(
    'a slot take sent again through the next session is refused: no slot is left behind and the key is not blocked',
    { timeout: 60_000 },
    async () => {
      const { parent, slot, a, b } = await setUp();
      const session = a.session;
      theProxy().loseRepliesFrom(OP_CODE.create);
      const acquiring = new ConcurrencyLimits(a, () => 0)
        .acquire(parent, 'k', record('one'), session)
        .then(
          (acquired) => acquired,
          (error: unknown) => error,
        );
      await waitFor("A's create to land", async () => (await b.exists(slot)) !== undefined, {
        intervalMs: 5,
      });
      theProxy().setMode('blackhole');
      theProxy().cut();
      await waitFor(
        "A's session to expire (its slot goes with it)",
        async () => (await b.exists(slot)) === undefined,
        { timeoutMs: 20_000 },
      );
      theProxy().restore();
      expect(await acquiring).toMatchObject({ code: 'SESSION_EXPIRED' });
      await waitFor(
        'A to be on a new session',
        () => a.state === 'connected' && !a.isCurrent(session),
      );
      await a.exists('/');
      expect(await b.exists(slot)).toBeUndefined();
      await held(b, parent, 'two');
    },
  );
});
