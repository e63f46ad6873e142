/**
 * Real worker processes for fault tests: each runs the `zk-plan worker` command (`src/cli/main.ts`
 * under tsx) with a functions module written to a temp dir. Every function records each execution
 * in a shared log file (JSON lines appended with O_APPEND, one write per line), so a test can see
 * which process ran which task when, even for processes it killed with SIGKILL.
 *
 * A log line is `{ task, label, pid, workerId, run, event, at, args, result? }` where `event` is
 * `start`, `aborted` (the task's AbortSignal fired during the run) or `end` (the function returned);
 * `run` identifies one execution (`<pid>:<n>`). A process killed with -9 never writes `end`: its
 * execution counts as ending at the kill time the test recorded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The environment variable naming the shared execution log of the functions module. */
export const FAULT_LOG_ENV = 'ZK_PLAN_FAULT_LOG';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(REPO_ROOT, 'src', 'cli', 'main.ts');
const OUTPUT_CAP = 256 * 1024;

/** `work` sums modulo this prime, so values stay exact however deep a plan is. */
export const WORK_MODULUS = 1_000_003;

// ---------------------------------------------------------------------------
// The functions module the workers load
// ---------------------------------------------------------------------------

/**
 * Functions (all take one param object):
 * - `work({ label, ms, add })`: waits `ms` (cut short when the task's signal aborts) and returns
 *   `(add + sum(inputs)) % WORK_MODULUS`; deterministic, so any run gives the same value.
 * - `marked({ label, firstRunMs, rerunMs, lingerAfterAbortMs })`: returns `{ by: pid, run }`, `run`
 *   being 1 + the number of earlier starts of this task in the log; waits `firstRunMs` on the first
 *   run and `rerunMs` on the others, so a first run can be made to hang until it is killed or
 *   aborted while a re-run is quick; once aborted, it still takes `lingerAfterAbortMs` to return
 *   (a function that finishes its work anyway, so its late result meets the fence, not a missing session).
 * Both record `start`, `aborted` (when the signal fires during the run) and `end`.
 */
const FUNCTIONS_MODULE = String.raw`
import { appendFileSync, readFileSync } from 'node:fs';

const LOG = process.env.${FAULT_LOG_ENV};
if (!LOG) throw new Error('${FAULT_LOG_ENV} is not set');
let serial = 0;
const MODULUS = ${WORK_MODULUS};

function record(entry) {
  appendFileSync(LOG, JSON.stringify({ pid: process.pid, at: Date.now(), ...entry }) + '\n');
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const done = (full) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(full);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function execution(ctx, args, body) {
  const param = ctx.params[0] ?? {};
  const base = { task: ctx.task, label: param.label, workerId: ctx.workerId, run: process.pid + ':' + ++serial };
  record({ ...base, event: 'start', args });
  const onAbort = () => record({ ...base, event: 'aborted', reason: String(ctx.signal.reason?.message ?? ctx.signal.reason) });
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await body(param);
    record({ ...base, event: 'end', args, result });
    return result;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

function earlierStarts(task) {
  let count = 0;
  for (const line of readFileSync(LOG, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      const entry = JSON.parse(line);
      if (entry.task === task && entry.event === 'start') count += 1;
    } catch {}
  }
  return count;
}

export default {
  async work(ctx, ...inputs) {
    return execution(ctx, inputs, async ({ ms = 0, add = 0 }) => {
      await pause(ms, ctx.signal);
      return (add + inputs.reduce((sum, x) => sum + x, 0)) % MODULUS;
    });
  },
  async marked(ctx, ...inputs) {
    const run = earlierStarts(ctx.task) + 1;
    return execution(ctx, inputs, async ({ firstRunMs = 0, rerunMs = 0, lingerAfterAbortMs = 0 }) => {
      const full = await pause(run === 1 ? firstRunMs : rerunMs, ctx.signal);
      if (!full && lingerAfterAbortMs > 0) await new Promise((resolve) => setTimeout(resolve, lingerAfterAbortMs));
      return { by: process.pid, run };
    });
  },
};
`;

