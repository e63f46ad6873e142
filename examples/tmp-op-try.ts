import { FunctionRegistry, ZkPlan, call, skip, PermanentError, type InputOutcome } from '../src/index.js';
import { startZooKeeper } from '../src/testing/index.js';
import { writeFileSync } from 'node:fs';

const server = await startZooKeeper();
writeFileSync('/tmp/op/connect', server.connectString);
const functions = new FunctionRegistry()
  .register('extract', (ctx) => { if (ctx.params[0] === 'eu') throw new PermanentError('eu bucket is gone'); if (ctx.params[0] === 'apac') return skip('no new rows in apac today'); return [1, 2, 3]; })
  .register('load', (_ctx, rows: number[]) => rows.length)
  .register('clean-up', (_ctx, ...inputs: InputOutcome[]) => inputs.map((i) => i.status).join(','))
  .register('page', (_ctx, ...inputs: InputOutcome[]) => inputs.filter((i) => i.status === 'failed').length);
const zkPlan = await ZkPlan.connect({ connect: server.connectString, functions });
const plan = await zkPlan.createPlan('/ops', { name: 'regional-load' });
const loads: string[] = [];
const extracts: string[] = [];
for (const region of ['us', 'eu', 'apac']) {
  const e = await zkPlan.addTask(plan, call('extract', region), [], { key: `extract-${region}` });
  extracts.push(e);
  loads.push(await zkPlan.addTask(plan, call('load'), [e], { key: `load-${region}` }));
}
await zkPlan.addTask(plan, call('clean-up'), [...extracts, ...loads], { key: 'clean-up', trigger: 'allDone', keepResult: true });
await zkPlan.addTask(plan, call('page'), [...extracts], { key: 'page-on-call', trigger: 'oneFailed', keepResult: true });
await zkPlan.addTask(plan, call('page'), [...loads], { key: 'all-loaded', trigger: 'anySucceeded' });
await zkPlan.markAsReady(plan);
const pool = zkPlan.startWorkers('/ops', { count: 2 });
await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 }).catch((e) => console.log('wait:', (e as Error).message));
await pool.stop();
console.log('plan', plan);
writeFileSync('/tmp/op/plan', plan);
await zkPlan.close();
// keep the server running for the CLI
await new Promise((r) => setTimeout(r, 600_000));
