/**
 * One job worker: it registers (an ephemeral node, for as long as its session lives), follows the
 * assignment the manager writes, takes a lease on each item given to it, runs each job's function
 * with its share (job-runner.ts), renews the leases, and gives items back when they are taken away.
 *
 * The lease protocol (arithmetic in lease.ts; every write a versioned set on the item's lease node):
 * - **Take**: read the lease; wait until it is released, or has run out (`expiresAt + driftMs` by
 *   this host's wall clock), unless it is this worker's own; then replace the version read with
 *   `{ holder, token, expiresAt }`, where `token` is one more than the zxid of the version
 *   replaced, so it is greater than every earlier holder's. A second taker's write fails (version).
 * - **One node**: the manager deletes the lease of an item that left its pool, and the node is
 *   created again if the item comes back, its version back at 0. Every write names the node it was
 *   decided on (its czxid, `WriteOptions.incarnation`), so a write sent again after a lost reply
 *   never lands on the new node, and one that lands there all the same (decided on the old node just
 *   before it went) counts as not written and is told apart by readers (lease.ts, `isStrayLease`).
 * - **Renew** every `leaseMs / 3` over the version last written, fenced by the session the item was
 *   taken on. A renewal that finds another version lost the item: its run is aborted at once.
 * - **Stop on its own**: an item whose lease was last renewed (sent) `leaseMs − marginMs` ago by the
 *   monotonic clock is dropped, its run aborted, without a write — a worker cut off from ZooKeeper,
 *   frozen or stalled stops before its lease ends; `ctx.holding()` tells the function the same
 *   synchronously. A session that expired drops every item the same way.
 * - **Give back**: an item taken away is first left out of the share (the run is aborted), and only
 *   once no run of it is left is its lease written released, so the next holder starts at once.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { isZkError } from '../errors/zk-error.js';
import { MalformedNodeError } from '../errors/task-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { FunctionRegistry } from '../exec/function-registry.js';
import { MAX_TIMER_MS } from '../util/abort-signals.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import type { JobItem } from './job-context.js';
import { poolItems, type StoredJob } from './job-definition.js';
import { ArmedWatches } from '../zk/recipes/armed-watches.js';
import { JobRunner } from './job-runner.js';
import { RunJournal, type RunJournalEvents } from './run-journal.js';
import type { TaskLogs } from '../logs/task-logs.js';
import { DEFAULTS } from '../config/defaults.js';
import type { JobStore } from './job-store.js';
import { effectiveLease, leaseFor, stopDeadline, takeOver, type LeaseTiming } from './lease.js';

/** Wall clock (ms since the epoch, for lease ends other hosts read) and monotonic clock (ms, for this worker's own deadlines). */
export interface JobClock {
  wall(): number;
  mono(): number;
}

export const SYSTEM_CLOCK: JobClock = { wall: () => Date.now(), mono: () => performance.now() };

/** Why an item stopped on this worker. */
export type ItemStopReason =
  'released' | 'lease-lost' | 'lease-ran-out' | 'session-expired' | 'stopped';

export interface JobWorkerEvents extends Partial<Omit<RunJournalEvents, 'error'>> {
  itemStarted(job: string, item: string, token: number, failover: boolean): void;
  itemStopped(job: string, item: string, reason: ItemStopReason): void;
  leaseRenewed(latencyMs: number): void;
  misfire?(job: string, tick: Date, handling: 'caught-up' | 'skipped'): void;
  error(error: unknown, job?: string): void;
}

export interface JobWorkerRuntime {
  readonly zk: Zk;
  readonly store: JobStore;
  readonly functions: FunctionRegistry;
  readonly id: string;
  readonly timing: LeaseTiming;
  readonly clock: JobClock;
  readonly restartDelayMs: number;
  /** The longest pause after runs that threw in a row. @defaultValue DEFAULTS.jobs.maxRestartDelayMs */
  readonly maxRestartDelayMs?: number;
  /** Where runs' `ctx.log` lines are kept besides the worker's log; none: only the worker's log and the run's end. */
  readonly taskLogs?: TaskLogs;
  readonly events: JobWorkerEvents;
  /** Something this worker watches changed, or a run ended: run a pass. */
  changed(): void;
}

interface Held {
  readonly job: string;
  readonly item: string;
  /** The item's params as last read (a job defined again may change them). */
  params: unknown;
  readonly token: number;
  readonly session: ZkSession;
  /** The lease node it was taken on (its creation zxid): every later write names it. */
  readonly czxid: number;
  version: number;
  renewSentAt: number;
  deadline: number;
  /** Taken away: left out of the share, released once no run of it is left. */
  releasing: boolean;
}

