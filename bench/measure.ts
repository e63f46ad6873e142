/**
 * One run of one workload at one setting: build the plan, start it, wait for it, and measure the
 * makespan, the hops (from when a task's last input ended to when it started), the writes (counted
 * by the bench's client when the loops run in its own process, and by the server's transaction id
 * for every setting) and what the completed plan still holds in ZooKeeper.
 */
import { writeFileSync } from 'node:fs';
import { FunctionRegistry, ZkPlan, call, type TaskToAdd } from '../src/index.js';
import { quantile } from './stats.js';
import { epochNow, readTimings, type StepTiming } from './step-timings.js';
import { stepFunction } from './step-functions.js';
import { idealSleepMakespan, type Workload } from './workloads.js';

/** Where the worker loops run: in the bench's own process, or in worker processes it started. */
export interface Setting {
  readonly name: string;
  /** 0: the bench's own process runs the loops. */
  readonly processes: number;
  readonly loops: (workload: Workload) => number;
  /** Shown beside the figures: a tuned setting is labelled as such. */
  readonly label: string;
}

export interface Sample {
  readonly buildMs: number;
  readonly makespanMs: number;
  readonly tasksPerSecond: number;
  readonly hopP50: number;
  readonly hopP99: number;
  /** Writes the bench's own client sent, per task (NaN when the loops run in other processes). */
  readonly writesPerTask: number;
  readonly readsPerTask: number;
  /** Write transactions the server applied while the plan was built and run, per task (every client). */
  readonly txnsPerTask: number;
  /** Makespan ÷ ideal: the sleep workloads' critical path or spread; the others' writes at the ceiling. */
  readonly ratio: number;
  readonly keptBytesPerTask: number;
  readonly keptNodesPerTask: number;
  /** Where a hop's time goes (p50s, ms), when the loops run in the bench's own process and the workload has hops. */
  readonly hopParts?: HopParts;
}

/**
 * A hop split at the worker's events: from the producer's function end to its `task:completed`
 * (its result write, the hand-on to its dependents, its deletion), from there to the dependent's
 * `task:claimed` (noticing it became runnable, and the claim), and from there to its
 * `task:started` (reading its definition and inputs). The parts are p50s of each, so they need not
 * add up to the hop's p50; the second may be negative, as a dependent can be claimed once its input
 * is handed on, before the producer's node is deleted.
 */
export interface HopParts {
  readonly finishP50: number;
  readonly noticeAndClaimP50: number;
  readonly readP50: number;
}

/** When each task of the bench's own loops was claimed, started and completed (epoch ms), by path. */
interface EventTimes {
  readonly claimed: Map<string, number>;
  readonly started: Map<string, number>;
  readonly completed: Map<string, number>;
}

function listenToTaskEvents(zkPlan: ZkPlan): EventTimes {
  const times: EventTimes = { claimed: new Map(), started: new Map(), completed: new Map() };
  zkPlan.on('task:claimed', ({ task }) => times.claimed.set(task, epochNow()));
  zkPlan.on('task:started', ({ task }) => times.started.set(task, epochNow()));
  zkPlan.on('task:completed', ({ task }) => times.completed.set(task, epochNow()));
  return times;
}

function hopPartsOf(
  args: readonly number[][],
  paths: readonly string[],
  timings: ReadonlyMap<number, StepTiming>,
  times: EventTimes,
): HopParts | undefined {
  const finish: number[] = [];
  const noticeAndClaim: number[] = [];
  const read: number[] = [];
  args.forEach((inputs, i) => {
    if (inputs.length === 0) return;
    // The input that ended last is the one the task waited for.
    const last = inputs.reduce((a, b) =>
      (timings.get(a)?.end ?? 0) >= (timings.get(b)?.end ?? 0) ? a : b,
    );
    const producerEnd = timings.get(last)?.end;
    const producerCompleted = times.completed.get(paths[last] as string);
    const claimed = times.claimed.get(paths[i] as string);
    const started = times.started.get(paths[i] as string);
    if ([producerEnd, producerCompleted, claimed, started].includes(undefined)) return;
    finish.push((producerCompleted as number) - (producerEnd as number));
    noticeAndClaim.push((claimed as number) - (producerCompleted as number));
    read.push((started as number) - (claimed as number));
  });
  if (finish.length === 0) return undefined;
  return {
    finishP50: quantile(finish, 0.5),
    noticeAndClaimP50: quantile(noticeAndClaim, 0.5),
    readP50: quantile(read, 0.5),
  };
}

const ZXID_MARK = '/bench-zxid';

/** The server's last transaction id: a write of a marker node (itself one transaction). */
async function lastZxid(zk: ZkPlan['zk']): Promise<number> {
  return (await zk.setData(ZXID_MARK, null)).mzxid;
}

