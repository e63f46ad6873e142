/**
 * `npm run bench`: zk-plan's dispatch measured against the ZooKeeper ceiling, in one run on one
 * machine. Starts its own standalone ZooKeeper with fsync on (as in production), measures serial
 * create latency and pipelined creates/s, then runs each workload 3 times and prints a markdown
 * table (median, with min–max) and whether each target of issue 4 is met.
 *
 *   npm run bench                 (BENCH_RUNS=1 BENCH_ONLY=chain-200 for a quick look)
 *
 * Plans keep their history (the default); BENCH_HISTORY=off runs them with { history: false }, for
 * the cost of the history records: the writes per task, and the bytes (and znodes) a completed plan
 * still holds per task.
 */
import { cpus } from 'node:os';
import { FunctionRegistry, ZkPlan, call, type TaskToAdd } from '../src/index.js';
import { ZkClient, startZooKeeper } from '../src/testing/index.js';
import { pickDistinct, prng } from '../examples/seeded-random.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const ONLY = process.env['BENCH_ONLY']?.split(',');
const HISTORY = process.env['BENCH_HISTORY'] !== 'off';
/** 10 writes per independent task (see docs/performance.md), and its history record. */
const WRITES_PER_INDEPENDENT_TASK = HISTORY ? 11 : 10;

interface Workload {
  readonly name: string;
  readonly workers: number;
  readonly taskMs: number;
  /** Tasks in dependency order: the args of task i are indices of earlier tasks. */
  readonly build: () => number[][];
}

const WORKLOADS: Workload[] = [
  {
    name: 'seed-stress',
    workers: 10,
    taskMs: 100,
    build: () => {
      const random = prng(20_240_517);
      return Array.from({ length: 100 }, (_, i) => (i < 10 ? [] : pickDistinct(i, 10, random)));
    },
  },
  {
    name: 'chain-200',
    workers: 4,
    taskMs: 0,
    build: () => Array.from({ length: 200 }, (_, i) => (i === 0 ? [] : [i - 1])),
  },
  {
    name: 'fanin-1000',
    workers: 32,
    taskMs: 0,
    build: () => [
      ...Array.from({ length: 1000 }, () => []),
      Array.from({ length: 1000 }, (_, i) => i),
    ],
  },
  {
    name: 'dag-500-k3',
    workers: 32,
    taskMs: 0,
    build: () => {
      const random = prng(7);
      return Array.from({ length: 500 }, (_, i) => (i < 3 ? [] : pickDistinct(i, 3, random)));
    },
  },
  {
    name: 'wide-10000',
    workers: 32,
    taskMs: 0,
    build: () => Array.from({ length: 10_000 }, () => []),
  },
];

interface Sample {
  readonly buildMs: number;
  readonly makespanMs: number;
  readonly tasksPerSecond: number;
  readonly hopP50: number;
  readonly hopP99: number;
  readonly writesPerTask: number;
  readonly readsPerTask: number;
  readonly ratio: number;
  /** What the completed plan still holds in ZooKeeper, per task: data bytes and znodes (its history records, with history). */
  readonly keptBytesPerTask: number;
  readonly keptNodesPerTask: number;
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

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function measureCeiling(
  connect: string,
): Promise<{ serialP50: number; serialP99: number; pipelinedPerSecond: number }> {
  const zk = await ZkClient.connect({
    connect,
    sessionTimeoutMs: 10_000,
    connectTimeoutMs: 10_000,
  });
  try {
    await zk.ensurePath('/ceiling');
    const latencies: number[] = [];
    for (let i = 0; i < 500; i++) {
      const started = performance.now();
      await zk.create(`/ceiling/serial-${i}`);
      latencies.push(performance.now() - started);
    }
    const count = 5_000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: count }, (_, i) => zk.create(`/ceiling/pipelined-${i}`)),
    );
    const pipelinedPerSecond = count / ((performance.now() - started) / 1000);
    await zk.deleteRecursive('/ceiling');
    return {
      serialP50: quantile(latencies, 0.5),
      serialP99: quantile(latencies, 0.99),
      pipelinedPerSecond,
    };
  } finally {
    zk.close();
  }
}

