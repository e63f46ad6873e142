import { createNativeClient, NATIVE } from '../zk/native-client.js';
import type { ZkClient } from '../zk/zk-client.js';

/**
 * Expires `client`'s session the way Curator's KillSession does: attach a second handle to the
 * same session id and password, then close that handle, until the client has noticed. (If the
 * client reconnects to its session before the handle's close arrives, the server refuses the close
 * and the session lives on: then go again.) Resolves once the client's session is no longer current.
 */
export async function expireSession(client: ZkClient): Promise<void> {
  const session = client.session;
  for (let attempt = 1; ; attempt++) {
    await closeSessionFromAnotherHandle(client);
    await client.exists('/').catch(() => undefined); // the next contact tells the client its session is gone
    const deadline = performance.now() + 3_000;
    while (client.isCurrent(session) && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    if (!client.isCurrent(session)) return;
    if (attempt === 5)
      throw new Error(`session ${session.id} did not expire after ${attempt} attempts`);
  }
}

async function closeSessionFromAnotherHandle(client: ZkClient): Promise<void> {
  const credentials = client.sessionCredentials();
  const handle = createNativeClient({
    connect: client.options.connect,
    sessionTimeoutMs: client.options.sessionTimeoutMs,
    logLevel: NATIVE.LOG_LEVEL_ERROR,
    resume: credentials,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      setImmediate(() => handle.close()); // a handle that never connected is closed too, not left retrying
      reject(new Error('could not attach to the session to expire it'));
    }, 10_000);
    handle.on('connect', () => {
      clearTimeout(timer);
      // Closed outside the addon's own callback: closing a handle from within its event is where a native crash can start.
      setImmediate(() => {
        handle.close();
        resolve();
      });
    });
    handle.init({});
  });
}
