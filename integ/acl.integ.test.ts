import { once } from 'node:events';
import { rootContainer } from '../src/di/container.js';
import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  InvalidArgumentError,
  ZkAuthError,
  call,
  creatorAllAcl,
  digestAcl,
  digestId,
  shutdown,
  startup,
  zkPlanModule,
  type AclEntry,
  type ZkAuth,
} from '../src/index.js';
import { ZkClient, layout, type ZkSession } from '../src/testing/index.js';
import { expireSession } from '../src/testing/expire-session.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('acl');

const aliceAuth: ZkAuth = { scheme: 'digest', id: 'alice:secret' };
const alice = { auth: aliceAuth, acl: [digestAcl('alice:secret')] };
/** The ACL as ZooKeeper reports it on every node alice's sessions create. */
const aliceOnly: AclEntry[] = [{ perms: 31, scheme: 'digest', id: digestId('alice:secret') }];

function arithmetic(): FunctionRegistry {
  return new FunctionRegistry()
    .register('constant', (ctx) => ctx.params[0])
    .register('sum', (_ctx, ...inputs: number[]) => inputs.reduce((a, b) => a + b, 0));
}

/** `zk` may neither list, read, create under nor delete `node`. */
async function expectNoAuth(zk: ZkClient, node: string): Promise<void> {
  await expect(zk.getChildren(node)).rejects.toMatchObject({ code: 'NO_AUTH', path: node });
  await expect(zk.getData(node)).rejects.toMatchObject({ code: 'NO_AUTH', path: node });
  await expect(zk.create(`${node}/intruder`)).rejects.toMatchObject({ code: 'NO_AUTH' });
  await expect(zk.delete(node)).rejects.toMatchObject({ code: 'NO_AUTH', path: node }); // checked on the parent's ACL
}

/**
 * Expires `zk`'s session with `expireSession`, again until the client notices. That helper races
 * with the client's own reconnection: when the client re-attaches to its session before the
 * helper's handle closes it, the close is refused (the session moved back) and nothing expires.
 */
function rawClient(options: {
  auth?: readonly ZkAuth[];
  acl?: readonly AclEntry[];
}): Promise<ZkClient> {
  return ZkClient.connect({
    connect: env.connectString,
    sessionTimeoutMs: 10_000,
    connectTimeoutMs: 10_000 * TIMING,
    ...options,
  });
}

