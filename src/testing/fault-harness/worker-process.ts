/**
 * Real `zk-plan worker` processes, for the fault harness and the project's own fault tests: each
 * runs the worker command (`src/cli/main.ts` under tsx, or `dist/cli/main.js` in the published
 * build) with a functions module. Spawn, wait until ready, kill -9, SIGSTOP/SIGCONT, SIGTERM, and
 * stop every process started, by pid, whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, existsSync, constants as fsConstants } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CLOSE_INHERITED_SOCKETS } from './close-inherited-sockets.js';
import { withDeadline } from './pause.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const OUTPUT_CAP = 256 * 1024;

/**
 * The module `name` beside `directory`'s files as this copy of zk-plan has it: `.ts` when it runs
 * from its sources (under tsx, as its tests do), `.js` in the published build.
 */
export function siblingModule(directory: string, name: string): string {
  const own = extname(fileURLToPath(import.meta.url));
  const candidates = [own, own === '.ts' ? '.js' : '.ts'].map((extension) =>
    join(directory, `${name}${extension}`),
  );
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined)
    throw new Error(`zk-plan is incomplete: none of ${candidates.join(', ')} exists`);
  return found;
}

/** The `zk-plan` command's entry. */
const CLI = siblingModule(join(HERE, '..', '..', 'cli'), 'main');
/** tsx's loader, resolved from here: the workers load TypeScript (the CLI from the sources, a user's module). */
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
/** What a worker prints once its loops run: the banner, or the `started` document with --json. */
const READY_LINE = /zk-plan worker: \d+ loop\(s\)|"event":"started"/;

/** How to start one `zk-plan worker` process. */
export interface WorkerSpec {
  /** ZooKeeper connect string (loopback only). */
  readonly connect: string;
  readonly parent: string;
  /** `--functions`: the module of task functions the worker loads. */
  readonly functionsModule: string;
  /** Worker loops in the process (`--workers`). @defaultValue 1 */
  readonly loops?: number;
  readonly sessionTimeoutMs?: number;
  readonly drainTimeoutMs?: number;
  /** More `zk-plan worker` options, e.g. `['--no-retention']`. */
  readonly extraArgs?: readonly string[];
  /** Environment variables the process gets besides this process's own. */
  readonly env?: Readonly<Record<string, string>>;
  /** The directory the process runs in. @defaultValue this process's */
  readonly cwd?: string;
  /** Multiplies the waits on the process (ready, exit): 2 on a machine twice as slow. @defaultValue 1 */
  readonly timeScale?: number;
}

/** How a process ended, and when (epoch ms). */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly at: number;
}

/** Kills with PR_SET_PDEATHSIG too, so a worker dies with the process that started it even when that one is SIGKILLed. */
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
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
        process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** One `zk-plan worker` process. */
export class WorkerProcess {
  readonly pid: number;
  readonly spawnedAt = Date.now();
  /** When SIGKILL was sent to it, if it was. */
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
        if (!READY_LINE.test(this.text)) return;
        child.stdout?.off('data', onData);
        resolveReady();
      };
      child.stdout?.on('data', onData);
      void this.exited.then((exit) =>
        reject(
          new Error(
            `worker ${name} (pid ${this.pid}) exited before it was ready (${describeExit(exit)}):\n${this.output}`,
          ),
        ),
      );
    });
    this.readyPromise.catch(() => undefined); // observed by ready(); never an unhandled rejection
  }

  /** Spawns `node --import <preload> --import tsx <cli> worker …` with the spec's module and options. */
  static spawn(name: string, spec: WorkerSpec): WorkerProcess {
    installExitHook();
    const args = [
      '--import',
      CLOSE_INHERITED_SOCKETS,
      '--import',
      TSX_LOADER,
      CLI,
      'worker',
      '--connect',
      spec.connect,
      '--parent',
      spec.parent,
      '--functions',
      spec.functionsModule,
      '--workers',
      String(spec.loops ?? 1),
      ...(spec.sessionTimeoutMs === undefined
        ? []
        : ['--session-timeout-ms', String(spec.sessionTimeoutMs)]),
      ...(spec.drainTimeoutMs === undefined
        ? []
        : ['--drain-timeout-ms', String(spec.drainTimeoutMs)]),
      ...(spec.extraArgs ?? []),
    ];
    const [command, argv] =
      PARENT_DEATH_WRAPPER === undefined
        ? [process.execPath, args]
        : [PARENT_DEATH_WRAPPER, ['--pdeathsig', 'KILL', '--', process.execPath, ...args]];
    const child = spawn(command, argv, {
      ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
      env: { ...process.env, ...spec.env, ZOOKEEPER_CONNECT: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.on('error', () => undefined); // a failed spawn shows as a missing pid
    return new WorkerProcess(name, spec, child);
  }

  /** Resolves once the process has connected and started its loops (it printed its banner). */
  async ready(timeoutMs = 30_000): Promise<void> {
    await withDeadline(
      this.readyPromise,
      timeoutMs * this.timeScale,
      () => `worker ${this.name} (pid ${this.pid}) not ready:\n${this.output}`,
    );
  }

  private get timeScale(): number {
    return this.spec.timeScale ?? 1;
  }

  /** True until the process has exited. */
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
    if (this.exitInfo !== undefined)
      throw new Error(`worker ${this.name} (pid ${this.pid}) already exited`);
    const at = Date.now();
    this.killedAt = at;
    process.kill(this.pid, 'SIGKILL');
    await withDeadline(
      this.exited,
      10_000 * this.timeScale,
      () => `worker ${this.pid} did not die of SIGKILL`,
    );
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
    return await withDeadline(
      this.exited,
      timeoutMs * this.timeScale,
      () => `worker ${this.name} (pid ${this.pid}) did not exit on SIGTERM:\n${this.output}`,
    );
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
    await withDeadline(
      this.exited,
      10_000 * this.timeScale,
      () => `worker ${this.pid} survived SIGKILL`,
    ).catch(() => undefined);
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
    return new Map(
      this.processes.flatMap((worker) =>
        worker.killedAt === undefined ? [] : [[worker.pid, worker.killedAt] as const],
      ),
    );
  }

  /** Kills every process still running; resolves with the pids that are (still) alive afterwards: none, normally. */
  async stopAll(): Promise<number[]> {
    await Promise.all(this.processes.map((worker) => worker.forceStop()));
    return this.processes.map((worker) => worker.pid).filter(isProcessAlive);
  }

  /** Lines matching `pattern` in the output of every process (e.g. the native client's ZOO_ERROR lines: connection trouble). */
  countOutputLines(pattern: RegExp): number {
    return this.processes.reduce(
      (sum, worker) => sum + worker.output.split('\n').filter((line) => pattern.test(line)).length,
      0,
    );
  }

  /** Every process's output, for a failure message. */
  outputs(): string {
    return this.processes
      .map(
        (worker) =>
          `--- ${worker.name} pid ${worker.pid} (${worker.exit ? describeExit(worker.exit) : 'running'}) ---\n${worker.output.slice(-4000)}`,
      )
      .join('\n');
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

export function describeExit(exit: ProcessExit): string {
  return exit.signal === null ? `exit code ${exit.code}` : `signal ${exit.signal}`;
}