/** Longest chain of tasks, in tasks. */
function criticalPath(args: readonly number[][]): number {
  const depth: number[] = [];
  args.forEach(
    (inputs, i) => (depth[i] = 1 + Math.max(0, ...inputs.map((input) => depth[input] ?? 0))),
  );
  return Math.max(...depth);
}

async function runOnce(
  connect: string,
  workload: Workload,
  ceiling: number,
  run: number,
): Promise<Sample> {
  const args = workload.build();
  const starts = new Map<number, number>();
  const ends = new Map<number, number>();
  const functions = new FunctionRegistry().register('step', async (ctx) => {
    const index = ctx.params[0] as number;
    starts.set(index, performance.now());
    if (workload.taskMs > 0) await new Promise((resolve) => setTimeout(resolve, workload.taskMs));
    ends.set(index, performance.now());
    return index;
  });
  const zkPlan = await ZkPlan.connect({ connect, functions });
  const parent = `/bench/${workload.name}-${run}`;
  try {
    const plan = await zkPlan.createPlan(parent, { history: HISTORY });
    const batch: TaskToAdd[] = args.map((inputs, i) => ({ task: call('step', i), args: inputs }));
    const before = { ...zkPlan.zk.counts };
    const buildStarted = performance.now();
    await zkPlan.addTasks(plan, batch);
    const buildMs = performance.now() - buildStarted;
    const afterBuild = { ...zkPlan.zk.counts };
    const pool = zkPlan.startWorkers(parent, { count: workload.workers });
    const started = performance.now();
    await zkPlan.markAsReady(plan);
    const afterReady = { ...zkPlan.zk.counts }; // markAsReady and createPlan are per plan, not per task
    await zkPlan.waitForCompletion(plan, { timeoutMs: 300_000 });
    const makespanMs = performance.now() - started;
    await pool.stop();
    const writes =
      afterBuild.writes - before.writes + (zkPlan.zk.counts.writes - afterReady.writes);
    const reads = afterBuild.reads - before.reads + (zkPlan.zk.counts.reads - afterReady.reads);
    const hops = args.flatMap((inputs, i) =>
      inputs.length === 0
        ? []
        : [(starts.get(i) ?? 0) - Math.max(...inputs.map((input) => ends.get(input) ?? 0))],
    );
    const tasks = args.length;
    const writesPerTask = writes / tasks;
    const ideal =
      workload.taskMs > 0
        ? Math.max(
            criticalPath(args) * workload.taskMs,
            (tasks * workload.taskMs) / workload.workers,
          )
        : ((writesPerTask * tasks) / ceiling) * 1000;
    const kept = await subtreeSize(zkPlan.zk, plan);
    await zkPlan.zk.deleteRecursive(parent);
    return {
      buildMs,
      makespanMs,
      tasksPerSecond: tasks / (makespanMs / 1000),
      hopP50: quantile(hops, 0.5),
      hopP99: quantile(hops, 0.99),
      writesPerTask,
      readsPerTask: reads / tasks,
      ratio: makespanMs / ideal,
      keptBytesPerTask: kept.bytes / tasks,
      keptNodesPerTask: kept.nodes / tasks,
    };
  } finally {
    await zkPlan.close();
  }
}

