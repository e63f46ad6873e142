/**
 * The ZooKeeper semantics of faults (see src/zk/zk.ts), as one suite of cases run against the
 * in-memory double (test/zk/zk-contract-faults.test.ts, through its fault injection) and a real
 * server (integ/zk-contract-faults.integ.test.ts, through a loopback TCP proxy): a reply lost after
 * the server applied the request, sent again through the same session or, after an expiry, through
 * the next one; a request lost before it reached the server; watches across a dropped connection;
 * and the guards of a write (fence, incarnation). Where the double and the server disagree, the
 * double is wrong.
 */
import { describe, expect, it } from 'vitest';
import { ZkError } from '../../src/errors/zk-error.js';
import type { Zk } from '../../src/zk/zk.js';
import type { WatchEvent } from '../../src/zk/zk-client-types.js';

/** How a write that met a fault ended, as its caller saw it. */
export type WriteOutcome<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ZkError };

export interface FaultScenario<T> {
  /** The write under test, sent by the faulty client (its first operation must be the one the fault hits). */
  readonly write: () => Promise<T>;
  /** True once the server has applied the write (read through another client). */
  readonly landed?: () => Promise<boolean>;
  /** The server expires the faulty client's session while it is cut off. */
  readonly expireSession?: boolean;
  /** Runs while the faulty client is cut off (after the write landed, or was lost). */
  readonly meanwhile?: () => Promise<void>;
}

export interface ZkFaultHarness<C extends Zk> {
  /** A client whose connection the harness can break (through the proxy, for a real server). */
  faulty(): Promise<C>;
  /** A client on a connection of its own that nothing breaks. */
  observer(): Promise<Zk>;
  /** A fresh, absent top-level path for the current test. */
  root(): string;
  /** The server applies `write`, its reply is lost; the client resends once let back. */
  replyLost<T>(client: C, scenario: FaultScenario<T>): Promise<WriteOutcome<T>>;
  /** `write` never reaches the server; the client resends once let back. */
  sendLost<T>(client: C, scenario: FaultScenario<T>): Promise<WriteOutcome<T>>;
  /** The connection drops and comes back (same session); resolves once the client is connected again. */
  dropConnection(client: C): Promise<void>;
  /** The watches the server holds on `path`, as `<sessionId> <path>` (kinds are not told apart). */
  serverWatches(path: string): Promise<string[]>;
}

/** Resolves once `condition()` holds; rejects after a while. */
async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function outcomeOf<T>(promise: Promise<T>): Promise<WriteOutcome<T>> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    if (!(error instanceof ZkError)) throw error;
    return { ok: false, error };
  }
}

function failed<T>(outcome: WriteOutcome<T>): ZkError {
  if (outcome.ok)
    throw new Error(`expected the write to fail, but it resolved ${JSON.stringify(outcome.value)}`);
  return outcome.error;
}

const text = (data: Buffer | null | undefined): string | undefined => data?.toString('utf8');

