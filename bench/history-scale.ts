/**
 * `npm run bench:history`: what 10 000 finished plans under one parent cost a worker process that
 * starts there (issue 26, "scale with history"). Builds the plans (one task each, run to the end,
 * retention off so that they stay), then, in a fresh ZkPlan: how long from connecting until the
 * pool has run a new plan's task, and how many ZooKeeper reads per second the idle pool makes.
 *
 *   npm run bench:history            (HISTORY_PLANS=2000 for a quicker look)
 */
import { FunctionRegistry, ZkPlan, call } from '../src/index.js';
import { startZooKeeper } from '../src/testing/index.js';
import { reportTargets } from './part-result.js';

const PLANS = Number(process.env['HISTORY_PLANS'] ?? 10_000);
const IN_FLIGHT = 200;
/** Windows of reads counted after the start, and their length. */
const IDLE_WINDOWS = 8;
const WINDOW_SECONDS = 5;
const PARENT = '/history-scale';
/** Issue 26: a worker process starts in under 5 s and, idle, makes a handful of reads a second. */
const START_TARGET_MS = 5_000;
const IDLE_READS_TARGET = 10;
const functions = new FunctionRegistry().register('one', () => 1);

async function buildFinishedPlans(connect: string): Promise<number> {
  const started = performance.now();
  const builder = await ZkPlan.connect({ connect, functions });
  const pool = builder.startWorkers(PARENT, { count: 32, retention: false });
  try {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < PLANS) {
        next += 1;
        const plan = await builder.createPlan(PARENT);
        await builder.addTask(plan, call('one'));
        await builder.markAsReady(plan);
        await builder.waitForCompletion(plan, { timeoutMs: 600_000 });
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, () => worker()));
  } finally {
    await pool.stop();
    await builder.close();
  }
  return performance.now() - started;
}

const server = await startZooKeeper({ fsync: true, heapMb: 1024 });
try {
  const buildMs = await buildFinishedPlans(server.connectString);
  console.log(`${PLANS} finished plans under ${PARENT}, built in ${(buildMs / 1000).toFixed(1)} s`);

  const connectStarted = performance.now();
  const zkPlan = await ZkPlan.connect({ connect: server.connectString, functions });
  const pool = zkPlan.startWorkers(PARENT, { count: 10, retention: false });
  try {
    const plan = await zkPlan.createPlan(PARENT);
    await zkPlan.addTask(plan, call('one'));
    await zkPlan.markAsReady(plan);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 600_000 });
    const startMs = performance.now() - connectStarted;
    // The reads of each window after the start: the start's loading first, then what the idle pool costs.
    const windows: string[] = [];
    let readsPerSecond = Number.NaN;
    for (let window = 0; window < IDLE_WINDOWS; window++) {
      const before = zkPlan.zk.counts.reads;
      await new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000));
      readsPerSecond = (zkPlan.zk.counts.reads - before) / WINDOW_SECONDS;
      windows.push(readsPerSecond.toFixed(1));
    }
    console.log(
      `reads/s in each ${WINDOW_SECONDS} s window after the start: ${windows.join(', ')}\n`,
    );
    reportTargets([
      {
        target: `with ${PLANS} finished plans under the parent, a worker process (10 loops) starts, from connect to a new plan's task done, in < ${START_TARGET_MS / 1000} s`,
        figure: `${(startMs / 1000).toFixed(2)} s`,
        met: startMs < START_TARGET_MS,
      },
      {
        target: `with ${PLANS} finished plans, the idle pool reads at most ${IDLE_READS_TARGET}/s (a handful; the last ${WINDOW_SECONDS} s window)`,
        figure: `${readsPerSecond.toFixed(1)} reads/s`,
        met: readsPerSecond <= IDLE_READS_TARGET,
      },
    ]);
  } finally {
    await pool.stop();
    await zkPlan.close();
  }
} finally {
  await server.stop();
}