function summary(values: readonly number[], digits = 0): string {
  const median = quantile(values, 0.5);
  return `${median.toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}

const server = await startZooKeeper({ fsync: true, heapMb: 1024 });
try {
  const connect = server.connectString;
  const ceiling = await measureCeiling(connect);
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, standalone ZooKeeper 3.8 with fsync on`,
  );
  console.log(
    `ceiling: serial create p50 ${ceiling.serialP50.toFixed(2)} ms, p99 ${ceiling.serialP99.toFixed(2)} ms; pipelined ${Math.round(ceiling.pipelinedPerSecond)} creates/s`,
  );
  console.log(
    `plans ${HISTORY ? 'keep their history (the default)' : 'created with { history: false } (BENCH_HISTORY=off)'}\n`,
  );
  const results = new Map<string, Sample[]>();
  for (const workload of WORKLOADS.filter((w) => !ONLY || ONLY.includes(w.name))) {
    const samples: Sample[] = [];
    for (let run = 0; run < RUNS; run++)
      samples.push(await runOnce(connect, workload, ceiling.pipelinedPerSecond, run));
    results.set(workload.name, samples);
    process.stderr.write(`${workload.name}: done\n`);
  }
  console.log(
    '| workload | loops | build ms | makespan ms | tasks/s | hop p50 ms | hop p99 ms | writes/task | reads/task | × ideal | kept bytes/task | kept znodes/task |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const [name, samples] of results) {
    const workload = WORKLOADS.find((w) => w.name === name) as Workload;
    const col = (pick: (sample: Sample) => number, digits = 0): string =>
      summary(samples.map(pick), digits);
    console.log(
      `| ${name} | ${workload.workers} | ${col((s) => s.buildMs)} | ${col((s) => s.makespanMs)} | ${col((s) => s.tasksPerSecond)} | ${col((s) => s.hopP50, 1)} | ${col((s) => s.hopP99, 1)} | ${col((s) => s.writesPerTask, 2)} | ${col((s) => s.readsPerTask, 2)} | ${col((s) => s.ratio, 2)} | ${col((s) => s.keptBytesPerTask)} | ${col((s) => s.keptNodesPerTask, 2)} |`,
    );
  }
  const median = (name: string, pick: (sample: Sample) => number): number =>
    quantile((results.get(name) ?? []).map(pick), 0.5);
  const checks: [string, boolean | undefined][] = [
    [
      'seed-stress makespan ≤ 1.10 × ideal',
      results.has('seed-stress') ? median('seed-stress', (s) => s.ratio) <= 1.1 : undefined,
    ],
    [
      'chain-200 makespan ≤ 1200 ms',
      results.has('chain-200') ? median('chain-200', (s) => s.makespanMs) <= 1200 : undefined,
    ],
    [
      'chain-200 hop p50 ≤ 4 × serial create p50',
      results.has('chain-200')
        ? median('chain-200', (s) => s.hopP50) <= 4 * ceiling.serialP50
        : undefined,
    ],
    [
      'fanin-1000 makespan ≤ 3000 ms',
      results.has('fanin-1000') ? median('fanin-1000', (s) => s.makespanMs) <= 3000 : undefined,
    ],
    [
      'fanin-1000 build ≤ 1000 ms',
      results.has('fanin-1000') ? median('fanin-1000', (s) => s.buildMs) <= 1000 : undefined,
    ],
    [
      'dag-500-k3 makespan ≤ 3500 ms',
      results.has('dag-500-k3') ? median('dag-500-k3', (s) => s.makespanMs) <= 3500 : undefined,
    ],
    [
      'wide-10000 tasks/s ≥ 80 % of fanin-1000',
      results.has('wide-10000') && results.has('fanin-1000')
        ? median('wide-10000', (s) => s.tasksPerSecond) >=
          0.8 * median('fanin-1000', (s) => s.tasksPerSecond)
        : undefined,
    ],
    [
      // With history, one write more per task: its record.
      `writes per independent task (wide-10000: ${results.has('wide-10000') ? median('wide-10000', (s) => s.writesPerTask).toFixed(4) : '?'}) ≤ ${WRITES_PER_INDEPENDENT_TASK}`,
      results.has('wide-10000')
        ? median('wide-10000', (s) => s.writesPerTask) <= WRITES_PER_INDEPENDENT_TASK
        : undefined,
    ],
  ];
  console.log('\ntargets:');
  for (const [target, met] of checks)
    if (met !== undefined) console.log(`  ${met ? 'met    ' : 'NOT MET'}  ${target}`);
} finally {
  await server.stop();
}