/**
 * Preloaded (`--import`) by every worker process before anything else: closes the sockets it
 * inherited from the test process (fds 0–2 excepted).
 *
 * Why: the ZooKeeper C client under node-zookeeper 7.3 opens its socket without close-on-exec, so
 * every child spawned while the test's client is connected inherits it. Once the test process
 * closes or loses that connection, the inherited copy keeps the old socket alive, and the test
 * process's epoll keeps reporting its EOF under the old fd number; when a new ZooKeeper socket
 * reuses that number, node-zookeeper sees events with nothing to process, gives up after 11 of
 * them ("zookeeper_process returned no response too many times") and closes the handle as if the
 * session had expired; every new session fails the same way while the child lives. A worker
 * process closing its inherited copies at start keeps the test's own client usable across
 * ZooKeeper restarts. (The workers spawn nothing, so they are not exposed to this themselves.)
 */
const CLOSE_INHERITED_SOCKETS_MODULE = String.raw`
import { closeSync, readdirSync, readlinkSync } from 'node:fs';
for (const name of readdirSync('/proc/self/fd')) {
  const fd = Number(name);
  if (!(fd > 2)) continue;
  try {
    if (readlinkSync('/proc/self/fd/' + name).startsWith('socket:')) closeSync(fd);
  } catch {}
}
`;

export interface FaultWorkspace {
  /** The temp dir holding the module, the log and the workers' output. */
  readonly dir: string;
  /** Path of the `.mjs` functions module. */
  readonly functionsModule: string;
  /** Path of the module every worker preloads to close the sockets it inherited. */
  readonly preloadModule: string;
  /** Path of the shared execution log. */
  readonly logFile: string;
  /** Removes the temp dir. */
  remove(): Promise<void>;
}

