/**
 * `npm run bench:size`: time per task as one plan grows (issue 26, "scale with size"): plans of
 * 1 000, 10 000 and 100 000 independent tasks, built with addTasks and run by 10 loops in this
 * process, each timed per task. Plans past about 49 500 tasks need a child listing larger than
 * ZooKeeper's default jute.maxbuffer, which Java clients (zkCli.sh, Curator tools) refuse to read;
 * zk-plan's native client reads it, so the bench passes `juteMaxBufferBytes` to allow the largest.
 *
 *   npm run bench:size            (SIZE_TASKS=1000,10000 for a quicker look)
 */
import { FunctionRegistry, ZkPlan, call } from '../src/index.js';
import { startZooKeeper } from '../src/testing/index.js';
import { reportTargets } from './part-result.js';

const SIZES = (process.env['SIZE_TASKS'] ?? '1000,10000,100000').split(',').map(Number);
/** Room for a 100 000-task listing (about 1.9 MB). */
const JUTE_MAX_BUFFER_BYTES = 4 * 1024 * 1024;
const LOOPS = 10;
const BATCH = 10_000;
const WARM_UP_TASKS = 1_000;
/** Issue 26: time per task at every size within this factor of the others. */
const SIZE_SPREAD_TARGET = 1.3;

const server = await startZooKeeper({ fsync: true, heapMb: 2048 });
try {
  const zkPlan = await ZkPlan.connect({
    connect: server.connectString,
    functions: new FunctionRegistry().register('one', () => 1),
    juteMaxBufferBytes: JUTE_MAX_BUFFER_BYTES,
  });
  const parent = '/size-scale';
  const pool = zkPlan.startWorkers(parent, { count: LOOPS });
  /** Builds a plan of `tasks` independent tasks in batches, runs it, deletes it; how long each part took. */
  async function buildAndRun(tasks: number): Promise<{ buildMs: number; runMs: number }> {
    const plan = await zkPlan.createPlan(parent);
    const buildStarted = performance.now();
    for (let added = 0; added < tasks; added += BATCH)
      await zkPlan.addTasks(
        plan,
        Array.from({ length: Math.min(BATCH, tasks - added) }, () => ({ task: call('one') })),
      );
    const buildMs = performance.now() - buildStarted;
    const runStarted = performance.now();
    await zkPlan.markAsReady(plan);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 1_800_000 });
    const runMs = performance.now() - runStarted;
    await zkPlan.plans.delete(plan);
    return { buildMs, runMs };
  }
  const rows: { tasks: number; buildPerTask: number; runPerTask: number }[] = [];
  try {
    // A first plan, not counted: the process's first addTasks and run compile the code they use,
    // which would otherwise be charged to the smallest size alone.
    await buildAndRun(WARM_UP_TASKS);
    process.stderr.write(
      `warm-up: a ${WARM_UP_TASKS}-task plan built and run first, not counted\n`,
    );
    for (const tasks of SIZES) {
      const { buildMs, runMs } = await buildAndRun(tasks);
      rows.push({ tasks, buildPerTask: buildMs / tasks, runPerTask: runMs / tasks });
      process.stderr.write(`${tasks} tasks: done\n`);
    }
  } finally {
    await pool.stop();
    await zkPlan.close();
  }

  console.log(`| tasks in the plan | build ms/task | run ms/task (${LOOPS} loops) |`);
  console.log('| --- | --- | --- |');
  for (const row of rows)
    console.log(`| ${row.tasks} | ${row.buildPerTask.toFixed(3)} | ${row.runPerTask.toFixed(3)} |`);
  const spread = (pick: (row: (typeof rows)[number]) => number): number =>
    Math.max(...rows.map(pick)) / Math.min(...rows.map(pick));
  const sizes = rows.map((row) => row.tasks).join(', ');
  console.log('');
  reportTargets(
    (['build', 'run'] as const).map((part) => {
      const ratio = spread((row) => (part === 'build' ? row.buildPerTask : row.runPerTask));
      return {
        target: `${part} time per task within ${SIZE_SPREAD_TARGET} × across plans of ${sizes} tasks`,
        figure: `${ratio.toFixed(2)} ×`,
        met: ratio <= SIZE_SPREAD_TARGET,
      };
    }),
  );
} finally {
  await server.stop();
}
