/**
 * Map/reduce over a list known only at run time, with `ctx.spawn` and `ctx.continueWith`:
 *
 *   list-files      lists the day's log files (240 synthetic ones, seeded), spawns a `count-errors`
 *                   task per file, and hands over to a `merge` of their counts
 *   count-errors    counts the error lines of one file by service (one in 20 fails its first try:
 *                   a flaky read, retried by the plan's policy)
 *   merge           adds the counts up: its result becomes list-files' own
 *   report          depends on list-files, and so gets the merged counts
 *   publish         a sub-plan: runs the `publish` spec (render, then archive) as a child plan with
 *                   the merged counts as its param, and completes with its archive's result; no
 *                   worker waits for the child
 *   clean-up        trigger rule `allDone`: runs once list-files, report and publish ended, however they
 *                   ended, and gets their outcomes (it would run after a failure too)
 *   page-on-call    trigger rule `oneFailed`: runs only if one of them failed for good; here
 *                   nothing fails for good, so it is skipped
 *
 * No worker waits for the 240 files: list-files' worker is free as soon as it hands over.
 *
 *   npx tsx examples/map-reduce.ts        (ZOOKEEPER_CONNECT=host:port to use a running ZooKeeper;
 *                                          KEEP_PLAN=1 to leave the plan for `zk-plan show`)
 */
import {
  FunctionRegistry,
  TaskSkippedError,
  ZkPlan,
  call,
  subPlan,
  type InputOutcome,
  type PlanSpec,
  type TaskContext,
} from '../src/index.js';
import { runMain, withZooKeeper } from './local-zookeeper.js';
import { prng } from './seeded-random.js';

const PARENT = '/map-reduce';
const FILES = 240;
const SERVICES = ['api', 'billing', 'search', 'auth'] as const;
const SEED = 20261127;

type Counts = Record<string, number>;

/** The error lines of one synthetic log file, by service: what a real reader would parse. */
function errorsIn(file: number): Counts {
  const random = prng(SEED + file);
  const counts: Counts = {};
  const lines = 200 + Math.floor(random() * 300);
  for (let line = 0; line < lines; line++) {
    if (random() >= 0.03) continue;
    const service = SERVICES[Math.floor(random() * SERVICES.length)] as string;
    counts[service] = (counts[service] ?? 0) + 1;
  }
  return counts;
}

function add(total: Counts, counts: Counts): Counts {
  for (const [service, count] of Object.entries(counts))
    total[service] = (total[service] ?? 0) + count;
  return total;
}

const flakyReadsSeen = new Set<number>();

/** The merged counts as one line, services in order: what `report` prints and `publish` renders. */
function describeCounts(counts: Counts): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([service, count]) => `${service}: ${count}`)
    .join(', ');
}

/** What the `publish` sub-plan runs: render the day's counts, then archive the page. */
const PUBLISH: PlanSpec = {
  name: 'publish',
  tasks: {
    render: { fn: 'render', params: [{ $param: 'counts' }] },
    archive: { fn: 'archive', inputs: ['render'] },
  },
};

const functions = new FunctionRegistry()
  .register('list-files', async (ctx: TaskContext<[string]>) => {
    const day = ctx.params[0];
    const files = Array.from({ length: FILES }, (_, file) => file);
    ctx.log.info(`${files.length} log files for ${day}`);
    const counts = await ctx.spawn(
      files.map((file) => ({ task: call('count-errors', file), key: `count-errors/${file}` })),
    );
    return ctx.continueWith(call('merge'), counts, { key: 'merge' });
  })
  .register('count-errors', (ctx: TaskContext<[number]>) => {
    const file = ctx.params[0];
    if (file % 20 === 7 && !flakyReadsSeen.has(file)) {
      flakyReadsSeen.add(file);
      throw new Error(`reading file ${file} timed out`);
    }
    return errorsIn(file);
  })
  .register('merge', (_ctx, ...counts: Counts[]) => counts.reduce(add, {}))
  .register('report', (_ctx, counts: Counts) => describeCounts(counts))
  .register('render', (ctx: TaskContext<[Counts]>) => `<p>${describeCounts(ctx.params[0])}</p>`)
  .register('archive', (_ctx, page: string) => `archived ${page.length} characters`)
  // A clean-up step: what a real one would remove is the day's scratch files; it reports how its inputs ended.
  .register('clean-up', (ctx, ...inputs: InputOutcome[]) => {
    ctx.log.info(`scratch files of ${String(ctx.params[0])} removed`);
    return inputs.map((input) => input.status).join(',');
  })
  .register('page-on-call', (_ctx, ...inputs: InputOutcome[]) =>
    inputs.flatMap((input) => (input.status === 'failed' ? [input.error.message] : [])),
  );