describe('ZooKeeper authentication and ACLs', () => {
  it('a plan under a digest ACL is finished by authorised workers while an anonymous client gets NO_AUTH', async () => {
    const parent = env.root();
    const builder = await env.zkPlan({ ...alice, functions: arithmetic() });
    const plan = await builder.createPlan(parent);
    const one = await builder.addTask(plan, call('constant', 1));
    const two = await builder.addTask(plan, call('constant', 2));
    const total = await builder.addTask(plan, call('sum'), [one, two], { keepResult: true });
    for (const node of [parent, plan, one, total])
      expect((await builder.zk.getAcl(node)).acl).toEqual(aliceOnly);

    const anonymous = await env.client();
    for (const node of [plan, one, total]) await expectNoAuth(anonymous, node);

    const workers = await env.zkPlan({ ...alice, functions: arithmetic() });
    const problems: unknown[] = [];
    workers.on('worker:error', ({ error }) => problems.push(error));
    workers.on('task:failed', ({ error }) => problems.push(error));
    const pool = workers.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 100 } });
    await builder.markAsReady(plan);
    await builder.waitForCompletion(plan, { timeoutMs: 20_000 * TIMING });
    await pool.stop();
    expect(problems).toEqual([]);

    const kept = layout.keptResultPathFor(total);
    expect(await builder.getResult(total)).toBe(3);
    expect((await builder.zk.getAcl(kept)).acl).toEqual(aliceOnly); // written through the workers' session
    await expect(anonymous.getData(kept)).rejects.toMatchObject({ code: 'NO_AUTH', path: kept });
    await expectNoAuth(anonymous, plan);
  });

  it('a client authenticated as another user, or with a wrong password, gets NO_AUTH too', async () => {
    const builder = await env.zkPlan(alice);
    const plan = await builder.createPlan(env.root());
    const task = await builder.addTask(plan, call('constant', 1));
    for (const id of ['bob:other', 'alice:wrong']) {
      const other = await env.zkPlan({ auth: { scheme: 'digest', id } });
      await expectNoAuth(other.zk, plan);
      await expectNoAuth(other.zk, task);
      await expect(other.planCompleted(plan)).rejects.toMatchObject({ code: 'NO_AUTH' });
    }
  });

  it('refuses, before connecting, an acl that would not grant the connection itself', async () => {
    const parent = env.root();
    const noAuth = await env
      .zkPlan({ acl: [digestAcl('alice:secret')] })
      .catch((error: unknown) => error);
    expect(noAuth).toBeInstanceOf(InvalidArgumentError);
    expect((noAuth as Error).message).toMatch(/no `auth` is configured/);
    await expect(
      env.zkPlan({ auth: { scheme: 'digest', id: 'bob:other' }, acl: [digestAcl('alice:secret')] }),
    ).rejects.toThrow(/digest user 'bob'/);
    await expect(env.zkPlan({ acl: creatorAllAcl })).rejects.toThrow(/acl\[0\].*INVALID_ACL/);
    await expect(
      env.zkPlan({ ...alice, acl: [digestAcl('alice:secret', 'read')] }),
    ).rejects.toThrow(/read, create and delete/);
    await expect(
      env.zkPlan({
        auth: aliceAuth,
        acl: [{ perms: ['all'], scheme: 'digest', id: 'alice:secret' }],
      }),
    ).rejects.toThrow(/acl\[0\]\.id.*digestAcl/);
    await expect(
      env.zkPlan({
        auth: aliceAuth,
        acl: [{ perms: ['everything' as 'all'], scheme: 'digest', id: digestId('alice:secret') }],
      }),
    ).rejects.toThrow(/acl\[0\]\.perms/);
    expect(() =>
      zkPlanModule(rootContainer.createChildContainer(), {
        zookeeper: { connect: env.connectString, acl: [digestAcl('alice:secret')] },
      }),
    ).toThrow(InvalidArgumentError);

    // A raw ZkClient does not check: ZooKeeper refuses the `auth`-scheme ACL of an unauthenticated
    // session with INVALID_ACL, and the node, world-open for one round trip, is deleted again.
    const anonymous = await env.client();
    const raw = await rawClient({ acl: creatorAllAcl });
    try {
      await expect(raw.create(parent)).rejects.toMatchObject({
        code: 'INVALID_ACL',
        op: 'create',
        path: parent,
      });
      expect(await anonymous.exists(parent)).toBeUndefined();
    } finally {
      raw.close();
    }

    // creatorAllAcl with auth: the creator's digest identity.
    const creator = await env.zkPlan({ auth: aliceAuth, acl: creatorAllAcl });
    expect((await creator.zk.getAcl(await creator.createPlan(parent))).acl).toEqual(aliceOnly);
  });

  it('fails connect with ZkAuthError when the server refuses the credentials, without reconnecting for ever', async () => {
    const started = performance.now();
    const error = await env
      .zkPlan({ auth: { scheme: 'no-such-scheme', id: 'user:hunter2' } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ZkAuthError);
    expect(error).toMatchObject({ code: 'AUTH_FAILED', scheme: 'no-such-scheme' });
    expect((error as Error).message).not.toContain('hunter2');
    expect(performance.now() - started).toBeLessThan(5_000 * TIMING);
  });

  it('authenticates every new session: after an expiry the protected plan is still readable and writable', async () => {
    const zkPlan = await env.zkPlan({ ...alice, sessionTimeoutMs: 4_000 });
    const plan = await zkPlan.createPlan(env.root());
    const oldSession = zkPlan.zk.session;
    // A read issued the moment the new session is announced must already be authenticated.
    const readAtStart = new Promise<unknown>((resolve) => {
      zkPlan.zk.once('session:started', () =>
        resolve(
          zkPlan.zk.getChildren(plan).then(
            ({ children }) => children,
            (error: unknown) => error,
          ),
        ),
      );
    });
    const started = once(zkPlan.zk, 'session:started') as Promise<[ZkSession]>;
    await expireSession(zkPlan.zk);
    const [session] = await started;
    expect(session.generation).toBe(oldSession.generation + 1);
    expect(((await readAtStart) as string[]).sort()).toEqual(['history', 'runnable']);
    expect(await zkPlan.planCompleted(plan)).toBe(true);
    const task = await zkPlan.addTask(plan, call('constant', 7));
    expect((await zkPlan.zk.getAcl(task)).acl).toEqual(aliceOnly);
    await expectNoAuth(await env.client(), task);
  });

  it('a ZkClient with acl creates every node with it, ephemeral and sequential ones too, in the create request itself (one write)', async () => {
    const zk = await rawClient({ auth: [aliceAuth], acl: alice.acl });
    try {
      const root = env.root();
      await zk.ensurePath(`${root}/a`);
      const writes = zk.counts.writes;
      const owner = await zk.create(`${root}/a/owner`, null, 'ephemeral');
      expect(zk.counts.writes - writes).toBe(1);
      const sequential = await zk.create(`${root}/a/n-`, null, 'persistent-sequential');
      for (const node of [root, `${root}/a`, owner, sequential])
        expect((await zk.getAcl(node)).acl).toEqual(aliceOnly);
      expect(await zk.createIfAbsent(`${root}/a/owner`)).toBe(false);
    } finally {
      zk.close();
    }
  });

  it('the DI module takes auth and acl from its zookeeper config', async () => {
    const $ = rootContainer.createChildContainer();
    zkPlanModule($, { zookeeper: { connect: env.connectString, ...alice } });
    const zkPlan = await startup($);
    try {
      const plan = await zkPlan.createPlan(env.root());
      expect((await zkPlan.zk.getAcl(plan)).acl).toEqual(aliceOnly);
      await expectNoAuth(await env.client(), plan);
    } finally {
      await shutdown($);
    }
  });
});
