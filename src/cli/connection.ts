import { ZkAuthError } from '../errors/zk-auth-error.js';
import { ZkError } from '../errors/zk-error.js';
import type { FunctionRegistry } from '../exec/function-registry.js';
import { ZkPlan } from '../zk-plan.js';
import type { ZkAuth } from '../zk/acl.js';
import { AUTH_ENV, AUTH_FILE_ENV, describeAuth, resolveCliSecurity } from './credentials.js';
import { CliError, ExitCode } from './exit-codes.js';
import { requireConnect, type ConnectionOptions } from './options.js';

interface ConnectExtra {
  readonly functions?: FunctionRegistry;
  readonly sessionTimeoutMs?: number | undefined;
}

/**
 * Connects with the command's connection options (connectZkPlan), runs `use`, and closes the
 * session whatever happens. A NO_AUTH from ZooKeeper while `use` runs ends the command with exit 7
 * and a message saying which credentials (none, or which user) the node's ACL did not admit.
 */
export async function withZkPlan<T>(
  options: ConnectionOptions,
  use: (zkPlan: ZkPlan) => Promise<T>,
  extra: ConnectExtra = {},
): Promise<T> {
  const { zkPlan, auth } = await connect(options, extra);
  try {
    return await use(zkPlan);
  } catch (error) {
    throw accessDenied(error, auth) ?? error;
  } finally {
    await zkPlan.close();
  }
}

/**
 * Connects as every command does: --connect and --connect-timeout-ms, the credentials
 * (ZK_PLAN_AUTH, or --auth-file / ZK_PLAN_AUTH_FILE) added to every session, and the ACL (--acl /
 * ZK_PLAN_ACL) given to every node created (src/cli/credentials.ts). Credentials ZooKeeper refuses
 * end the command with exit 7 (AUTH_FAILED).
 */
export async function connectZkPlan(
  options: ConnectionOptions,
  extra: ConnectExtra = {},
): Promise<ZkPlan> {
  return (await connect(options, extra)).zkPlan;
}

async function connect(
  options: ConnectionOptions,
  extra: ConnectExtra,
): Promise<{ zkPlan: ZkPlan; auth: readonly ZkAuth[] }> {
  const connectString = requireConnect(options);
  const { auth, acl } = await resolveCliSecurity(options);
  try {
    const zkPlan = await ZkPlan.connect({
      connect: connectString,
      connectTimeoutMs: options.connectTimeoutMs,
      ...(auth.length > 0 ? { auth } : {}),
      ...(acl !== undefined ? { acl } : {}),
      ...(extra.functions ? { functions: extra.functions } : {}),
      ...(extra.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: extra.sessionTimeoutMs } : {}),
      ...(options.juteMaxBufferBytes !== undefined
        ? { juteMaxBufferBytes: options.juteMaxBufferBytes }
        : {}),
    });
    return { zkPlan, auth };
  } catch (error) {
    throw accessDenied(error, auth) ?? error;
  }
}

/** ZooKeeper's NO_AUTH, said in the CLI's terms (exit 7); `path` goes in the --json error document. */
export class AccessDeniedError extends CliError {
  constructor(
    message: string,
    readonly path: string | undefined,
  ) {
    super(message, ExitCode.denied, 'NO_AUTH');
  }
}

/** A CliError (exit 7) for a NO_AUTH or AUTH_FAILED anywhere in `error`'s causes, else undefined. */
function accessDenied(error: unknown, auth: readonly ZkAuth[]): CliError | undefined {
  const given =
    auth.length === 0
      ? `it has no credentials: set ${AUTH_ENV}, or --auth-file (${AUTH_FILE_ENV})`
      : `its credentials are ${describeAuth(auth)}`;
  for (
    let cause: unknown = error, depth = 0;
    cause instanceof Error && depth < 5;
    cause = cause.cause, depth += 1
  ) {
    if (cause instanceof ZkAuthError)
      return new CliError(
        `${cause.message} (the credentials of ${AUTH_ENV} or --auth-file / ${AUTH_FILE_ENV})`,
        ExitCode.denied,
        'AUTH_FAILED',
      );
    if (cause instanceof ZkError && cause.code === 'NO_AUTH') {
      return new AccessDeniedError(
        `ZooKeeper refused ${cause.op === '' ? 'access' : cause.op} of ${cause.path ?? 'a node'}: the node's ACL does not admit this command, and ${given}`,
        cause.path,
      );
    }
  }
  return undefined;
}
