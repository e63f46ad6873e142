/**
 * The smallest complete zk-plan program (the README's quick start): two functions, a plan of four
 * tasks where `sum` fans in three constants, two workers, wait, print the kept result.
 *
 *   npx tsx examples/quick-start.ts
 */
import { FunctionRegistry, ZkPlan, call } from '../src/index.js';
import { runMain, withZooKeeper } from './local-zookeeper.js';

await runMain('quick-start', () =>
  withZooKeeper(async (connect) => {
    const functions = new FunctionRegistry()
      .register('constant', (ctx) => ctx.params[0])
      .register('sum', (_ctx, ...inputs: number[]) => inputs.reduce((a, b) => a + b, 0));

    const zkPlan = await ZkPlan.connect({ connect, functions });
    try {
      const plan = await zkPlan.createPlan('/quick-start');
      const one = await zkPlan.addTask(plan, call('constant', 1));
      const two = await zkPlan.addTask(plan, call('constant', 2));
      const three = await zkPlan.addTask(plan, call('constant', 3));
      const total = await zkPlan.addTask(plan, call('sum'), [one, two, three], {
        keepResult: true,
      });
      await zkPlan.markAsReady(plan);

      const pool = zkPlan.startWorkers('/quick-start', { count: 2 });
      try {
        await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
      } finally {
        await pool.stop();
      }
      const result = await zkPlan.getResult(total);
      console.log(`plan ${plan}: 1 + 2 + 3 = ${String(result)}`);
      if (result !== 6) throw new Error(`expected 6, got ${String(result)}`);
    } finally {
      await zkPlan.close();
    }
  }),
);
