/**
 * Console capture per task: AsyncLocalStorage is enabled only while a task function runs (it costs
 * something on every promise of the process while enabled), so these check that turning it off and
 * on again never loses or misroutes a line: a task still running keeps its lines when another one
 * settles, a task started after all had settled is captured again, and a stray callback of a settled
 * task prints on the worker's own output.
 */
import { format } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as ConsoleCapture from '../../src/logs/console-capture.js';
import type { LogLevel } from '../../src/logs/task-log-types.js';

type Capture = typeof ConsoleCapture;

/** What reached the console as it was before capture (the worker's own output). */
const printed: string[] = [];
const realLog = console.log;
let capture: Capture;

beforeAll(async () => {
  console.log = (...args: unknown[]): void => {
    printed.push(format(...args));
  };
  // Imported after the swap: the module keeps the console methods it found as the worker's output.
  vi.resetModules();
  capture = await import('../../src/logs/console-capture.js');
  capture.installConsoleCapture();
});

afterAll(() => {
  console.log = realLog;
});

function target(): { lines: string[]; consoleLine: (level: LogLevel, text: string) => void } {
  const lines: string[] = [];
  return { lines, consoleLine: (level, text) => lines.push(`${level} ${text}`) };
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

describe('console capture', () => {
  it('keeps capturing a running task when another settles, and sends a settled task\u2019s stray line to the worker\u2019s output', async () => {
    const a = target();
    const b = target();
    const bGoesOn = gate();
    const strayFromA = gate();
    const runA = capture.runCaptured(a, async () => {
      console.log('a before');
      await Promise.resolve();
      // A callback the function leaves behind: it runs after the function has settled.
      void strayFromA.wait.then(() => console.log('a stray'));
      return 'a';
    });
    const runB = capture.runCaptured(b, async () => {
      console.log('b before');
      await bGoesOn.wait;
      console.log('b after a settled');
      await new Promise((resolve) => setTimeout(resolve, 5));
      console.log('b after a timer');
      return 'b';
    });
    expect(await runA).toBe('a');
    strayFromA.open();
    await new Promise((resolve) => setTimeout(resolve, 5));
    bGoesOn.open();
    expect(await runB).toBe('b');
    expect(a.lines).toEqual(['info a before']);
    expect(b.lines).toEqual(['info b before', 'info b after a settled', 'info b after a timer']);
    expect(printed).toContain('a stray');
  });

  it('captures a task started after every task had settled (the storage enabled again), and one whose function throws', async () => {
    printed.length = 0;
    const first = target();
    await capture.runCaptured(first, async () => {
      console.log('first');
    });
    console.log('between tasks');
    const failing = target();
    await expect(
      capture.runCaptured(failing, async () => {
        await Promise.resolve();
        console.log('failing, after an await');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const later = target();
    await capture.runCaptured(later, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      console.log('later, after a timer');
    });
    console.log('after all');
    expect(first.lines).toEqual(['info first']);
    expect(failing.lines).toEqual(['info failing, after an await']);
    expect(later.lines).toEqual(['info later, after a timer']);
    expect(printed).toEqual(['between tasks', 'after all']);
  });
});