interface Wanted {
  readonly job: string;
  readonly item: string;
  readonly params: unknown;
}

const key = (job: string, item: string): string => `${job}\u0000${item}`;

/** What a job worker id is made of: the characters of the `name` option, and room for its prefix, `-` and 8 hex digits. */
const JOB_WORKER_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;

/**
 * A job worker's id: unique per start, so a restarted process never mistakes its predecessor's
 * lease for its own. Every id made here passes `assertJobWorkerId`.
 */
export function newJobWorkerId(prefix?: string): string {
  return `${prefix ?? defaultIdPrefix()}-${randomUUID().slice(0, 8)}`;
}

/** `<host>-<pid>`, the host name kept to the characters and length of an id (a container may name its host otherwise). */
function defaultIdPrefix(): string {
  const host = hostname()
    .replace(/[^A-Za-z0-9_.:-]/g, '_')
    .slice(0, 64);
  return `${/^[A-Za-z0-9]/.test(host) ? host : `host${host}`}-${process.pid}`;
}

/** Checks that an id given to the jobs API can name a job worker: one znode name, as `newJobWorkerId` makes them. */
export function assertJobWorkerId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !JOB_WORKER_ID.test(id))
    throw new InvalidArgumentError(
      'id',
      `expected a job worker id of letters, digits, "_", ".", ":" and "-" (up to 100, starting with a letter or digit), as the list of job workers shows it, got ${JSON.stringify(id)}`,
    );
}

export class JobWorker {
  private readonly held = new Map<string, Held>();
  private readonly runners = new Map<string, JobRunner>();
  private readonly triggersSeen = new Map<string, number>();
  private registeredOn: string | undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  private stopping = false;

  private readonly watches: ArmedWatches;
  private readonly journal: RunJournal;
  /** Items this pass took from a holder whose lease lapsed: their history is read once the pass has shared them out. */
  private readonly takenFromLapsed: { readonly want: Wanted; readonly previousHolder: string }[] =
    [];

  constructor(private readonly runtime: JobWorkerRuntime) {
    this.watches = new ArmedWatches(() => runtime.changed());
    const { events } = runtime;
    this.journal = new RunJournal(
      runtime.store.runs,
      runtime.id,
      runtime.clock,
      {
        runStarted: (...args) => events.runStarted?.(...args),
        runEnded: (...args) => events.runEnded?.(...args),
        log: (...args) => events.log?.(...args),
        error: (error, job) => events.error(error, job),
      },
      runtime.taskLogs === undefined
        ? undefined
        : { taskLogs: runtime.taskLogs, sessionId: () => runtime.zk.session.id },
    );
  }

  /** Items held now, by job (what `zk-plan workers` and the metrics show). */
  heldItems(): Record<string, string[]> {
    const byJob: Record<string, string[]> = {};
    for (const held of this.held.values())
      if (!held.releasing) (byJob[held.job] ??= []).push(held.item);
    for (const items of Object.values(byJob)) items.sort();
    return byJob;
  }

  /** Whether every lease of `items` of `job` is held right now by the monotonic clock (drops those that ran out). */
  holding(job: string, items: readonly JobItem[]): boolean {
    this.expireOverdue();
    return items.every((item) => {
      const held = this.held.get(key(job, item.id));
      return (
        held !== undefined &&
        !held.releasing &&
        held.token === item.token &&
        this.runtime.zk.isCurrent(held.session)
      );
    });
  }

  /** Drops, without a write, every item whose lease was not renewed in time: its run is aborted now. */
  expireOverdue(): void {
    const now = this.runtime.clock.mono();
    for (const held of [...this.held.values()])
      if (now >= held.deadline) this.drop(held, 'lease-ran-out');
  }

  /** The session expired: every item is dropped at once, without a write (its lease may be another's by now). */
  sessionExpired(): void {
    for (const held of [...this.held.values()]) this.drop(held, 'session-expired');
    this.registeredOn = undefined;
    this.watches.clear();
  }

  /** One pass: register, read the assignment, renew, give back, take. Resolves how long until the next pass is due (ms). */
  async pass(): Promise<number> {
    try {
      return await this.passOnce();
    } finally {
      this.armDeadline(); // also when the pass failed part-way: items it took have their deadline
    }
  }

