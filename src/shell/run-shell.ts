/**
 * The built-in `shell` task function: runs a command in a process group of its own, sends what
 * it writes to the task's log line by line (stdout at info, stderr at warn, each with a `stream`
 * field), and returns `{ exitCode: 0, stdout }`, or fails with ShellExitError naming the exit
 * code or signal and the last lines of stderr. When the task's signal aborts (its timeoutMs, a
 * pause with abort, a cancel, a worker's drain), the whole group is stopped (process-group.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { DEFAULTS } from '../config/defaults.js';
import {
  ShellExitError,
  ShellParamsError,
  ShellStartError,
  type ShellEnd,
} from '../errors/shell-errors.js';
import type { TaskContext } from '../exec/task-context.js';
import { MAX_MESSAGE_CHARS } from '../logs/attempt-tail.js';
import { LineSplitter } from './line-splitter.js';
import {
  forgetGroup,
  groupHasLiveMember,
  terminateGroup,
  trackGroup,
  type Termination,
} from './process-group.js';
import {
  shellInvocation,
  shellParamsProblem,
  type ShellInvocation,
  type ShellParams,
  type ShellResult,
} from './shell-params.js';

/** Longest line written to the task's log (the longest message its tail keeps); the rest of a longer one is counted, not kept. */
const MAX_LOG_LINE_CHARS = MAX_MESSAGE_CHARS;
/** Lines of stderr quoted in a ShellExitError, and the longest each may be: the error is stored with the task's failure. */
const STDERR_TAIL_LINES = 10;
const STDERR_TAIL_LINE_CHARS = 500;
/**
 * After the group is gone, how long its output may still take to reach its end. Past it, the pipes
 * are held by a process that left the group (`setsid`): they are closed on it and not read further.
 */
const OUTPUT_END_WAIT_MS = 1_000;

/** What the shell function needs of the task's context. */
export type ShellContext = Pick<TaskContext, 'task' | 'signal' | 'log'>;

export interface ShellSettings {
  /** After SIGTERM, how long the command's process group has before SIGKILL. */
  readonly killGraceMs: number;
}

/** Runs the shell call `params` (`[{ command, args?, cwd?, env?, shell? }]`) for the task of `ctx`. */
export async function runShell(
  ctx: ShellContext,
  params: readonly unknown[],
  settings: ShellSettings,
): Promise<ShellResult> {
  const problem = shellParamsProblem(params);
  if (problem !== undefined) throw new ShellParamsError(`task ${ctx.task}`, problem, ctx.task);
  if (ctx.signal.aborted) throw ctx.signal.reason;
  const invocation = shellInvocation(params[0] as ShellParams, process.env);
  const child = await start(ctx, invocation);
  const pgid = child.pid as number;
  trackGroup(pgid);
  try {
    return await supervise(ctx, invocation, child, settings);
  } finally {
    forgetGroup(pgid);
  }
}

