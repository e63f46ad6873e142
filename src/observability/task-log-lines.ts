/**
 * The words of a worker's task log lines, shared by the structured logger (its `msg`) and the
 * terminal formats of `zk-plan worker` (src/cli/worker-log.ts, which loads no pino). Each event is
 * one line that says all a person needs: what happened, to which task (its path, key, function and
 * plan name), which try of how many, and what comes next. Stacks are laid out apart (stackLines),
 * without the frames of zk-plan itself or of Node's internals: what is left is the task's own code.
 */
import { sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ZkPlanError } from '../errors/base-error.js';
import type {
  TaskEventLabels,
  TaskGivenBackReason,
  ZkPlanEvents,
} from '../worker/worker-events.js';

/** Longest key, function or plan name a line shows; a longer one (anyone who can write a znode chose it) ends in `…`. */
const MAX_LABEL_CHARS = 100;
/** Longest failure message a line shows; the structured log keeps the whole error. */
const MAX_MESSAGE_CHARS = 1_000;
/** Causes followed below a failure's stack (as serializeError does). */
const MAX_CAUSES = 3;

/** A task event's fields that name the task. */
export type TaskLineFields = { readonly task: string; readonly plan: string } & TaskEventLabels;

/** `task claimed: <task>` (the definition is not read yet: the path only). */
export function describeTaskClaimed(event: ZkPlanEvents['task:claimed'][0]): string {
  return `task claimed: ${event.task}`;
}

/** `task started: <task> (key …, fn …, plan …), attempt n/max`. */
export function describeTaskStarted(event: ZkPlanEvents['task:started'][0]): string {
  return `task started: ${taskLabel(event)}, ${attemptText(event.attempt, event.maxAttempts)}`;
}

/** `task completed: <task> (key …, fn …, plan …) in <duration>`, saying so when a previous owner had stored the result. */
export function describeTaskCompleted(event: ZkPlanEvents['task:completed'][0]): string {
  if (event.skipped !== undefined)
    return `task skipped: ${taskLabel(event)} in ${durationText(event.durationMs)}: ${event.skipped}`;
  const reused = event.reusedResult ? ', with the result a previous owner stored' : '';
  return `task completed: ${taskLabel(event)} in ${durationText(event.durationMs)}${reused}`;
}

/** `task handed over: <task> (…) to <continuation> after <duration>`. */
export function describeTaskContinued(event: ZkPlanEvents['task:continued'][0]): string {
  return `task handed over: ${taskLabel(event)} to ${event.continuation} after ${durationText(event.durationMs)}; it completes with that task's result`;
}

/** `task waits: <task> (…): <reason>; checked again at <time>`. */
export function describeTaskWaiting(event: ZkPlanEvents['task:waiting'][0]): string {
  return `task waits: ${taskLabel(event)}: ${event.reason}; checked again at ${event.nextCheckAt.toISOString()}`;
}

/**
 * One line per way a try can end badly, each worded apart: failed and retried (when), failed for
 * good, released on drain, aborted because its plan was paused, cancelled or failed, given up on
 * an expired session, or given back after a fault that is not the task's. `now` places the retry.
 */
export function describeTaskFailed(
  event: ZkPlanEvents['task:failed'][0],
  now: number = Date.now(),
): string {
  const label = taskLabel(event);
  const attempt =
    event.attempt === undefined ? '' : `, ${attemptText(event.attempt, event.maxAttempts)}`;
  const message = failureMessage(event.error);
  if (event.charged && event.final) {
    const early =
      event.attempt !== undefined &&
      event.maxAttempts !== undefined &&
      event.attempt < event.maxAttempts;
    return `task failed for good: ${label}${attempt}${early ? ', not retried (a permanent error)' : ''}: ${message}`;
  }
  if (event.charged) {
    const retry =
      event.nextTryAt === undefined
        ? 'retrying later'
        : `retrying at ${clockTime(event.nextTryAt)} (in ${durationText(event.nextTryAt.getTime() - now)})`;
    return `task failed: ${label}${attempt}, ${retry}: ${message}`;
  }
  return givenBackLine(event.givenBack ?? 'given-back', `${label}${attempt}`, message);
}

/** How bad a failure is for the log: an error when the task failed for good, a warning when it is retried or interrupted, info for a pause or cancel someone asked for. */
export function taskFailureLevel(event: ZkPlanEvents['task:failed'][0]): 'info' | 'warn' | 'error' {
  if (event.charged && event.final) return 'error';
  if (!event.charged && (event.givenBack === 'paused' || event.givenBack === 'cancelled'))
    return 'info';
  return 'warn';
}

/** Whether a failure's stack goes with its line: for a task failed for good, and for every failure at debug level. */
export function showsStack(event: ZkPlanEvents['task:failed'][0], debug: boolean): boolean {
  return debug || (event.charged && event.final);
}

