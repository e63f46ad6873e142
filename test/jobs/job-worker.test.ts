/** Job workers over the in-memory ZooKeeper: assignment, rebalancing, leases and tokens, with real timers. */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, type JobContext } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import type { JobWorkerHandle } from '../../src/jobs/job-service.js';

const JOBS = '/jobs';
const LEASE = { leaseMs: 600, marginMs: 120, driftMs: 50, pollMs: 200, restartDelayMs: 20 };

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

/** What the items' runs did: one entry per start and stop, with the worker and token. */
interface Span {
  readonly worker: string;
  readonly item: string;
  readonly token: number;
  readonly start: number;
  end?: number;
}

function registry(spans: Span[]): FunctionRegistry {
  return new FunctionRegistry().registerJob('hold', async (ctx: JobContext) => {
    const mine = ctx.items.map(
      (item) =>
        ({
          worker: ctx.workerId,
          item: item.id,
          token: item.token,
          start: performance.now(),
        }) as Span,
    );
    spans.push(...mine);
    await new Promise<void>((resolve) =>
      ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    for (const span of mine) span.end = performance.now();
  });
}

function worker(
  server: MemoryZooKeeper,
  name: string,
  spans: Span[],
): { proc: MemoryProcess; handle: JobWorkerHandle } {
  const proc = memoryProcess(server, name, registry(spans));
  open.push(proc);
  return { proc, handle: proc.zkPlan.startJobWorker(JOBS, LEASE) };
}

const counts = (handles: readonly JobWorkerHandle[]): number[] =>
  handles.map((handle) => handle.held()['mail']?.length ?? 0).sort();

/** No item ever had two runs at once. */
function assertNoOverlap(spans: readonly Span[]): void {
  const byItem = new Map<string, Span[]>();
  for (const span of spans) byItem.set(span.item, [...(byItem.get(span.item) ?? []), span]);
  for (const [item, list] of byItem) {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    for (let index = 1; index < sorted.length; index++) {
      const before = sorted[index - 1] as Span;
      const after = sorted[index] as Span;
      expect(
        before.end,
        `item ${item}: a run of ${before.worker} never ended before ${after.worker} started`,
      ).toBeDefined();
      expect(
        before.end as number,
        `item ${item}: ${before.worker} still ran when ${after.worker} started`,
      ).toBeLessThanOrEqual(after.start);
      if (after.worker !== before.worker)
        expect(after.token, `item ${item}: the new holder's token`).toBeGreaterThan(before.token);
    }
  }
}

describe('job workers', () => {
  it("spread 12 items evenly over 3, then 4 workers, move a stopped one's items at once, and never run an item twice at a time", async () => {
    const server = new MemoryZooKeeper();
    const spans: Span[] = [];
    const workers = [
      worker(server, 'a', spans),
      worker(server, 'b', spans),
      worker(server, 'c', spans),
    ];
    const admin = workers[0]?.proc.zkPlan as MemoryProcess['zkPlan'];
    await admin.jobs(JOBS).define({
      name: 'mail',
      fn: 'hold',
      workPool: { items: Array.from({ length: 12 }, (_, i) => `box${i}`) },
      mode: 'continuous',
    });
    await expect
      .poll(() => counts(workers.map((w) => w.handle)), { timeout: 5_000 })
      .toEqual([4, 4, 4]);
    workers.push(worker(server, 'd', spans));
    await expect
      .poll(() => counts(workers.map((w) => w.handle)), { timeout: 5_000 })
      .toEqual([3, 3, 3, 3]);
    const stopped = workers.shift() as (typeof workers)[number];
    const stoppedAt = performance.now();
    await stopped.handle.stop();
    await expect
      .poll(() => counts(workers.map((w) => w.handle)), { timeout: 5_000 })
      .toEqual([4, 4, 4]);
    expect(performance.now() - stoppedAt).toBeLessThan(LEASE.leaseMs); // given back, not waited out
    const summary = (await admin.jobs(JOBS).list())[0];
    expect(
      Object.values(summary?.assignment ?? {})
        .flat()
        .sort(),
    ).toHaveLength(12);
    expect(summary?.unassigned).toEqual([]);
    assertNoOverlap(spans);
  });
});

describe('a disabled job worker', () => {
  it('is left out of the assignment while it runs on: its items move to the others with no two runs of one item at once, and come back once it is enabled', async () => {
    const server = new MemoryZooKeeper();
    const spans: Span[] = [];
    const workers = [
      worker(server, 'a', spans),
      worker(server, 'b', spans),
      worker(server, 'c', spans),
    ];
    const handles = workers.map((w) => w.handle);
    const jobs = (workers[0]?.proc.zkPlan as MemoryProcess['zkPlan']).jobs(JOBS);
    await jobs.define({
      name: 'mail',
      fn: 'hold',
      workPool: { items: Array.from({ length: 12 }, (_, i) => `box${i}`) },
      mode: 'continuous',
    });
    await expect.poll(() => counts(handles), { timeout: 5_000 }).toEqual([4, 4, 4]);
    const [target] = handles as [JobWorkerHandle];
    expect(await jobs.disableWorker(target.id)).toBe(true);
    await expect.poll(() => counts(handles), { timeout: 5_000 }).toEqual([0, 6, 6]);
    expect(target.held()).toEqual({});
    const summaries = await jobs.workers();
    expect(summaries).toHaveLength(3);
    expect(summaries.filter((summary) => summary.disabled).map((summary) => summary.id)).toEqual([
      target.id,
    ]);
    expect(await jobs.disableWorker(target.id)).toBe(false);
    expect(await jobs.enableWorker(target.id)).toBe(true);
    await expect.poll(() => counts(handles), { timeout: 5_000 }).toEqual([4, 4, 4]);
    expect(Object.values(target.held()).flat()).toHaveLength(4);
    assertNoOverlap(spans);
  });
});
