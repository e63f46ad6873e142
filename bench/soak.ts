/**
 * `npm run soak`: runs 10 000 tasks through one worker process (4 loops) in plans of 1 000, deleting
 * each plan after it completes, and prints after each plan the heap in use (after a full GC), the
 * resident set, the listeners on the client and the pool's signals, and what the workers remember;
 * then the heap and RSS before the first plan and after the last. Flat columns mean nothing grows
 * with the number of tasks run.
 *
 *   npm run soak        (SOAK_TASKS=1000000 for issue 26's million tasks over 1 000 plans; SOAK_EVERY=50 prints every 50th plan)
 */
import { FunctionRegistry, ZkPlan, call } from '../src/index.js';
import { startZooKeeper } from '../src/testing/index.js';

const TOTAL = Number(process.env['SOAK_TASKS'] ?? 10_000);
const PER_PLAN = 1_000;
/** Print a row every this many plans (always the first and the last). */
const EVERY = Number(process.env['SOAK_EVERY'] ?? 1);
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
gc();
const start = process.memoryUsage();
console.log(
  '| tasks run | heap MiB | RSS MiB | client listeners | pool signal listeners | tracked plans | done remembered | settings remembered |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
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
  console.log(
    `| ${run} | ${mib(memory.heapUsed)} | ${mib(memory.rss)} | ${footprint.clientListeners} | ${footprint.poolSignalListeners} | ${footprint.plans} | ${footprint.done} | ${footprint.rememberedSettings} |`,
  );
}
gc();
const end = process.memoryUsage();
console.log(
  `\nbefore the first plan: heap ${mib(start.heapUsed)} MiB, RSS ${mib(start.rss)} MiB; after ${TOTAL} tasks: heap ${mib(end.heapUsed)} MiB, RSS ${mib(end.rss)} MiB`,
);
await pool.stop();
await zkPlan.close();
await server.stop();
