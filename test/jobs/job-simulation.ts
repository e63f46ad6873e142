/**
 * A seeded simulation of job workers: processes over the in-memory ZooKeeper, each a JobWorker and
 * a JobManager on its own session and wall clock, whose operations land in an order a seeded PRNG
 * picks (each client's own order kept), while the driver moves simulated time on and injects
 * faults: a crash (the process dies; its session expires), a detach (its operations stop landing
 * and its session expires, while its code and its job runs go on, as a worker cut off from
 * ZooKeeper or a GC pause would; later it reconnects), a blip (disconnected for less than the
 * session timeout: on reconnecting its client sends again what it had sent), a lost reply, a wall clock that moves
 * (within the drift the leases assume), a clean stop, a new worker, a work pool that changes, and a
 * worker disabled or enabled (`Jobs.disableWorker`, `enableWorker`: its items move without it
 * stopping).
 *
 * Invariant, checked after every operation that lands: no item is worked on by two live processes
 * at once, where a process works on an item while a run of its job function holds it and
 * `ctx.holding()` (what the function checks before each piece of work) says yes. At the end, once
 * the faults stop and the workers settle: no disabled worker works on an item or is assigned one;
 * then, every worker enabled and settled again, every item of the pool is worked on by exactly one
 * process, the one the assignment names.
 */
