/**
 * What only the double can be made to do on demand (lost replies, connection drops, crashes, chosen
 * interleavings) and its inspection API. The semantics both share are in test/support/zk-contract.ts.
 */
import { describe, expect, it } from 'vitest';
import { ZkError } from '../../src/errors/zk-error.js';
import {
  ManualScheduler,
  MemoryZooKeeper,
  type AppliedOperation,
} from '../../src/testing/index.js';
import type { SessionState, WatchEvent, ZkSession } from '../../src/zk/zk-client-types.js';

/** Lets every queued microtask and immediate run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function failure(promise: Promise<unknown>): Promise<ZkError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ZkError);
    return error as ZkError;
  }
  throw new Error('expected a ZkError, but the operation succeeded');
}

/** A promise's outcome so far, without waiting for it. */
function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown } {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe('MemoryZooKeeper: delivery', () => {
  it('never answers inside the call: the operation lands on a later microtask', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    const created = zk.create('/a');
    expect(server.exists('/a')).toBe(false);
    expect(await created).toBe('/a');
    expect(server.exists('/a')).toBe(true);
  });

  it('lists children in an order that is neither creation order nor name order', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/plan');
    const made: string[] = [];
    for (let index = 0; index < 10; index++)
      made.push(await zk.create('/plan/task-', null, 'persistent-sequential'));
    const names = made.map((path) => path.slice('/plan/'.length));
    const { children } = await zk.getChildren('/plan');
    expect(children).not.toEqual(names);
    expect(children).not.toEqual([...names].sort());
    expect([...children].sort()).toEqual(names);
    expect(server.children('/plan')).toEqual(names); // inspection sorts
    // even two children never come back in creation order
    await zk.create('/pair');
    await zk.create('/pair/first');
    await zk.create('/pair/second');
    expect((await zk.getChildren('/pair')).children).toEqual(['second', 'first']);
  });

  it('tells onApplied about every applied operation, with the created path and the value sent', async () => {
    const server = new MemoryZooKeeper();
    const applied: AppliedOperation[] = [];
    server.onApplied = (event) => applied.push(event);
    const zk = server.connect({ name: 'writer' });
    await zk.create('/q-', Buffer.from('v'), 'persistent-sequential');
    await zk.getData('/missing').catch(() => undefined);
    expect(applied).toEqual([
      {
        clientName: 'writer',
        sessionId: zk.session.id,
        op: 'create',
        path: '/q-',
        createdPath: '/q-0000000001',
        data: Buffer.from('v'),
        ok: true,
      },
      {
        clientName: 'writer',
        sessionId: zk.session.id,
        op: 'getData',
        path: '/missing',
        ok: false,
        rc: -101,
      },
    ]);
  });
});

