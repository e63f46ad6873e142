import type { Command } from 'commander';
import { ExitCode, UsageError, type ExitCodeValue } from './exit-codes.js';

/** What a command's handler resolves with: its exit code (0 when it says nothing). */
export type ActionResult = Promise<ExitCodeValue | void>;

/** The exit code of the command that ran last (commander ignores what an action returns). */
export const actionOutcome: { exitCode: ExitCodeValue } = { exitCode: ExitCode.ok };

/**
 * Sets `handler` as the command's action: commander calls it with the arguments, the options and
 * the command; its exit code is recorded, and a UsageError learns which command's usage to print.
 */
export function setAction<Args extends unknown[]>(
  command: Command,
  handler: (...args: Args) => ActionResult,
): Command {
  return command.action(async (...args: unknown[]) => {
    try {
      actionOutcome.exitCode = (await handler(...(args as Args))) ?? ExitCode.ok;
    } catch (error) {
      if (error instanceof UsageError) error.command ??= command;
      throw error;
    }
  });
}

/** The lines printed after a usage error: the command's usage and where to read more. */
export function usageHint(command: Command): string {
  const path: string[] = [];
  for (let current: Command | null = command; current; current = current.parent)
    path.unshift(current.name());
  const name = path.join(' ');
  return `Usage: ${name} ${command.usage()}\nRun '${name} --help' for details.`;
}

/** Makes commander print the usage hint after its own errors (unknown option, missing argument…). */
export function withUsageHint(command: Command): Command {
  return command.showHelpAfterError(usageHint(command));
}