import { untilTracingLoaded } from '../sim-harness/tracing-loaded.js';
import { JobError } from '../../src/errors/job-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { JobContext } from '../../src/jobs/job-context.js';
import { JobStore } from '../../src/jobs/job-store.js';
import { Jobs } from '../../src/jobs/jobs.js';
import type { StoredJob } from '../../src/jobs/job-definition.js';
import type { AssignmentRecord } from '../../src/jobs/job-store.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { jobNodes, jobsNodes } from '../../src/zk/layout.js';
import { ManualScheduler, MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';
import { crashAndExpire, detachAndExpire } from '../sim-harness/fault-schedule.js';
import { Prng } from '../sim-harness/prng.js';
import { seedsFromEnv } from '../sim-harness/seed-runner.js';
import { settleOperations } from '../sim-harness/settle-operations.js';
import type { SeedResult } from '../sim-harness/violation-report.js';
import {
  itemsWorkedByTwo,
  jobParticipants,
  stopCleanly,
  type SimulatedJobProcess,
} from './support/job-participants.js';

/** The seeds its test and the self-tests of its mutants run (JOB_SIM_SEEDS, JOB_SIM_SEED). */
export const JOB_SEEDS = seedsFromEnv('JOB_SIM', 80);

const JOBS = '/jobs';
const DISABLED = jobsNodes(JOBS).disabledWorkers;
const T0 = Date.UTC(2026, 10, 25, 3, 0, 0);
const TIMING = { leaseMs: 1_000, marginMs: 200, driftMs: 100 };
const STEP_MS = 50;
const WINDOW_MS = 15_000;
const POOLS = [
  ['a', 'b', 'c', 'd', 'e', 'f'],
  ['a', 'b', 'c', 'g', 'h'],
  ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'],
];

interface SimProcess extends SimulatedJobProcess<'running' | 'detached' | 'dead' | 'stopping'> {
  reattachAt?: number;
}

export interface JobSimResult extends SeedResult {
  readonly faults: string[];
}

export async function runJobSeed(seed: number): Promise<JobSimResult> {
  await untilTracingLoaded();
  const random = new Prng(seed);
  const manual = new ManualScheduler();
  const server = new MemoryZooKeeper({ scheduler: manual });
  const faults: string[] = [];
  let now = T0;
  let serial = 0;
  let violation: string | undefined;
  const processes: SimProcess[] = [];

  const spawn = (): SimProcess => {
    const name = `w${++serial}`;
    const zk = server.connect({ name, sessionTimeoutMs: 2_000 });
    const active = new Map<string, JobContext>();
    const functions = new FunctionRegistry().registerJob('hold', async (ctx: JobContext) => {
      for (const item of ctx.items) active.set(item.id, ctx);
      await new Promise<void>((resolve) =>
        ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      for (const item of ctx.items) if (active.get(item.id) === ctx) active.delete(item.id);
    });
    const proc: SimProcess = {
      name,
      zk,
      skew: 0,
      state: 'running',
      busy: undefined,
      active,
    } as SimProcess;
    const clock = { wall: () => now + proc.skew, mono: () => now };
    Object.assign(
      proc,
      jobParticipants(zk, {
        jobs: JOBS,
        id: name,
        functions,
        timing: TIMING,
        clock,
        restartDelayMs: 10,
      }),
    );
    processes.push(proc);
    return proc;
  };

  const admin = server.connect({ name: 'admin' });
  const jobs = new Jobs(new JobStore(admin, JOBS), () => now);
  const detached = new Set<string>();

  /** No item worked on by two live processes: the one invariant. */
  const check = (): void => {
    if (violation !== undefined) return;
    const twice = itemsWorkedByTwo(processes).at(-1);
    if (twice !== undefined)
      violation = `${now - T0} ms: item ${twice.item} worked on by ${twice.by.join(' and ')}`;
  };

  const settle = (faultRate: number): Promise<void> =>
    settleOperations({
      manual,
      server,
      random,
      pending: () => manual.pending().filter((name) => !detached.has(name)),
      faultRate,
      inject,
      check,
      lookAgainWhenQuiet: false,
    });

  const inject = (client: string): void => {
    const target = processes.find((proc) => proc.name === client && proc.state === 'running');
    if (target === undefined) return;
    const kind = random.pick(['crash', 'detach', 'blip', 'lost-reply', 'clock', 'stop'] as const);
    faults.push(`${now - T0} ms: ${kind} ${client}`);
    if (kind === 'crash') {
      crashAndExpire(server, target.zk);
      target.state = 'dead';
    } else if (kind === 'detach') {
      target.state = 'detached';
      detached.add(client);
      target.reattachAt = now + random.int(1, 5) * 500;
      detachAndExpire(server, target.zk);
    } else if (kind === 'blip') {
      // Disconnected for less than the session timeout: the session lives, and what it had sent is sent again on reconnecting.
      target.state = 'detached';
      detached.add(client);
      target.reattachAt = now + random.int(2, 30) * STEP_MS;
      target.zk.disconnect();
    } else if (kind === 'lost-reply') target.zk.loseNextReply();
    else if (kind === 'clock') target.skew = random.int(-TIMING.driftMs / 2, TIMING.driftMs / 2);
    else stopCleanly(target);
  };

  /** The ids flagged disabled right now, as the server holds them. */
  const flagged = (): string[] => server.children(DISABLED);

  /** Disables a running worker picked at random, as an operator would; refused when its node is gone by then. */
  const disableRandomWorker = (): void => {
    const running = processes.filter((proc) => proc.state === 'running');
    if (running.length === 0) return;
    const target = random.pick(running);
    faults.push(`${now - T0} ms: disable ${target.name}`);
    void jobs.disableWorker(target.name).catch((error: unknown) => {
      if (!(error instanceof JobError && error.code === 'JOB_WORKER_NOT_LIVE'))
        violation ??= `disableWorker(${target.name}) threw: ${String(error)}`;
    });
  };

  /** Enables a disabled worker picked at random (alive or not). */
  const enableRandomWorker = (): void => {
    const ids = flagged();
    if (ids.length === 0) return;
    const id = random.pick(ids);
    faults.push(`${now - T0} ms: enable ${id}`);
    void jobs.enableWorker(id).catch((error: unknown) => {
      violation ??= `enableWorker(${id}) threw: ${String(error)}`;
    });
  };

  const step = async (faultRate: number): Promise<void> => {
    for (const proc of processes) {
      if (proc.state === 'detached' && now >= (proc.reattachAt ?? 0)) {
        proc.state = 'running';
        detached.delete(proc.name);
        proc.zk.reconnect();
      }
      if (proc.state === 'dead' || proc.state === 'stopping') continue;
      proc.worker.expireOverdue(); // its deadline timer
      if (proc.busy === undefined)
        proc.busy = Promise.allSettled([proc.worker.pass(), proc.manager.pass()]).then(() => {
          if (proc.state !== 'stopping') proc.busy = undefined;
        });
    }
    await settle(faultRate);
  };

  try {
    spawn();
    spawn();
    spawn();
    const define = jobs.define({
      name: 'mail',
      fn: 'hold',
      workPool: { items: POOLS[0] as string[] },
      mode: 'continuous',
    });
    await settle(0);
    await define;
    for (; now <= T0 + WINDOW_MS && violation === undefined; now += STEP_MS) {
      if (processes.filter((proc) => proc.state !== 'dead').length < 3 || random.chance(0.01)) {
        spawn();
        faults.push(`${now - T0} ms: new worker w${serial}`);
      }
      if (random.chance(0.01)) {
        const pool = random.pick(POOLS);
        faults.push(`${now - T0} ms: pool ${pool.join(',')}`);
        void jobs.setWorkPool('mail', pool).catch(() => undefined);
      }
      if (random.chance(0.01)) disableRandomWorker();
      if (random.chance(0.01)) enableRandomWorker();
      await step(0.004);
    }
    // Faults stop, clocks agree, every process is reattached; the workers settle.
    for (const proc of processes) {
      proc.skew = 0;
      if (proc.state === 'detached') proc.reattachAt = now;
    }
    for (const end = now + 6_000; now <= end && violation === undefined; now += STEP_MS)
      await step(0);
    violation ??= disabledCheck(server, processes, flagged());
    // Every worker enabled: the disabled ones are assigned items again; the workers settle once more.
    const enabling = Promise.all(flagged().map((id) => jobs.enableWorker(id)));
    await settle(0);
    await enabling;
    for (const end = now + 4_000; now <= end && violation === undefined; now += STEP_MS)
      await step(0);
    return { seed, violation: violation ?? settledCheck(server, processes), faults };
  } catch (error) {
    return {
      seed,
      violation: violation ?? `the driver threw: ${(error as Error).stack ?? String(error)}`,
      faults,
    };
  } finally {
    for (const proc of processes) if (proc.state !== 'dead') proc.zk.crash();
    admin.crash();
  }
}

/** Once settled with some workers disabled: none of them works on an item, nor has one assigned. */
function disabledCheck(
  server: MemoryZooKeeper,
  processes: readonly SimProcess[],
  disabled: readonly string[],
): string | undefined {
  const { assignment: assignmentPath } = jobsNodes(JOBS);
  const assignment = decodeValue(
    assignmentPath,
    server.getData(assignmentPath),
  ) as AssignmentRecord;
  for (const proc of processes) {
    if (!disabled.includes(proc.name)) continue;
    const working = [...proc.active]
      .filter(([, ctx]) => proc.state === 'running' && !ctx.signal.aborted && ctx.holding())
      .map(([item]) => item);
    const assigned = assignment.jobs['mail']?.[proc.name] ?? [];
    if (working.length > 0 || assigned.length > 0)
      return `after settling, disabled worker ${proc.name} works on [${working.join(', ')}] and is assigned [${assigned.join(', ')}]`;
  }
  return undefined;
}

/** Once settled: each item of the pool worked on by exactly the live process the assignment names. */
function settledCheck(
  server: MemoryZooKeeper,
  processes: readonly SimProcess[],
): string | undefined {
  const { node } = jobNodes(JOBS, 'mail');
  const { assignment: assignmentPath } = jobsNodes(JOBS);
  const job = decodeValue(node, server.getData(node)) as StoredJob;
  const assignment = decodeValue(
    assignmentPath,
    server.getData(assignmentPath),
  ) as AssignmentRecord;
  const byWorker = assignment.jobs['mail'] ?? {};
  const pool = 'items' in job.workPool ? [...job.workPool.items] : [];
  for (const item of pool) {
    const by = processes
      .filter((proc) => proc.state === 'running' && proc.active.get(item)?.holding() === true)
      .map((proc) => proc.name);
    const assigned = Object.entries(byWorker).find(([, items]) => items.includes(item))?.[0];
    if (by.length !== 1 || by[0] !== assigned)
      return `after settling, item ${item} is worked on by [${by.join(', ')}] but assigned to ${assigned} (assignment ${JSON.stringify(byWorker)})`;
  }
  return undefined;
}
