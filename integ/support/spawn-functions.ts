/**
 * The task functions of the spawn fault test, loaded by real `zk-plan worker` processes
 * (`--functions integ/support/spawn-functions.ts`). Every run appends its `start` and `end` to the
 * execution log named by ZK_PLAN_FAULT_LOG (the format of execution-log.ts), labelled by where the
 * task sits in the tree, so the test can tell how many tasks each label had.
 *
 * - `map({ at, depth, width, ms })`: a nested map. Spawns `width` children (`map` one level down,
 *   or `leaf` at the bottom) labelled `<at>.<i>`, waits `ms` (so that kills land between its spawn
 *   and its hand-over too), then hands over to a `sum` of them labelled `sum<at>`
 *   (`ctx.continueWith`): its dependents get that sum, the number of leaves below it. Its spawn
 *   call and hand-over are the same in every run.
 * - `leaf({ at, ms })`: waits `ms` (cut short when its signal aborts), returns 1.
 * - `sum({ at })`: adds its inputs: the leaves (or the sums of the maps) below its map.
 */
import { appendFileSync } from 'node:fs';
import { call, type Continuation, type TaskContext } from '../../src/index.js';
import { FAULT_LOG_ENV, type LogEntry } from './execution-log.js';

const logFile = process.env[FAULT_LOG_ENV] ?? '';
if (logFile === '') throw new Error(`${FAULT_LOG_ENV} is not set`);

type Context = TaskContext<unknown[]>;
interface MapParams {
  readonly at: string;
  readonly depth: number;
  readonly width: number;
  readonly ms: number;
}

let serial = 0;

async function execution<T>(ctx: Context, label: string, body: () => Promise<T>): Promise<T> {
  const run = `${process.pid}:${++serial}`;
  const write = (entry: Pick<LogEntry, 'event'> & Partial<Pick<LogEntry, 'result'>>): void => {
    const line: LogEntry = {
      task: ctx.task,
      label,
      workerId: ctx.workerId,
      run,
      pid: process.pid,
      at: Date.now(),
      ...entry,
    };
    appendFileSync(logFile, `${JSON.stringify(line)}\n`);
  };
  write({ event: 'start' });
  const result = await body();
  // A map's hand-over is no value to log: its sum's end says what its dependents get.
  write({ event: 'end', ...(typeof result === 'number' ? { result } : {}) });
  return result;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
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

export default {
  async map(ctx: Context): Promise<Continuation> {
    const { at, depth, width, ms } = ctx.params[0] as MapParams;
    return await execution(ctx, `map${at}`, async () => {
      const children = Array.from({ length: width }, (_, index) => {
        const child = `${at}.${index}`;
        return depth > 1
          ? { task: call('map', { at: child, depth: depth - 1, width, ms }) }
          : { task: call('leaf', { at: child, ms }) };
      });
      const paths = await ctx.spawn(children);
      await pause(ms, ctx.signal);
      return ctx.continueWith(call('sum', { at }), paths, { keepResult: true });
    });
  },

  async leaf(ctx: Context): Promise<number> {
    const { at, ms } = ctx.params[0] as { at: string; ms: number };
    return await execution(ctx, `leaf${at}`, async () => {
      await pause(ms, ctx.signal);
      return 1;
    });
  },

  async sum(ctx: Context, ...inputs: number[]): Promise<number> {
    const { at } = ctx.params[0] as { at: string };
    return await execution(ctx, `sum${at}`, async () =>
      Promise.resolve(inputs.reduce((total, input) => total + input, 0)),
    );
  },
};
