/**
 * Each task keeps its tries (issue 25, the timeline): the failed ones ride on the `attempts`
 * record's write and are copied into the history record when the task ends, so a task that failed
 * twice and then succeeded shows three tries, in order, each with the worker that ran it; a cancel
 * keeps them too; a forged list costs a reader a bounded amount and breaks no view.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { encodeHistoryRecord, parseHistoryRecord } from '../../src/store/task-history.js';
import {
  MAX_KEPT_TRIES,
  MAX_TRY_LABEL_CHARS,
  MAX_TRY_MESSAGE_CHARS,
  parseFailedTries,
  withFailedTry,
  type FailedTry,
} from '../../src/store/task-tries.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { TaskView } from '../../src/plan/plan-view.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';

describe('the tries of a task', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  it('a task that failed twice then succeeded shows three tries, in order, with the workers that ran them, live and once done', async () => {
    const server = new MemoryZooKeeper();
    const ranBy = new Map<number, string>();
    const functions = (): FunctionRegistry =>
      new FunctionRegistry().register('flaky', (ctx) => {
        ranBy.set(ctx.attempt, ctx.workerId);
        if (ctx.attempt < 3)
          throw Object.assign(new Error(`try ${ctx.attempt} broke`), { code: 'FLAKY' });
        return ctx.attempt;
      });
    const first = memoryProcess(server, 'first', functions());
    const second = memoryProcess(server, 'second', functions());
    processes.push(first, second);
    const plan = await first.zkPlan.createPlan(PARENT, { maxAttempts: 3, initialDelayMs: 30 });
    const [task] = (await first.zkPlan.addTasks(plan, [{ task: call('flaky') }])) as [string];
    await first.zkPlan.markAsReady(plan);
    for (const proc of [first, second])
      proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });

    // Live, between the tries: the failed ones, from the `attempts` record.
    let live: TaskView | undefined;
    for (let look = 0; look < 400 && live?.tries === undefined; look++) {
      live = (await first.zkPlan.plans.describe(plan)).tasks[0];
      if (live?.state === 'done') break;
      if (live?.tries === undefined) await pause(2);
    }
    expect(live?.tries?.[0]).toMatchObject({
      attempt: 1,
      outcome: 'failed',
      workerId: ranBy.get(1),
      error: { code: 'FLAKY', message: expect.stringContaining('try 1 broke') },
    });

    await first.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const done = (await first.zkPlan.plans.describe(plan)).tasks.find((view) => view.task === task);
    expect(done?.state).toBe('done');
    expect(done?.failedTries).toBe(2);
    const tries = done?.tries ?? [];
    expect(tries.map(({ attempt, outcome, workerId }) => [attempt, outcome, workerId])).toEqual([
      [1, 'failed', ranBy.get(1)],
      [2, 'failed', ranBy.get(2)],
      [3, 'done', ranBy.get(3)],
    ]);
    expect(tries.map((entry) => entry.error?.code)).toEqual(['FLAKY', 'FLAKY', undefined]);
    // Each try ends before the next starts, and each started before it ended.
    for (const [index, entry] of tries.entries()) {
      expect(entry.startedAt?.getTime()).toBeLessThanOrEqual(entry.finishedAt?.getTime() ?? 0);
      const next = tries[index + 1];
      if (next !== undefined)
        expect(entry.finishedAt?.getTime()).toBeLessThanOrEqual(next.startedAt?.getTime() ?? 0);
    }
    expect(tries[2]?.startedAt).toEqual(done?.startedAt);
    expect(tries[2]?.finishedAt).toEqual(done?.finishedAt);
  });

  it('a task cancelled between its tries keeps its failed tries in its record', async () => {
    const proc = memoryProcess(
      new MemoryZooKeeper(),
      'p',
      new FunctionRegistry().register('broken', () => {
        throw new Error('not today');
      }),
    );
    processes.push(proc);
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 5, initialDelayMs: 60_000 });
    await proc.zkPlan.addTasks(plan, [{ task: call('broken') }]);
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    let view: TaskView | undefined;
    for (let look = 0; look < 400 && view?.state !== 'retrying'; look++) {
      view = (await proc.zkPlan.plans.describe(plan)).tasks[0];
      await pause(2);
    }
    expect(view?.state).toBe('retrying');
    await proc.zkPlan.control.cancel(plan, { reason: 'enough' });
    const cancelled = (await proc.zkPlan.plans.describe(plan)).tasks[0];
    expect(cancelled).toMatchObject({ state: 'cancelled', was: 'retrying' });
    expect(cancelled?.tries).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'failed',
        error: expect.objectContaining({ message: expect.stringContaining('not today') }),
      }),
    ]);
  });
});

describe('a kept list of tries', () => {
  const at = new Date('2026-01-02T03:04:05Z');
  const entry = (attempt: number): FailedTry => ({
    attempt,
    workerId: 'w/1',
    startedAt: at,
    finishedAt: at,
    code: 'E',
    message: 'm',
  });

  it('keeps the latest 20 tries, and a try written again replaces itself', () => {
    let tries: FailedTry[] = [];
    for (let attempt = 1; attempt <= 25; attempt++) tries = withFailedTry(tries, entry(attempt));
    expect(tries.map((kept) => kept.attempt)).toEqual(
      Array.from({ length: MAX_KEPT_TRIES }, (_, index) => index + 6),
    );
    const again = withFailedTry(tries, { ...entry(25), message: 'again' });
    expect(again).toHaveLength(MAX_KEPT_TRIES);
    expect(again.at(-1)?.message).toBe('again');
  });

  it('a forged list is read bounded: its last 20 entries, texts cut; a malformed entry drops the list, not the record', () => {
    const forged = Array.from({ length: 10_000 }, (_, index) => ({
      ...entry(index + 1),
      workerId: 'w'.repeat(5_000),
      code: 'C'.repeat(5_000),
      message: 'x'.repeat(50_000),
    }));
    const parsed = parseFailedTries(forged) ?? [];
    expect(parsed).toHaveLength(MAX_KEPT_TRIES);
    expect(parsed[0]?.attempt).toBe(9_981);
    expect(parsed[0]?.message.length).toBe(MAX_TRY_MESSAGE_CHARS + 1);
    expect(parsed[0]?.workerId.length).toBe(MAX_TRY_LABEL_CHARS + 1);
    expect(parsed[0]?.code.length).toBe(MAX_TRY_LABEL_CHARS + 1);
    expect(parseFailedTries([{ ...entry(1), finishedAt: 'yesterday' }])).toBeUndefined();
    expect(parseFailedTries([{ ...entry(0) }])).toBeUndefined();
    expect(parseFailedTries('not a list')).toBeUndefined();

    const path = '/plans/plan-0000000001/history/task-0000000001';
    const base = {
      state: 'done',
      fn: 'f',
      outputs: [],
      keepResult: false,
      failedTries: 1,
      finishedAt: at,
    };
    const withForged = parseHistoryRecord(
      path,
      encodeValue({ ...base, tries: [{ attempt: 'one' }] }, 'test', path),
    );
    expect(withForged).toMatchObject({ state: 'done', failedTries: 1 });
    expect(withForged?.tries).toBeUndefined();
    const kept = parseHistoryRecord(
      path,
      encodeHistoryRecord(
        {
          state: 'done',
          fn: 'f',
          outputs: [],
          keepResult: false,
          failedTries: 1,
          finishedAt: at,
          tries: [entry(1)],
        },
        path,
      ),
    );
    expect(kept?.tries).toEqual([entry(1)]);
  });
});