/** The data bytes and the znodes of a subtree (its root included). */
async function subtreeSize(
  zk: ZkPlan['zk'],
  path: string,
): Promise<{ bytes: number; nodes: number }> {
  const [node, listing] = await Promise.all([zk.getData(path), zk.getChildren(path)]);
  const below = await Promise.all(
    listing.children.map((child) => subtreeSize(zk, `${path}/${child}`)),
  );
  return below.reduce(
    (sum, part) => ({ bytes: sum.bytes + part.bytes, nodes: sum.nodes + part.nodes }),
    { bytes: node.data?.length ?? 0, nodes: 1 },
  );
}

function hopsOf(args: readonly number[][], timings: ReadonlyMap<number, StepTiming>): number[] {
  return args.flatMap((inputs, i) => {
    const start = timings.get(i)?.start;
    if (inputs.length === 0 || start === undefined) return [];
    return [start - Math.max(...inputs.map((input) => timings.get(input)?.end ?? 0))];
  });
}

export interface RunContext {
  readonly connect: string;
  readonly setting: Setting;
  /** The parent the setting's worker processes follow (processes > 0). */
  readonly parent: string;
  /** The timings files of the setting's worker processes. */
  readonly timingFiles: readonly string[];
  readonly pipelinedPerSecond: number;
  readonly history: boolean;
}

export async function runOnce(context: RunContext, workload: Workload): Promise<Sample> {
  const args = workload.build();
  const inProcess = context.setting.processes === 0;
  const loops = context.setting.loops(workload);
  const memoryTimings = new Map<number, StepTiming>();
  for (const file of context.timingFiles) writeFileSync(file, '');
  const functions = new FunctionRegistry().register(
    'step',
    stepFunction((index, timing) => memoryTimings.set(index, timing)),
  );
  const zkPlan = await ZkPlan.connect({ connect: context.connect, functions });
  const parent = inProcess ? `/bench/${workload.name}` : context.parent;
  try {
    await zkPlan.zk.ensurePath(ZXID_MARK);
    const plan = await zkPlan.createPlan(parent, { history: context.history });
    const batch: TaskToAdd[] = args.map((inputs, i) => ({
      task: call('step', i, workload.taskMs),
      args: inputs,
    }));
    const events = inProcess ? listenToTaskEvents(zkPlan) : undefined;
    const zxidBefore = await lastZxid(zkPlan.zk);
    const before = { ...zkPlan.zk.counts };
    const buildStarted = performance.now();
    const paths = await zkPlan.addTasks(plan, batch);
    const buildMs = performance.now() - buildStarted;
    const afterBuild = { ...zkPlan.zk.counts };
    const pool = inProcess ? zkPlan.startWorkers(parent, { count: loops }) : undefined;
    const started = performance.now();
    await zkPlan.markAsReady(plan);
    const afterReady = { ...zkPlan.zk.counts }; // markAsReady and createPlan are per plan, not per task
    await zkPlan.waitForCompletion(plan, { timeoutMs: 600_000 });
    const makespanMs = performance.now() - started;
    await pool?.stop();
    const zxidAfter = await lastZxid(zkPlan.zk);
    const tasks = args.length;
    const writes =
      afterBuild.writes - before.writes + (zkPlan.zk.counts.writes - afterReady.writes);
    const reads = afterBuild.reads - before.reads + (zkPlan.zk.counts.reads - afterReady.reads);
    const timings = inProcess ? memoryTimings : mergedTimings(context.timingFiles);
    const hops = hopsOf(args, timings);
    const txnsPerTask = (zxidAfter - zxidBefore - 1) / tasks;
    const writesPerTask = inProcess ? writes / tasks : Number.NaN;
    const ideal =
      workload.taskMs > 0
        ? idealSleepMakespan(args, workload.taskMs, loops * Math.max(1, context.setting.processes))
        : ((txnsPerTask * tasks) / context.pipelinedPerSecond) * 1000;
    const kept = await subtreeSize(zkPlan.zk, plan);
    await zkPlan.zk.deleteRecursive(plan);
    return {
      buildMs,
      makespanMs,
      tasksPerSecond: tasks / (makespanMs / 1000),
      hopP50: quantile(hops, 0.5),
      hopP99: quantile(hops, 0.99),
      writesPerTask,
      readsPerTask: inProcess ? reads / tasks : Number.NaN,
      txnsPerTask,
      ratio: makespanMs / ideal,
      keptBytesPerTask: kept.bytes / tasks,
      keptNodesPerTask: kept.nodes / tasks,
      ...(events !== undefined ? { hopParts: hopPartsOf(args, paths, timings, events) } : {}),
    };
  } finally {
    await zkPlan.close();
  }
}

function mergedTimings(files: readonly string[]): Map<number, StepTiming> {
  const merged = new Map<number, StepTiming>();
  for (const file of files)
    for (const [index, timing] of readTimings(file)) merged.set(index, timing);
  return merged;
}
