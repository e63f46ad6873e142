/**
 * The job protocol's writes under one fault each, over the in-memory ZooKeeper with real timers: a
 * lost reply on a lease take, a renewal and the assignment; a lease overwritten by someone else; a
 * worker cut off from ZooKeeper; a manager whose session expired; a malformed lease node.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry, type JobContext, type ZkPlanEvents } from '../../src/index.js';
import type { JobWorkerHandle } from '../../src/jobs/job-service.js';
import type { LeaseRecord } from '../../src/jobs/lease.js';
import { decodeValue, encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { jobNodes, jobsNodes } from '../../src/zk/layout.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const JOBS = '/jobs';
const LEASE = { leaseMs: 600, marginMs: 150, driftMs: 50, pollMs: 100, restartDelayMs: 20 };

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

interface Worker {
  readonly proc: MemoryProcess;
  readonly handle: JobWorkerHandle;
  /** Item ids of runs in progress that `ctx.holding()` vouches for right now. */
  working(): string[];
  readonly events: ZkPlanEvents['job:item'][0][];
}

function startWorker(
  server: MemoryZooKeeper,
  name: string,
  options: { manager?: boolean } = {},
): Worker {
  const runs = new Set<JobContext>();
  const functions = new FunctionRegistry().registerJob('hold', async (ctx: JobContext) => {
    runs.add(ctx);
    await new Promise<void>((resolve) =>
      ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    runs.delete(ctx);
  });
  const proc = memoryProcess(server, name, functions);
  open.push(proc);
  const events: ZkPlanEvents['job:item'][0][] = [];
  proc.zkPlan.on('job:item', (event) => events.push(event));
  const handle = proc.zkPlan.startJobWorker(JOBS, { ...LEASE, ...options });
  return {
    proc,
    handle,
    events,
    working: () =>
      [...runs].filter((ctx) => ctx.holding()).flatMap((ctx) => ctx.items.map((item) => item.id)),
  };
}

function lease(server: MemoryZooKeeper, item: string): LeaseRecord {
  const path = `${jobNodes(JOBS, 'mail').leases}/${item}`;
  return decodeValue(path, server.getData(path)) as LeaseRecord;
}

async function define(proc: MemoryProcess, items: string[]): Promise<void> {
  await proc.zkPlan
    .jobs(JOBS)
    .define({ name: 'mail', fn: 'hold', workPool: { items }, mode: 'continuous' });
}

describe('the job protocol under one fault', () => {
  it('a lost reply on the lease take: the worker reads its own write back and holds the item once', async () => {
    const server = new MemoryZooKeeper();
    const worker = startWorker(server, 'a');
    let lost = false;
    worker.proc.zk.loseNextReply((op, path) => {
      const hit = !lost && op === 'setData' && path.includes('/zk-plan-job-leases/mail/');
      lost ||= hit;
      return hit;
    });
    await define(worker.proc, ['x']);
    await expect.poll(() => worker.working()).toEqual(['x']);
    expect(lost).toBe(true);
    expect(
      worker.events.filter((event) => event.state === 'started').map((event) => event.item),
    ).toEqual(['x']);
    expect(lease(server, 'x').holder).toBe(worker.handle.id);
  });

  it('a lost reply on a renewal: the worker keeps the item (its write landed) and goes on renewing', async () => {
    const server = new MemoryZooKeeper();
    const worker = startWorker(server, 'a');
    await define(worker.proc, ['x']);
    await expect.poll(() => worker.working()).toEqual(['x']);
    const firstEnd = lease(server, 'x').expiresAt;
    worker.proc.zk.loseNextReply((op, path) => op === 'setData' && path.endsWith('/mail/x'));
    await expect
      .poll(() => lease(server, 'x').expiresAt, { timeout: 3_000 })
      .toBeGreaterThan(firstEnd + LEASE.leaseMs);
    expect(worker.working()).toEqual(['x']);
    expect(worker.events.filter((event) => event.state === 'stopped')).toEqual([]);
  });

  it('a lease overwritten by another holder: the worker stops the item at its next renewal, without writing over it', async () => {
    const server = new MemoryZooKeeper();
    const worker = startWorker(server, 'a');
    await define(worker.proc, ['x']);
    await expect.poll(() => worker.working()).toEqual(['x']);
    const intruder = memoryProcess(server, 'intruder');
    open.push(intruder);
    const path = `${jobNodes(JOBS, 'mail').leases}/x`;
    const stolen: LeaseRecord = {
      holder: 'someone-else',
      token: lease(server, 'x').token + 1_000,
      expiresAt: Date.now() + 60_000,
    };
    await intruder.zk.setData(path, encodeValue(stolen, 'lease'));
    await expect
      .poll(() => worker.events.find((event) => event.state === 'stopped')?.reason, {
        timeout: 2_000,
      })
      .toBe('lease-lost');
    expect(worker.working()).toEqual([]);
    expect(lease(server, 'x')).toEqual(stolen);
  });

  it('a worker cut off from ZooKeeper stops before its lease ends, on its own; the next holder starts after it, with a greater token', async () => {
    const server = new MemoryZooKeeper();
    const a = startWorker(server, 'a');
    await define(a.proc, ['x']);
    await expect.poll(() => a.working()).toEqual(['x']);
    const b = startWorker(server, 'b');
    const before = lease(server, 'x');
    const sessionId = a.proc.zk.sessionId as string;
    a.proc.zk.disconnect();
    const cutAt = Date.now();
    server.expireSession(sessionId); // the server gives up on it; it hears only when reconnected
    await expect.poll(() => a.working(), { timeout: 2_000 }).toEqual([]);
    const stoppedAfter = Date.now() - cutAt;
    expect(stoppedAfter).toBeLessThan(before.expiresAt - cutAt); // before its lease's end
    expect(a.events.find((event) => event.state === 'stopped')?.reason).toBe('lease-ran-out');
    await expect.poll(() => b.working(), { timeout: 3_000 }).toEqual(['x']);
    expect(Date.now()).toBeGreaterThanOrEqual(before.expiresAt + LEASE.driftMs);
    expect(lease(server, 'x').token).toBeGreaterThan(before.token);
    a.proc.zk.reconnect();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lease(server, 'x').holder).toBe(b.handle.id); // nothing of a landed over b's lease
  });

  it('a lost reply on the assignment write: the manager reads it back, one epoch per change', async () => {
    const server = new MemoryZooKeeper();
    const worker = startWorker(server, 'a');
    const epochs: number[] = [];
    worker.proc.zkPlan.on('job:rebalance', ({ epoch }) => epochs.push(epoch));
    await expect.poll(() => server.exists(jobsNodes(JOBS).assignment)).toBe(true);
    worker.proc.zk.loseNextReply(
      (op, path) => op === 'setData' && path === jobsNodes(JOBS).assignment,
    );
    await define(worker.proc, ['x', 'y']);
    await expect.poll(() => worker.working().sort()).toEqual(['x', 'y']);
    const record = decodeValue('a', server.getData(jobsNodes(JOBS).assignment)) as {
      epoch: number;
    };
    expect(epochs).toEqual([1, 2]);
    expect(record.epoch).toBe(2);
  });

  it('a manager whose session expired writes nothing more; another is elected and assigns', async () => {
    const server = new MemoryZooKeeper();
    const a = startWorker(server, 'a');
    await define(a.proc, ['x', 'y', 'z', 'w']);
    await expect.poll(() => a.handle.isManager()).toBe(true);
    const b = startWorker(server, 'b', { manager: true });
    await expect.poll(() => b.working().length + a.working().length).toBe(4);
    const writers = new Set<string>();
    server.onApplied = (event) => {
      if (event.op === 'setData' && event.path === jobsNodes(JOBS).assignment && event.ok)
        writers.add(event.clientName);
    };
    const sessionId = a.proc.zk.sessionId as string;
    a.proc.zk.disconnect();
    server.expireSession(sessionId);
    await expect.poll(() => b.handle.isManager(), { timeout: 3_000 }).toBe(true);
    await expect.poll(() => b.working().sort(), { timeout: 5_000 }).toEqual(['w', 'x', 'y', 'z']);
    a.proc.zk.reconnect(); // a's new session rejoins the election behind b
    await expect.poll(() => a.working().length + b.working().length, { timeout: 5_000 }).toBe(4);
    expect(b.handle.isManager()).toBe(true);
    expect([...writers]).toEqual(['b']);
  });

  it('a malformed lease node: that item waits (reported), the worker goes on with the others and takes it once the node is deleted', async () => {
    const server = new MemoryZooKeeper();
    const admin = memoryProcess(server, 'admin');
    open.push(admin);
    await admin.zk.ensurePath(jobNodes(JOBS, 'mail').leases);
    await admin.zk.create(`${jobNodes(JOBS, 'mail').leases}/bad`, Buffer.from('not a lease'));
    const worker = startWorker(server, 'a');
    const errors: string[] = [];
    worker.proc.zkPlan.on('job:error', ({ error }) => errors.push(error.message));
    await define(worker.proc, ['bad', 'good']);
    await expect.poll(() => worker.working()).toEqual(['good']);
    expect(errors.some((message) => message.includes('/bad'))).toBe(true);
    await admin.zk.delete(`${jobNodes(JOBS, 'mail').leases}/bad`);
    await expect.poll(() => worker.working().sort(), { timeout: 3_000 }).toEqual(['bad', 'good']);
  });
});
