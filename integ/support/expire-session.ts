import { createNativeClient, NATIVE } from '../../src/zk/native-client.js';
import type { ZkClient } from '../../src/index.js';

/**
 * Expires `client`'s session the way Curator's KillSession does: attach a second handle to the
 * same session id and password, then close that handle. The server ends the session; the
 * original client learns it at its next contact and opens a new session.
 */
export async function expireSession(client: ZkClient): Promise<void> {
  const credentials = client.sessionCredentials();
  const handle = createNativeClient({
    connect: client.options.connect,
    sessionTimeoutMs: client.options.sessionTimeoutMs,
    logLevel: NATIVE.LOG_LEVEL_ERROR,
    resume: credentials,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('could not attach to the session to expire it')), 10_000);
    handle.on('connect', () => {
      clearTimeout(timer);
      handle.close();
      resolve();
    });
    handle.init({});
  });
}
