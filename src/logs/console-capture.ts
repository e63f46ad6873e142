/**
 * What a task function writes with `console.*` while it runs goes to that task's log. Node has one
 * `console` per process and a worker runs several tasks at once, so the console methods are
 * replaced once, by dispatchers that ask AsyncLocalStorage which task (if any) the call comes from:
 * the store follows each task's own chain of callbacks and promises, so two tasks logging at the
 * same time never get each other's lines, and code outside any task prints as before.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
import type { LogLevel } from './task-log-types.js';

/** Where a captured call goes. */
export interface ConsoleTarget {
  consoleLine(level: LogLevel, text: string): void;
}

type ConsoleMethod = 'log' | 'info' | 'debug' | 'warn' | 'error' | 'trace';

const LEVEL_OF: Readonly<Record<ConsoleMethod, LogLevel>> = { log: 'info', info: 'info', debug: 'debug', warn: 'warn', error: 'error', trace: 'debug' };

/** The console methods as they were before capture: the worker echoes task lines through these. */
export const originalConsole: Readonly<Record<ConsoleMethod, (...args: unknown[]) => void>> = {
  log: console.log.bind(console),
  info: console.info.bind(console),
  debug: console.debug.bind(console),
  warn: console.warn.bind(console),
  error: console.error.bind(console),
  trace: console.trace.bind(console),
};

const storage = new AsyncLocalStorage<ConsoleTarget>();
let installed = false;

/** Replaces the console methods by the dispatchers (once per process; later calls do nothing). */
export function installConsoleCapture(): void {
  if (installed) return;
  installed = true;
  for (const method of Object.keys(LEVEL_OF) as ConsoleMethod[]) {
    console[method] = (...args: unknown[]): void => {
      const target = storage.getStore();
      if (target === undefined) {
        originalConsole[method](...args);
        return;
      }
      const text = method === 'trace' ? `Trace: ${format(...args)}\n${traceOf()}` : format(...args);
      target.consoleLine(LEVEL_OF[method], text);
    };
  }
}

/** Runs `run` with console calls made in it (and in everything it starts) sent to `target`. */
export function runCaptured<T>(target: ConsoleTarget, run: () => T): T {
  return storage.run(target, run);
}

function traceOf(): string {
  const stack = new Error().stack ?? '';
  return stack.split('\n').slice(3).join('\n');
}
