/**
 * Task functions of the task-log tests, loaded by real `zk-plan worker` processes
 * (`--functions integ/support/log-functions.ts`, under tsx).
 *
 * - `chatter({ lines, label })`: logs `lines` lines (odd ones with ctx.log, even ones with
 *   console.log), then `<label> marker` after a second, then waits until its signal aborts (a
 *   run the test kills).
 * - `ticker({ lines, everyMs })`: logs `tick i` every `everyMs`, `lines` times, then returns.
 */
import type { TaskContext } from '../../src/index.js';

type Context = TaskContext<unknown[]>;

interface ChatterParams {
  readonly lines?: number;
  readonly label?: string;
}

interface TickerParams {
  readonly lines?: number;
  readonly everyMs?: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

export async function chatter(ctx: Context): Promise<string> {
  const { lines = 10, label = 'chatter' } = (ctx.params[0] ?? {}) as ChatterParams;
  for (let i = 1; i <= lines; i++) {
    if (i % 2 === 1) ctx.log.info(`${label} line ${i}`, { i });
    else console.log(`${label} line ${i}`);
  }
  await sleep(1_000, ctx.signal);
  ctx.log.warn(`${label} marker`);
  await new Promise<void>((resolve) =>
    ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  return label;
}

export async function ticker(ctx: Context): Promise<number> {
  const { lines = 5, everyMs = 200 } = (ctx.params[0] ?? {}) as TickerParams;
  for (let i = 1; i <= lines; i++) {
    ctx.log.info(`tick ${i}`);
    await sleep(everyMs, ctx.signal);
  }
  return lines;
}

export const functions = { chatter, ticker };
