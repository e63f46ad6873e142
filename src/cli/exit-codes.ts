import { CommanderError, type Command } from 'commander';
import { JobError, JobNotFoundError } from '../errors/job-errors.js';
import { BackfillNotFoundError, ScheduleNotFoundError } from '../errors/schedule-errors.js';
import { SnapshotError } from '../errors/snapshot-errors.js';
import { ZkPlanError } from '../errors/base-error.js';
import {
  PlanCancelledError,
  PlanFailedError,
  PlanFinishedError,
  PlanNotFoundError,
} from '../errors/plan-errors.js';
import { InvalidArgumentError, WaitTimeoutError } from '../errors/usage-errors.js';
import { ZkConnectTimeoutError, isZkError } from '../errors/zk-error.js';
import { PlanSpecError } from '../errors/spec-errors.js';
import { TaskKeyNotFoundError } from '../errors/task-key-errors.js';

/** Every exit code of the `zk-plan` command, in one place (documented in `zk-plan --help`). */
export const ExitCode = {
  /** The command did what it was asked (`wait`: the plan completed). */
  ok: 0,
  /** `wait`: the plan failed; any other command: an unexpected error. */
  failed: 1,
  /** Bad command line: unknown command or option, missing argument, malformed path or number. */
  usage: 2,
  /** `wait`: the plan still had tasks when --timeout-ms ran out. */
  timeout: 3,
  /** No ZooKeeper server answered within --connect-timeout-ms. */
  unreachable: 4,
  /** The plan, schedule or job does not exist, no live job worker has the id given, or the plan has no task with the key given. */
  notFound: 5,
  /** The plan was cancelled (`wait`; `resume` or `pause` of a cancelled plan). */
  cancelled: 6,
  /** ZooKeeper refused: a node's ACL does not admit the command's credentials (NO_AUTH), or the credentials themselves (AUTH_FAILED). */
  denied: 7,
  /** `pause` or `cancel` of a plan that has already completed or failed. */
  finished: 8,
  /** Interrupted by SIGINT or SIGTERM (`wait`). */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES_HELP = `Exit codes:
  ${ExitCode.ok}    success (wait: the plan completed)
  ${ExitCode.failed}    wait: the plan failed (its failed tasks are printed); other commands: unexpected error
  ${ExitCode.usage}    bad command line: unknown command or option, missing argument, invalid path or number, port in use
  ${ExitCode.timeout}    wait: --timeout-ms ran out before the plan completed
  ${ExitCode.unreachable}    ZooKeeper unreachable within --connect-timeout-ms
  ${ExitCode.notFound}    no such plan, schedule, job, live job worker, or task key in the plan
  ${ExitCode.cancelled}    the plan was cancelled (wait; pause or resume of a cancelled plan)
  ${ExitCode.denied}    ZooKeeper refused access: NO_AUTH (set ZK_PLAN_AUTH or --auth-file) or AUTH_FAILED
  ${ExitCode.finished}    pause or cancel of a plan that has already completed or failed
  ${ExitCode.interrupted}  wait: interrupted by SIGINT or SIGTERM`;

/** An error the CLI reports as it is, with its own exit code, and a code (printed as `[CODE]`, and in the --json error document) when it has one. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** A bad command line (or configuration) found by a command itself (not by commander): printed with the command's usage, exit 2. */
export class UsageError extends CliError {
  /** The command whose usage to print (set by the action wrapper). */
  command: Command | undefined;
  constructor(message: string, code?: string) {
    super(message, ExitCode.usage, code);
  }
}

/** The exit code for an error that ended a command. */
export function exitCodeFor(error: unknown): ExitCodeValue {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  if (
    error instanceof InvalidArgumentError ||
    error instanceof PlanSpecError ||
    error instanceof SnapshotError
  )
    return ExitCode.usage;
  if (error instanceof ZkConnectTimeoutError) return ExitCode.unreachable;
  if (isZkError(error, 'NO_AUTH', 'AUTH_FAILED')) return ExitCode.denied;
  if (
    error instanceof PlanNotFoundError ||
    error instanceof ScheduleNotFoundError ||
    error instanceof BackfillNotFoundError ||
    error instanceof JobNotFoundError ||
    (error instanceof JobError && error.code === 'JOB_WORKER_NOT_LIVE') ||
    error instanceof TaskKeyNotFoundError
  )
    return ExitCode.notFound;
  if (error instanceof WaitTimeoutError) return ExitCode.timeout;
  if (error instanceof PlanFailedError) return ExitCode.failed;
  if (error instanceof PlanCancelledError) return ExitCode.cancelled;
  if (error instanceof PlanFinishedError) return ExitCode.finished;
  return ExitCode.failed;
}

/** The one line the CLI prints (after `zk-plan: `) for an error that ended a command. */
export function describeError(error: unknown): string {
  if (error instanceof ZkConnectTimeoutError) {
    return `cannot reach ZooKeeper at ${error.connectString} within ${error.timeoutMs} ms: check --connect (or ZOOKEEPER_CONNECT) and that a server is running`;
  }
  if (error instanceof PlanNotFoundError) {
    const path = error.path ?? '?';
    return /\/plan-\d+$/.test(path)
      ? `no plan at ${path} (zk-plan plans <parent> lists the plans of a parent)`
      : `nothing at ${path}: no such parent`;
  }
  if (error instanceof ScheduleNotFoundError || error instanceof JobNotFoundError) {
    const path = error.path ?? '?';
    const [parent, name] = [
      path.slice(0, path.lastIndexOf('/')) || '/',
      path.slice(path.lastIndexOf('/') + 1),
    ];
    return error instanceof ScheduleNotFoundError
      ? `no schedule "${name}" under ${parent} (zk-plan schedule ls --schedules ${parent} lists them) [${error.code}]`
      : `no job "${name}" under ${parent} (zk-plan jobs ls --jobs ${parent} lists them) [${error.code}]`;
  }
  if (error instanceof InvalidArgumentError) return error.cliMessage;
  if (error instanceof TaskKeyNotFoundError)
    return `plan ${error.plan} has no task with the key ${JSON.stringify(error.key)} (zk-plan show ${error.plan} lists its tasks with their keys) [${error.code}]`;
  if (error instanceof PlanFinishedError) {
    const retry =
      error.state === 'failed' ? ` (zk-plan retry ${error.plan} runs its failed tasks again)` : '';
    return `plan ${error.plan} has already ${error.state}: there is nothing left to ${error.action}${retry} [${error.code}]`;
  }
  if (error instanceof CliError && error.code !== undefined)
    return `${error.message} [${error.code}]`;
  // In the command's words (zk-plan retry <plan>, not retryFailed(plan)); an error of another copy of zk-plan may have none.
  if (error instanceof ZkPlanError)
    return `${(error as { cliMessage?: string }).cliMessage ?? error.message} [${error.code}]`;
  if (error instanceof Error) return error.message;
  return String(error);
}
