/**
 * The slice of the `zookeeper` package (node-zookeeper, over the C client) that zk-plan uses.
 * Only the callback API is used: it passes the numeric result code, which the promise API
 * folds into message text. This is the only file that imports `zookeeper`.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/**
 * A znode's stat as the native client reports it (ids are hex strings).
 *
 * @category ZooKeeper client
 */
export interface ZkStat {
  readonly czxid: number;
  readonly mzxid: number;
  readonly ctime: Date;
  readonly mtime: Date;
  readonly version: number;
  readonly cversion: number;
  readonly aversion: number;
  readonly ephemeralOwner: string;
  readonly dataLength: number;
  readonly numChildren: number;
  readonly pzxid: number;
}

export interface ZkAclEntry {
  readonly perms: number;
  readonly scheme: string;
  readonly auth: string;
}

type WatchCallback = (type: number, state: number, path: string) => void;

export interface NativeZooKeeper {
  init(config: Record<string, unknown>): NativeZooKeeper;
  close(): void;
  on(event: 'connect' | 'connecting', listener: () => void): void;
  on(event: 'close', listener: (self: unknown, code: number) => void): void;
  readonly client_id: string;
  readonly client_password: string;
  readonly timeout: number;
  a_create(
    path: string,
    data: Buffer | string | null,
    flags: number,
    cb: (rc: number, error: string, path: string) => void,
  ): number;
  /** Added by patches/zookeeper+7.3.0.patch: a create carrying `acl` in the same request. */
  a_create_acl(
    path: string,
    data: Buffer | string | null,
    flags: number,
    acl: readonly ZkAclEntry[],
    cb: (rc: number, error: string, path: string) => void,
  ): number;
  a_exists(
    path: string,
    watch: boolean,
    cb: (rc: number, error: string, stat: ZkStat) => void,
  ): number;
  aw_exists(
    path: string,
    watchCb: WatchCallback,
    cb: (rc: number, error: string, stat: ZkStat) => void,
  ): number;
  a_get(
    path: string,
    watch: boolean,
    cb: (rc: number, error: string, stat: ZkStat, data: Buffer | null) => void,
  ): number;
  aw_get(
    path: string,
    watchCb: WatchCallback,
    cb: (rc: number, error: string, stat: ZkStat, data: Buffer | null) => void,
  ): number;
  a_get_children2(
    path: string,
    watch: boolean,
    cb: (rc: number, error: string, children: string[], stat: ZkStat) => void,
  ): number;
  aw_get_children2(
    path: string,
    watchCb: WatchCallback,
    cb: (rc: number, error: string, children: string[], stat: ZkStat) => void,
  ): number;
  a_set(
    path: string,
    data: Buffer | string | null,
    version: number,
    cb: (rc: number, error: string, stat: ZkStat) => void,
  ): number;
  a_delete_(path: string, version: number, cb: (rc: number, error: string) => void): number;
  /** Asks the server this handle is connected to to catch up with the leader (ZooKeeper's sync). */
  a_sync(path: string, cb: (rc: number, error: string, path: string) => void): number;
  add_auth(scheme: string, auth: string, cb: (rc: number, error: string) => void): number;
  /** Replaces the node's ACL; `version` -1 matches any. (The JS wrapper renames `perms` to the `perm` the addon reads.) */
  a_set_acl(
    path: string,
    version: number,
    acl: readonly ZkAclEntry[],
    cb: (rc: number, error: string) => void,
  ): number;
  a_get_acl(
    path: string,
    cb: (rc: number, error: string, acl: ZkAclEntry[] | null, stat: ZkStat | null) => void,
  ): number;
}

interface NativeZooKeeperModule {
  new (config: Record<string, unknown>): NativeZooKeeper;
  readonly constants: Readonly<Record<string, number>>;
}

const require = createRequire(import.meta.url);
const ZooKeeperClass = require('zookeeper') as NativeZooKeeperModule;

