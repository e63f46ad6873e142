/**
 * A hand-over whose claim is aborted (a pause with abortRunning) while the continuation's batch
 * commits: from the commit on, the batch is completed whatever becomes of the claim (the record gets
 * its paths, the continuation is made ready), so the task that handed over does not wait for ever on
 * an unready continuation of a live builder. Found by a review; in-memory ZooKeeper.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import {
  MemoryZooKeeper,
  type OperationScheduler,
  type ScheduledOperation,
} from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause } from '../support/memory-plan.js';

const PARENT = '/handover-abort';
const WRITES = new Set(['create', 'setData', 'delete']);

/** Holds the victim's writes from its first batch-marker create on, until release(). */
class GateScheduler implements OperationScheduler {
  armed = false;
  gated = false;
  readonly held: ScheduledOperation[] = [];
  onGate: () => void = () => undefined;
  constructor(private readonly victim: string) {}
  enqueue(operation: ScheduledOperation): void {
    queueMicrotask(() => {
      if (operation.clientName === this.victim && WRITES.has(operation.op)) {
        const marker = operation.op === 'create' && /\/batch-[^/]*$/.test(operation.path);
        if (this.gated || (this.armed && marker)) {
          if (!this.gated) {
            this.gated = true;
            this.onGate();
          }
          this.held.push(operation);
          return;
        }
      }
      operation.apply();
    });
  }
  release(): void {
    this.gated = false;
    this.armed = false;
    for (const operation of this.held.splice(0)) operation.apply();
  }
}

function registry(): FunctionRegistry {
  return new FunctionRegistry()
    .register('head', (ctx: TaskContext) => ctx.continueWith(call('tail', 21)))
    .register('tail', (ctx: TaskContext<[number]>) => ctx.params[0] * 2)
    .register('report', (_ctx, value: unknown) => value);
}

describe('a hand-over aborted between its commit and its record', () => {
  it(
    'pause with abortRunning while the hand-over commits, then resume: the plan completes',
    { timeout: 30_000 },
    async () => {
      const scheduler = new GateScheduler('w');
      const server = new MemoryZooKeeper({ scheduler });
      const admin = memoryProcess(server, 'admin', registry());
      const worker = memoryProcess(server, 'w', registry());
      const plan = await admin.zkPlan.createPlan(PARENT);
      const head = await admin.zkPlan.addTask(plan, call('head'), [], { keepResult: true });
      const report = await admin.zkPlan.addTask(plan, call('report'), [head], { keepResult: true });
      await admin.zkPlan.markAsReady(plan);
      const gate = new Promise<void>((resolve) => {
        scheduler.onGate = resolve;
      });
      scheduler.armed = true;
      const pool = worker.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
      await gate; // the hand-over's marker is on its way
      void admin.zkPlan.control.pause(plan, { abortRunning: true });
      await pause(300); // the worker's plan watch fires, the claim's signal is aborted
      scheduler.release();
      await pause(300);
      await admin.zkPlan.control.resume(plan);
      const outcome = await admin.zkPlan.waitForCompletion(plan, { timeoutMs: 15_000 }).then(
        () => 'completed',
        (error: unknown) => String(error),
      );
      const dump: string[] = [];
      for (const name of (await admin.zk.getChildren(plan)).children.sort()) {
        dump.push(name);
        if (name.startsWith('task-'))
          for (const child of (await admin.zk.getChildren(`${plan}/${name}`)).children.sort())
            dump.push(`  ${name}/${child}`);
      }
      await pool.stop();
      expect(outcome).toBe('completed');
      expect(await admin.zkPlan.getResult(report)).toBe(42);
    },
  );
});
