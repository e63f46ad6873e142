/**
 * Real worker processes for the bench: each runs `zk-plan worker` (src/cli/main.ts under tsx) with
 * bench/step-functions.ts, its timings going to a file of its own. Started together, ready once each
 * printed its banner, stopped by PID (SIGTERM, then SIGKILL after a grace period) whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TIMINGS_FILE_ENV } from './step-timings.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(HERE, '..');
const CLI = join(REPO_ROOT, 'src', 'cli', 'main.ts');
const FUNCTIONS = join(HERE, 'step-functions.ts');
const READY_LINE = /zk-plan worker: \d+ loop\(s\)/;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export interface WorkerFleet {
  /** The timings file of each process. */
  readonly timingFiles: readonly string[];
  stop(): Promise<void>;
}

interface Child {
  readonly process: ChildProcess;
  readonly exited: Promise<void>;
  output: string;
}

function startOne(connect: string, parent: string, loops: number, timingsFile: string): Child {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CLI,
      'worker',
      '--connect',
      connect,
      '--parent',
      parent,
      '--functions',
      FUNCTIONS,
      '--workers',
      String(loops),
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, [TIMINGS_FILE_ENV]: timingsFile, ZOOKEEPER_CONNECT: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const entry: Child = {
    process: child,
    exited: new Promise((resolveExit) => child.once('exit', () => resolveExit())),
    output: '',
  };
  const collect = (chunk: Buffer): void => {
    entry.output = (entry.output + String(chunk)).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  child.on('error', () => undefined); // shows as an exit before the banner
  return entry;
}

async function ready(child: Child): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exited = false;
  void child.exited.then(() => (exited = true));
  while (!READY_LINE.test(child.output)) {
    if (exited || Date.now() > deadline)
      throw new Error(`a bench worker process did not start:\n${child.output}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

async function stopOne(child: Child): Promise<void> {
  const pid = child.process.pid;
  if (pid === undefined || child.process.exitCode !== null || child.process.signalCode !== null)
    return;
  process.kill(pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.process.exitCode === null && child.process.signalCode === null)
      process.kill(pid, 'SIGKILL');
  }, STOP_GRACE_MS);
  await child.exited;
  clearTimeout(timer);
}

/** Starts `processes` worker processes of `loops` loops each following `parent`; resolves once all run. */
export async function startWorkerFleet(options: {
  readonly connect: string;
  readonly parent: string;
  readonly processes: number;
  readonly loops: number;
  readonly timingsDir: string;
}): Promise<WorkerFleet> {
  const timingFiles = Array.from({ length: options.processes }, (_, i) =>
    join(options.timingsDir, `timings-${i}.txt`),
  );
  const children = timingFiles.map((file) =>
    startOne(options.connect, options.parent, options.loops, file),
  );
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((child) => stopOne(child)));
  };
  try {
    await Promise.all(children.map((child) => ready(child)));
  } catch (error) {
    await stop();
    throw error;
  }
  return { timingFiles, stop };
}
