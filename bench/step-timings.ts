/**
 * When each bench task ran, across processes: `step` appends `<index> <start> <end>` (epoch
 * milliseconds with microseconds, from performance.timeOrigin) to the file named by
 * BENCH_TIMINGS_FILE, or keeps them in memory when the bench runs its loops in its own process.
 */
import { appendFileSync, readFileSync } from 'node:fs';

export const TIMINGS_FILE_ENV = 'BENCH_TIMINGS_FILE';

export interface StepTiming {
  readonly start: number;
  readonly end: number;
}

/** Epoch milliseconds with sub-millisecond precision, comparable across processes on one machine. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** The timings a file holds, by task index; a later line for an index (a task run again) wins. */
export function readTimings(file: string): Map<number, StepTiming> {
  const timings = new Map<number, StepTiming>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return timings;
  }
  for (const line of text.split('\n')) {
    const [index, start, end] = line.split(' ').map(Number);
    if (index === undefined || start === undefined || end === undefined) continue;
    if (![index, start, end].every(Number.isFinite)) continue;
    timings.set(index, { start, end });
  }
  return timings;
}

export function appendTiming(file: string, index: number, timing: StepTiming): void {
  appendFileSync(file, `${index} ${timing.start.toFixed(3)} ${timing.end.toFixed(3)}\n`);
}
