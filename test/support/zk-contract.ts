/**
 * The ZooKeeper semantics zk-plan relies on (see src/zk/zk.ts), as one suite of cases run against
 * every implementation of `Zk`: the in-memory double (test/zk/zk-contract.test.ts) and a real server
 * (integ/zk-contract.integ.test.ts). Where the double and the server disagree, the double is wrong.
 */
import { describe, expect, it } from 'vitest';
import { ZkError } from '../../src/errors/zk-error.js';
import type { Zk } from '../../src/zk/zk.js';
import type { ZkStat } from '../../src/zk/native-client.js';
import type { WatchEvent, Watcher, ZkSession } from '../../src/zk/zk-client-types.js';

export interface ZkContractHarness<C extends Zk> {
  /** A client on a new session (cleaned up by the harness). */
  client(): Promise<C>;
  /** A fresh, absent top-level path for the current test. */
  root(): string;
  /** Expires `client`'s session on the server; resolves once the client has a new session. */
  expire(client: C): Promise<void>;
}

/** Watch events, as they come. */
function recorder(): { readonly watcher: Watcher; readonly events: WatchEvent[] } {
  const events: WatchEvent[] = [];
  return { watcher: (event) => events.push(event), events };
}

/** Resolves once `condition()` holds; rejects after a few seconds. */
async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Lets events already under way arrive: a round trip on `zk` (events come before later replies), then a pause. */
async function quiet(zk: Zk): Promise<void> {
  await zk.exists('/');
  await new Promise((resolve) => setTimeout(resolve, 100));
}

async function failure(run: () => Promise<unknown>): Promise<ZkError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ZkError);
    return error as ZkError;
  }
  throw new Error('expected a ZkError, but the operation succeeded');
}

const serial = (n: number): string => String(n).padStart(10, '0');
const text = (data: Buffer | null): string | null => (data === null ? null : data.toString('utf8'));

