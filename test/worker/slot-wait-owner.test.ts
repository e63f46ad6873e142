/**
 * A task with a concurrency key takes a slot after it is claimed: a few round trips during which a
 * cancel or a deletion of its plan may delete the task, its owner node with it. A plan read half-way
 * through its deletion (its control node already gone, the plan node not yet) looks neither halted
 * nor gone, so the worker reads its owner node before the function starts. Found by the plan
 * simulation (seed 894 at the time): a task started, without an owner node, after its plan's
 * cancel resolved.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { ConcurrencyLimits } from '../../src/limits/concurrency-limits.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';

const PARENT = '/slot-wait';
const SLOTS = `${PARENT}/zk-plan-limits/k`;

describe('a task whose owner node goes while it takes a slot of its concurrency key', () => {
  it('does not start, and gives its slot back', async () => {
    const server = new MemoryZooKeeper();
    const admin = server.connect({ name: 'admin' });
    await new ConcurrencyLimits(admin).setLimit(PARENT, 'k', 1);
    const runs: string[] = [];
    const worker = memoryProcess(
      server,
      'worker',
      new FunctionRegistry().register('limited', () => {
        runs.push('ran');
        return 1;
      }),
    );
    const { zkPlan, zk } = worker;
    const plan = await zkPlan.createPlan(PARENT);
    const task = await zkPlan.addTask(plan, call('limited'), [], { concurrencyKey: 'k' });
    const started: string[] = [];
    zkPlan.on('task:started', (event) => started.push(event.task));
    // Right before the worker creates its slot, the task goes with its owner node, as a cancel or a
    // deletion of the plan takes it; the plan itself stays, not halted.
    let deleted = false;
    const createOriginal = zk.create.bind(zk);
    zk.create = async (path, ...rest) => {
      if (!deleted && path.startsWith(`${SLOTS}/`)) {
        expect(server.exists(`${task}/owner`)).toBe(true); // claimed by the worker
        deleted = true;
        await admin.deleteRecursive(task);
      }
      return await createOriginal(path, ...rest);
    };
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    expect(deleted).toBe(true);
    expect({ runs, started }).toEqual({ runs: [], started: [] });
    expect(server.children(SLOTS)).toEqual([]);
    await zkPlan.close();
  });
});
