/**
 * Review: a done sub-plan task with inputs is recreated by import/rerun as a task with a preset
 * result and no args; PlanWriter.prepare checks `inputs` against args for it too, and refuses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, type TaskContext } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
});
const DAY = { tasks: { load: { fn: 'load', params: [{ $param: 'day' }] } } };

async function completedParent(): Promise<{ p: MemoryProcess; plan: string }> {
  const p = memoryProcess(
    new MemoryZooKeeper(),
    'w',
    new FunctionRegistry()
      .register('pick', () => 4)
      .register('load', (ctx: TaskContext<[number]>) => ctx.params[0] * 10)
      .register('report', (_ctx, x: number) => `total ${x}`),
  );
  open.push(p);
  p.zkPlan.startWorkers('/plans', { count: 2, backoff: FAST_BACKOFF });
  const { plan } = await p.zkPlan.submitPlan('/plans', {
    tasks: {
      day: { fn: 'pick' },
      sub: {
        fn: 'zk-plan:sub-plan',
        params: [{ spec: DAY, inputs: ['day'], result: 'load', checkEveryMs: 10 }],
        inputs: ['day'],
      },
      report: { fn: 'report', inputs: ['sub'] },
    },
  });
  await p.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
  return { p, plan };
}

describe('review: export/import/rerun of a parent with a done sub-plan task', () => {
  it('imports its snapshot', async () => {
    const { p, plan } = await completedParent();
    const snapshot = await p.zkPlan.snapshots.export(plan);
    // InvalidArgumentError: a sub-plan task added to plan … has 0 input(s) and names 1 in inputs
    const imported = await p.zkPlan.snapshots.import('/plans', snapshot);
    await p.zkPlan.waitForCompletion(imported.plan, { timeoutMs: 5_000 });
  });

  it('reruns it from a task after the sub-plan task', async () => {
    const { p, plan } = await completedParent();
    const rerun = await p.zkPlan.snapshots.rerun(plan, { from: 'report' });
    await p.zkPlan.waitForCompletion(rerun.plan, { timeoutMs: 5_000 });
    expect(await p.zkPlan.getResult(rerun.tasks['report'] as string)).toBe('total 40');
  });
});
