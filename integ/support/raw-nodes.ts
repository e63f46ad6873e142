import { encodeValue, type ZkClient } from '../../src/testing/index.js';

/** Creates `path` with a superjson value (or empty), and its ancestors. */
export async function put(zk: ZkClient, path: string, value?: unknown): Promise<string> {
  await zk.ensurePath(path.slice(0, path.lastIndexOf('/')) || '/');
  return await zk.create(path, value === undefined ? null : encodeValue(value, 'test value'));
}

/** Creates a task node holding `definition` and the given plain children (e.g. 'ready', 'dep-0000000001'). */
export async function putTask(
  zk: ZkClient,
  task: string,
  children: readonly string[],
  definition: unknown = { fn: 'noop', params: [] },
): Promise<string> {
  await put(zk, task, definition);
  for (const child of children) await zk.create(`${task}/${child}`);
  return task;
}

/** Sorted child names, or undefined when the node is gone. */
export async function childrenOf(zk: ZkClient, path: string): Promise<string[] | undefined> {
  const listing = await zk.tryGetChildren(path);
  return listing?.children.sort();
}
