/**
 * The bench's workloads: a plan shape each, and the loop count the bench used to tune per workload
 * (kept as the "tuned" setting, so that figures stay comparable with docs/performance.md's).
 */
import { pickDistinct, prng } from '../examples/seeded-random.js';

export interface Workload {
  readonly name: string;
  /** Worker loops in one process when the bench tunes each workload (the "tuned" setting). */
  readonly tunedLoops: number;
  /** How long each task sleeps. */
  readonly taskMs: number;
  /** Tasks in dependency order: the args of task i are indices of earlier tasks. */
  readonly build: () => number[][];
}

export const WORKLOADS: readonly Workload[] = [
  {
    name: 'seed-stress',
    tunedLoops: 10,
    taskMs: 100,
    build: () => {
      const random = prng(20_240_517);
      return Array.from({ length: 100 }, (_, i) => (i < 10 ? [] : pickDistinct(i, 10, random)));
    },
  },
  {
    name: 'chain-200',
    tunedLoops: 4,
    taskMs: 0,
    build: () => Array.from({ length: 200 }, (_, i) => (i === 0 ? [] : [i - 1])),
  },
  {
    name: 'fanin-1000',
    tunedLoops: 32,
    taskMs: 0,
    build: () => [
      ...Array.from({ length: 1000 }, () => []),
      Array.from({ length: 1000 }, (_, i) => i),
    ],
  },
  {
    name: 'dag-500-k3',
    tunedLoops: 32,
    taskMs: 0,
    build: () => {
      const random = prng(7);
      return Array.from({ length: 500 }, (_, i) => (i < 3 ? [] : pickDistinct(i, 3, random)));
    },
  },
  {
    name: 'wide-10000',
    tunedLoops: 32,
    taskMs: 0,
    build: () => Array.from({ length: 10_000 }, () => []),
  },
];

/** Longest chain of tasks, in tasks. */
export function criticalPath(args: readonly number[][]): number {
  const depth: number[] = [];
  args.forEach(
    (inputs, i) => (depth[i] = 1 + Math.max(0, ...inputs.map((input) => depth[input] ?? 0))),
  );
  return Math.max(...depth);
}

/** The makespan no scheduler can beat: the critical path, or the work spread over every loop. */
export function idealSleepMakespan(
  args: readonly number[][],
  taskMs: number,
  loops: number,
): number {
  return Math.max(criticalPath(args) * taskMs, (args.length * taskMs) / loops);
}
