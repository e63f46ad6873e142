import { InvalidArgumentError as CommanderArgumentError, Option, type Command } from 'commander';
import { UsageError } from './exit-codes.js';
import { MAX_TIMER_MS } from '../util/signals.js';
import { assertPlanPath, assertValidPath } from '../zk/layout.js';

/** The longest timer Node accepts (about 24.8 days): "no limit" for waits. One value for the API and the CLI. */
export { MAX_TIMER_MS } from '../util/signals.js';

/** Options every command that talks to ZooKeeper takes. */
export interface ConnectionOptions {
  readonly connect?: string;
  readonly connectTimeoutMs: number;
  readonly json: boolean;
}

/** Commander parser of a whole number within [min, max]. */
export function integer(min: number, max = MAX_TIMER_MS): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
      throw new CommanderArgumentError(`expected a whole number from ${min} to ${max}, got '${text}'`);
    }
    return value;
  };
}

/** Adds --connect (defaulting to $ZOOKEEPER_CONNECT), --connect-timeout-ms and --json. */
export function addConnectionOptions(command: Command, defaultConnectTimeoutMs: number): Command {
  return command
    .addOption(new Option('--connect <hosts>', 'ZooKeeper connect string, host:port[,host:port…][/chroot]').env('ZOOKEEPER_CONNECT'))
    .addOption(
      new Option('--connect-timeout-ms <ms>', 'give up (exit 4) when no server answers within this time')
        .argParser(integer(1))
        .default(defaultConnectTimeoutMs),
    )
    .addOption(new Option('--json', 'machine-readable output: one JSON document on stdout').default(false));
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