  private async passOnce(): Promise<number> {
    const { store, zk, id, timing } = this.runtime;
    this.expireOverdue();
    const session = zk.session;
    if (this.registeredOn !== session.id) {
      await store.register(
        {
          id,
          host: hostname(),
          pid: process.pid,
          jobFunctions: this.runtime.functions.jobNames(),
          leaseMs: timing.leaseMs,
          startedAt: new Date().toISOString(),
        },
        { fence: session },
      );
      this.registeredOn = session.id;
    }
    const wanted = await this.wanted();
    await this.renewDue();
    if (wanted === undefined) return timing.leaseMs / 3; // the assignment cannot be read: keep what is held (renewed), take nothing
    for (const held of this.held.values()) {
      const want = wanted.get(key(held.job, held.item));
      if (want === undefined) held.releasing = true;
      else held.params = want.params;
    }
    this.shareOut();
    await Promise.all(
      [...this.held.values()]
        .filter((held) => held.releasing && !this.runnerHas(held))
        .map((held) => this.release(held)),
    );
    let next = timing.leaseMs / 3;
    for (const want of wanted.values()) {
      if (this.stopping || this.held.has(key(want.job, want.item))) continue;
      try {
        next = Math.min(next, await this.take(want, session));
      } catch (error) {
        if (!(error instanceof MalformedNodeError)) throw error;
        this.runtime.events.error(error, want.job); // that item waits until its lease node is fixed or deleted; the others go on
      }
    }
    this.shareOut();
    await this.failOverTaken();
    await this.retireRunners(wanted);
    const oldest = Math.min(
      ...[...this.held.values()].map(
        (held) => held.renewSentAt + timing.leaseMs / 3 - this.runtime.clock.mono(),
      ),
    );
    return Math.max(0, Math.min(next, oldest));
  }

  /** Stops every run, gives every lease back and leaves the workers' list. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const held of this.held.values()) held.releasing = true;
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
    this.runners.clear();
    await Promise.all(
      [...this.held.values()].map((held) => this.release(held).catch(() => undefined)),
    );
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    await this.runtime.store.unregister(this.runtime.id).catch(() => undefined);
  }

  /**
   * The items the assignment gives this worker that it can run (job defined, enabled, its function
   * registered, item in the pool); undefined when the assignment node is malformed (reported; the
   * manager writes it again).
   */
  private async wanted(): Promise<Map<string, Wanted> | undefined> {
    const { store, functions, id } = this.runtime;
    let assignment: Awaited<ReturnType<JobStore['readAssignment']>>;
    try {
      assignment = await store.readAssignment(this.watches.watch('assignment'));
    } catch (error) {
      if (!(error instanceof MalformedNodeError)) throw error;
      this.runtime.events.error(error);
      return undefined;
    }
    const mine = Object.entries(assignment?.record.jobs ?? {}).filter(
      ([, byWorker]) => (byWorker[id]?.length ?? 0) > 0,
    );
    const jobs = new Set([
      ...mine.map(([job]) => job),
      ...this.runners.keys(),
      ...[...this.held.values()].map((held) => held.job),
    ]);
    const definitions = new Map<string, StoredJob>();
    for (const job of jobs) {
      try {
        const read = await store.read(job, this.watches.watch(`job:${job}`));
        if (read === undefined) this.watches.forget(`job:${job}`);
        else definitions.set(job, read.job);
      } catch (error) {
        if (!(error instanceof MalformedNodeError)) throw error;
        this.runtime.events.error(error, job);
      }
    }
    const wanted = new Map<string, Wanted>();
    for (const [job, byWorker] of mine) {
      const definition = definitions.get(job);
      const fn = definition === undefined ? undefined : functions.jobFunction(definition.fn);
      if (definition === undefined || definition.disabled || fn === undefined) continue;
      this.runnerFor(definition, fn);
      await this.followTriggers(job);
      const pool = new Map(poolItems(definition.workPool).map((item) => [item.id, item]));
      for (const item of byWorker[id] ?? [])
        if (pool.has(item))
          wanted.set(key(job, item), { job, item, params: pool.get(item)?.params });
    }
    return wanted;
  }

