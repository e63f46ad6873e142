/**
 * The parts of `npm run bench` beyond the workloads, each run as its own process after them (its
 * own ZooKeeper, its own memory: a soak's RSS must not carry the workloads'), its output shown as
 * it comes: plan size (bench/size-scale.ts), history (bench/history-scale.ts) and memory over a
 * million tasks (bench/soak.ts). Each hands its targets back through a file (bench/part-result.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESULT_FILE_VARIABLE, readTargets } from './part-result.js';
import type { TargetLine } from './targets.js';

export interface BenchPart {
  /** Its name in BENCH_PARTS. */
  readonly id: string;
  readonly title: string;
  readonly script: string;
  /** Node's own flags for the part's process (the soak forces garbage collections). */
  readonly nodeFlags: readonly string[];
  /** What the part runs when `npm run bench` runs it: issue 26's sizes. */
  readonly env: Readonly<Record<string, string>>;
}

export const PARTS: readonly BenchPart[] = [
  {
    id: 'size',
    title: 'plan size: time per task as one plan grows (bench/size-scale.ts)',
    script: 'bench/size-scale.ts',
    nodeFlags: [],
    env: {},
  },
  {
    id: 'history',
    title: 'history: a worker process starting beside many finished plans (bench/history-scale.ts)',
    script: 'bench/history-scale.ts',
    nodeFlags: [],
    env: {},
  },
  {
    id: 'memory',
    title: 'memory: tasks by the million through one worker process (bench/soak.ts)',
    script: 'bench/soak.ts',
    nodeFlags: ['--expose-gc'],
    env: { SOAK_TASKS: '1000000', SOAK_EVERY: '100' },
  },
];

/**
 * Runs the part in a child process (Node with tsx, as `npm run` does) and resolves with its
 * targets; a part that fails says so in a NOT MET line instead of ending the bench. The caller's
 * environment wins over the part's defaults, so SOAK_TASKS=… still picks a shorter soak.
 */
export async function runPart(part: BenchPart): Promise<TargetLine[]> {
  const dir = mkdtempSync(join(tmpdir(), 'zk-plan-bench-part-'));
  const resultFile = join(dir, 'targets.json');
  try {
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [...part.nodeFlags, '--import', 'tsx', part.script], {
        stdio: 'inherit',
        env: { ...part.env, ...process.env, [RESULT_FILE_VARIABLE]: resultFile },
      });
      child.once('error', reject);
      child.once('exit', resolve);
    });
    const targets = readTargets(resultFile, part.id);
    return exitCode === 0
      ? targets
      : [
          ...targets,
          { target: `${part.id}: the part's run`, figure: `exit code ${exitCode}`, met: false },
        ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