function givenBackLine(reason: TaskGivenBackReason, what: string, message: string): string {
  switch (reason) {
    case 'drain':
      return `task released on drain: ${what}, not charged: the worker stopped and its drain timeout passed before the task finished; another worker takes it`;
    case 'paused':
      return `task aborted, plan paused: ${what}, not charged: it runs again once the plan is resumed`;
    case 'cancelled':
      return `task aborted, plan cancelled: ${what}, not charged: the plan does not run again`;
    case 'plan-failed':
      return `task aborted, plan failed: ${what}, not charged: another task of its failFast plan failed for good`;
    case 'session-expired':
      return `task given up, session expired: ${what}, not charged: another worker runs it`;
    case 'given-back':
      return `task given back, not charged: ${what}: ${message}`;
  }
}

/** The task's path, then what people know it by: `<path> (key eu, fn load, plan nightly)`. */
export function taskLabel(fields: TaskLineFields): string {
  const names = [
    ...(fields.key === undefined ? [] : [`key ${bounded(fields.key, MAX_LABEL_CHARS)}`]),
    ...(fields.fn === undefined ? [] : [`fn ${bounded(fields.fn, MAX_LABEL_CHARS)}`]),
    ...(fields.planName === undefined ? [] : [`plan ${bounded(fields.planName, MAX_LABEL_CHARS)}`]),
  ];
  return names.length === 0 ? fields.task : `${fields.task} (${names.join(', ')})`;
}

function attemptText(attempt: number, maxAttempts: number | undefined): string {
  return maxAttempts === undefined ? `attempt ${attempt}` : `attempt ${attempt}/${maxAttempts}`;
}

/** `12 ms`, `1.5 s`, `2 min 5 s`. */
export function durationText(ms: number): string {
  const shown = Math.max(0, ms);
  if (shown < 1_000) return `${Math.round(shown)} ms`;
  if (shown < 60_000) return `${(shown / 1_000).toFixed(1)} s`;
  const seconds = Math.round(shown / 1_000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** The local time of day, as on the log line's own time stamp. */
function clockTime(date: Date): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function bounded(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

/**
 * What went wrong, once: a TaskExecutionError's message repeats the task path around what the
 * function threw (`Task <path> failed: <message>`), which the line names already.
 */
export function failureMessage(error: Error): string {
  const detail = isTaskExecutionError(error) ? (error as { detail?: unknown }).detail : undefined;
  return bounded(typeof detail === 'string' ? detail : error.message, MAX_MESSAGE_CHARS);
}

/** The error to show for a failed try: what the function threw, not the TaskExecutionError that wraps it. */
export function taskFailure(error: Error): Error {
  const cause = isTaskExecutionError(error) ? error.cause : undefined;
  return cause instanceof Error ? cause : error;
}

/** Matched by code: the error may come from another copy of zk-plan or from a sandbox. */
function isTaskExecutionError(error: Error): error is ZkPlanError {
  return error instanceof ZkPlanError && error.code === 'TASK_FAILED';
}

/**
 * The stack of a failed try for a terminal, below its line: the frames of what the function threw
 * that are neither zk-plan's nor Node's own, then each cause (`caused by <type>: <message>`) with
 * its frames. Empty when nothing of the task's own code is in it (a fault of zk-plan itself).
 */
export function stackLines(error: Error): string[] {
  const lines: string[] = [];
  let current: unknown = taskFailure(error);
  for (let depth = 0; current instanceof Error && depth <= MAX_CAUSES; depth += 1) {
    const frames = userFrames(current.stack);
    if (depth > 0)
      lines.push(`caused by ${current.name}: ${bounded(current.message, MAX_MESSAGE_CHARS)}`);
    lines.push(...frames);
    current = (current as { cause?: unknown }).cause;
  }
  return lines.length === 0 || lines.every((line) => line.startsWith('caused by ')) ? [] : lines;
}

/** A stack as `<type>: <message>` and the frames of the task's own code (for a structured log's `stack` field). */
export function userStack(error: Error): string {
  return [`${error.name}: ${error.message}`, ...userFrames(error.stack)].join('\n');
}

/** Where this package's code and its dependencies lie, as paths and as file URLs (ES modules' frames use those). */
const OWN_CODE: readonly string[] = ownCodeLocations();

function ownCodeLocations(): string[] {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const rootUrl = pathToFileURL(root).href.replace(/\/?$/, '/');
  return ['src', 'dist', 'node_modules'].flatMap((folder) => [
    `${root}${folder}${sep}`,
    `${rootUrl}${folder}/`,
  ]);
}

/** The frames (`    at …` lines) of `stack` that are the task's own code: with a source position, not zk-plan's, not Node's (`node:…`). */
function userFrames(stack: string | undefined): string[] {
  if (stack === undefined) return [];
  return stack
    .split('\n')
    .filter((line) => /^\s*at /.test(line) && isUserFrame(line))
    .map((line) => `    ${line.trim()}`);
}

function isUserFrame(frame: string): boolean {
  const location =
    /\(([^()]*)\)\s*$/.exec(frame)?.[1] ?? frame.replace(/^\s*at\s+(?:async\s+)?/, '');
  if (!/:\d+(?::\d+)?$/.test(location)) return false; // no source position: `<anonymous>`, `index 0`, native code
  if (location.startsWith('node:')) return false;
  return !OWN_CODE.some((prefix) => location.startsWith(prefix));
}
