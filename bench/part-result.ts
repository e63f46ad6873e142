/**
 * How a bench part run on its own (bench/size-scale.ts, bench/history-scale.ts, bench/soak.ts)
 * hands its targets to `npm run bench`, which runs it as a child process: it writes them as JSON
 * to the file named by BENCH_RESULT_FILE, when that is set.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { TargetLine } from './targets.js';

/** The environment variable naming a part's result file. */
export const RESULT_FILE_VARIABLE = 'BENCH_RESULT_FILE';

/** Prints the part's target lines and writes them for `npm run bench` (when it runs the part). */
export function reportTargets(targets: readonly TargetLine[]): void {
  for (const line of targets) console.log(formatTarget(line));
  const file = process.env[RESULT_FILE_VARIABLE];
  if (file !== undefined) writeFileSync(file, JSON.stringify(targets));
}

/** The target lines a part wrote to `file`; a part that wrote none (it failed) says so as a NOT MET line. */
export function readTargets(file: string, part: string): TargetLine[] {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as TargetLine[];
  } catch {
    return [
      {
        target: `${part}: the part's figures`,
        figure: 'none: the part failed (see its output above)',
        met: false,
      },
    ];
  }
}

/** One target as every part of the bench prints it. */
export function formatTarget(line: TargetLine): string {
  return `  ${line.met ? 'met    ' : 'NOT MET'}  ${line.target}: ${line.figure}`;
}
