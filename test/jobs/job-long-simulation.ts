/**
 * A seeded simulation of job workers over hours of virtual time (the short one, job-simulation.ts,
 * covers seconds), on fake timers: processes over the in-memory ZooKeeper (with lagging followers
 * for some seeds), each a JobWorker and a JobManager with its own clocks: a wall clock off by up
 * to ±driftMs / 2, and a monotonic clock running up to 10 % fast or slow (the leases assume at most
 * marginMs / leaseMs = 20 %). The job is defined again and again while it runs (its function, its
 * mode: continuous, every few seconds, cron; its shard params), its pool rotates (new item ids,
 * old ones coming back: their lease nodes are pruned and made again), it is disabled, enabled,
 * removed and defined again, and triggered. Faults: crashes, detaches (cut off until the session
 * expired), freezes (the process hears nothing until it wakes), blips, lost replies and lost
 * requests (sent again through the same session or the next one, after a while), clock moves,
 * clean stops and new workers.
 *
 * Invariants, after every operation that lands and every timer: no item is worked on by two live
 * processes at once (a run works on an item while it is not aborted and `ctx.holding()` says so),
 * nor by two runs of one process; and no run starts on an item with a token lower than one an
 * earlier run of that item had. Two more, about when runs happen, checked where nothing blurs them
 * (no change of the job in the last STABLE_MS or since, no fault on the process since):
 * - misfire: after a run that a tick came in while it ran, and that was told to catch it up, the
 *   process's next run of the job is that catch-up (or a failover), not a later tick;
 * - failover: when a process crashes in the middle of a run (its record written), the first run of
 *   each of its items, on the process that takes the item from the lapsed lease, is a run at once
 *   (failover, or a catch-up, trigger or retry owed already), not the next tick after the take.
 */