  private runnerFor(
    definition: StoredJob,
    fn: NonNullable<ReturnType<FunctionRegistry['jobFunction']>>,
  ): void {
    const existing = this.runners.get(definition.name);
    if (existing !== undefined) {
      existing.update(definition, fn);
      return;
    }
    this.runners.set(
      definition.name,
      new JobRunner(definition, fn, {
        workerId: this.runtime.id,
        jobs: this.runtime.store.parent,
        now: () => this.runtime.clock.wall(),
        holding: (job, items) => this.holding(job, items),
        runStarting: (job, start) => this.journal.start(job, start),
        runEnded: () => this.runtime.changed(),
        onMisfire: (job, tick, handling) => this.runtime.events.misfire?.(job, tick, handling),
        restartDelayMs: this.runtime.restartDelayMs,
        maxRestartDelayMs: this.runtime.maxRestartDelayMs ?? DEFAULTS.jobs.maxRestartDelayMs,
      }),
    );
  }

  /** Runs the job now when its trigger node was written since the last look. */
  private async followTriggers(job: string): Promise<void> {
    const watchName = `trigger:${job}`;
    const count = await this.runtime.store.triggers(job, this.watches.watch(watchName));
    if (count === undefined) {
      this.watches.forget(watchName); // removed meanwhile: no watch was set
      return;
    }
    const seen = this.triggersSeen.get(job);
    this.triggersSeen.set(job, count);
    if (seen !== undefined && count > seen) this.runners.get(job)?.trigger();
  }

  /** Each runner's share: the items of its job held and not being given back, in id order. */
  private shareOut(): void {
    for (const [job, runner] of this.runners) {
      const items = [...this.held.values()]
        .filter((held) => held.job === job && !held.releasing)
        .sort((a, b) => (a.item < b.item ? -1 : a.item > b.item ? 1 : 0))
        .map((held) =>
          held.params === undefined
            ? { id: held.item, token: held.token }
            : { id: held.item, params: held.params, token: held.token },
        );
      runner.setShare(items);
    }
  }

  private runnerHas(held: Held): boolean {
    return this.runners.get(held.job)?.activeItems().has(held.item) === true;
  }

  /** Stops the runners of jobs this worker no longer holds or wants anything of. */
  private async retireRunners(wanted: ReadonlyMap<string, Wanted>): Promise<void> {
    const busy = new Set([...wanted.values(), ...this.held.values()].map((entry) => entry.job));
    for (const [job, runner] of [...this.runners]) {
      if (busy.has(job) || runner.running) continue;
      this.runners.delete(job);
      this.triggersSeen.delete(job);
      await runner.stop();
    }
  }

  /** Takes an item's lease if it is free; otherwise resolves how long until it runs out (its node is watched for a release). */
  private async take(want: Wanted, session: ZkSession): Promise<number> {
    const { store, clock, timing, id } = this.runtime;
    const fence = { fence: session };
    const watchName = `lease:${key(want.job, want.item)}`;
    let lease = await store.readLease(want.job, want.item, this.watches.watch(watchName));
    if (lease === undefined) {
      this.watches.forget(watchName); // no node, so no watch was set
      lease = await store.ensureLease(want.job, want.item, fence);
    }
    const previous = effectiveLease(lease.record, lease, timing);
    const { wait } = takeOver(previous, id, clock.wall(), timing);
    if (wait > 0) return wait;
    const token = lease.mzxid + 1;
    const sentAt = clock.mono();
    const written = await store.writeLease(
      want.job,
      want.item,
      leaseFor(id, token, clock.wall(), timing),
      lease,
      fence,
    );
    if (written === undefined) return timing.leaseMs / 10; // another write came first: look again
    if (!this.runtime.zk.isCurrent(session)) return 0; // expired as the answer came: it runs out on its own
    this.held.set(key(want.job, want.item), {
      ...want,
      token,
      session,
      czxid: written.czxid,
      version: written.version,
      renewSentAt: sentAt,
      deadline: stopDeadline(sentAt, timing),
      releasing: false,
    });
    const lapsed = previous.holder !== '' && previous.released !== true;
    const failover = lapsed && previous.holder !== id;
    this.runtime.events.itemStarted(want.job, want.item, token, failover);
    // Its own lease too: this worker dropped the item (its session expired, or the lease ran out
    // before it could renew), so a run of it may have been cut short here.
    if (lapsed) this.takenFromLapsed.push({ want, previousHolder: previous.holder });
    return timing.leaseMs / 3;
  }