describe('MemoryZooKeeper: lost replies and connection loss', () => {
  it('a sequential create whose reply is lost happened, but its caller gets CONNECTION_LOSS and it is not resent', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/plan');
    const states: SessionState[] = [];
    zk.on('state', (state) => states.push(state));
    zk.loseNextReply((op, path) => op === 'create' && path === '/plan/task-');
    const error = await failure(
      zk.create('/plan/task-', Buffer.from('fn'), 'persistent-sequential'),
    );
    expect(error).toMatchObject({ code: 'CONNECTION_LOSS', op: 'create', retried: false });
    expect(server.children('/plan')).toEqual(['task-0000000000']);
    await flush();
    expect(states).toEqual(['suspended', 'connected']);
    expect(await zk.create('/plan/task-', null, 'persistent-sequential')).toBe(
      '/plan/task-0000000001',
    );
  });

  it('resends an idempotent operation whose reply was lost: the echo of its own first try answers NODE_EXISTS or NO_NODE, retried', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    zk.loseNextReply((op) => op === 'create');
    expect(await failure(zk.create('/a', Buffer.from('1')))).toMatchObject({
      code: 'NODE_EXISTS',
      retried: true,
    });
    expect(server.getData('/a')?.toString()).toBe('1');
    zk.loseNextReply((op) => op === 'delete');
    expect(await failure(zk.delete('/a'))).toMatchObject({ code: 'NO_NODE', retried: true });
    expect(server.exists('/a')).toBe(false);
    // the derived operations then report "not by this call", which is why `retried` exists
    zk.loseNextReply();
    expect(await zk.createIfAbsent('/b')).toBe(false);
    expect(server.exists('/b')).toBe(true);
    // a lost read is simply read again
    zk.loseNextReply();
    expect((await zk.getData('/b')).stat.version).toBe(0);
    expect(zk.counts).toEqual({ reads: 2, writes: 6 });
  });

  it('while disconnected nothing reaches the server; idempotent operations are resent on reconnect, sequential creates fail', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/plan');
    zk.disconnect();
    expect(zk.state).toBe('suspended');
    const plain = track(zk.create('/plan/ready'));
    const sequential = failure(zk.create('/plan/task-', null, 'persistent-sequential'));
    expect(await sequential).toMatchObject({ code: 'CONNECTION_LOSS', retried: false });
    await flush();
    expect(plain.settled).toBe(false);
    expect(server.children('/plan')).toEqual([]);
    zk.reconnect();
    await flush();
    expect(plain).toMatchObject({ settled: true, value: '/plan/ready' });
    expect(server.children('/plan')).toEqual(['ready']);
  });

  it('operations in flight when the connection drops fail unapplied; a prefix of what was sent has landed', async () => {
    const scheduler = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const zk = server.connect({ name: 'a' });
    const first = track(zk.create('/one', null, 'persistent-sequential'));
    const second = failure(zk.create('/two', null, 'persistent-sequential'));
    scheduler.step('a');
    zk.disconnect();
    expect((await second).code).toBe('CONNECTION_LOSS');
    await flush();
    expect(first).toMatchObject({ settled: true, value: '/one0000000001' });
    expect(server.exists('/two0000000002')).toBe(false);
    expect(server.children('/')).toEqual(['one0000000001', 'zookeeper']);
    expect(scheduler.pending()).toEqual([]);
  });

  it('a connection drop tells every watcher of the session session-lost; the server keeps the watches (set again on reconnect), which later fire into nothing', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    const other = server.connect();
    await zk.create('/n');
    const events: WatchEvent[] = [];
    await zk.exists('/absent', (event) => events.push(event));
    await zk.getData('/n', (event) => events.push(event));
    await other.getData('/n', () => undefined);
    const session = zk.session;
    zk.disconnect();
    await flush();
    expect(events).toEqual([
      { type: 'session-lost', path: '/absent' },
      { type: 'session-lost', path: '/n' },
    ]);
    expect(
      server.watches().map((watch) => `${watch.clientName} ${watch.kind} ${watch.path}`),
    ).toEqual([`${zk.name} exists /absent`, `${zk.name} data /n`, `${other.name} data /n`]);
    zk.reconnect();
    expect(zk.isCurrent(session)).toBe(true);
    await other.setData('/n', Buffer.from('x'));
    await flush();
    expect(events).toHaveLength(2); // told once only
    expect(
      server.watches().map((watch) => `${watch.clientName} ${watch.kind} ${watch.path}`),
    ).toEqual([`${zk.name} exists /absent`]); // until the session ends
    zk.close();
    expect(server.watches()).toEqual([]);
  });

  it('keeps one watch per session, path and kind however many calls set it, and tells every caller when it fires', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    const heard: string[] = [];
    await zk.exists('/later', () => heard.push('first'));
    await zk.exists('/later', () => heard.push('second'));
    await zk.getData('/n').catch(() => undefined);
    expect(server.watchCount('/later')).toBe(1);
    await zk.create('/later');
    await flush();
    expect(heard).toEqual(['first', 'second']);
    expect(server.watchCount()).toBe(0);
  });

  it('a session expired while disconnected is found out on reconnect', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.create('/e', null, 'ephemeral');
    const old = zk.session;
    zk.disconnect();
    server.expireSession(old.id);
    expect(server.exists('/e')).toBe(false);
    expect(zk.state).toBe('suspended');
    const seen: string[] = [];
    zk.on('state', (state) => seen.push(`state:${state}`));
    zk.on('session:expired', () => seen.push('session:expired'));
    zk.on('session:started', (session) => seen.push(`session:started:${session.generation}`));
    zk.reconnect();
    await flush();
    expect(seen).toEqual([
      'state:expired',
      'session:expired',
      'state:connected',
      'session:started:2',
    ]);
  });
});

