/**
 * Tasks of a spec plan are known by their keys: describePlan gives each its key (live and, with a
 * history, done), `zk-plan show` prints a KEY column, and a plan built with addTask has neither.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { renderPlanView } from '../../src/cli/commands/show.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const processes: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function functions(): FunctionRegistry {
  return new FunctionRegistry()
    .register('load', (ctx) => String(ctx.params[0]))
    .register('join', (_ctx, ...inputs: string[]) => inputs.join('+'));
}

describe('task keys', () => {
  it('describePlan names each task of a spec plan by its key, before and after it ran; show prints a KEY column', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'a', functions());
    processes.push(proc);
    const { plan, tasks } = await proc.zkPlan.submitPlan(PARENT, {
      tasks: {
        eu: { fn: 'load', params: ['eu'] },
        us: { fn: 'load', params: ['us'] },
        report: { fn: 'join', inputs: ['eu', 'us'] },
      },
      options: { history: true },
    });
    const before = await proc.zkPlan.plans.describe(plan);
    expect(Object.fromEntries(before.tasks.map((task) => [task.key, task.task]))).toEqual(tasks);
    const table = renderPlanView(before, 200).split('\n');
    expect(table[1]).toMatch(/^KEY\s+TASK\s+STATE/);
    expect(table.slice(2).map((line) => line.split(/\s+/)[0])).toEqual(['eu', 'us', 'report']);

    const pool = proc.zkPlan.startWorkers(PARENT, {
      count: 2,
      backoff: FAST_BACKOFF,
      retention: false,
    });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    const after = await proc.zkPlan.plans.describe(plan);
    expect(after.tasks.map((task) => [task.key, task.state])).toEqual([
      ['eu', 'done'],
      ['us', 'done'],
      ['report', 'done'],
    ]);
  });

  it('a plan built with addTask has no keys and no KEY column', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'a', functions());
    processes.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(plan, call('load', 'eu'));
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.tasks.map((task) => task.key)).toEqual([undefined]);
    expect(renderPlanView(view, 200).split('\n')[1]).toMatch(/^TASK\s+STATE/);
  });
});
