import { ZkPlanError, named } from './base-error.js';

/**
 * Stable names for the ZooKeeper result codes zk-plan handles (numeric values from the C client).
 *
 * @category Errors
 */
export type ZkErrorCode =
  | 'NO_NODE'
  | 'NODE_EXISTS'
  | 'NOT_EMPTY'
  | 'BAD_VERSION'
  | 'NO_CHILDREN_FOR_EPHEMERALS'
  | 'NO_AUTH'
  | 'AUTH_FAILED'
  | 'INVALID_ACL'
  | 'BAD_ARGUMENTS'
  | 'CONNECTION_LOSS'
  | 'OPERATION_TIMEOUT'
  | 'SESSION_EXPIRED'
  | 'SESSION_MOVED'
  | 'CLOSING'
  | 'INVALID_STATE'
  | 'MARSHALLING_ERROR'
  | 'NODE_REPLACED'
  | 'UNKNOWN';

/**
 * zk-plan's own code, not ZooKeeper's: a setData guarded by `incarnation` landed on a node created
 * after the one it was decided on (deleted and created again meanwhile). The write did land there.
 */
export const NODE_REPLACED_RC = -1001;

const CODE_BY_RC: ReadonlyMap<number, ZkErrorCode> = new Map<number, ZkErrorCode>([
  [-101, 'NO_NODE'],
  [-110, 'NODE_EXISTS'],
  [-111, 'NOT_EMPTY'],
  [-103, 'BAD_VERSION'],
  [-108, 'NO_CHILDREN_FOR_EPHEMERALS'],
  [-102, 'NO_AUTH'],
  [-115, 'AUTH_FAILED'],
  [-114, 'INVALID_ACL'],
  [-8, 'BAD_ARGUMENTS'],
  [-4, 'CONNECTION_LOSS'],
  [-7, 'OPERATION_TIMEOUT'],
  [-112, 'SESSION_EXPIRED'],
  [-118, 'SESSION_MOVED'],
  [-116, 'CLOSING'],
  [-9, 'INVALID_STATE'],
  [-5, 'MARSHALLING_ERROR'],
  [NODE_REPLACED_RC, 'NODE_REPLACED'],
]);

/** Translates a C-client return code into its stable name. */
export function zkErrorCodeOf(rc: number): ZkErrorCode {
  return CODE_BY_RC.get(rc) ?? 'UNKNOWN';
}

/** Codes after which the outcome of a write is unknown or the session is unusable: never treat them as "absent". */
const TRANSIENT_CODES: ReadonlySet<ZkErrorCode> = new Set<ZkErrorCode>([
  'CONNECTION_LOSS',
  'OPERATION_TIMEOUT',
  'SESSION_EXPIRED',
  'SESSION_MOVED',
  'CLOSING',
  'INVALID_STATE',
]);

/**
 * Thrown by the ZooKeeper adapter when an operation fails; `rc` is the C client's code, `op` the call.
 *
 * @category Errors
 */
export class ZkError extends ZkPlanError {
  readonly code: ZkErrorCode;
  readonly rc: number;
  readonly op: string;
  /**
   * True when the operation was sent again after a connection loss: a NODE_EXISTS or NO_NODE may
   * then be the echo of this client's own first try, whose reply was lost.
   */
  retried = false;

  constructor(op: string, rc: number, path: string, message?: string, cause?: unknown) {
    const code = zkErrorCodeOf(rc);
    super(message ?? `ZooKeeper ${op} of ${path} failed: ${code} (rc ${rc})`, { path, cause });
    this.code = code;
    this.rc = rc;
    this.op = op;
  }

  /** True when the failure says nothing about the znode, only about the connection or session. */
  get isConnectionProblem(): boolean {
    return TRANSIENT_CODES.has(this.code);
  }
}
named(ZkError, 'ZkError');

/** True when `error` is a ZkError with one of the given codes. */
export function isZkError(error: unknown, ...codes: ZkErrorCode[]): error is ZkError {
  return error instanceof ZkError && (codes.length === 0 || codes.includes(error.code));
}

/**
 * Thrown by `ZkClient.connect` when no server answered within the connect timeout.
 *
 * @category Errors
 */
export class ZkConnectTimeoutError extends ZkPlanError {
  readonly code = 'CONNECT_TIMEOUT';
  constructor(
    readonly connectString: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Could not connect to ZooKeeper at ${connectString} within ${timeoutMs} ms: check the connect string and that a server is running (npm run demo starts one itself when ZOOKEEPER_CONNECT is unset)`,
    );
  }
}
named(ZkConnectTimeoutError, 'ZkConnectTimeoutError');

/**
 * Thrown by `ZkClient.connect` when an `acl` is configured but the installed `zookeeper` addon
 * cannot create a node with its ACL in the same request (patches/zookeeper+7.3.0.patch was not
 * applied and compiled). The unpatched addon creates every node world-open and the ACL could only
 * be set one round trip later, a window in which anyone may create children under the new node.
 *
 * @category Errors
 */
export class NativeClientUnpatchedError extends ZkPlanError {
  readonly code = 'NATIVE_CLIENT_UNPATCHED';
  constructor() {
    super(
      'An acl is configured, but the installed zookeeper addon cannot create nodes with an ACL (it lacks a_create_acl): ' +
        'run `npm install` in the project (its postinstall applies patches/zookeeper+7.3.0.patch and compiles the addon), or `npx patch-package && node scripts/build-native-client.cjs`',
    );
  }
}
named(NativeClientUnpatchedError, 'NativeClientUnpatchedError');

/**
 * A node that zk-plan would trust (a parent it creates plans under or follows, a plan, a task)
 * grants more than the configured `acl`: whoever made it was not this cluster (it is world-open,
 * created by another tool, or made before the ACL was configured), so anyone may have written
 * below it. zk-plan refuses to create plans under it or to run what it holds.
 *
 * @category Errors
 */
export class ForeignAclError extends ZkPlanError {
  readonly code = 'FOREIGN_ACL';
  /** A task held by such a node fails for good: running it again would run what an outsider wrote. */
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    path: string,
    readonly acl: string,
    readonly what: string,
  ) {
    super(
      `${what} ${path} has the ACL ${acl}, wider than the configured acl, so every client it grants may have created nodes under it, and zk-plan refuses it. ` +
        `Fix: delete it (zkCli.sh deleteall ${path}) and let zk-plan create it again with the configured acl, or give it that ACL (zkCli.sh setAcl ${path} …) after checking what it holds`,
      { path },
    );
  }
}
named(ForeignAclError, 'ForeignAclError');
