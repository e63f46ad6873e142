/**
 * What a task function writes with `console.*` while it runs goes to that task's log. Node has one
 * `console` per process and a worker runs several tasks at once, so the console methods are
 * replaced once, by dispatchers that ask AsyncLocalStorage which task (if any) the call comes from:
 * the store follows each task's own chain of callbacks and promises, so two tasks logging at the
 * same time never get each other's lines, and code outside any task prints as before.
 *
 * AsyncLocalStorage costs something on every promise of the process while it is enabled (Node 20
 * tracks the store through promise hooks): a third of a worker's CPU in the fan-in benchmark. So it
 * is enabled only while at least one task function runs, and disabled when the last one settles.
 * A line a task prints from a stray callback after its function has settled is printed on the
 * worker's output like any line outside a task, whether or not other tasks still run.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
import type { LogLevel } from './task-log-types.js';

/** Where a captured call goes. */
export interface ConsoleTarget {
  consoleLine(level: LogLevel, text: string): void;
}

type ConsoleMethod = 'log' | 'info' | 'debug' | 'warn' | 'error' | 'trace';

const LEVEL_OF: Readonly<Record<ConsoleMethod, LogLevel>> = {
  log: 'info',
  info: 'info',
  debug: 'debug',
  warn: 'warn',
  error: 'error',
  trace: 'debug',
};

/** The console methods as they were before capture: the worker echoes task lines through these. */
export const originalConsole: Readonly<Record<ConsoleMethod, (...args: unknown[]) => void>> = {
  log: console.log.bind(console),
  info: console.info.bind(console),
  debug: console.debug.bind(console),
  warn: console.warn.bind(console),
  error: console.error.bind(console),
  trace: console.trace.bind(console),
};

/** A task's target while its function runs; closed once the function has settled. */
interface Capture {
  readonly target: ConsoleTarget;
  open: boolean;
}

const storage = new AsyncLocalStorage<Capture>();
let installed = false;
/** Task functions running captured right now: the storage is disabled when this comes back to 0. */
let running = 0;

/** Replaces the console methods by the dispatchers (once per process; later calls do nothing). */
export function installConsoleCapture(): void {
  if (installed) return;
  installed = true;
  for (const method of Object.keys(LEVEL_OF) as ConsoleMethod[]) {
    console[method] = (...args: unknown[]): void => {
      const capture = storage.getStore();
      if (capture === undefined || !capture.open) {
        originalConsole[method](...args);
        return;
      }
      const text = method === 'trace' ? `Trace: ${format(...args)}\n${traceOf()}` : format(...args);
      capture.target.consoleLine(LEVEL_OF[method], text);
    };
  }
}

/**
 * Runs the task function `run` with console calls made in it (and in everything it starts) sent to
 * `target`, until the promise it returns settles.
 */
export async function runCaptured<T>(target: ConsoleTarget, run: () => Promise<T>): Promise<T> {
  const capture: Capture = { target, open: true };
  running += 1;
  try {
    return await storage.run(capture, run);
  } finally {
    capture.open = false;
    running -= 1;
    if (running === 0) storage.disable();
  }
}

function traceOf(): string {
  const stack = new Error().stack ?? '';
  return stack.split('\n').slice(3).join('\n');
}