export function defineZkContract<C extends Zk>(label: string, harness: ZkContractHarness<C>): void {
  describe(`Zk contract: ${label}`, () => {
    describe('create', () => {
      it('resolves the path it made in every mode, with a 10-digit serial for the sequential ones', async () => {
        const zk = await harness.client();
        const root = harness.root();
        expect(await zk.create(root)).toBe(root);
        expect(await zk.create(`${root}/p`, null, 'persistent')).toBe(`${root}/p`);
        expect(await zk.create(`${root}/e`, null, 'ephemeral')).toBe(`${root}/e`);
        expect(await zk.create(`${root}/ps-`, null, 'persistent-sequential')).toBe(
          `${root}/ps-${serial(2)}`,
        );
        expect(await zk.create(`${root}/es-`, null, 'ephemeral-sequential')).toBe(
          `${root}/es-${serial(3)}`,
        );
        expect((await zk.exists(`${root}/p`))?.ephemeralOwner).toBe('0');
        expect((await zk.exists(`${root}/ps-${serial(2)}`))?.ephemeralOwner).toBe('0');
        expect((await zk.exists(`${root}/e`))?.ephemeralOwner).toBe(zk.session.id);
        expect((await zk.exists(`${root}/es-${serial(3)}`))?.ephemeralOwner).toBe(zk.session.id);
      });

      it('numbers sequential nodes by the children created under the parent before, of any mode; deletions advance cversion only', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root);
        await zk.create(`${root}/plain`); // creation 1
        expect(await zk.create(`${root}/task-`, null, 'persistent-sequential')).toBe(
          `${root}/task-${serial(1)}`,
        );
        await zk.delete(`${root}/plain`); // a deletion does not advance the serial...
        expect((await zk.exists(root))?.cversion).toBe(3); // ...but does advance cversion
        expect(await zk.create(`${root}/owner-`, null, 'ephemeral-sequential')).toBe(
          `${root}/owner-${serial(2)}`,
        );
        expect(await zk.create(`${root}/task-`, null, 'persistent-sequential')).toBe(
          `${root}/task-${serial(3)}`,
        );
        await zk.delete(`${root}/task-${serial(3)}`);
        expect(await zk.create(`${root}/task-`, null, 'persistent-sequential')).toBe(
          `${root}/task-${serial(4)}`,
        );
        // Creation 6 takes the name the next sequential create would make: that one fails, and takes no number.
        await zk.create(`${root}/dup-${serial(6)}`);
        expect(
          (await failure(() => zk.create(`${root}/dup-`, null, 'persistent-sequential'))).code,
        ).toBe('NODE_EXISTS');
        expect(
          (await failure(() => zk.create(`${root}/dup-`, null, 'persistent-sequential'))).code,
        ).toBe('NODE_EXISTS');
        await zk.create(`${root}/other`); // creation 7
        expect(await zk.create(`${root}/dup-`, null, 'persistent-sequential')).toBe(
          `${root}/dup-${serial(7)}`,
        );
        const stat = await zk.exists(root);
        expect(stat?.cversion).toBe(10);
        expect(stat?.numChildren).toBe(6);
      });

      it('stores the bytes given; a null value reads back as the four bytes "null" (the native client sends it so)', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root, Buffer.from('payload'));
        expect(text((await zk.getData(root)).data)).toBe('payload');
        await zk.create(`${root}/empty`, Buffer.alloc(0));
        const empty = await zk.getData(`${root}/empty`);
        expect(empty.data?.length ?? 0).toBe(0);
        expect(empty.stat.dataLength).toBe(0);
        await zk.create(`${root}/null`, null);
        const nulled = await zk.getData(`${root}/null`);
        expect(text(nulled.data)).toBe('null');
        expect(nulled.stat.dataLength).toBe(4);
        await zk.setData(`${root}/empty`, null);
        expect(text((await zk.getData(`${root}/empty`)).data)).toBe('null');
      });
    });

    describe('errors', () => {
      it('answers NODE_EXISTS, NO_NODE, NOT_EMPTY and BAD_VERSION with the op, the rc and the path', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root);
        await zk.create(`${root}/a`);
        await zk.create(`${root}/a/b`);
        expect(await failure(() => zk.create(`${root}/a`))).toMatchObject({
          code: 'NODE_EXISTS',
          rc: -110,
          op: 'create',
          path: `${root}/a`,
        });
        expect(await failure(() => zk.create(`${root}/missing/child`))).toMatchObject({
          code: 'NO_NODE',
          rc: -101,
          op: 'create',
        });
        expect(await failure(() => zk.delete(`${root}/missing`))).toMatchObject({
          code: 'NO_NODE',
          op: 'delete',
          path: `${root}/missing`,
        });
        expect(await failure(() => zk.getData(`${root}/missing`))).toMatchObject({
          code: 'NO_NODE',
          op: 'getData',
        });
        expect(await failure(() => zk.setData(`${root}/missing`, Buffer.from('x')))).toMatchObject({
          code: 'NO_NODE',
          op: 'setData',
        });
        expect(await failure(() => zk.getChildren(`${root}/missing`))).toMatchObject({
          code: 'NO_NODE',
          op: 'getChildren',
        });
        expect(await failure(() => zk.delete(`${root}/a`))).toMatchObject({
          code: 'NOT_EMPTY',
          rc: -111,
          op: 'delete',
        });
        expect(await failure(() => zk.delete(`${root}/a/b`, 3))).toMatchObject({
          code: 'BAD_VERSION',
          rc: -103,
          op: 'delete',
        });
        expect(await failure(() => zk.setData(`${root}/a/b`, Buffer.from('x'), 3))).toMatchObject({
          code: 'BAD_VERSION',
          op: 'setData',
        });
        expect(await failure(() => zk.create(`${root}/a`))).toMatchObject({ retried: false });
      });

      it('checks existence before the version, and the version before emptiness', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.ensurePath(`${root}/full/child`);
        expect((await failure(() => zk.delete(`${root}/missing`, 5))).code).toBe('NO_NODE');
        expect((await failure(() => zk.delete(`${root}/full`, 5))).code).toBe('BAD_VERSION');
        expect((await failure(() => zk.delete(`${root}/full`, 0))).code).toBe('NOT_EMPTY');
        await zk.delete(`${root}/full/child`, 0);
        await zk.delete(`${root}/full`, 0);
        expect(await zk.exists(`${root}/full`)).toBeUndefined();
      });

      it('refuses malformed paths with BAD_ARGUMENTS', async () => {
        const zk = await harness.client();
        expect((await failure(() => zk.getData('relative'))).code).toBe('BAD_ARGUMENTS');
        expect((await failure(() => zk.create(`${harness.root()}/trailing/`))).code).toBe(
          'BAD_ARGUMENTS',
        );
      });
    });

    describe('stat', () => {
      it('counts data versions, child versions and children; reports the data length', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root, Buffer.from('abc'));
        const created = (await zk.exists(root)) as ZkStat;
        expect(created).toMatchObject({
          version: 0,
          cversion: 0,
          numChildren: 0,
          dataLength: 3,
          ephemeralOwner: '0',
        });
        expect(created.ctime).toBeInstanceOf(Date);
        expect(created.mtime.getTime()).toBe(created.ctime.getTime());
        const changed = await zk.setData(root, Buffer.from('abcdef'));
        expect(changed).toMatchObject({ version: 1, dataLength: 6, cversion: 0 });
        expect(changed.mzxid).toBeGreaterThan(changed.czxid);
        expect(changed.czxid).toBe(created.czxid);
        expect(await zk.setData(root, Buffer.from('x'), 1)).toMatchObject({
          version: 2,
          dataLength: 1,
        });
        await zk.create(`${root}/a`);
        await zk.create(`${root}/b`, null, 'ephemeral');
        expect((await zk.getData(root)).stat).toMatchObject({
          version: 2,
          cversion: 2,
          numChildren: 2,
        });
        await zk.delete(`${root}/a`);
        const listed = await zk.getChildren(root);
        expect(listed.children).toEqual(['b']);
        expect(listed.stat).toMatchObject({ cversion: 3, numChildren: 1, version: 2 });
        expect(listed.stat.pzxid).toBeGreaterThan(changed.mzxid);
      });

      it("gives an ephemeral node its session's id as ephemeralOwner, and a persistent node '0'", async () => {
        const zk = await harness.client();
        const other = await harness.client();
        const root = harness.root();
        await zk.create(root);
        await zk.create(`${root}/mine`, null, 'ephemeral');
        await other.create(`${root}/theirs`, null, 'ephemeral-sequential');
        expect((await other.exists(`${root}/mine`))?.ephemeralOwner).toBe(zk.session.id);
        const [theirs] = (await zk.getChildren(root)).children.filter((name) =>
          name.startsWith('theirs'),
        );
        expect((await zk.exists(`${root}/${theirs}`))?.ephemeralOwner).toBe(other.session.id);
        expect(zk.session.id).not.toBe(other.session.id);
        expect((await zk.exists(root))?.ephemeralOwner).toBe('0');
      });
    });

    describe('ephemeral nodes', () => {
      it('cannot have children', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root);
        await zk.create(`${root}/owner`, null, 'ephemeral');
        expect(await failure(() => zk.create(`${root}/owner/child`))).toMatchObject({
          code: 'NO_CHILDREN_FOR_EPHEMERALS',
          rc: -108,
          op: 'create',
        });
        expect(
          (await failure(() => zk.create(`${root}/owner/seq-`, null, 'ephemeral-sequential'))).code,
        ).toBe('NO_CHILDREN_FOR_EPHEMERALS');
        expect((await failure(() => zk.create(`${root}/owner`, null, 'ephemeral'))).code).toBe(
          'NODE_EXISTS',
        ); // existence is checked first
      });

      it('vanish when their session closes, and not when another session closes', async () => {
        const owner = await harness.client();
        const bystander = await harness.client();
        const observer = await harness.client();
        const root = harness.root();
        await observer.create(root);
        await owner.create(`${root}/mine`, Buffer.from('x'), 'ephemeral');
        await bystander.create(`${root}/theirs`, null, 'ephemeral');
        bystander.close();
        await until(() => bystander.state === 'closed', 'the bystander to close');
        await quiet(observer);
        expect(await observer.exists(`${root}/mine`)).toBeDefined();
        const gone = recorder();
        await observer.exists(`${root}/mine`, gone.watcher);
        owner.close();
        await until(() => gone.events.length > 0, 'the ephemeral to go');
        expect(gone.events).toEqual([{ type: 'deleted', path: `${root}/mine` }]);
        expect((await observer.getChildren(root)).children).toEqual([]);
      });

      it('vanish when their session expires', async () => {
        const owner = await harness.client();
        const observer = await harness.client();
        const root = harness.root();
        await observer.create(root);
        await owner.create(`${root}/mine`, null, 'ephemeral');
        await owner.create(`${root}/seq-`, null, 'ephemeral-sequential');
        await observer.create(`${root}/kept`);
        await harness.expire(owner);
        expect((await observer.getChildren(root)).children).toEqual(['kept']);
        expect(await owner.exists(`${root}/mine`)).toBeUndefined();
      });
    });

    describe('watches', () => {
      it('exists on an absent node fires created, once only', async () => {
        const watcher = await harness.client();
        const writer = await harness.client();
        const root = harness.root();
        await writer.create(root);
        const seen = recorder();
        expect(await watcher.exists(`${root}/later`, seen.watcher)).toBeUndefined();
        await writer.create(`${root}/later`);
        await until(() => seen.events.length > 0, 'the created event');
        await writer.setData(`${root}/later`, Buffer.from('x'));
        await writer.delete(`${root}/later`);
        await writer.create(`${root}/later`);
        await quiet(watcher);
        expect(seen.events).toEqual([{ type: 'created', path: `${root}/later` }]);
      });

      it('exists on a present node fires changed, or deleted', async () => {
        const watcher = await harness.client();
        const writer = await harness.client();
        const root = harness.root();
        await writer.create(root);
        await writer.create(`${root}/a`);
        await writer.create(`${root}/b`);
        const onA = recorder();
        const onB = recorder();
        expect(await watcher.exists(`${root}/a`, onA.watcher)).toBeDefined();
        await watcher.exists(`${root}/b`, onB.watcher);
        await writer.setData(`${root}/a`, Buffer.from('x'));
        await writer.delete(`${root}/b`);
        await until(() => onA.events.length > 0 && onB.events.length > 0, 'both events');
        await writer.setData(`${root}/a`, Buffer.from('y'));
        await quiet(watcher);
        expect(onA.events).toEqual([{ type: 'changed', path: `${root}/a` }]);
        expect(onB.events).toEqual([{ type: 'deleted', path: `${root}/b` }]);
      });

      it('getData fires changed or deleted, and not for a child', async () => {
        const watcher = await harness.client();
        const writer = await harness.client();
        const root = harness.root();
        await writer.create(root);
        await writer.create(`${root}/a`);
        await writer.create(`${root}/b`);
        const onA = recorder();
        const onB = recorder();
        await watcher.getData(`${root}/a`, onA.watcher);
        await watcher.getData(`${root}/b`, onB.watcher);
        await writer.create(`${root}/a/child`); // a child is no data change
        await writer.setData(`${root}/a`, Buffer.from('x'));
        await writer.delete(`${root}/b`);
        await until(() => onA.events.length > 0 && onB.events.length > 0, 'both events');
        await quiet(watcher);
        expect(onA.events).toEqual([{ type: 'changed', path: `${root}/a` }]);
        expect(onB.events).toEqual([{ type: 'deleted', path: `${root}/b` }]);
      });

      it('getData on an absent node fails NO_NODE and sets no watch', async () => {
        const watcher = await harness.client();
        const writer = await harness.client();
        const root = harness.root();
        await writer.create(root);
        const seen = recorder();
        expect((await failure(() => watcher.getData(`${root}/later`, seen.watcher))).code).toBe(
          'NO_NODE',
        );
        expect(await watcher.tryGetChildren(`${root}/later`, seen.watcher)).toBeUndefined();
        await writer.create(`${root}/later`);
        await writer.create(`${root}/later/child`);
        await quiet(watcher);
        expect(seen.events).toEqual([]);
      });

      it('getChildren fires child when a child is created or deleted, and deleted when the node goes', async () => {
        const watcher = await harness.client();
        const writer = await harness.client();
        const root = harness.root();
        await writer.create(root);
        const created = recorder();
        await watcher.getChildren(root, created.watcher);
        await writer.create(`${root}/a`);
        await until(() => created.events.length > 0, 'the child event of a create');
        const deleted = recorder();
        await watcher.getChildren(root, deleted.watcher);
        await writer.setData(`${root}/a`, Buffer.from('x')); // a child's data is no child change
        await writer.setData(root, Buffer.from('x')); // nor is the node's own data
        await writer.delete(`${root}/a`);
        await until(() => deleted.events.length > 0, 'the child event of a delete');
        const gone = recorder();
        await watcher.getChildren(root, gone.watcher);
        await writer.delete(root);
        await until(() => gone.events.length > 0, 'the deleted event');
        await quiet(watcher);
        expect(created.events).toEqual([{ type: 'child', path: root }]);
        expect(deleted.events).toEqual([{ type: 'child', path: root }]);
        expect(gone.events).toEqual([{ type: 'deleted', path: root }]);
      });

      it("fire for a change made by the watching session itself, before that change's reply", async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root);
        const seen = recorder();
        await zk.getData(root, seen.watcher);
        await zk.setData(root, Buffer.from('x'));
        expect(seen.events).toEqual([{ type: 'changed', path: root }]);
      });

      it("fire for another session's change before the reply to any request the watching session sends after that change", async () => {
        // What a worker's post-claim check relies on (PlanTracker.knownUnhalted): a touch of the plan
        // node that landed before the claim is heard before the claim's reply, and before later ones.
        const watching = await harness.client();
        const writer = await harness.client();
        const root = harness.root();
        await watching.create(root);
        for (let round = 0; round < 20; round++) {
          const seen = recorder();
          await watching.getData(root, seen.watcher);
          await writer.setData(root, Buffer.from(String(round)));
          const claim = `${root}/claim-${round}`;
          await watching.create(claim, null, 'ephemeral');
          expect(seen.events, `round ${round}`).toEqual([{ type: 'changed', path: root }]);
        }
      });

      it('of every kind on one node all fire for one change, each once', async () => {
        const watcher = await harness.client();
        const writer = await harness.client();
        const root = harness.root();
        await writer.create(root);
        const byExists = recorder();
        const byData = recorder();
        const byChildren = recorder();
        await watcher.exists(root, byExists.watcher);
        await watcher.getData(root, byData.watcher);
        await watcher.getChildren(root, byChildren.watcher);
        await writer.delete(root);
        await until(
          () => byExists.events.length + byData.events.length + byChildren.events.length === 3,
          'three events',
        );
        for (const seen of [byExists, byData, byChildren])
          expect(seen.events).toEqual([{ type: 'deleted', path: root }]);
      });

      it('of an expired session fire session-lost, once', async () => {
        const zk = await harness.client();
        const writer = await harness.client();
        const root = harness.root();
        await writer.create(root);
        const onAbsent = recorder();
        const onData = recorder();
        await zk.exists(`${root}/never`, onAbsent.watcher);
        await zk.getData(root, onData.watcher);
        await harness.expire(zk);
        await until(
          () => onAbsent.events.length > 0 && onData.events.length > 0,
          'session-lost events',
        );
        await writer.setData(root, Buffer.from('x'));
        await writer.create(`${root}/never`);
        await quiet(zk);
        expect(onAbsent.events.map((event) => event.type)).toEqual(['session-lost']);
        expect(onData.events.map((event) => event.type)).toEqual(['session-lost']);
      });
    });

    describe('order and sessions', () => {
      it('applies and answers pipelined operations of one session in the order sent', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root);
        const answered: string[] = [];
        const track = <T>(name: string, promise: Promise<T>): Promise<T> =>
          promise.then((value) => {
            answered.push(name);
            return value;
          });
        const [created, createdChild, deleted, listed, after] = await Promise.all([
          track('create A', zk.create(`${root}/A`)),
          track('create A/b', zk.create(`${root}/A/b`, null, 'ephemeral')),
          track('delete A/b', zk.delete(`${root}/A/b`)),
          track('getChildren A', zk.getChildren(`${root}/A`)),
          track('exists A/b', zk.exists(`${root}/A/b`)),
        ]);
        expect([created, createdChild, deleted]).toEqual([`${root}/A`, `${root}/A/b`, undefined]);
        expect(listed.children).toEqual([]);
        expect(listed.stat.cversion).toBe(2);
        expect(after).toBeUndefined();
        expect(answered).toEqual([
          'create A',
          'create A/b',
          'delete A/b',
          'getChildren A',
          'exists A/b',
        ]);
      });

      it('lists every child (in an order callers must not rely on)', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root);
        const names = Array.from({ length: 12 }, (_, index) => `n${index}`);
        await Promise.all(names.map((name) => zk.create(`${root}/${name}`)));
        expect([...(await zk.getChildren(root)).children].sort()).toEqual([...names].sort());
      });

      it('after an expiry: session:expired, then session:started one generation up; the old fence refuses writes', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root);
        const oldSession = zk.session;
        await zk.create(`${root}/owner`, null, 'ephemeral');
        const events: Array<[string, ZkSession]> = [];
        zk.on('session:expired', (session) => events.push(['session:expired', session]));
        zk.on('session:started', (session) => events.push(['session:started', session]));
        await harness.expire(zk);
        await until(() => events.length >= 2, 'both session events');
        expect(events).toEqual([
          ['session:expired', oldSession],
          ['session:started', { generation: oldSession.generation + 1, id: expect.any(String) }],
        ]);
        const newSession = zk.session;
        expect(newSession.id).not.toBe(oldSession.id);
        expect(zk.state).toBe('connected');
        expect(zk.isCurrent(oldSession)).toBe(false);
        expect(zk.isCurrent(newSession)).toBe(true);
        expect(await zk.exists(`${root}/owner`)).toBeUndefined();
        const refused = await failure(() =>
          zk.create(`${root}/late`, null, 'persistent', { fence: oldSession }),
        );
        expect(refused).toMatchObject({ code: 'SESSION_EXPIRED', op: 'create' });
        expect(
          (await failure(() => zk.setData(root, Buffer.from('x'), -1, { fence: oldSession }))).code,
        ).toBe('SESSION_EXPIRED');
        expect((await failure(() => zk.delete(root, -1, { fence: oldSession }))).code).toBe(
          'SESSION_EXPIRED',
        );
        expect(await zk.exists(`${root}/late`)).toBeUndefined();
        expect(
          await zk.createIfAbsent(`${root}/fresh`, null, 'ephemeral', { fence: newSession }),
        ).toBe(true);
        expect((await zk.exists(`${root}/fresh`))?.ephemeralOwner).toBe(newSession.id);
      });

      it('counts reads and writes sent', async () => {
        const zk = await harness.client();
        const root = harness.root();
        const before = { ...zk.counts };
        await zk.create(root);
        await zk.getData(root);
        await zk.exists(root);
        await zk.getChildren(root);
        await zk.setData(root, null);
        await zk.delete(root);
        await zk.exists(root);
        expect(zk.counts.reads - before.reads).toBe(4);
        expect(zk.counts.writes - before.writes).toBe(3);
      });

      it('once closed: state closed, and every operation fails CLOSING', async () => {
        const zk = await harness.client();
        zk.close();
        expect(zk.state).toBe('closed');
        expect(await failure(() => zk.exists('/'))).toMatchObject({
          code: 'CLOSING',
          op: 'exists',
        });
        expect((await failure(() => zk.create(harness.root()))).code).toBe('CLOSING');
      });
    });

    describe('derived operations', () => {
      it('createIfAbsent and deleteIfPresent tell whether this call did it', async () => {
        const zk = await harness.client();
        const root = harness.root();
        expect(await zk.createIfAbsent(root, Buffer.from('first'))).toBe(true);
        expect(await zk.createIfAbsent(root, Buffer.from('second'))).toBe(false);
        expect(text((await zk.getData(root)).data)).toBe('first');
        expect((await failure(() => zk.createIfAbsent(`${root}/missing/child`))).code).toBe(
          'NO_NODE',
        );
        expect(await zk.deleteIfPresent(root, 0)).toBe(true);
        expect(await zk.deleteIfPresent(root)).toBe(false);
        await zk.create(root);
        expect((await failure(() => zk.deleteIfPresent(root, 4))).code).toBe('BAD_VERSION');
      });

      it('tryGetData and tryGetChildren answer undefined for an absent node', async () => {
        const zk = await harness.client();
        const root = harness.root();
        expect(await zk.tryGetData(root)).toBeUndefined();
        expect(await zk.tryGetChildren(root)).toBeUndefined();
        await zk.create(root, Buffer.from('v'));
        await zk.create(`${root}/c`);
        expect(text((await zk.tryGetData(root))?.data ?? null)).toBe('v');
        expect((await zk.tryGetChildren(root))?.children).toEqual(['c']);
      });

      it('ensurePath creates missing ancestors as persistent nodes, and is idempotent', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.create(root);
        await zk.create(`${root}/a`, Buffer.from('kept'));
        await zk.ensurePath(`${root}/a/b/c`);
        await zk.ensurePath(`${root}/a/b/c`);
        await zk.ensurePath('/');
        expect(await zk.exists(`${root}/a/b/c`)).toMatchObject({
          ephemeralOwner: '0',
          numChildren: 0,
        });
        expect(text((await zk.getData(`${root}/a`)).data)).toBe('kept');
      });

      it('deleteRecursive removes a subtree, children first, and is quiet about an absent one', async () => {
        const zk = await harness.client();
        const root = harness.root();
        await zk.ensurePath(`${root}/tree/a/x`);
        await zk.ensurePath(`${root}/tree/b`);
        await zk.create(`${root}/tree/a/seq-`, null, 'persistent-sequential');
        await zk.create(`${root}/tree/b/e`, null, 'ephemeral');
        await zk.create(`${root}/sibling`);
        await zk.deleteRecursive(`${root}/tree`);
        expect(await zk.exists(`${root}/tree`)).toBeUndefined();
        expect((await zk.getChildren(root)).children).toEqual(['sibling']);
        await zk.deleteRecursive(`${root}/tree`);
      });
    });
  });
}