/** C-client constants used by the adapter (values checked against the native module at load). */
export const NATIVE = {
  ZOK: 0,
  PERSISTENT: ZooKeeperClass.constants['ZOO_PERSISTENT'] ?? 0,
  EPHEMERAL: ZooKeeperClass.constants['ZOO_EPHEMERAL'] ?? 1,
  PERSISTENT_SEQUENTIAL: ZooKeeperClass.constants['ZOO_PERSISTENT_SEQUENTIAL'] ?? 2,
  EPHEMERAL_SEQUENTIAL: ZooKeeperClass.constants['ZOO_EPHEMERAL_SEQUENTIAL'] ?? 3,
  EXPIRED_SESSION_STATE: ZooKeeperClass.constants['ZOO_EXPIRED_SESSION_STATE'] ?? -112,
  AUTH_FAILED_STATE: ZooKeeperClass.constants['ZOO_AUTH_FAILED_STATE'] ?? -113,
  SESSION_EVENT: ZooKeeperClass.constants['ZOO_SESSION_EVENT'] ?? -1,
  CREATED_EVENT: ZooKeeperClass.constants['ZOO_CREATED_EVENT'] ?? 1,
  DELETED_EVENT: ZooKeeperClass.constants['ZOO_DELETED_EVENT'] ?? 2,
  CHANGED_EVENT: ZooKeeperClass.constants['ZOO_CHANGED_EVENT'] ?? 3,
  CHILD_EVENT: ZooKeeperClass.constants['ZOO_CHILD_EVENT'] ?? 4,
  /** The C client and the addon say nothing (they print to stdout/stderr); zk-plan reports failures itself. */
  LOG_LEVEL_OFF: 0,
  LOG_LEVEL_ERROR: ZooKeeperClass.constants['ZOO_LOG_LEVEL_ERROR'] ?? 1,
  LOG_LEVEL_WARN: ZooKeeperClass.constants['ZOO_LOG_LEVEL_WARN'] ?? 2,
  ZSESSIONEXPIRED: -112,
  ZCLOSING: -116,
  ZNONODE: -101,
  ZAUTHFAILED: -115,
} as const;

/**
 * True when the installed addon has the patched create that takes an ACL (patches/, applied by
 * `npm install`'s postinstall step). Without it a configured ACL cannot be given at creation.
 */
export function nativeCreatesWithAcl(): boolean {
  // Both halves of the patch: the JavaScript wrapper's method and the compiled addon's.
  const wrapper = (ZooKeeperClass as unknown as { prototype: Partial<NativeZooKeeper> }).prototype;
  const requireFromAddon = createRequire(require.resolve('zookeeper'));
  const addonDir = dirname(requireFromAddon.resolve('zookeeper/package.json'));
  const compiled = (
    requireFromAddon('node-gyp-build') as (dir: string) => {
      ZooKeeper: { prototype: Record<string, unknown> };
    }
  )(addonDir).ZooKeeper;
  return (
    typeof wrapper.a_create_acl === 'function' &&
    typeof compiled.prototype['a_create_acl'] === 'function'
  );
}

/** Creates an unconnected native client; `init` starts connecting. */
export function createNativeClient(config: {
  connect: string;
  sessionTimeoutMs: number;
  logLevel: number;
  /** Attach to this existing session instead of opening a new one. */
  resume?: { readonly id: string; readonly password: string };
}): NativeZooKeeper {
  return new ZooKeeperClass({
    connect: config.connect,
    timeout: config.sessionTimeoutMs,
    debug_level: config.logLevel,
    host_order_deterministic: false,
    data_as_buffer: true,
    // The addon closes the handle as if the session expired after this many partial socket reads in
    // a row (node-zookeeper #233), which a ~1 MB reply exceeds at its default of 10; the C client's
    // own timeouts still detect a dead server.
    response_counter_limit: 1_000_000,
    ...(config.resume
      ? { client_id: config.resume.id, client_password: config.resume.password }
      : {}),
  });
}

/** The type of a watch event, from the C client's event number (anything else: the session ended). */
export function watchEventTypeOf(
  type: number,
): 'created' | 'deleted' | 'changed' | 'child' | 'session-lost' {
  switch (type) {
    case NATIVE.CREATED_EVENT:
      return 'created';
    case NATIVE.DELETED_EVENT:
      return 'deleted';
    case NATIVE.CHANGED_EVENT:
      return 'changed';
    case NATIVE.CHILD_EVENT:
      return 'child';
    default:
      return 'session-lost';
  }
}

/** The C client's flags for each way of creating a znode. */
export const NATIVE_CREATE_MODE = {
  persistent: NATIVE.PERSISTENT,
  ephemeral: NATIVE.EPHEMERAL,
  'persistent-sequential': NATIVE.PERSISTENT_SEQUENTIAL,
  'ephemeral-sequential': NATIVE.EPHEMERAL_SEQUENTIAL,
} as const;