  /**
   * Items this pass took from holders whose leases lapsed (they died, or were cut off or frozen):
   * where the history shows such a holder's last run of an item interrupted (never ended, or
   * aborted), the item's runner runs its share again at once (unless the job says
   * `failover: false`), once per interrupted run however many of its items were taken. Read once
   * the pass has shared the items out, so the runners have them in their share.
   */
  private async failOverTaken(): Promise<void> {
    // Grouped by job and lapsed holder: one look at each holder's history, however many items.
    const byHolder = new Map<string, { job: string; holder: string; items: string[] }>();
    for (const { want, previousHolder } of this.takenFromLapsed.splice(0)) {
      const group = byHolder.get(key(want.job, previousHolder)) ?? {
        job: want.job,
        holder: previousHolder,
        items: [],
      };
      group.items.push(want.item);
      byHolder.set(key(want.job, previousHolder), group);
    }
    for (const { job, holder, items } of byHolder.values()) {
      let interrupted: Map<string, string>;
      try {
        interrupted = await this.runtime.store.runs.interruptedRuns(job, holder, items);
      } catch (error) {
        this.runtime.events.error(error, job); // the items wait for their next tick
        continue;
      }
      const byRun = new Map<string, string[]>();
      for (const [item, run] of interrupted)
        if (this.held.has(key(job, item))) byRun.set(run, [...(byRun.get(run) ?? []), item]);
      for (const [run, runItems] of byRun) this.runners.get(job)?.failover(run, runItems);
    }
  }

  /** Renews every lease last renewed `leaseMs / 3` ago or more. */
  private async renewDue(): Promise<void> {
    const { clock, timing } = this.runtime;
    const due = [...this.held.values()].filter(
      (held) => clock.mono() - held.renewSentAt >= timing.leaseMs / 3,
    );
    await Promise.all(due.map((held) => this.renew(held)));
  }

  private async renew(held: Held): Promise<void> {
    const { store, clock, timing, id, zk } = this.runtime;
    if (clock.mono() >= held.deadline) return this.drop(held, 'lease-ran-out'); // never renew a lease this worker has stopped on
    if (!zk.isCurrent(held.session)) return this.drop(held, 'session-expired');
    const sentAt = clock.mono();
    try {
      const written = await store.writeLease(
        held.job,
        held.item,
        leaseFor(id, held.token, clock.wall(), timing),
        held,
        { fence: held.session },
      );
      if (this.held.get(key(held.job, held.item)) !== held) return; // dropped meanwhile
      if (written === undefined) return this.drop(held, 'lease-lost');
      held.version = written.version;
      held.renewSentAt = sentAt;
      held.deadline = stopDeadline(sentAt, timing);
      this.runtime.events.leaseRenewed(clock.mono() - sentAt);
    } catch (error) {
      if (isZkError(error, 'SESSION_EXPIRED')) return this.drop(held, 'session-expired');
      this.runtime.events.error(error, held.job); // unreachable for now: the deadline decides
    }
  }

  /** Gives an item back: out of the held set first (its run has ended), then the lease written released. */
  private async release(held: Held): Promise<void> {
    const { store, clock, id } = this.runtime;
    if (this.held.get(key(held.job, held.item)) !== held) return;
    this.held.delete(key(held.job, held.item));
    this.runtime.events.itemStopped(held.job, held.item, 'released');
    if (!this.runtime.zk.isCurrent(held.session) || clock.mono() >= held.deadline) return; // it runs out on its own
    try {
      await store.writeLease(
        held.job,
        held.item,
        { holder: id, token: held.token, expiresAt: clock.wall(), released: true },
        held,
        {
          fence: held.session,
        },
      );
    } catch (error) {
      this.runtime.events.error(error, held.job); // not released: it runs out on its own
    }
  }

  private drop(held: Held, reason: ItemStopReason): void {
    if (this.held.get(key(held.job, held.item)) !== held) return;
    this.held.delete(key(held.job, held.item));
    if (this.runnerHas(held)) this.runners.get(held.job)?.abortRun(`item ${held.item}: ${reason}`);
    this.runtime.events.itemStopped(held.job, held.item, reason);
    this.shareOut();
    this.runtime.changed();
  }

  /** A timer at the earliest deadline: an item is dropped when its lease runs out even while a pass waits on ZooKeeper. */
  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    if (this.held.size === 0) return;
    const earliest = Math.min(...[...this.held.values()].map((held) => held.deadline));
    this.deadlineTimer = setTimeout(
      () => {
        this.deadlineTimer = undefined;
        this.expireOverdue();
        this.armDeadline();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(earliest - this.runtime.clock.mono()))),
    );
    this.deadlineTimer.unref?.();
  }
}