import { untilTracingLoaded } from '../sim-harness/tracing-loaded.js';
import { vi } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { JobContext } from '../../src/jobs/job-context.js';
import type { JobMode } from '../../src/jobs/job-definition.js';
import { JobStore } from '../../src/jobs/job-store.js';
import { parseRunRecord, runWorkerOf } from '../../src/jobs/job-run-record.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { childPath, jobNodes } from '../../src/zk/layout.js';
import { Jobs } from '../../src/jobs/jobs.js';
import { ManualScheduler, MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';
import { crashAndExpire, detachAndExpire } from '../sim-harness/fault-schedule.js';
import { streamFor } from '../sim-harness/prng.js';
import { seedsFromEnv } from '../sim-harness/seed-runner.js';
import { settleOperations } from '../sim-harness/settle-operations.js';
import { SimulatedClock } from '../sim-harness/simulated-clock.js';
import type { SeedResult } from '../sim-harness/violation-report.js';
import {
  itemsWorkedByTwo,
  jobParticipants,
  stopCleanly,
  type SimulatedJobProcess,
} from './support/job-participants.js';

const JOBS = '/jobs';
const NAME = 'sync';
const T0 = Date.UTC(2026, 10, 26, 1, 0, 0);
const TIMING = { leaseMs: 20_000, marginMs: 4_000, driftMs: 2_000 };
/** ZooKeeper's longest by default (20 ticks of 2 s): a worker cut off for less keeps its session, and sends again what it had sent. */
const SESSION_TIMEOUT_MS = 40_000;
const HOUR = 3_600_000;
/** How long after a change of the job (or a fault on a process) runs are not held to the misfire and failover checks: every live worker has read the change by then. */
const STABLE_MS = 15_000;

/** The seeds its test and the self-test of its mutant run (JOB_LONG_SIM_SEEDS, JOB_LONG_SIM_SEED). */
export const LONG_JOB_SEEDS = seedsFromEnv('JOB_LONG_SIM', 20);

interface LongProcess extends SimulatedJobProcess<
  'running' | 'cut-off' | 'frozen' | 'dead' | 'stopping'
> {
  /** When a fault last hit it (or it lost an item): runs around then are not checked for misfire or failover. */
  disturbedAt: number;
  /** When its run in progress started (the misfire check needs the process undisturbed from then on). */
  runStartedAt: number;
  /** Its last run of the job ended telling it to catch a tick up: its next run must be that catch-up. */
  catchUpOwed?: { readonly startedAt: number; readonly endedAt: number };
  /** How fast its monotonic clock runs, and where it stood when the rate last changed. */
  rate: number;
  monoAt: { readonly sim: number; readonly mono: number };
  backAt?: number;
}

export interface LongJobSimResult extends SeedResult {
  readonly events: string[];
  readonly simulatedHours: number;
  /** How many times each timing check applied (a check that never applies cannot fail). */
  readonly checked: { readonly catchUps: number; readonly failovers: number };
}

export async function runLongJobSeed(seed: number, hours = 2): Promise<LongJobSimResult> {
  await untilTracingLoaded();
  const random = streamFor(seed, 'long-jobs');
  const manual = new ManualScheduler();
  const server = new MemoryZooKeeper({ scheduler: manual, followers: random.pick([0, 0, 1, 2]) });
  const events: string[] = [];
  const simulatedClock = new SimulatedClock(T0);
  const { now } = simulatedClock;
  const note = (what: string): void =>
    void events.push(`${Math.round((now() - T0) / 1000)} s: ${what}`);
  let violation: string | undefined;
  let serial = 0;
  const processes: LongProcess[] = [];
  const highestToken = new Map<string, number>();
  /** When the job last changed (an operator's call started or ended): misfire and failover are checked only well after. */
  let changedAt = T0;
  /** Whether the job as last defined fails over (each definition picks; most do). */
  let failsOver = true;
  /** Items whose holder crashed in the middle of a run: when, and when (and by whom) they were taken again. */
  const interruptedItems = new Map<
    string,
    { readonly crashedAt: number; takenBy?: string; takenAt?: number }
  >();
  const checked = { catchUps: 0, failovers: 0 };
  const stable = (since: number): boolean =>
    adminCall === undefined && since - changedAt >= STABLE_MS;
  /** Some seeds have an operator who takes items out of the pool and back every few seconds: leases pruned and made again all the time. */
  const flappy = random.chance(0.4);
  /** Workers cut off since a take of theirs was lost: the lease node it was decided on, and when they come back at the latest. */
  const lostTakes: {
    readonly proc: LongProcess;
    readonly path: string;
    readonly czxid: number;
    readonly version: number;
    readonly until: number;
  }[] = [];

  /** Tokens only grow: a take, or a run, with a token below one an earlier take or run of the item had breaks fencing. */
  const checkToken = (worker: string, item: string, token: number, what: string): void => {
    const before = highestToken.get(item) ?? 0;
    if (token < before)
      violation ??= `${Math.round((now() - T0) / 1000)} s: ${worker} ${what} ${item} with token ${token}, below ${before} handed out before`;
    highestToken.set(item, Math.max(before, token));
  };

  const work = (proc: () => LongProcess, finite: boolean) => async (ctx: JobContext) => {
    for (const item of ctx.items) {
      checkToken(proc().name, item.id, item.token, 'ran');
      const other = proc().active.get(item.id);
      if (other !== undefined && other !== ctx && !other.signal.aborted && other.holding())
        violation ??= `${Math.round((now() - T0) / 1000)} s: ${proc().name} runs ${item.id} twice at once (${other.cause} and ${ctx.cause})`;
      proc().active.set(item.id, ctx);
    }
    await new Promise<void>((resolve) => {
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      if (finite) setTimeout(resolve, random.int(1, 15) * 1_000);
    });
    for (const item of ctx.items)
      if (proc().active.get(item.id) === ctx) proc().active.delete(item.id);
  };

  /** The misfire and failover checks, at the start of each run (see the header). */
  const checkRunStart = (
    proc: LongProcess,
    run: string,
    record: {
      readonly cause: string;
      readonly firedAt?: string;
      readonly items: readonly { readonly id: string }[];
    },
  ): void => {
    const at = `${Math.round((now() - T0) / 1000)} s`;
    const owed = proc.catchUpOwed;
    proc.catchUpOwed = undefined;
    proc.runStartedAt = now();
    if (owed !== undefined && stable(owed.startedAt) && proc.disturbedAt < owed.startedAt) {
      checked.catchUps += 1;
      if (record.cause === 'tick' && Date.parse(record.firedAt ?? '') > owed.endedAt)
        violation ??= `${at}: ${proc.name}'s run ${run} is the tick of ${record.firedAt}: the catch-up of a tick its previous run overran (ended ${Math.round((owed.endedAt - T0) / 1000)} s) never ran`;
    }
    for (const { id } of record.items) {
      const interrupted = interruptedItems.get(id);
      if (interrupted === undefined) continue;
      interruptedItems.delete(id); // the first run of the item since its holder crashed
      const takenAt = interrupted.takenAt;
      if (
        interrupted.takenBy !== proc.name ||
        takenAt === undefined ||
        !failsOver ||
        !stable(interrupted.crashedAt) ||
        proc.disturbedAt >= takenAt
      )
        continue;
      checked.failovers += 1;
      if (record.cause === 'tick' && Date.parse(record.firedAt ?? '') > takenAt)
        violation ??= `${at}: ${proc.name} took ${id} at ${Math.round((takenAt - T0) / 1000)} s from a holder that crashed in a run, and first ran it at the tick of ${record.firedAt}: no failover run`;
    }
  };

  /** A crashed process's runs in progress whose record reached the server: their items must fail over. */
  const noteInterrupted = (proc: LongProcess): void => {
    const { runs } = jobNodes(JOBS, NAME);
    const unfinished = new Set<string>();
    for (const name of server.exists(runs) ? server.children(runs) : []) {
      if (runWorkerOf(name) !== proc.name) continue;
      const path = childPath(runs, name);
      const record = parseRunRecord(path, decodeValue(path, server.getData(path)));
      if (record.outcome === undefined && record.cause !== 'continuous')
        for (const item of record.items) unfinished.add(item.id);
    }
    for (const [item, ctx] of proc.active)
      if (!ctx.signal.aborted && ctx.cause !== 'continuous' && unfinished.has(item))
        interruptedItems.set(item, { crashedAt: now() });
  };

  const spawn = (): LongProcess => {
    const name = `w${++serial}`;
    const zk = server.connect({ name, sessionTimeoutMs: SESSION_TIMEOUT_MS });
    const proc = {
      name,
      zk,
      skew: 0,
      rate: 1,
      monoAt: { sim: now(), mono: now() },
      state: 'running',
      busy: undefined,
      active: new Map(),
      disturbedAt: now(),
      runStartedAt: now(),
    } as unknown as LongProcess;
    const functions = new FunctionRegistry()
      .registerJob(
        'hold',
        work(() => proc, false),
      )
      .registerJob(
        'batch',
        work(() => proc, true),
      );
    const clock = {
      wall: () => now() + proc.skew,
      mono: () => proc.monoAt.mono + (now() - proc.monoAt.sim) * proc.rate,
    };
    Object.assign(
      proc,
      jobParticipants(zk, {
        jobs: JOBS,
        id: name,
        functions,
        timing: TIMING,
        clock,
        restartDelayMs: 1_000,
        events: {
          // A take hands out a token: never one lower than a token handed out before for that item.
          itemStarted: (_job, item, token, failover) => {
            checkToken(name, item, token, 'took');
            const interrupted = interruptedItems.get(item);
            if (failover && interrupted !== undefined && interrupted.takenBy === undefined) {
              interrupted.takenBy = name;
              interrupted.takenAt = now();
            }
          },
          itemStopped: () => (proc.disturbedAt = now()),
          runStarted: (_job, run, record) => checkRunStart(proc, run, record),
          runEnded: (_job, _run, record) => {
            proc.catchUpOwed =
              record.misfire?.handling === 'caught-up'
                ? { startedAt: proc.runStartedAt, endedAt: now() }
                : undefined;
          },
        },
      }),
    );
    processes.push(proc);
    return proc;
  };

  const admin = server.connect({ name: 'admin' });
  const jobs = new Jobs(new JobStore(admin, JOBS), now);

  /** No item worked on by two live processes at once. */
  const check = (): void => {
    if (violation !== undefined) return;
    const twice = itemsWorkedByTwo(processes).at(-1);
    if (twice !== undefined)
      violation = `${Math.round((now() - T0) / 1000)} s: item ${twice.item} worked on by ${twice.by.join(' and ')}`;
  };

  const pending = (): string[] =>
    manual
      .pending()
      .filter(
        (name) =>
          !processes.some(
            (proc) => proc.name === name && (proc.state === 'frozen' || proc.state === 'dead'),
          ),
      );
  const settle = (faultRate: number): Promise<void> =>
    settleOperations({ manual, server, random, pending, faultRate, inject, check });

  const inject = (client: string): void => {
    const target = processes.find((proc) => proc.name === client && proc.state === 'running');
    if (target === undefined) return;
    const kind = random.pick([
      'crash',
      'detach',
      'freeze',
      'blip',
      'lost-reply',
      'lost-reply-expired',
      'lost-send',
      'lease-take-lost',
      'lease-take-lost',
      'clock',
      'stop',
    ] as const);
    note(`${kind} ${client}`);
    target.disturbedAt = now();
    const sessionId = target.zk.sessionId;
    const back = now() + random.int(1, 60) * 1_000;
    switch (kind) {
      case 'crash':
        noteInterrupted(target);
        crashAndExpire(server, target.zk);
        target.state = 'dead';
        return;
      case 'detach':
        target.state = 'cut-off';
        target.backAt = back;
        detachAndExpire(server, target.zk);
        return;
      case 'freeze':
        target.state = 'frozen';
        target.backAt = back;
        target.zk.freeze();
        if (back - now() > SESSION_TIMEOUT_MS && sessionId !== undefined)
          server.expireSession(sessionId);
        return;
      case 'blip':
        target.state = 'cut-off';
        target.backAt = now() + random.int(1, 10) * 1_000;
        target.zk.disconnect(); // the session lives: what it had sent is sent again on reconnecting
        return;
      case 'lost-reply':
      case 'lost-reply-expired':
      case 'lost-send': {
        // Cut off from the lost reply (or request) on, for a while (on the process's own timers): other processes go on meanwhile.
        const options = {
          expireSession: kind === 'lost-reply-expired',
          reconnectAfterMs: random.int(1, 60) * 1_000,
        };
        if (kind === 'lost-send') target.zk.failNextSend(undefined, options);
        else target.zk.loseNextReply(undefined, options);
        return;
      }
      case 'lease-take-lost': {
        if (target.manager.isLeader) return; // the manager must go on pruning meanwhile
        // The next take of this worker (a write of the lease of an item it does not hold) never reaches the server, and the
        // worker stays cut off (its session lives) while an operator takes that item out of the pool (its lease is pruned
        // once it has ended) and back in; it comes back when the new lease node of that item is at the version its take
        // was decided on (the moment a resend is most dangerous), or before its session would expire.
        target.zk.failNextSend(
          (op, path) => {
            const item = path.slice(path.lastIndexOf('/') + 1);
            if (
              op !== 'setData' ||
              !path.startsWith(`${JOBS}/zk-plan-job-leases/`) ||
              (target.worker.heldItems()[NAME] ?? []).includes(item)
            )
              return false;
            const stat = server.stat(path);
            if (stat === undefined) return false;
            lostTakes.push({
              proc: target,
              path,
              czxid: stat.czxid,
              version: stat.version,
              until: now() + SESSION_TIMEOUT_MS - 5_000,
            });
            setTimeout(() => void flapOut(item), random.int(0, 3) * 1_000);
            // And a worker joins meanwhile (the pool scaled out), among which the item is dealt out again.
            setTimeout(
              () => {
                spawn();
                note(`new worker w${serial}`);
              },
              random.int(0, 3) * 1_000,
            );
            return true;
          },
          { reconnect: false },
        );
        return;
      }
      case 'clock':
        target.monoAt = {
          sim: now(),
          mono: target.monoAt.mono + (now() - target.monoAt.sim) * target.rate,
        };
        target.rate = 1 + random.int(-100, 100) / 1_000;
        target.skew = random.int(-TIMING.driftMs / 2, TIMING.driftMs / 2);
        return;
      case 'stop':
        stopCleanly(target);
        return;
    }
  };

  const wakeUp = (): void => {
    for (const lost of [...lostTakes]) {
      const stat = server.stat(lost.path);
      const aligned =
        stat !== undefined && stat.czxid !== lost.czxid && stat.version === lost.version;
      if (!aligned && now() < lost.until) continue;
      lostTakes.splice(lostTakes.indexOf(lost), 1);
      lost.proc.zk.reconnect();
    }
    for (const proc of processes) {
      if ((proc.state === 'cut-off' || proc.state === 'frozen') && now() >= (proc.backAt ?? 0)) {
        if (proc.state === 'frozen') proc.zk.thaw();
        else proc.zk.reconnect();
        proc.state = 'running';
        proc.disturbedAt = now();
      }
    }
  };

  const step = async (stepMs: number, faultRate: number): Promise<void> => {
    vi.advanceTimersByTime(stepMs);
    wakeUp();
    for (const proc of processes) {
      if (proc.state === 'dead' || proc.state === 'stopping' || proc.state === 'frozen') continue;
      proc.worker.expireOverdue(); // its deadline timer
      if (proc.busy === undefined)
        proc.busy = Promise.allSettled([proc.worker.pass(), proc.manager.pass()]).then(() => {
          if (proc.state !== 'stopping') proc.busy = undefined;
        });
    }
    await settle(faultRate);
  };

  /** The job changes as an operator would change it; calls that a fault cuts short are left to finish later. */
  let adminCall: Promise<unknown> | undefined;
  let generation = 0;
  let items = ['a', 'b', 'c', 'd', 'e'];
  const mode = (): JobMode =>
    random.pick<JobMode>([
      'continuous',
      { everyMs: random.int(5, 60) * 1_000 },
      { cron: '*/20 * * * * *' },
    ]);
  const change = (chosen?: 'flap'): void => {
    if (adminCall !== undefined) return;
    const what =
      chosen ??
      random.pick([
        'define',
        'pool',
        'pool',
        'flap',
        'flap',
        'disable',
        'enable',
        'remove',
        'trigger',
      ] as const);
    note(what);
    const define = (): Promise<unknown> => {
      failsOver = random.chance(0.8);
      return jobs.define({
        name: NAME,
        fn: random.pick(['hold', 'batch']),
        workPool: { items },
        mode: mode(),
        misfire: random.chance(0.8) ? 'runOnce' : 'skip',
        failover: failsOver,
      });
    };
    if (what === 'pool') {
      generation += 1;
      // New ids, and some of the old ones back: a lease node pruned while its item was away is made again.
      items = [
        ...new Set([
          ...items.filter(() => random.chance(0.5)),
          ...Array.from({ length: random.int(1, 4) }, (_, k) => `g${generation}-${k}`),
          random.pick(['a', 'b', 'c']),
        ]),
      ];
    }
    changedAt = now();
    adminCall = (async () => {
      if (what === 'define') return define();
      if (what === 'flap') {
        // Items leave the pool for a while and come back (a change rolled back): their lease nodes are pruned meanwhile.
        const kept = items.filter(() => random.chance(0.5));
        await jobs.setWorkPool(NAME, kept.length > 0 ? kept : items.slice(0, 1));
        await new Promise((resolve) =>
          setTimeout(resolve, (flappy ? random.int(2, 15) : random.int(10, 60)) * 1_000),
        );
        return jobs.setWorkPool(NAME, items).catch(define);
      }
      if (what === 'pool') return jobs.setWorkPool(NAME, items).catch(define);
      if (what === 'disable') return jobs.disable(NAME);
      if (what === 'enable') return jobs.enable(NAME);
      if (what === 'remove') {
        await jobs.remove(NAME, { timeoutMs: TIMING.leaseMs * 3 });
        return define();
      }
      return jobs.trigger(NAME);
    })()
      .catch(() => undefined)
      .finally(() => {
        adminCall = undefined;
        changedAt = now();
      });
  };

  /** An operator takes one item out of the pool for a few seconds (while other changes may be under way). */
  const flapOut = async (item: string): Promise<void> => {
    note(`${item} out of the pool for a while`);
    changedAt = now();
    const others = items.filter((other) => other !== item);
    if (others.length === 0) return;
    await jobs.setWorkPool(NAME, others).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, random.int(2, 8) * 1_000));
    await jobs.setWorkPool(NAME, items).catch(() => undefined);
    changedAt = now();
  };

  simulatedClock.install();
  try {
    spawn();
    spawn();
    spawn();
    const defining = jobs.define({
      name: NAME,
      fn: 'hold',
      workPool: { items },
      mode: 'continuous',
    });
    await settle(0);
    await defining;
    const end = T0 + hours * HOUR;
    while (now() < end && violation === undefined) {
      if (processes.filter((proc) => proc.state !== 'dead').length < 3 || random.chance(0.003)) {
        spawn();
        note(`new worker w${serial}`);
      }
      if (random.chance(flappy ? 0.15 : 0.02))
        change(flappy && random.chance(0.7) ? 'flap' : undefined);
      await step(random.int(1, 6) * 1_000, 0.003);
    }
    // Faults stop, clocks agree, every process is back; the workers settle.
    for (const lost of lostTakes.splice(0)) lost.proc.zk.reconnect();
    for (const proc of processes) {
      proc.monoAt = { sim: now(), mono: proc.monoAt.mono + (now() - proc.monoAt.sim) * proc.rate };
      proc.rate = 1;
      proc.skew = 0;
      proc.backAt = now();
    }
    for (let round = 0; round < 60 && violation === undefined; round++) await step(2_000, 0);
    return { seed, violation, events, simulatedHours: (now() - T0) / HOUR, checked };
  } catch (error) {
    return {
      seed,
      violation: violation ?? `the driver threw: ${(error as Error).stack ?? String(error)}`,
      events,
      simulatedHours: (now() - T0) / HOUR,
      checked,
    };
  } finally {
    simulatedClock.restore();
    for (const proc of processes) if (proc.state !== 'dead') proc.zk.crash();
    admin.crash();
    vi.clearAllTimers();
  }
}