/** A temp dir with the functions module and an empty execution log. */
export async function createFaultWorkspace(prefix = 'zk-plan-faults-'): Promise<FaultWorkspace> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const functionsModule = join(dir, 'fault-functions.mjs');
  const preloadModule = join(dir, 'close-inherited-sockets.mjs');
  const logFile = join(dir, 'executions.jsonl');
  writeFileSync(functionsModule, FUNCTIONS_MODULE);
  writeFileSync(preloadModule, process.platform === 'linux' ? CLOSE_INHERITED_SOCKETS_MODULE : '');
  writeFileSync(logFile, '');
  return { dir, functionsModule, preloadModule, logFile, remove: () => rm(dir, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------
// Worker processes
// ---------------------------------------------------------------------------

export interface WorkerSpec {
  /** ZooKeeper connect string (loopback only). */
  readonly connect: string;
  readonly parent: string;
  readonly workspace: FaultWorkspace;
  /** Worker loops in the process (`--workers`). @defaultValue 1 */
  readonly loops?: number;
  readonly sessionTimeoutMs?: number;
  readonly drainTimeoutMs?: number;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly at: number;
}

/** Kills with PR_SET_PDEATHSIG too, so a worker dies with the test process even when that is SIGKILLed. */
const PARENT_DEATH_WRAPPER = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => {
  if (process.platform !== 'linux') return false;
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
});

const everyChild = new Set<ChildProcess>();
let exitHookInstalled = false;

function killEveryChildNow(): void {
  for (const child of everyChild) {
    try {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** One `zk-plan worker` process. */
export class WorkerProcess {
  readonly pid: number;
  readonly spawnedAt = Date.now();
  /** When the test sent SIGKILL, if it did. */
  killedAt: number | undefined;
  /** SIGSTOP / SIGCONT times, in order. */
  readonly pauses: { stoppedAt: number; continuedAt?: number }[] = [];
  readonly exited: Promise<ProcessExit>;
  private exitInfo: ProcessExit | undefined;
  private text = '';
  private readonly readyPromise: Promise<void>;

  private constructor(
    readonly name: string,
    readonly spec: WorkerSpec,
    child: ChildProcess,
  ) {
    if (child.pid === undefined) throw new Error(`worker ${name} did not start`);
    this.pid = child.pid;
    everyChild.add(child);
    const collect = (chunk: Buffer): void => {
      this.text += String(chunk);
      if (this.text.length > OUTPUT_CAP) this.text = this.text.slice(-OUTPUT_CAP / 2);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((resolveExit) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal, at: Date.now() };
        everyChild.delete(child);
        resolveExit(this.exitInfo);
      });
    });
    this.readyPromise = new Promise<void>((resolveReady, reject) => {
      const onData = (): void => {
        if (!/zk-plan worker: \d+ loop\(s\)/.test(this.text)) return;
        child.stdout?.off('data', onData);
        resolveReady();
      };
      child.stdout?.on('data', onData);
      void this.exited.then((exit) => reject(new Error(`worker ${name} (pid ${this.pid}) exited before it was ready (${describeExit(exit)}):\n${this.output}`)));
    });
    this.readyPromise.catch(() => undefined); // observed by ready(); never an unhandled rejection
  }

  /** Spawns `node --import tsx src/cli/main.ts worker …` with the workspace's module and log. */
  static spawn(name: string, spec: WorkerSpec): WorkerProcess {
    installExitHook();
    const args = [
      '--import',
      pathToFileURL(spec.workspace.preloadModule).href,
      '--import',
      'tsx',
      CLI,
      'worker',
      '--connect',
      spec.connect,
      '--parent',
      spec.parent,
      '--functions',
      spec.workspace.functionsModule,
      '--workers',
      String(spec.loops ?? 1),
      ...(spec.sessionTimeoutMs === undefined ? [] : ['--session-timeout-ms', String(spec.sessionTimeoutMs)]),
      ...(spec.drainTimeoutMs === undefined ? [] : ['--drain-timeout-ms', String(spec.drainTimeoutMs)]),
    ];
    const [command, argv] =
      PARENT_DEATH_WRAPPER === undefined ? [process.execPath, args] : [PARENT_DEATH_WRAPPER, ['--pdeathsig', 'KILL', '--', process.execPath, ...args]];
    const child = spawn(command, argv, {
      cwd: REPO_ROOT,
      env: { ...process.env, [FAULT_LOG_ENV]: spec.workspace.logFile, ZOOKEEPER_CONNECT: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.on('error', () => undefined); // a failed spawn shows as a missing pid
    return new WorkerProcess(name, spec, child);
  }

  /** Resolves once the process has connected and started its loops (it printed its banner). */
  async ready(timeoutMs = 30_000): Promise<void> {
    await withDeadline(this.readyPromise, timeoutMs, () => `worker ${this.name} (pid ${this.pid}) not ready within ${timeoutMs} ms:\n${this.output}`);
  }

  get alive(): boolean {
    return this.exitInfo === undefined && isProcessAlive(this.pid);
  }

  get exit(): ProcessExit | undefined {
    return this.exitInfo;
  }

  /** What the process printed (stdout and stderr, interleaved; the tail when it was long). */
  get output(): string {
    return this.text;
  }

  /** kill -9; records the kill time; resolves once the process is gone. */
  async kill9(): Promise<number> {
    if (this.exitInfo !== undefined) throw new Error(`worker ${this.name} (pid ${this.pid}) already exited`);
    const at = Date.now();
    this.killedAt = at;
    process.kill(this.pid, 'SIGKILL');
    await withDeadline(this.exited, 10_000, () => `worker ${this.pid} did not die of SIGKILL`);
    return at;
  }

  /** SIGSTOP: the process (its ZooKeeper client thread included) freezes. */
  suspend(): number {
    const at = Date.now();
    process.kill(this.pid, 'SIGSTOP');
    this.pauses.push({ stoppedAt: at });
    return at;
  }

  /** SIGCONT after suspend(). */
  resume(): number {
    const at = Date.now();
    process.kill(this.pid, 'SIGCONT');
    const last = this.pauses.at(-1);
    if (last !== undefined && last.continuedAt === undefined) last.continuedAt = at;
    return at;
  }

  /** SIGTERM (the CLI drains and exits 0); resolves with how it exited. */
  async terminate(timeoutMs = 30_000): Promise<ProcessExit> {
    if (this.exitInfo !== undefined) return this.exitInfo;
    process.kill(this.pid, 'SIGTERM');
    return await withDeadline(this.exited, timeoutMs, () => `worker ${this.name} (pid ${this.pid}) did not exit within ${timeoutMs} ms of SIGTERM:\n${this.output}`);
  }

  /** SIGCONT + SIGKILL if still running; resolves once it is gone. Never throws. */
  async forceStop(): Promise<void> {
    if (this.exitInfo !== undefined) return;
    for (const signal of ['SIGCONT', 'SIGKILL'] as const) {
      try {
        process.kill(this.pid, signal);
      } catch {
        // already gone
      }
    }
    await withDeadline(this.exited, 10_000, () => `worker ${this.pid} survived SIGKILL`).catch(() => undefined);
  }
}

/** All the worker processes of a test: spawn, restart, and stop them all whatever happened. */
export class WorkerFleet {
  readonly processes: WorkerProcess[] = [];
  private serial = 0;

  constructor(private readonly spec: WorkerSpec) {}

  spawn(name = `w${++this.serial}`, overrides: Partial<WorkerSpec> = {}): WorkerProcess {
    const worker = WorkerProcess.spawn(name, { ...this.spec, ...overrides });
    this.processes.push(worker);
    return worker;
  }

  /** A new process with the same name and options as `worker` (which should be gone). */
  restart(worker: WorkerProcess): WorkerProcess {
    const replacement = WorkerProcess.spawn(worker.name, worker.spec);
    this.processes.push(replacement);
    return replacement;
  }

  get live(): WorkerProcess[] {
    return this.processes.filter((worker) => worker.exit === undefined);
  }

  /** pid → kill time, for every process this fleet killed with -9. */
  kills(): Map<number, number> {
    return new Map(this.processes.flatMap((worker) => (worker.killedAt === undefined ? [] : [[worker.pid, worker.killedAt] as const])));
  }

  /** Kills every process still running; resolves with the pids that are (still) alive afterwards: none, normally. */
  async stopAll(): Promise<number[]> {
    await Promise.all(this.processes.map((worker) => worker.forceStop()));
    return this.processes.map((worker) => worker.pid).filter(isProcessAlive);
  }

  /** Lines matching `pattern` in the output of every process (e.g. the native client's ZOO_ERROR lines: connection trouble). */
  countOutputLines(pattern: RegExp): number {
    return this.processes.reduce((sum, worker) => sum + worker.output.split('\n').filter((line) => pattern.test(line)).length, 0);
  }

  /** Every process's output, for a failure message. */
  outputs(): string {
    return this.processes.map((worker) => `--- ${worker.name} pid ${worker.pid} (${worker.exit ? describeExit(worker.exit) : 'running'}) ---\n${worker.output.slice(-4000)}`).join('\n');
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killEveryChildNow);
}

/** True while a process with this pid exists (signal 0). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function describeExit(exit: ProcessExit): string {
  return exit.signal === null ? `exit code ${exit.code}` : `signal ${exit.signal}`;
}

// ---------------------------------------------------------------------------
// Waiting with deadlines
// ---------------------------------------------------------------------------

/** Resolves with `promise`, or rejects with `message()` after `timeoutMs`. */
export async function withDeadline<T>(promise: Promise<T>, timeoutMs: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message())), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `probe` every `intervalMs` until it returns a value other than undefined/false, and
 * resolves with it; rejects after `timeoutMs` saying what was awaited.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs, intervalMs = 50 }: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolveSleep) => setTimeout(resolveSleep, intervalMs));
  }
}

