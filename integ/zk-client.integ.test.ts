import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ZkConnectTimeoutError, ZkError } from '../src/index.js';
import { ZkClient, type ZkSession } from '../src/testing/index.js';
import { expireSession } from '../src/testing/expire-session.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('zk-client');

describe('ZkClient, the adapter over the native client', () => {
  it('reports failures as ZkError with a stable code, the op and the path', async () => {
    const zk = await env.client();
    const root = env.root();
    const error = await zk.getData(`${root}/missing`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ZkError);
    expect(error).toMatchObject({
      code: 'NO_NODE',
      rc: -101,
      op: 'getData',
      path: `${root}/missing`,
    });
    await zk.ensurePath(`${root}/a/b`);
    await expect(zk.create(`${root}/a`)).rejects.toMatchObject({ code: 'NODE_EXISTS' });
    await expect(zk.delete(`${root}/a`)).rejects.toMatchObject({ code: 'NOT_EMPTY' });
    await expect(zk.setData(`${root}/a`, Buffer.from('x'), 7)).rejects.toMatchObject({
      code: 'BAD_VERSION',
    });
  });

  it('treats NODE_EXISTS and NO_NODE as outcomes in createIfAbsent, deleteIfPresent and the try- reads', async () => {
    const zk = await env.client();
    const path = `${env.root()}`;
    expect(await zk.createIfAbsent(path)).toBe(true);
    expect(await zk.createIfAbsent(path)).toBe(false);
    expect(await zk.deleteIfPresent(path)).toBe(true);
    expect(await zk.deleteIfPresent(path)).toBe(false);
    expect(await zk.tryGetData(path)).toBeUndefined();
    expect(await zk.tryGetChildren(path)).toBeUndefined();
    expect(await zk.exists(path)).toBeUndefined();
  });

  it('fires a one-shot child watch on change', async () => {
    const zk = await env.client();
    const other = await env.client();
    const root = env.root();
    await zk.ensurePath(root);
    let fired: (event: unknown) => void = () => undefined;
    const event = new Promise((resolve) => (fired = resolve));
    await zk.getChildren(root, fired); // the watch is set once the read is answered
    await other.create(`${root}/child`);
    expect(await event).toEqual({ type: 'child', path: root });
  });

  it('fails with a connection error, never a false "absent", once closed', async () => {
    const zk = await env.client();
    zk.close();
    await expect(zk.exists('/')).rejects.toMatchObject({ code: 'CLOSING' });
    expect(zk.state).toBe('closed');
  });

  it('gives up connecting after the connect timeout', async () => {
    const started = performance.now();
    await expect(
      ZkClient.connect({ connect: '127.0.0.1:1', sessionTimeoutMs: 4_000, connectTimeoutMs: 400 }),
    ).rejects.toBeInstanceOf(ZkConnectTimeoutError);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('after its session expires it opens a new one: old ephemerals are gone and writes fenced by the old session are refused', async () => {
    const zk = await env.client({ sessionTimeoutMs: 4_000 });
    const root = env.root();
    await zk.ensurePath(root);
    const oldSession = zk.session;
    await zk.create(`${root}/owner`, null, 'ephemeral');
    const expired = once(zk, 'session:expired');
    const started = once(zk, 'session:started') as Promise<[ZkSession]>;
    await expireSession(zk);
    await zk.exists('/').catch(() => undefined); // the next contact tells the client its session is gone
    expect(((await expired) as [ZkSession])[0]).toEqual(oldSession);
    const [newSession] = await started;
    expect(newSession.generation).toBe(oldSession.generation + 1);
    expect(newSession.id).not.toBe(oldSession.id);
    expect(zk.state).toBe('connected');
    expect(zk.isCurrent(oldSession)).toBe(false);
    expect(await zk.exists(`${root}/owner`)).toBeUndefined();
    await expect(
      zk.create(`${root}/late-write`, null, 'persistent', { fence: oldSession }),
    ).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
    expect(await zk.exists(`${root}/late-write`)).toBeUndefined();
    expect(
      await zk.createIfAbsent(`${root}/fresh`, null, 'persistent', { fence: newSession }),
    ).toBe(true);
  });
});
