/**
 * Opening one native session: connect within the connect timeout, add the configured credentials
 * before anyone may use the session, and report the handle's later life (reconnected, suspended,
 * closed by itself) to its owner, `ZkClient`.
 */
import { ZkAuthError } from '../errors/zk-auth-error.js';
import { ZkConnectTimeoutError, ZkError, zkErrorCodeOf } from '../errors/zk-error.js';
import type { ZkAuth } from './acl.js';
import { NATIVE, createNativeClient, type NativeZooKeeper } from './native-client.js';
import type { ZkClientOptions } from './zk-client-types.js';

/** What happens to a handle after it was handed over. */
export interface NativeSessionEvents {
  readonly reconnected: (native: NativeZooKeeper) => void;
  readonly suspended: (native: NativeZooKeeper) => void;
  /** The handle closed by itself: its session expired (it must never be used again). */
  readonly lost: (native: NativeZooKeeper) => void;
}

/**
 * Resolves with a connected, authenticated handle; rejects with ZkConnectTimeoutError when no
 * server answers in time, or ZkAuthError when the credentials are refused.
 */
export function openNativeSession(
  options: ZkClientOptions,
  events: NativeSessionEvents,
): Promise<NativeZooKeeper> {
  return new Promise<NativeZooKeeper>((resolve, reject) => {
    const native = createNativeClient({
      connect: options.connect,
      sessionTimeoutMs: options.sessionTimeoutMs,
      logLevel:
        process.env['ZK_PLAN_NATIVE_LOG'] === '1' ? NATIVE.LOG_LEVEL_ERROR : NATIVE.LOG_LEVEL_OFF,
    });
    let handedOver = false; // resolved, or failed
    let connected = false;
    const fail = (error: Error): void => {
      if (handedOver) return;
      handedOver = true;
      clearTimeout(timer);
      native.close();
      reject(error);
    };
    const timer = setTimeout(() => {
      fail(
        connected
          ? new ZkError(
              'addAuth',
              -7,
              '/',
              `ZooKeeper at ${options.connect} accepted the session but did not answer add_auth within ${options.connectTimeoutMs} ms`,
            )
          : new ZkConnectTimeoutError(options.connect, options.connectTimeoutMs),
      );
    }, options.connectTimeoutMs);
    const handOver = (): void => {
      if (handedOver) return;
      handedOver = true;
      clearTimeout(timer);
      resolve(native);
    };
    native.on('connect', () => {
      if (!connected) {
        connected = true;
        // Until it is handed over, nobody holds this handle: no operation (no claim) can go
        // through the session before its credentials are accepted.
        authenticate(native, options).then(handOver, fail);
      } else if (handedOver) {
        events.reconnected(native);
      }
    });
    native.on('connecting', () => {
      if (handedOver) events.suspended(native);
    });
    native.on('close', (_self, code) => {
      if (handedOver) {
        events.lost(native);
      } else if (code === NATIVE.AUTH_FAILED_STATE) {
        // The server refused the credentials and the native client closed the handle by itself.
        fail(authError(options.auth?.[0] ?? { scheme: 'unknown', id: '' }, options.connect));
      } else {
        const rc = code === NATIVE.EXPIRED_SESSION_STATE ? NATIVE.ZSESSIONEXPIRED : NATIVE.ZCLOSING;
        fail(
          new ZkError(
            'connect',
            rc,
            '/',
            `The ZooKeeper handle closed (state ${code}) before its session was ready`,
          ),
        );
      }
    });
    native.init({});
  });
}

/**
 * Adds the configured credentials to a new session, one after the other (the C client answers
 * every pending add_auth at the first reply). ZooKeeper answers AUTH_FAILED for a scheme it has
 * no provider for or credentials it refuses, then closes the connection.
 */
async function authenticate(native: NativeZooKeeper, options: ZkClientOptions): Promise<void> {
  for (const auth of options.auth ?? []) {
    const rc = await new Promise<number>((resolve) => {
      try {
        const submitted = native.add_auth(auth.scheme, auth.id, (result) => resolve(result));
        if (submitted !== NATIVE.ZOK) resolve(submitted);
      } catch {
        resolve(-8);
      }
    });
    if (rc === NATIVE.ZAUTHFAILED) throw authError(auth, options.connect);
    if (rc !== NATIVE.ZOK)
      throw new ZkError(
        'addAuth',
        rc,
        '/',
        `ZooKeeper add_auth (scheme ${auth.scheme}) failed: ${zkErrorCodeOf(rc)} (rc ${rc})`,
      );
  }
}

/** The error for refused credentials; names the scheme and digest user, never the password. */
function authError(auth: ZkAuth, connect: string): ZkAuthError {
  const who =
    auth.scheme === 'digest' && auth.id.includes(':')
      ? ` of user '${auth.id.slice(0, auth.id.indexOf(':'))}'`
      : '';
  return new ZkAuthError(
    auth.scheme,
    connect,
    `authentication${who} failed (AUTH_FAILED) and the server closed the connection; check that the server has a provider for scheme '${auth.scheme}' and that the credentials are right`,
  );
}