// ---------------------------------------------------------------------------
// The execution log
// ---------------------------------------------------------------------------

export interface LogEntry {
  readonly task: string;
  readonly label?: string;
  readonly pid: number;
  readonly workerId: string;
  readonly run: string;
  readonly event: 'start' | 'aborted' | 'end';
  readonly at: number;
  readonly args?: unknown[];
  readonly result?: unknown;
  readonly reason?: string;
}

/** The log's entries in file order; a torn last line (a process killed mid-write) is skipped. */
export function readExecutionLog(logFile: string): LogEntry[] {
  if (!existsSync(logFile)) return [];
  const entries: LogEntry[] = [];
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      entries.push(JSON.parse(line) as LogEntry);
    } catch {
      // a partial line: only possible for the last write of a killed process
    }
  }
  return entries;
}

/** One run of a function, from its `start` to its `end` or the kill of its process. */
export interface Execution {
  readonly task: string;
  readonly label: string | undefined;
  readonly pid: number;
  readonly run: string;
  readonly args: unknown[] | undefined;
  readonly startedAt: number;
  /** `end` time; the kill time for a process killed before `end`; Infinity when neither (still running). */
  readonly endedAt: number;
  readonly ending: 'end' | 'killed' | 'running';
  /** When its signal fired, if it did (the worker lost the task: its writes are fenced). */
  readonly abortedAt: number | undefined;
  readonly result: unknown;
}

