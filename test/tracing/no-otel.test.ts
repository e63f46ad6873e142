/**
 * Without `@opentelemetry/api` (an optional peer dependency), simulated by a module mock whose import
 * fails as a missing package's does: nothing throws, no span is made, and plans run as before, their
 * nodes storing no trace context.
 */
import { describe, expect, it, vi } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { loadOtelApi, otelApi } from '../../src/tracing/otel-api.js';
import {
  startAttemptSpan,
  startJobRunSpan,
  startPlanSpan,
  startTickSpan,
} from '../../src/tracing/tracing.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';

vi.mock('@opentelemetry/api', () => {
  throw new Error("Cannot find package '@opentelemetry/api' imported from src/tracing/otel-api.ts");
});

describe('without @opentelemetry/api', () => {
  it('loads nothing, once, and makes no span', async () => {
    await expect(loadOtelApi()).resolves.toBe(undefined);
    expect(otelApi()).toBe(undefined);
    expect(startPlanSpan({ parent: '/plans', name: 'nightly' })).toBe(undefined);
    expect(
      startAttemptSpan(
        {
          plan: '/plans/plan-0000000000',
          task: '/plans/plan-0000000000/task-0000000000',
          workerId: 'w',
        },
        { fn: 'value', attempt: 1 },
        undefined,
      ),
    ).toBe(undefined);
    expect(
      startTickSpan({ schedules: '/s', schedule: 'pulse', tick: 't', kind: 'cron', plan: '/p/x' }),
    ).toBe(undefined);
    expect(
      startJobRunSpan({
        jobs: '/jobs',
        job: 'sync',
        workerId: 'w',
        items: [{ id: 'a' }],
        cause: 'tick',
        attempt: 1,
      }),
    ).toBe(undefined);
  });

  it('runs a plan whose node stores no trace context', async () => {
    const functions = new FunctionRegistry().register(
      'double',
      (ctx: TaskContext<unknown[]>) => Number(ctx.params[0]) * 2,
    );
    const proc = memoryProcess(new MemoryZooKeeper(), 'p', functions);
    try {
      const plan = await proc.zkPlan.createPlan('/plans', { name: 'untraced' });
      const task = await proc.zkPlan.addTask(plan, call('double', 21), [], { keepResult: true });
      await proc.zkPlan.markAsReady(plan);
      const pool = proc.zkPlan.startWorkers('/plans', { count: 1, backoff: FAST_BACKOFF });
      await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
      await pool.stop();
      expect(await proc.zkPlan.getResult(task)).toBe(42);
      const node = await proc.zk.getData(plan);
      const stored = decodeValue(plan, node.data!) as Record<string, unknown>;
      expect(stored['name']).toBe('untraced');
      expect('trace' in stored).toBe(false);
    } finally {
      await proc.zkPlan.close();
    }
  });
});
