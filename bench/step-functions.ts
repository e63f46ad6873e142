/**
 * The bench's task function, `step(index, sleepMs)`: sleeps (when asked), records when it ran and
 * returns its index. Worker processes load this module with `zk-plan worker --functions` (an object
 * of functions) and record to the file named by BENCH_TIMINGS_FILE; the bench's own loops record in
 * memory.
 */
import type { TaskContext } from '../src/index.js';
import { TIMINGS_FILE_ENV, appendTiming, epochNow, type StepTiming } from './step-timings.js';

export function stepFunction(
  record: (index: number, timing: StepTiming) => void,
): (ctx: TaskContext) => Promise<number> {
  return async (ctx) => {
    const [index, sleepMs] = ctx.params as [number, number];
    const start = epochNow();
    if (sleepMs > 0) await new Promise((resolve) => setTimeout(resolve, sleepMs));
    record(index, { start, end: epochNow() });
    return index;
  };
}

const timingsFile = process.env[TIMINGS_FILE_ENV];

/** What a worker process runs: timings appended to the file the bench reads. */
export const functions = {
  step: stepFunction((index, timing) => {
    if (timingsFile !== undefined) appendTiming(timingsFile, index, timing);
  }),
};