export function defineZkFaultContract<C extends Zk>(
  label: string,
  harness: ZkFaultHarness<C>,
): void {
  describe(`Zk fault contract: ${label}`, () => {
    describe('a reply lost after the server applied the request, resent through the same session', () => {
      it('a create answers NODE_EXISTS, retried; a versioned setData BAD_VERSION, retried; a delete NO_NODE, retried', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        const created = await harness.replyLost(zk, {
          write: () => zk.create(`${root}/a`, Buffer.from('1')),
          landed: async () => (await observer.exists(`${root}/a`)) !== undefined,
        });
        expect(failed(created)).toMatchObject({ code: 'NODE_EXISTS', retried: true });
        const set = await harness.replyLost(zk, {
          write: () => zk.setData(`${root}/a`, Buffer.from('2'), 0),
          landed: async () => (await observer.exists(`${root}/a`))?.version === 1,
        });
        expect(failed(set)).toMatchObject({ code: 'BAD_VERSION', retried: true });
        const deleted = await harness.replyLost(zk, {
          write: () => zk.delete(`${root}/a`, 1),
          landed: async () => (await observer.exists(`${root}/a`)) === undefined,
        });
        expect(failed(deleted)).toMatchObject({ code: 'NO_NODE', retried: true });
      });

      it('a versioned delete resent without a guard lands on a node created again at that path meanwhile (the hazard incarnation guards)', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        await observer.create(`${root}/slot`, Buffer.from('mine'));
        const outcome = await harness.replyLost(zk, {
          write: () => zk.delete(`${root}/slot`, 0),
          landed: async () => (await observer.exists(`${root}/slot`)) === undefined,
          meanwhile: async () =>
            void (await observer.create(`${root}/slot`, Buffer.from('theirs'))),
        });
        expect(outcome.ok).toBe(true); // the resend deleted the other node
        expect(await observer.exists(`${root}/slot`)).toBeUndefined();
      });

      it('with its incarnation, a delete is not resent once the node it was meant for is gone: the node made again stays', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        await observer.create(`${root}/slot`, Buffer.from('mine'));
        const mine = await zk.exists(`${root}/slot`);
        const outcome = await harness.replyLost(zk, {
          write: () => zk.delete(`${root}/slot`, 0, { incarnation: mine?.czxid }),
          landed: async () => (await observer.exists(`${root}/slot`)) === undefined,
          meanwhile: async () =>
            void (await observer.create(`${root}/slot`, Buffer.from('theirs'))),
        });
        expect(failed(outcome)).toMatchObject({ code: 'NO_NODE', retried: true });
        expect(text((await observer.getData(`${root}/slot`)).data)).toBe('theirs');
      });

      it('with its incarnation, a setData is not resent once the node it was meant for is gone: the node made again keeps its value', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        await observer.create(`${root}/lease`, Buffer.from('old'));
        const mine = await zk.exists(`${root}/lease`);
        const outcome = await harness.replyLost(zk, {
          write: () =>
            zk.setData(`${root}/lease`, Buffer.from('mine'), 0, { incarnation: mine?.czxid }),
          landed: async () => (await observer.exists(`${root}/lease`))?.version === 1,
          meanwhile: async () => {
            await observer.delete(`${root}/lease`);
            await observer.create(`${root}/lease`, Buffer.from('theirs'));
          },
        });
        expect(failed(outcome)).toMatchObject({ code: 'NO_NODE', retried: true });
        expect(text((await observer.getData(`${root}/lease`)).data)).toBe('theirs');
      });

      it('with its incarnation, a write the same node is still there for is resent: a delete that did not land does', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        await observer.create(`${root}/n`);
        const stat = await zk.exists(`${root}/n`);
        const outcome = await harness.sendLost(zk, {
          write: () => zk.delete(`${root}/n`, 0, { incarnation: stat?.czxid }),
        });
        expect(outcome.ok).toBe(true);
        expect(await observer.exists(`${root}/n`)).toBeUndefined();
      });
    });

    describe('a reply lost, the session expired, resent through the next session', () => {
      it('an unfenced ephemeral create lands again in the new session (its first try went with the old one)', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        const before = zk.session;
        const outcome = await harness.replyLost(zk, {
          write: () => zk.create(`${root}/slot`, null, 'ephemeral'),
          landed: async () => (await observer.exists(`${root}/slot`)) !== undefined,
          expireSession: true,
        });
        expect(outcome.ok).toBe(true);
        expect(zk.isCurrent(before)).toBe(false);
        expect((await observer.exists(`${root}/slot`))?.ephemeralOwner).toBe(zk.session.id);
      });

      it('a fenced write is refused SESSION_EXPIRED instead of landing through the new session', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        const fence = zk.session;
        const outcome = await harness.replyLost(zk, {
          write: () => zk.create(`${root}/slot`, null, 'ephemeral', { fence }),
          landed: async () => (await observer.exists(`${root}/slot`)) !== undefined,
          expireSession: true,
        });
        expect(failed(outcome)).toMatchObject({ code: 'SESSION_EXPIRED' });
        expect(await observer.exists(`${root}/slot`)).toBeUndefined(); // the first try went with the old session
      });
    });

    describe('a request lost before it reached the server, the session expired', () => {
      it('an unfenced write is sent again through the new session and lands there', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        const outcome = await harness.sendLost(zk, {
          write: () => zk.create(`${root}/e`, null, 'ephemeral'),
          expireSession: true,
        });
        expect(outcome.ok).toBe(true);
        expect((await observer.exists(`${root}/e`))?.ephemeralOwner).toBe(zk.session.id);
      });

      it('a fenced one is refused', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        const fence = zk.session;
        const outcome = await harness.sendLost(zk, {
          write: () => zk.create(`${root}/e`, null, 'ephemeral', { fence }),
          expireSession: true,
        });
        expect(failed(outcome)).toMatchObject({ code: 'SESSION_EXPIRED' });
        expect(await observer.exists(`${root}/e`)).toBeUndefined();
      });
    });

    describe('watches across a dropped connection', () => {
      it('every watcher hears session-lost once; the server keeps the watches, which fire into nothing later', async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        const events: WatchEvent[] = [];
        await zk.exists(`${root}/later`, (event) => events.push(event));
        await harness.dropConnection(zk);
        await until(() => events.length > 0, 'the watcher to hear of the drop');
        expect(events).toEqual([{ type: 'session-lost', path: `${root}/later` }]);
        // The client sets its watches again right after reconnecting: give that a moment on a real server.
        await until(
          async () => (await harness.serverWatches(`${root}/later`)).length > 0,
          'the server to hold the watch again',
        );
        expect(await harness.serverWatches(`${root}/later`)).toEqual([
          `${zk.session.id} ${root}/later`,
        ]);
        await observer.create(`${root}/later`);
        await zk.exists('/'); // a round trip: an event for the change would have come before its reply
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(events).toHaveLength(1);
        expect(await harness.serverWatches(`${root}/later`)).toEqual([]);
      });
    });

    describe('sync', () => {
      it("answers for any path, and a read after it sees every write applied before it, another session's too", async () => {
        const [zk, observer] = [await harness.faulty(), await harness.observer()];
        const root = harness.root();
        await observer.create(root);
        await observer.create(`${root}/n`, Buffer.from('v'));
        await zk.sync(`${root}/n`);
        await zk.sync(`${root}/absent`);
        expect(text((await zk.getData(`${root}/n`)).data)).toBe('v');
      });
    });

    describe('NODE_REPLACED', () => {
      it('a setData with an incarnation that lands on a node created after that one fails NODE_REPLACED; the write did land', async () => {
        const zk = await harness.faulty();
        const root = harness.root();
        await zk.create(root);
        await zk.create(`${root}/n`, Buffer.from('first'));
        const first = await zk.exists(`${root}/n`);
        await zk.delete(`${root}/n`);
        await zk.create(`${root}/n`, Buffer.from('second'));
        const error = await zk
          .setData(`${root}/n`, Buffer.from('stray'), 0, { incarnation: first?.czxid })
          .then(
            () => undefined,
            (caught: unknown) => caught,
          );
        expect(error).toMatchObject({ code: 'NODE_REPLACED' });
        expect(text((await zk.getData(`${root}/n`)).data)).toBe('stray');
      });
    });
  });
}