describe('MemoryZooKeeper: ManualScheduler', () => {
  it('lets a test choose which client lands first', async () => {
    const scheduler = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const alice = server.connect({ name: 'alice' });
    const bob = server.connect({ name: 'bob' });
    const aliceClaim = failure(alice.create('/owner', Buffer.from('alice'), 'ephemeral'));
    const bobClaim = track(bob.create('/owner', Buffer.from('bob'), 'ephemeral'));
    expect(scheduler.pending()).toEqual(['alice', 'bob']);
    expect(scheduler.step('bob')).toEqual({ op: 'create', path: '/owner' });
    expect(scheduler.pending()).toEqual(['alice']);
    scheduler.step('alice');
    expect((await aliceClaim).code).toBe('NODE_EXISTS');
    await flush();
    expect(bobClaim).toMatchObject({ settled: true, value: '/owner' });
    expect(server.stat('/owner')?.ephemeralOwner).toBe(bob.session.id);
    expect(() => scheduler.step('alice')).toThrow(/no operation waiting/);
  });

  it('keeps each client FIFO whatever the interleaving', async () => {
    const scheduler = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const a = server.connect({ name: 'a' });
    const b = server.connect({ name: 'b' });
    const applied: string[] = [];
    server.onApplied = (event) =>
      applied.push(`${event.clientName}:${event.op}:${event.path}:${event.ok ? 'ok' : event.rc}`);
    const results = Promise.allSettled([
      a.create('/x'),
      a.setData('/x', Buffer.from('a1')),
      b.setData('/x', Buffer.from('b1')),
      a.setData('/x', Buffer.from('a2'), 1),
      b.delete('/x', 2),
    ]);
    expect(scheduler.queued('a')).toEqual([
      { op: 'create', path: '/x' },
      { op: 'setData', path: '/x' },
      { op: 'setData', path: '/x' },
    ]);
    scheduler.step('b'); // b's setData lands before a's create: NO_NODE
    scheduler.step('a');
    scheduler.step('b'); // b's delete of version 2: BAD_VERSION (the node is at 0)
    scheduler.step('a');
    scheduler.step('a');
    await results;
    expect(applied).toEqual([
      'b:setData:/x:-101',
      'a:create:/x:ok',
      'b:delete:/x:-103',
      'a:setData:/x:ok',
      'a:setData:/x:ok',
    ]);
    expect(server.getData('/x')?.toString()).toBe('a2');
  });

  it('checks a fence again when the write lands: a session that expired while it waited fails it', async () => {
    const scheduler = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const zk = server.connect({ name: 'worker' });
    const fence: ZkSession = zk.session;
    const write = failure(zk.create('/result', Buffer.from('late'), 'persistent', { fence }));
    zk.expireSession();
    expect(await write).toMatchObject({ code: 'SESSION_EXPIRED', op: 'create' });
    expect(scheduler.pending()).toEqual([]);
    await flush();
    expect(zk.session.generation).toBe(2);
    const refused = failure(zk.create('/result', null, 'persistent', { fence }));
    expect(scheduler.pending()).toEqual([]); // refused at send time: never queued
    expect((await refused).code).toBe('SESSION_EXPIRED');
    expect(server.exists('/result')).toBe(false);
  });

  it('drain applies everything, including operations sent in reaction to replies', async () => {
    const scheduler = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const zk = server.connect();
    const made = zk.ensurePath('/a/b/c');
    expect(await scheduler.drain()).toBeGreaterThan(3);
    await made;
    expect(server.exists('/a/b/c')).toBe(true);
  });
});