/** Spawns the command as the leader of a new process group; fails with ShellStartError when it cannot start. */
async function start(ctx: ShellContext, invocation: ShellInvocation): Promise<ChildProcess> {
  let child: ChildProcess;
  try {
    child = spawn(invocation.file, [...invocation.argv], {
      cwd: invocation.cwd,
      env: invocation.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
  } catch (error) {
    throw new ShellStartError(ctx.task, invocation.command, (error as Error).message, error);
  }
  if (child.pid !== undefined) {
    ctx.log.info(`started: ${invocation.command}`, { pid: child.pid });
    return child;
  }
  const error = await new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
  const where = invocation.cwd === undefined ? '' : ` (in ${invocation.cwd})`;
  const detail =
    error.code === 'ENOENT'
      ? `${invocation.file} or the working directory${where} does not exist`
      : error.code === 'EACCES'
        ? `${invocation.file}${where} may not be run (permission denied)`
        : error.message;
  throw new ShellStartError(ctx.task, invocation.command, detail, error);
}

/** Follows a started command to its end: its output into the log, its group stopped on abort, its result or failure. */
async function supervise(
  ctx: ShellContext,
  invocation: ShellInvocation,
  child: ChildProcess,
  settings: ShellSettings,
): Promise<ShellResult> {
  const pgid = child.pid as number;
  const stdout = new HeadCapture(DEFAULTS.shell.maxStdoutBytes);
  const stderrTail: string[] = [];
  const outLines = new LineSplitter(MAX_LOG_LINE_CHARS, (line) =>
    ctx.log.info(line, { stream: 'stdout' }),
  );
  const errLines = new LineSplitter(MAX_LOG_LINE_CHARS, (line) => {
    ctx.log.warn(line, { stream: 'stderr' });
    stderrTail.push(
      line.length <= STDERR_TAIL_LINE_CHARS ? line : `${line.slice(0, STDERR_TAIL_LINE_CHARS)}…`,
    );
    if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout.write(chunk);
    outLines.write(chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => errLines.write(chunk));
  // Signalling the child can fail after it started; unheard, the 'error' event would end the worker process.
  child.on('error', (error) => ctx.log.error(`the command's process: ${error.message}`));
  const outputEnded = Promise.all([streamEnd(child.stdout), streamEnd(child.stderr)]);
  const exited = new Promise<ShellEnd>((resolve) =>
    child.once('exit', (code, signal) =>
      resolve(signal !== null ? { signal } : { exitCode: code ?? 0 }),
    ),
  );
  const startedAt = performance.now();
  let stopping: Promise<Termination> | undefined;
  let giveUp: (value: undefined) => void = () => undefined;
  const givenUp = new Promise<undefined>((resolve) => (giveUp = resolve));
  const onAbort = (): void => {
    const reason: unknown = ctx.signal.reason;
    ctx.log.warn(
      `stopping the command: ${reason instanceof Error ? reason.message : String(reason)}; SIGTERM to its process group ${pgid}`,
    );
    stopping = terminateGroup(pgid, settings.killGraceMs, () =>
      ctx.log.warn(
        `the command's process group ${pgid} outlived SIGTERM by ${settings.killGraceMs} ms (shellKillGraceMs): SIGKILL`,
      ),
    );
    // A command SIGKILL cannot end (one that runs as another user) must not hold the worker's loop for ever.
    void stopping.then(() => setTimeout(() => giveUp(undefined), OUTPUT_END_WAIT_MS).unref());
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const end = await Promise.race([exited, givenUp]);
    if (end === undefined) {
      ctx.log.error(
        `the command (pid ${pgid}) did not end on SIGKILL to its process group (may it not be signalled?): no longer waited for`,
      );
      child.stdout?.destroy();
      child.stderr?.destroy();
      throw ctx.signal.reason;
    }
    if (stopping === undefined && (await groupHasLiveMember(pgid))) {
      ctx.log.warn(
        `the command ended but left processes running in its process group ${pgid}: SIGTERM to them, as to any task's leftovers`,
      );
      stopping = terminateGroup(pgid, settings.killGraceMs, () =>
        ctx.log.warn(`its leftovers outlived SIGTERM by ${settings.killGraceMs} ms: SIGKILL`),
      );
    }
    await stopping;
    await endOutput(ctx, child, outputEnded);
    outLines.end();
    errLines.end();
    const durationMs = Math.round(performance.now() - startedAt);
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (end.exitCode === 0) {
      ctx.log.info(`exited with code 0 in ${durationMs} ms`);
      if (stdout.droppedBytes > 0) {
        const max = DEFAULTS.shell.maxStdoutBytes;
        ctx.log.warn(
          `stdout was longer than ${max} bytes: the result keeps its first ${max} bytes, this log all of its lines`,
          {
            droppedFromResult: stdout.droppedBytes,
          },
        );
      }
      return { exitCode: 0, stdout: stdout.text() };
    }
    ctx.log.error(
      `${end.signal !== undefined ? `killed by ${end.signal}` : `exited with code ${end.exitCode}`} after ${durationMs} ms`,
    );
    throw new ShellExitError(ctx.task, invocation.command, end, stderrTail);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

function streamEnd(stream: NodeJS.ReadableStream | null): Promise<void> {
  if (stream === null) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
}

/** Waits for the rest of the output; a pipe a process outside the group still holds is closed after OUTPUT_END_WAIT_MS. */
async function endOutput(
  ctx: ShellContext,
  child: ChildProcess,
  outputEnded: Promise<unknown>,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), OUTPUT_END_WAIT_MS);
  });
  try {
    if ((await Promise.race([outputEnded, waited])) !== 'late') return;
  } finally {
    clearTimeout(timer);
  }
  ctx.log.warn(
    'a process that left the command’s process group still holds its output: no longer read',
  );
  child.stdout?.destroy();
  child.stderr?.destroy();
}

/** The first `maxBytes` bytes of a stream, and how many more came; the text is cut at a character boundary. */
class HeadCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(private readonly maxBytes: number) {}

  get droppedBytes(): number {
    return this.dropped;
  }

  write(chunk: Buffer): void {
    const room = this.maxBytes - this.kept;
    const piece = chunk.length <= room ? chunk : chunk.subarray(0, room);
    if (piece.length > 0) this.chunks.push(piece);
    this.kept += piece.length;
    this.dropped += chunk.length - piece.length;
  }

  text(): string {
    const bytes = Buffer.concat(this.chunks, this.kept);
    return bytes
      .subarray(0, this.dropped > 0 ? utf8Boundary(bytes) : bytes.length)
      .toString('utf8');
  }
}

/** The length of `bytes` without a UTF-8 sequence cut short at its end. */
function utf8Boundary(bytes: Buffer): number {
  let start = bytes.length;
  // Back over continuation bytes (10xxxxxx) to the start of the last sequence, at most 3.
  while (start > 0 && bytes.length - start < 3 && ((bytes[start - 1] as number) & 0xc0) === 0x80)
    start -= 1;
  if (start === 0) return bytes.length;
  const lead = bytes[start - 1] as number;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - (start - 1) >= needed ? bytes.length : start - 1;
}
