import { InvalidArgumentError as CommanderArgumentError, Option, type Command } from 'commander';
import { ACL_ENV, AUTH_ENV, AUTH_FILE_ENV } from './credentials.js';
import { UsageError } from './exit-codes.js';
import { MAX_TIMER_MS } from '../util/abort-signals.js';
import { assertPlanPath, assertValidPath } from '../zk/layout.js';

/** Options every command that talks to ZooKeeper takes. */
export interface ConnectionOptions {
  readonly connect?: string;
  readonly connectTimeoutMs: number;
  readonly json: boolean;
  /** --auth-file, defaulting to $ZK_PLAN_AUTH_FILE (the credentials themselves may be in $ZK_PLAN_AUTH instead). */
  readonly authFile?: string;
  /** --acl, defaulting to $ZK_PLAN_ACL. */
  readonly acl?: string;
  /** --jute-max-buffer-bytes, defaulting to $ZK_PLAN_JUTE_MAX_BUFFER_BYTES: ConnectOptions.juteMaxBufferBytes. */
  readonly juteMaxBufferBytes?: number;
}

/** The environment variable behind --jute-max-buffer-bytes. */
export const JUTE_MAX_BUFFER_ENV = 'ZK_PLAN_JUTE_MAX_BUFFER_BYTES';
/** The smallest --jute-max-buffer-bytes accepted (as ConnectOptions.juteMaxBufferBytes). */
const MIN_JUTE_MAX_BUFFER_BYTES = 64 * 1024;

/** Commander parser of a whole number within [min, max]. */
export function integer(min: number, max = MAX_TIMER_MS): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
      throw new CommanderArgumentError(
        `expected a whole number from ${min} to ${max}, got '${text}'`,
      );
    }
    return value;
  };
}

/**
 * Adds --connect (defaulting to $ZOOKEEPER_CONNECT), --connect-timeout-ms, --json, and the
 * credentials and ACL of the connection (src/cli/credentials.ts): --auth-file (defaulting to
 * $ZK_PLAN_AUTH_FILE; or the credentials in $ZK_PLAN_AUTH, never on the command line) and --acl
 * (defaulting to $ZK_PLAN_ACL).
 */
export function addConnectionOptions(command: Command, defaultConnectTimeoutMs: number): Command {
  return command
    .addOption(
      new Option(
        '--connect <hosts>',
        'ZooKeeper connect string, host:port[,host:port…][/chroot]',
      ).env('ZOOKEEPER_CONNECT'),
    )
    .addOption(
      new Option(
        '--connect-timeout-ms <ms>',
        'give up (exit 4) when no server answers within this time',
      )
        .argParser(integer(1))
        .default(defaultConnectTimeoutMs),
    )
    .addOption(
      new Option('--json', 'machine-readable output: one JSON document on stdout').default(false),
    )
    .addOption(
      new Option(
        '--auth-file <path>',
        `file with the ZooKeeper credentials, one scheme:id a line (digest:<user>:<password>), readable by its owner only (chmod 600); or put that line in $${AUTH_ENV}`,
      ).env(AUTH_FILE_ENV),
    )
    .addOption(
      new Option(
        '--jute-max-buffer-bytes <bytes>',
        "the jute.maxbuffer of the servers and of the Java clients that read plans (zkCli.sh, Curator tools): adding tasks past what a plan listing can hold under it is refused (default 1048575, ZooKeeper's)",
      )
        .env(JUTE_MAX_BUFFER_ENV)
        .argParser(integer(MIN_JUTE_MAX_BUFFER_BYTES, Number.MAX_SAFE_INTEGER)),
    )
    .addOption(
      new Option(
        '--acl <acl>',
        'ACL of the nodes the command creates: open (the default), creator (every permission for the credentials given), or scheme:id:perms entries, comma-separated (world:anyone:r, digest:<user>:<hashed id>:cdrwa)',
      ).env(ACL_ENV),
    );
}

/** The connect string, or a usage error naming both ways to give it. */
export function requireConnect(options: { readonly connect?: string | undefined }): string {
  const connect = options.connect?.trim();
  if (!connect) throw new UsageError('--connect (or ZOOKEEPER_CONNECT) is required');
  return connect;
}

/** Checks a plan path before connecting: `<parent>/plan-<serial>` or a named plan such as a schedule's (InvalidArgumentError, exit 2). */
export function checkPlanPath(plan: string): string {
  assertPlanPath('plan', plan);
  return plan;
}

/** Checks a parent path before connecting (InvalidArgumentError, exit 2). */
export function checkParentPath(parent: string): string {
  assertValidPath('parent', parent);
  return parent;
}
