/**
 * A plan's child listing must fit in one ZooKeeper reply (jute.maxbuffer), or no worker can list
 * it: addTasks refuses a batch that would take it past the limit, with PLAN_TOO_LARGE naming the
 * plan and what to do, and writes nothing of that batch (issue 26).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { PlanTooLargeError } from '../../src/errors/plan-errors.js';
import {
  LISTING_BYTES_PER_CHILD,
  LISTING_RESERVE_BYTES,
  maxPlanChildren,
} from '../../src/plan/plan-listing-limit.js';
import { DEFAULTS } from '../../src/config/defaults.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

/** The smallest limit accepted: 64 KiB, room for 2 730 children. */
const SMALL_BUFFER = 64 * 1024;

describe('the limit of a plan’s child listing', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  it('is about 49 500 tasks under ZooKeeper’s default jute.maxbuffer, each child charged as a kept result’s name (21 bytes of a reply)', () => {
    expect(LISTING_BYTES_PER_CHILD).toBe(4 + 'result-0000000001'.length);
    expect(maxPlanChildren(DEFAULTS.juteMaxBufferBytes)).toBe(
      Math.floor((0xfffff - LISTING_RESERVE_BYTES) / 21),
    );
    expect(maxPlanChildren(DEFAULTS.juteMaxBufferBytes)).toBeGreaterThan(49_000);
    expect(maxPlanChildren(SMALL_BUFFER)).toBe(2_730);
  });

  it('addTasks fills a plan up to the limit, then refuses the batch that would pass it and writes nothing of it', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(
      server,
      'builder',
      new FunctionRegistry().register('f', () => 1),
      {
        juteMaxBufferBytes: SMALL_BUFFER,
      },
    );
    processes.push(proc);
    const plan = await proc.zkPlan.createPlan('/plans');
    const limit = maxPlanChildren(SMALL_BUFFER);
    const others = server.children(plan).length; // the runnable index and the history
    const fill = limit - others - 1; // the batch adds a builder node beside its tasks
    await proc.zkPlan.addTasks(
      plan,
      Array.from({ length: fill }, (_, i) => ({ task: call('f', i) })),
    );
    const before = server.children(plan).length;
    expect(before).toBeLessThanOrEqual(limit);

    const refused = proc.zkPlan.addTasks(plan, [
      { task: call('f', 'a') },
      { task: call('f', 'b') },
    ]);
    await expect(refused).rejects.toBeInstanceOf(PlanTooLargeError);
    await expect(refused).rejects.toMatchObject({
      code: 'PLAN_TOO_LARGE',
      path: plan,
      limit,
      message: expect.stringMatching(
        /Java clients.*sub-plans.*juteMaxBufferBytes.*--jute-max-buffer-bytes/,
      ),
    });
    expect(server.children(plan).length).toBe(before);
    await expect(proc.zkPlan.addTask(plan, call('f', 'c'))).rejects.toMatchObject({
      code: 'PLAN_TOO_LARGE',
    });
  });

  it('refuses a juteMaxBufferBytes that is not a whole number of bytes of at least 64 KiB', () => {
    const server = new MemoryZooKeeper();
    for (const bad of [1_000, 65_535.5, '1048575', -1])
      expect(() =>
        memoryProcess(server, `bad-${String(bad)}`, new FunctionRegistry(), {
          juteMaxBufferBytes: bad as number,
        }),
      ).toThrow(/juteMaxBufferBytes/);
  });
});
