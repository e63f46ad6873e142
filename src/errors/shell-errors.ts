import { ZkPlanError, named } from './base-error.js';

/**
 * How a shell task's command ended when it did not exit 0: an exit code, or the signal that killed it.
 *
 * @category Errors
 */
export type ShellEnd =
  | { readonly exitCode: number; readonly signal?: undefined }
  | { readonly exitCode?: undefined; readonly signal: NodeJS.Signals };

/**
 * A shell task's command exited with a code other than 0, or was killed by a signal nobody in
 * zk-plan sent (the OOM killer, an operator): the try fails, charged, and may be tried again.
 *
 * @category Errors
 */
export class ShellExitError extends ZkPlanError {
  readonly code = 'SHELL_EXIT';
  override readonly charged = true;
  readonly exitCode: number | undefined;
  readonly signal: NodeJS.Signals | undefined;
  constructor(
    task: string,
    /** The command as the task gave it (shortened for the message). */
    command: string,
    end: ShellEnd,
    /** Its last lines of stderr, oldest first (each one bounded). */
    readonly stderrTail: readonly string[],
  ) {
    const how =
      end.signal !== undefined ? `was killed by ${end.signal}` : `exited with code ${end.exitCode}`;
    const tail =
      stderrTail.length > 0
        ? `; last lines of stderr:\n${stderrTail.join('\n')}`
        : '; it wrote nothing on stderr';
    super(`Task ${task}: shell command ${JSON.stringify(shorten(command))} ${how}${tail}`, {
      path: task,
    });
    this.exitCode = end.exitCode;
    this.signal = end.signal;
  }
}
named(ShellExitError, 'ShellExitError');

/**
 * A shell task's command could not be started (no such program or working directory, no
 * permission): the try fails, charged, and may be tried again (a mount may come back).
 *
 * @category Errors
 */
export class ShellStartError extends ZkPlanError {
  readonly code = 'SHELL_START_FAILED';
  override readonly charged = true;
  constructor(task: string, command: string, detail: string, cause: unknown) {
    super(
      `Task ${task}: shell command ${JSON.stringify(shorten(command))} could not be started: ${detail}`,
      { path: task, cause },
    );
  }
}
named(ShellStartError, 'ShellStartError');

/**
 * A shell task's params are not `{ command, args?, cwd?, env?, shell? }`: refused when the task
 * is added or submitted, and, for a task node written by another tool, when it runs (for good:
 * the same params would fail again).
 *
 * @category Errors
 */
export class ShellParamsError extends ZkPlanError {
  readonly code = 'SHELL_INVALID_PARAMS';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    /** `task /plans/plan-1/task-2`, or `a task added to plan /plans/plan-1`. */
    subject: string,
    problem: string,
    path?: string,
  ) {
    super(
      `The shell call of ${subject} is invalid: ${problem}; pass call('shell', { command, args?, cwd?, env?, shell? })`,
      { path },
    );
  }
}
named(ShellParamsError, 'ShellParamsError');

/**
 * A shell task reached a worker started without `allowShell`. Not charged: the worker gives the
 * task back before anything of it runs and leaves it to a worker that allows shell tasks.
 *
 * @category Errors
 */
export class ShellDisabledError extends ZkPlanError {
  readonly code = 'SHELL_DISABLED';
  constructor(task: string) {
    super(
      `Task ${task} runs a shell command, but this worker runs without allowShell, so it leaves the task to a worker that allows it: ` +
        `start one with zk-plan worker --allow-shell (startWorkers(parent, { allowShell: true })), only if everyone who can write tasks may run commands on it`,
      { path: task },
    );
  }
}
named(ShellDisabledError, 'ShellDisabledError');

/** Longest stretch of a command quoted in a message: a message is stored with the task's failure. */
const COMMAND_IN_MESSAGE_CHARS = 200;

function shorten(command: string): string {
  return command.length <= COMMAND_IN_MESSAGE_CHARS
    ? command
    : `${command.slice(0, COMMAND_IN_MESSAGE_CHARS)}…`;
}