describe('MemoryZooKeeper: sessions', () => {
  it('crash(): nothing is answered or emitted any more; the ephemerals stay until the server expires the session', async () => {
    const server = new MemoryZooKeeper();
    const worker = server.connect({ name: 'worker' });
    const observer = server.connect({ name: 'observer' });
    await worker.create('/owner', null, 'ephemeral');
    const heard: string[] = [];
    worker.on('state', (state) => heard.push(state));
    worker.on('session:expired', () => heard.push('session:expired'));
    const workerWatch: WatchEvent[] = [];
    await worker.exists('/elsewhere', (event) => workerWatch.push(event));
    const sessionId = worker.sessionId as string;
    worker.crash();
    const never = track(worker.getData('/owner'));
    const gone: WatchEvent[] = [];
    await observer.exists('/owner', (event) => gone.push(event));
    await flush();
    expect(server.exists('/owner')).toBe(true);
    expect(server.sessions().map((session) => session.sessionId)).toContain(sessionId);
    worker.expireSessionOnServer();
    await flush();
    expect(server.exists('/owner')).toBe(false);
    expect(gone).toEqual([{ type: 'deleted', path: '/owner' }]);
    expect(never.settled).toBe(false);
    expect(heard).toEqual([]);
    expect(workerWatch).toEqual([]);
    expect(server.sessions().map((session) => session.clientName)).toEqual(['observer']);
  });

  it('expireSession(): pending operations fail SESSION_EXPIRED, then expired → connected with a new generation', async () => {
    const scheduler = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const zk = server.connect({ name: 'zk' });
    const states: SessionState[] = [];
    zk.on('state', (state) => states.push(state));
    const pending = failure(zk.exists('/'));
    zk.expireSession();
    expect(() => zk.session).toThrow(ZkError); // no session until the new one opens
    expect((await pending).code).toBe('SESSION_EXPIRED');
    await flush();
    expect(states).toEqual(['expired', 'connected']);
    expect(zk.session.generation).toBe(2);
  });

  it('close(): the ephemerals go at once, pending and later operations fail CLOSING', async () => {
    const scheduler = new ManualScheduler();
    const server = new MemoryZooKeeper({ scheduler });
    const zk = server.connect({ name: 'zk' });
    const made = zk.create('/e', null, 'ephemeral');
    scheduler.step('zk');
    await made;
    const pending = failure(zk.exists('/e'));
    zk.close();
    expect(server.exists('/e')).toBe(false);
    expect((await pending).code).toBe('CLOSING');
    expect((await failure(zk.exists('/'))).code).toBe('CLOSING');
    expect(server.sessions()).toEqual([]);
  });
});

describe('MemoryZooKeeper: inspection', () => {
  it('lists the watches still registered, per session, path and kind', async () => {
    const server = new MemoryZooKeeper();
    const a = server.connect({ name: 'a' });
    const b = server.connect({ name: 'b' });
    await a.create('/plan');
    await a.create('/plan/task');
    await a.exists('/plan/task/ready', () => undefined);
    await a.getData('/plan/task', () => undefined);
    await b.getChildren('/plan', () => undefined);
    await b.getData('/plan/task', () => undefined);
    expect(server.watches()).toEqual(
      expect.arrayContaining([
        { sessionId: a.session.id, clientName: 'a', path: '/plan/task/ready', kind: 'exists' },
        { sessionId: a.session.id, clientName: 'a', path: '/plan/task', kind: 'data' },
        { sessionId: b.session.id, clientName: 'b', path: '/plan', kind: 'child' },
        { sessionId: b.session.id, clientName: 'b', path: '/plan/task', kind: 'data' },
      ]),
    );
    expect(server.watchCount()).toBe(4);
    expect(server.watchCount('/plan/task')).toBe(3);
    expect(server.watchCount('/plan/t')).toBe(0);
    await a.setData('/plan/task', Buffer.from('x')); // fires both data watches, and they are gone
    expect(server.watchCount('/plan/task')).toBe(1);
    await a.getData('/missing', () => undefined).catch(() => undefined); // NO_NODE: no watch
    await b.tryGetChildren('/missing', () => undefined);
    expect(server.watchCount()).toBe(2);
    expect(server.sessions()).toEqual([
      { sessionId: a.session.id, clientName: 'a', ephemerals: [], watches: 1 },
      { sessionId: b.session.id, clientName: 'b', ephemerals: [], watches: 1 },
    ]);
  });

  it('reads the tree without a session, and dumps it for failure messages', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    await zk.ensurePath('/plan/task-1');
    await zk.create('/plan/task-1/owner', Buffer.from('w1'), 'ephemeral');
    await zk.setData('/plan', Buffer.from([0, 1, 2]));
    expect(server.children('/')).toEqual(['plan', 'zookeeper']);
    expect(server.getData('/plan/task-1/owner')?.toString()).toBe('w1');
    expect(server.getData('/nope')).toBeUndefined();
    expect(server.dump('/plan')).toBe(
      [
        '/plan v1 = 0x000102',
        `  task-1 v0 = "null"`,
        `    owner [ephemeral ${zk.session.id}] v0 = "w1"`,
      ].join('\n'),
    );
    expect(server.sessions()[0]?.ephemerals).toEqual(['/plan/task-1/owner']);
  });

  it('gives sessions ids in the native client format, equal to the ephemeralOwner of their nodes', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    expect(zk.session.id).toMatch(/^[0-9a-f]+$/);
    await zk.create('/e', null, 'ephemeral');
    expect((await zk.exists('/e'))?.ephemeralOwner).toBe(zk.session.id);
    expect(() => server.connect({ name: zk.name })).toThrow(/exists already/);
  });
});

