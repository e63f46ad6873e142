/**
 * `npm run soak`: runs 10 000 tasks through one worker process (4 loops) in plans of 1 000, deleting
 * each plan after it completes, and prints after each plan the heap in use (after a full GC), the
 * resident set, the memory V8 keeps outside its heap (`external`: buffers and native objects it
 * tracks), the watches the server holds for the session (a watch that never fires stays on both
 * the server and the native client until the session ends), the listeners on the client and the
 * pool's signals, and what the workers remember; then the heap and RSS before the first plan and
 * after the last. Flat columns mean nothing grows with the number of tasks run.
 *
 * Its verdict (issue 26: flat memory over a million tasks) looks at the second half of the run,
 * after everything that is loaded once has been: the least-squares slope of the heap, and of the
 * RSS, over the rows printed there, as growth per million tasks, must stay within 5 % of the
 * level. A leak of a few bytes a task shows there; the first plan's loading and the allocator's
 * ups and downs do not.
 *
 *   npm run soak        (SOAK_TASKS=1000000 for issue 26's million tasks over 1 000 plans; SOAK_EVERY=50 prints every 50th plan)
 */
import { FunctionRegistry, ZkPlan, call } from '../src/index.js';
import { startZooKeeper } from '../src/testing/index.js';
import { fourLetterWord } from '../src/local-zookeeper/four-letter-word.js';
import { reportTargets } from './part-result.js';
import type { TargetLine } from './targets.js';

const TOTAL = Number(process.env['SOAK_TASKS'] ?? 10_000);
const PER_PLAN = 1_000;
/** Print a row every this many plans (always the first and the last). */
const EVERY = Number(process.env['SOAK_EVERY'] ?? 1);
/** Growth per million tasks, over the second half, allowed as a share of the level. */
const FLAT_GROWTH_SHARE = 0.05;
/** The least rows in the second half that make a slope worth reading. */
const FEWEST_ROWS = 3;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run soak does)');

const server = await startZooKeeper();
const zkPlan = await ZkPlan.connect({
  connect: server.connectString,
  functions: new FunctionRegistry().register('one', () => 1),
});
const parent = '/soak';
const pool = zkPlan.startWorkers(parent, { count: 4 });
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const [host, port] = server.connectString.split(':') as [string, string];
/** Every watch the server holds (this process has the only session), from `wchs`'s "Total watches:N". */
async function serverWatches(): Promise<number> {
  const summary = await fourLetterWord(host, Number(port), 'wchs', 5_000);
  const total = /Total watches:(\d+)/.exec(summary);
  if (total === null) throw new Error(`unexpected wchs answer: ${summary}`);
  return Number(total[1]);
}
gc();
const start = process.memoryUsage();
console.log(
  '| tasks run | heap MiB | RSS MiB | external MiB | server watches | client listeners | pool signal listeners | tracked plans | done remembered | settings remembered |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
const rows: { tasks: number; heap: number; rss: number }[] = [];
for (let run = PER_PLAN; run <= TOTAL; run += PER_PLAN) {
  const plan = await zkPlan.createPlan(parent);
  await zkPlan.addTasks(
    plan,
    Array.from({ length: PER_PLAN }, () => ({ task: call('one') })),
  );
  await zkPlan.markAsReady(plan);
  await zkPlan.waitForCompletion(plan, { timeoutMs: 120_000 });
  await zkPlan.plans.delete(plan);
  await new Promise((resolve) => setTimeout(resolve, 200)); // the plan's watches report the deletion
  const planNumber = run / PER_PLAN;
  if (planNumber !== 1 && run + PER_PLAN <= TOTAL && planNumber % EVERY !== 0) continue;
  gc();
  const footprint = zkPlan.footprint();
  const memory = process.memoryUsage();
  rows.push({ tasks: run, heap: memory.heapUsed, rss: memory.rss });
  console.log(
    `| ${run} | ${mib(memory.heapUsed)} | ${mib(memory.rss)} | ${mib(memory.external)} | ${await serverWatches()} | ${footprint.clientListeners} | ${footprint.poolSignalListeners} | ${footprint.plans} | ${footprint.done} | ${footprint.rememberedSettings} |`,
  );
}
gc();
const end = process.memoryUsage();
console.log(
  `\nbefore the first plan: heap ${mib(start.heapUsed)} MiB, RSS ${mib(start.rss)} MiB; after ${TOTAL} tasks: heap ${mib(end.heapUsed)} MiB, RSS ${mib(end.rss)} MiB`,
);
console.log('');
reportTargets([flatness('heap after GC', 'heap'), flatness('RSS', 'rss')]);
await pool.stop();
await zkPlan.close();
await server.stop();

/** Whether `measure` stays flat over the second half of the run (see the file comment). */
function flatness(name: string, measure: 'heap' | 'rss'): TargetLine {
  const target = `${name} flat over ${TOTAL} tasks in ${TOTAL / PER_PLAN} plans: second half grows ≤ ${FLAT_GROWTH_SHARE * 100} % of its level per million tasks`;
  const late = rows.filter((row) => row.tasks >= TOTAL / 2);
  if (late.length < FEWEST_ROWS)
    return {
      target,
      figure: `${late.length} rows in the second half, fewer than ${FEWEST_ROWS}: raise SOAK_TASKS or lower SOAK_EVERY`,
      met: false,
    };
  const meanTasks = late.reduce((sum, row) => sum + row.tasks, 0) / late.length;
  const level = late.reduce((sum, row) => sum + row[measure], 0) / late.length;
  const covariance = late.reduce(
    (sum, row) => sum + (row.tasks - meanTasks) * (row[measure] - level),
    0,
  );
  const spread = late.reduce((sum, row) => sum + (row.tasks - meanTasks) ** 2, 0);
  const perMillion = (covariance / spread) * 1_000_000;
  const share = perMillion / level;
  return {
    target,
    figure: `${mib(perMillion)} MiB per million tasks at a level of ${mib(level)} MiB (${(share * 100).toFixed(1)} %)`,
    met: share <= FLAT_GROWTH_SHARE,
  };
}