/** Pairs each `start` with its `end` (same `run`); a run of a killed pid without `end` ends at the kill. */
export function executionsOf(entries: readonly LogEntry[], kills: ReadonlyMap<number, number> = new Map()): Execution[] {
  const byRun = new Map<string, { start?: LogEntry; end?: LogEntry; aborted?: LogEntry }>();
  for (const entry of entries) {
    const slot = byRun.get(entry.run) ?? {};
    if (entry.event === 'start') slot.start = entry;
    else if (entry.event === 'end') slot.end = entry;
    else slot.aborted = entry;
    byRun.set(entry.run, slot);
  }
  const executions: Execution[] = [];
  for (const [run, { start, end, aborted }] of byRun) {
    if (start === undefined) continue;
    const killedAt = kills.get(start.pid);
    const ending = end !== undefined ? 'end' : killedAt !== undefined ? 'killed' : 'running';
    executions.push({
      task: start.task,
      label: start.label,
      pid: start.pid,
      run,
      args: start.args,
      startedAt: start.at,
      endedAt: end?.at ?? killedAt ?? Number.POSITIVE_INFINITY,
      ending,
      abortedAt: aborted?.at,
      result: end?.result,
    });
  }
  return executions.sort((a, b) => a.startedAt - b.startedAt);
}

/** Executions grouped by task path, each group in start order. */
export function executionsPerTask(executions: readonly Execution[]): Map<string, Execution[]> {
  const perTask = new Map<string, Execution[]>();
  for (const execution of executions) {
    const list = perTask.get(execution.task) ?? [];
    list.push(execution);
    perTask.set(execution.task, list);
  }
  return perTask;
}

export interface Overlap {
  readonly task: string;
  readonly first: Execution;
  readonly second: Execution;
  readonly overlapMs: number;
}

/**
 * Pairs of executions of the same task whose intervals overlap (a killed run ends at its kill).
 * `live`: neither run saw its signal abort, so both processes were alive and believed they owned
 * the task: exclusive ownership was broken. `fenced`: one of them had lost its session (its signal
 * aborted), so its writes were refused: allowed, reported.
 */
export function overlapsOf(executions: readonly Execution[]): { live: Overlap[]; fenced: Overlap[] } {
  const live: Overlap[] = [];
  const fenced: Overlap[] = [];
  for (const [task, runs] of executionsPerTask(executions)) {
    for (let i = 0; i < runs.length; i++) {
      for (let j = i + 1; j < runs.length; j++) {
        const first = runs[i]!;
        const second = runs[j]!;
        const overlapMs = Math.min(first.endedAt, second.endedAt) - Math.max(first.startedAt, second.startedAt);
        if (overlapMs <= 0) continue;
        const overlap = { task, first, second, overlapMs };
        if (first.abortedAt !== undefined || second.abortedAt !== undefined) fenced.push(overlap);
        else live.push(overlap);
      }
    }
  }
  return { live, fenced };
}

/** Task → the results its runs returned (`end` entries), in log order. */
export function resultsOf(entries: readonly LogEntry[]): Map<string, unknown[]> {
  const results = new Map<string, unknown[]>();
  for (const entry of entries) {
    if (entry.event !== 'end') continue;
    const list = results.get(entry.task) ?? [];
    list.push(entry.result);
    results.set(entry.task, list);
  }
  return results;
}

/** Executions beyond the first, per task, summed: how much work crashes made the cluster redo. */
export function reExecutionCount(executions: readonly Execution[]): number {
  let count = 0;
  for (const runs of executionsPerTask(executions).values()) count += runs.length - 1;
  return count;
}

/** A readable line for an overlap, for assertion messages. */
export function describeOverlap({ task, first, second, overlapMs }: Overlap): string {
  const side = (e: Execution): string => `pid ${e.pid} run ${e.run} [${e.startedAt}, ${e.endedAt}] (${e.ending}${e.abortedAt ? `, aborted at ${e.abortedAt}` : ''})`;
  return `${task}: ${side(first)} and ${side(second)} overlap by ${overlapMs} ms`;
}
