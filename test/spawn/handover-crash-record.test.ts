/**
 * A crash of the handing-over process right after the continuation's commit marker, before the
 * record gets its paths: the workers complete the batch, and the continued task, done, still names
 * its continuation (read from the marker). Found by a review; in-memory ZooKeeper.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import {
  MemoryZooKeeper,
  type MemoryZkClient,
  type OperationScheduler,
  type ScheduledOperation,
} from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';

const PARENT = '/handover-crash';

class CrashOn implements OperationScheduler {
  victim:
    | { client: MemoryZkClient; when: (op: ScheduledOperation) => boolean; crash: () => void }
    | undefined;
  enqueue(operation: ScheduledOperation): void {
    queueMicrotask(() => {
      const victim = this.victim;
      if (
        victim !== undefined &&
        operation.live &&
        operation.clientName === victim.client.name &&
        victim.when(operation)
      ) {
        this.victim = undefined;
        victim.crash();
        return;
      }
      operation.apply();
    });
  }
}

function registry(): FunctionRegistry {
  return new FunctionRegistry()
    .register('head', (ctx: TaskContext) => ctx.continueWith(call('tail', 21)))
    .register('tail', (ctx: TaskContext<[number]>) => ctx.params[0] * 2)
    .register('report', (_ctx, value: unknown) => value);
}

describe('a crash between the hand-over commit and its record', () => {
  it('the history of the continued task names its continuation', { timeout: 60_000 }, async () => {
    const scheduler = new CrashOn();
    const server = new MemoryZooKeeper({ scheduler });
    const admin = memoryProcess(server, 'admin', registry());
    const plan = await admin.zkPlan.createPlan(PARENT);
    const head = await admin.zkPlan.addTask(plan, call('head'), [], { keepResult: true });
    const report = await admin.zkPlan.addTask(plan, call('report'), [head], { keepResult: true });
    await admin.zkPlan.markAsReady(plan);
    const doomed = memoryProcess(server, 'doomed', registry());
    let crashed = false;
    const crash = new Promise<void>((resolve) => {
      scheduler.victim = {
        client: doomed.zk,
        when: (op) => op.op === 'setData' && op.path.endsWith('/continuation'),
        crash: () => {
          crashed = true;
          const id = doomed.zk.sessionId;
          doomed.zk.crash();
          if (id !== undefined) server.expireSession(id);
          resolve();
        },
      };
    });
    const doomedPool = doomed.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await crash;
    void doomedPool.stop().catch(() => undefined);
    const survivor = memoryProcess(server, 'survivor', registry());
    const pool = survivor.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
    await survivor.zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
    await pool.stop();
    expect(crashed).toBe(true);
    expect(await survivor.zkPlan.getResult(report)).toBe(42);
    const view = await survivor.zkPlan.plans.describe(plan);
    const tail = view.tasks.find((task) => task.fn === 'tail');
    const headView = view.tasks.find((task) => task.task === head);
    expect(headView?.state).toBe('done');
    expect(headView?.continuedBy).toBe(tail?.task);
  });
});