describe('MemoryZooKeeper: followers that lag', () => {
  it("a follower's session reads what its server has applied: another session's write only after catchUp or its own sync", async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const onFollower = server.connect({ name: 'on-follower' }); // session 1: the follower
    const onLeader = server.connect({ name: 'on-leader' }); // session 2: the leader
    expect([server.serverOf(onFollower.session.id), server.serverOf(onLeader.session.id)]).toEqual([
      1, 0,
    ]);
    await onLeader.create('/n', Buffer.from('1'));
    expect(await onFollower.exists('/n')).toBeUndefined();
    expect(server.lag(1)).toBe(1);
    await onFollower.sync('/n');
    expect((await onFollower.getData('/n')).data?.toString()).toBe('1');
    await onLeader.setData('/n', Buffer.from('2'));
    expect((await onFollower.getData('/n')).data?.toString()).toBe('1');
    expect(server.catchUp(1)).toBe(1);
    expect((await onFollower.getData('/n')).data?.toString()).toBe('2');
  });

  it("a session's own write is applied by its server before the reply, so it reads it back (with the stat the leader gave)", async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const zk = server.connect();
    expect(server.serverOf(zk.session.id)).toBe(1);
    await zk.create('/own', Buffer.from('v'));
    const stat = await zk.setData('/own', Buffer.from('w'));
    expect(stat).toEqual(server.stat('/own'));
    expect((await zk.getData('/own')).data?.toString()).toBe('w');
    expect(server.lag(1)).toBe(0);
  });

  it("a write whose reply was lost may not be on the writer's server yet: a read shows the old state until a sync", async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const zk = server.connect();
    await zk.create('/plan');
    zk.loseNextReply((op) => op === 'create', { reconnect: false });
    const creating = zk
      .create('/plan/task-', null, 'persistent-sequential')
      .catch((error: unknown) => error); // never sent again
    await flush();
    expect(server.children('/plan')).toEqual(['task-0000000000']); // the leader applied it
    zk.reconnect();
    expect(await creating).toMatchObject({ code: 'CONNECTION_LOSS' });
    expect((await zk.getChildren('/plan')).children).toEqual([]); // its own server has not applied it yet
    await zk.sync('/plan');
    expect((await zk.getChildren('/plan')).children).toEqual(['task-0000000000']);
  });

  it('a write refused by the leader still brings its session up to date: its server answers after applying what came before', async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const onFollower = server.connect();
    const onLeader = server.connect();
    await onLeader.create('/n');
    expect(await onFollower.exists('/n')).toBeUndefined();
    await expect(onFollower.create('/n')).rejects.toMatchObject({ code: 'NODE_EXISTS' });
    expect(await onFollower.exists('/n')).toBeDefined();
  });

  it("a follower fires its sessions' watches when it applies the change, not when the leader commits it", async () => {
    const server = new MemoryZooKeeper({ followers: 1 });
    const onFollower = server.connect();
    const onLeader = server.connect();
    const events: WatchEvent[] = [];
    await onFollower.exists('/later', (event) => events.push(event));
    await onLeader.create('/later');
    await flush();
    expect(events).toEqual([]);
    server.catchUp();
    await flush();
    expect(events).toEqual([{ type: 'created', path: '/later' }]);
  });
});

describe('MemoryZooKeeper: a frozen process', () => {
  it('hears nothing while frozen, not even that its session expired; on waking it hears what came, then loses the session', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect();
    const other = server.connect();
    await zk.create('/e', null, 'ephemeral');
    const events: WatchEvent[] = [];
    await zk.exists('/n', (event) => events.push(event));
    const heard: string[] = [];
    zk.on('session:expired', () => heard.push('expired'));
    zk.freeze();
    const reading = track(zk.getData('/e'));
    await other.create('/n');
    await flush();
    expect(reading.settled).toBe(false);
    expect(events).toEqual([]);
    server.expireSession(zk.session.id);
    await flush();
    expect(heard).toEqual([]);
    expect(zk.state).toBe('connected'); // it does not know yet
    zk.thaw();
    await flush();
    expect(reading).toMatchObject({ settled: true });
    expect(events).toEqual([{ type: 'created', path: '/n' }]);
    expect(heard).toEqual(['expired']);
  });
});