await runMain('map-reduce', () =>
  withZooKeeper(async (connect) => {
    const zkPlan = await ZkPlan.connect({ connect, functions });
    try {
      const plan = await zkPlan.createPlan(PARENT, {
        name: 'error-counts',
        initialDelayMs: 50,
      });
      const list = await zkPlan.addTask(plan, call('list-files', '2026-11-26'), [], {
        key: 'list-files',
        keepResult: true,
      });
      const report = await zkPlan.addTask(plan, call('report'), [list], {
        key: 'report',
        keepResult: true,
      });
      const publish = await zkPlan.addTask(
        plan,
        subPlan({ spec: PUBLISH, inputs: ['counts'], result: 'archive', checkEveryMs: 100 }),
        [list],
        { key: 'publish', keepResult: true },
      );
      const cleanUp = await zkPlan.addTask(
        plan,
        call('clean-up', '2026-11-26'),
        [list, report, publish],
        {
          key: 'clean-up',
          trigger: 'allDone',
          keepResult: true,
        },
      );
      const pageOnCall = await zkPlan.addTask(plan, call('page-on-call'), [list, report], {
        key: 'page-on-call',
        trigger: 'oneFailed',
        keepResult: true,
      });
      await zkPlan.markAsReady(plan);

      const started = Date.now();
      const pool = zkPlan.startWorkers(PARENT, { count: 8 });
      try {
        await zkPlan.waitForCompletion(plan, { timeoutMs: 120_000 });
      } finally {
        await pool.stop();
      }
      const expected = Array.from({ length: FILES }, (_, file) => errorsIn(file)).reduce(add, {});
      const merged = (await zkPlan.getResult(list)) as Counts;
      const status = await zkPlan.plans.status(plan);
      console.log(
        `plan ${plan} (error-counts): ${status.counts.done} tasks done in ${Date.now() - started} ms`,
      );
      console.log(`report: ${String(await zkPlan.getResult(report))}`);
      if (JSON.stringify(add({}, merged)) !== JSON.stringify(add({}, expected)))
        throw new Error(`merged counts ${JSON.stringify(merged)} ≠ ${JSON.stringify(expected)}`);
      if (status.counts.done !== FILES + 6)
        throw new Error(`expected ${FILES + 6} tasks done, got ${status.counts.done}`);
      const published = await zkPlan.getResult(publish);
      const page = `<p>${describeCounts(expected)}</p>`;
      console.log(
        `publish (a sub-plan, child ${publishedChild(plan, publish)}): ${String(published)}`,
      );
      if (published !== `archived ${page.length} characters`)
        throw new Error(
          `publish returned ${String(published)}, expected archived ${page.length} characters`,
        );
      const cleaned = await zkPlan.getResult(cleanUp);
      console.log(`clean-up (allDone) ran on: ${String(cleaned)}`);
      if (cleaned !== 'succeeded,succeeded,succeeded')
        throw new Error(
          `the clean-up got ${String(cleaned)}, expected succeeded,succeeded,succeeded`,
        );
      const paged = await zkPlan.getResult(pageOnCall).catch((error: unknown) => error);
      if (!(paged instanceof TaskSkippedError))
        throw new Error(`page-on-call (oneFailed) ran although nothing failed: ${String(paged)}`);
      console.log(`page-on-call (oneFailed) skipped: ${paged.reason}`);
      // Deleting the plan deletes its sub-plan's child too.
      if (process.env['KEEP_PLAN'] !== '1') await zkPlan.plans.delete(plan);
    } finally {
      await zkPlan.close();
    }
  }),
);

/** The child plan a sub-plan task makes beside its plan: `<plan>~<task name>`. */
function publishedChild(plan: string, task: string): string {
  return `${plan}~${task.slice(task.lastIndexOf('/') + 1)}`;
}
