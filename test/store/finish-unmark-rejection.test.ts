/**
 * Review of 3f102af (deleteTask / deleteResultOwnerAndNode). The index entry's deletion
 * (`unmarking`) is sent first; when the task has no other children (no input, no link) nothing
 * awaits it before `deleteResultOwnerAndNode` awaits `deleteValue(result)` (a chunked result, or
 * one the caller does not know: the finish-previous path). If that deleteValue throws, `unmarking`
 * never gets a handler; if `unmarking` rejects while deleteValue runs, its rejection is unhandled
 * at that moment. A session that expires as the deletion begins does both: every fenced write is
 * refused. An unhandled rejection ends a Node process (the default --unhandled-rejections=throw).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeValue } from '../../src/serialization/codec.js';
import { TaskStore } from '../../src/store/task-store.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CHUNK_BYTES } from '../../src/zk/chunked-value.js';

const PLAN = '/unmark/plan-0000000000';
const TASK = `${PLAN}/task-0000000000`;
const ENTRY = `${PLAN}/runnable/task-0000000000`;

/** A claimed task with an index entry; the session expires as the entry's deletion is sent. */
async function claimedTask(children: Record<string, Buffer | null>) {
  const server = new MemoryZooKeeper();
  const zk = server.connect({ name: 'worker' });
  const store = new TaskStore(zk);
  await zk.ensurePath(`${PLAN}/runnable`);
  await zk.create(TASK);
  for (const [name, data] of Object.entries(children)) await zk.create(`${TASK}/${name}`, data);
  await zk.create(ENTRY);
  const claim = await store.claim(TASK, 'w', new AbortController().signal);
  if (claim === undefined) throw new Error('not claimed');
  const deleteOriginal = zk.delete.bind(zk);
  zk.delete = (path, version, options) => {
    if (path === ENTRY) zk.expireSession(); // the server expires the session right then
    return deleteOriginal(path, version, options);
  };
  return { store, claim };
}

describe('a session that expires as a finished task is deleted', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown): void => {
    unhandled.push(reason);
  };
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

  it('finish of a chunked result, task without inputs or links: rejects, and leaves no unhandled rejection', async () => {
    const { store, claim } = await claimedTask({ ready: null });
    const encoded = encodeValue('x'.repeat(CHUNK_BYTES + 10), 'result');
    await expect(
      store.finish(claim, encoded, { keepResult: false, storeMaxBytes: 16 * 1024 * 1024 }),
    ).rejects.toThrow(/expired/);
    await settle();
    expect(unhandled.map(String)).toEqual([]);
  });

  it('deleteTask(claim, undefined) (the finish-previous path), task without inputs or links: rejects, and leaves no unhandled rejection', async () => {
    const { store, claim } = await claimedTask({ result: encodeValue(1, 'result') });
    await expect(store.deleteTask(claim, undefined)).rejects.toThrow(/expired/);
    await settle();
    expect(unhandled.map(String)).toEqual([]);
  });

  it('(control) the same with an input: the rejection is handled', async () => {
    const { store, claim } = await claimedTask({
      'arg-0000000000': encodeValue(1, 'input'),
      result: encodeValue(1, 'result'),
    });
    await expect(store.deleteTask(claim, undefined)).rejects.toThrow(/expired/);
    await settle();
    expect(unhandled.map(String)).toEqual([]);
  });
});
