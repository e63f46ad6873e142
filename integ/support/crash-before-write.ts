/**
 * Crash injection on a real server: a process that dies right before its N-th write. The hook
 * wraps the client's create, delete and setData; at the N-th it closes the session (the server
 * deletes its ephemeral nodes, as after a kill -9 once noticed) and that write and every later one
 * fail as a dead process's would.
 */
import { ZkError } from '../../src/index.js';
import type { ZkClient } from '../../src/testing/index.js';

const WRITES = ['create', 'delete', 'setData'] as const;

/** Closes `zk`'s session right before its `crashAt`-th write; `crashed()` tells whether that happened. */
export function crashBeforeWrite(
  zk: ZkClient,
  crashAt: number,
): { readonly crashed: () => boolean } {
  let writes = 0;
  let crashed = false;
  for (const method of WRITES) {
    const original = zk[method].bind(zk) as (...args: unknown[]) => Promise<unknown>;
    (zk as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      writes += 1;
      if (writes >= crashAt) {
        if (!crashed) zk.close(); // the process dies: its session, and so its ephemeral nodes, go at once
        crashed = true;
        throw new ZkError(method, -116, String(args[0]), 'injected crash');
      }
      return await original(...args);
    };
  }
  return { crashed: () => crashed };
}
