/**
 * `npm run soak`: runs 10 000 tasks through one worker process (4 loops) in plans of 1 000, deleting
 * each plan after it completes, and prints after each plan the heap in use (after a full GC), the
 * listeners on the client and the pool's signals, and what the workers remember. Flat columns mean
 * nothing grows with the number of tasks run.
 *
 *   npm run soak        (SOAK_TASKS=20000 for more)
 */
import { FunctionRegistry, ZkPlan, call } from '../src/index.js';
import { startZooKeeper } from '../src/testing/index.js';

const TOTAL = Number(process.env['SOAK_TASKS'] ?? 10_000);
const PER_PLAN = 1_000;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run soak does)');

const server = await startZooKeeper();
const zkPlan = await ZkPlan.connect({
  connect: server.connectString,
  functions: new FunctionRegistry().register('one', () => 1),
});
const parent = '/soak';
const pool = zkPlan.startWorkers(parent, { count: 4 });
console.log(
  '| tasks run | heap MiB | client listeners | pool signal listeners | tracked plans | done remembered | settings remembered |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
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
  gc();
  const footprint = zkPlan.footprint();
  const heapMiB = (process.memoryUsage().heapUsed / 2 ** 20).toFixed(1);
  console.log(
    `| ${run} | ${heapMiB} | ${footprint.clientListeners} | ${footprint.poolSignalListeners} | ${footprint.plans} | ${footprint.done} | ${footprint.rememberedSettings} |`,
  );
}
await pool.stop();
await zkPlan.close();
await server.stop();
