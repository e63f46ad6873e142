/**
 * The deterministic driver of one seed. Every ZooKeeper operation of every client waits in a
 * ManualScheduler; the driver picks which client's next operation lands with a seeded PRNG (each
 * client's own order is kept), lets replies and the work they cause run (microtasks, drained with
 * the real setImmediate), and moves fake time forward only when nothing is queued (or, now and
 * then, while something is: a slow network). Faults and API calls are injected at seeded points.
 *
 * Requires vitest fake timers (see `firstViolation` in seeds.ts), so that all engine time is
 * simulated time.
 */
import { untilTracingLoaded } from '../sim-harness/tracing-loaded.js';
import { vi } from 'vitest';
import { parseControlRecord } from '../../src/control/control-record.js';
import { PlanFinishedError } from '../../src/errors/plan-errors.js';
import { ManualScheduler, MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';
import { crashAndExpire, detachAndExpire, freezeAndExpire } from '../sim-harness/fault-schedule.js';
import { streamFor, type Prng } from '../sim-harness/prng.js';
import { flush } from '../sim-harness/settle-operations.js';
import { SimulatedClock } from '../sim-harness/simulated-clock.js';
import type { SeedResult } from '../sim-harness/violation-report.js';
import { SimProcess, SimWriter, type SimPlan } from './cluster.js';
import { SimObserver } from './observer.js';
import {
  drawWorkload,
  type SimCancelSpec,
  type SimWorkload,
  type WorkloadProfile,
} from './workload.js';

/** Invariant 4: every plan ends within this much simulated time after the last fault. */
export const END_WITHIN_MS = 10 * 60_000;
/** After the last plan is deleted: time for watches to fire and memory to be let go. */
const SETTLE_MS = 5_000;
const MAX_STEPS = 400_000;
const TASK_NODE = /\/task-\d{10}$/;
const SLOT_NODE = /\/zk-plan-limits\/[^/]+\/slot-\d+$/;
const SIMULATION_EPOCH = Date.UTC(2030, 0, 1);
/** Chance, per step with operations queued, that time moves on anyway. */
const ADVANCE_WHILE_BUSY = 0.02;

export interface SimulationResult extends SeedResult {
  readonly trace: readonly string[];
  readonly steps: number;
  readonly simulatedMs: number;
}

/** Runs one seed on fake timers (installed by the caller with FAKED_TIMERS, test/sim-harness/simulated-clock.ts). */
export async function runSeed(
  seed: number,
  profile: WorkloadProfile = 'default',
): Promise<SimulationResult> {
  await untilTracingLoaded();
  vi.clearAllTimers();
  // Simulated wall-clock time: the seed starts at the same instant, and moves only with the fake timers.
  const clock = new SimulatedClock(SIMULATION_EPOCH);
  clock.install();
  // Math.random reads a stream of the seed; replaced outright and put back below, not spied on: a
  // spy would record each of its many calls.
  const mathRandom = streamFor(seed, 'Math.random');
  const realRandom = Math.random;
  Math.random = () => mathRandom.next();
  // The engine builds many expected errors (NO_NODE, NODE_EXISTS…); their stacks are never looked at here and cost a lot.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const ensemble = streamFor(seed, 'ensemble');
  const followers = ensemble.pick([0, 0, 1, 2]);
  const simulation = new Simulation(
    seed,
    drawWorkload(streamFor(seed, 'workload'), profile),
    streamFor(seed, 'schedule'),
    followers,
  );
  let simulatedMs = 0;
  try {
    await simulation.run();
  } catch (error) {
    simulation.observer.violate(
      `the driver threw: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    simulatedMs = simulation.elapsedMs();
    await simulation.tearDown();
    Math.random = realRandom;
    clock.restore();
    Error.stackTraceLimit = stackTraceLimit;
  }
  return {
    seed,
    trace: simulation.observer.trace,
    violation: simulation.observer.violation,
    steps: simulation.steps,
    simulatedMs,
  };
}

/** What is to happen right after the cancel of `plan` lands: its control record says cancelled. */
interface CancelLanding {
  readonly plan: string;
  readonly fire: () => void;
}

class Simulation {
  readonly scheduler = new ManualScheduler();
  readonly server: MemoryZooKeeper;
  readonly observer: SimObserver;
  readonly processes: SimProcess[] = [];
  readonly writers: SimWriter[] = [];
  readonly plans: SimPlan[] = [];
  readonly checker: SimWriter;
  steps = 0;
  private readonly start = Date.now();
  private lastFaultAt = this.start;
  private processSerial = 0;
  /** Actions of the driver still running (builds, retries, deletions, status checks). */
  private actions = 0;
  /** Clients of processes frozen right now: nothing of theirs lands until they wake. */
  private readonly frozen = new Set<string>();
  /** (`cancel` profile) What is to happen right after a plan's cancel lands. */
  private readonly atCancelLanding: CancelLanding[] = [];
  /** (`cancel` profile) The processes that sent a cancel of their own, each dying once it landed. */
  private readonly cancellers: SimWriter[] = [];

  constructor(
    readonly seed: number,
    readonly workload: SimWorkload,
    readonly random: Prng,
    /** Followers beside the leader (0–2): sessions spread over them read what their server has applied. */
    readonly followers: number,
  ) {
    this.server = new MemoryZooKeeper({ scheduler: this.scheduler, followers });
    this.observer = new SimObserver(this.server);
    this.server.onApplied = this.observer.onApplied;
    this.checker = new SimWriter('checker', this.server, workload.sessionTimeoutMs);
    for (const loops of workload.processLoops) this.startProcess(loops);
    workload.writers.forEach((specs, writerIndex) => {
      const writer = new SimWriter(
        `writer-${writerIndex + 1}`,
        this.server,
        workload.sessionTimeoutMs,
      );
      this.writers.push(writer);
      const mine = specs.map((spec, index) =>
        this.addPlan(writer, spec, this.plans.length + index),
      );
      // Each writer builds its plans one after another, from its first plan's start time on.
      setTimeout(() => void this.act(() => this.buildAll(writer, mine)), specs[0]?.startAtMs ?? 0);
    });
    this.observer.note(
      `seed ${seed}: processes ${JSON.stringify(workload.processLoops)}, writers ${workload.writers.map((plans) => plans.length).join('+')}, ` +
        `fault rate ${workload.faultRate} until ${workload.faultWindowMs} ms, session timeout ${workload.sessionTimeoutMs} ms, followers ${followers}`,
    );
  }

  elapsedMs(): number {
    return Date.now() - this.start;
  }

  async run(): Promise<void> {
    let settleUntil: number | undefined;
    let orphansDeleted = false;
    for (;;) {
      await flush();
      if (this.observer.violation !== undefined) return;
      if (++this.steps > MAX_STEPS) {
        this.observer.violate(`no end after ${MAX_STEPS} steps (a livelock?)`);
        return;
      }
      if (this.inFaultWindow() && this.random.chance(this.workload.faultRate)) this.injectFault();
      // Followers apply what the leader committed in their own time; a session reads what its server has.
      if (this.followers > 0 && this.random.chance(0.3))
        this.server.catchUp(this.random.int(1, this.followers), this.random.int(1, 4));
      const pending = this.pendingClients();
      if (pending.length > 0 && !this.random.chance(ADVANCE_WHILE_BUSY)) {
        // A burst of a few operations before replies are let in (as if they crossed on the network):
        // a valid interleaving too, and draining after each one is what costs the most time.
        this.stepOne(this.random.pick(pending));
        for (let burst = this.random.int(0, 3); burst > 0; burst--) {
          const waiting = this.pendingClients();
          if (waiting.length === 0) break;
          this.stepOne(this.random.pick(waiting));
        }
        continue;
      }
      if (pending.length === 0) {
        this.server.catchUp(); // a quiet ensemble catches up
        this.lookAtPlans();
        await flush();
        if (this.pendingClients().length > 0) continue;
        // A frozen process has not heard of the deletions yet: the settling starts once the last one woke.
        if (this.frozen.size > 0) settleUntil = undefined;
        else if (this.allPlansGone() && this.actions === 0 && !this.inFaultWindow()) {
          if (!orphansDeleted) {
            orphansDeleted = true;
            this.deleteOrphans();
            continue;
          }
          settleUntil ??= Date.now() + SETTLE_MS;
          if (Date.now() >= settleUntil) {
            this.checkNothingLeft();
            return;
          }
        }
      }
      if (Date.now() - this.lastFaultAt > END_WITHIN_MS) {
        this.reportUnended();
        return;
      }
      this.advanceTime(pending.length > 0);
    }
  }

  /** Stops everything that could still run: every client dies, every timer goes. */
  async tearDown(): Promise<void> {
    this.server.onApplied = undefined;
    for (const process of this.processes) process.crash();
    const writers = [...this.writers, ...this.cancellers, this.checker];
    for (const client of writers.map((writer) => writer.client)) client.crash();
    await flush();
    vi.clearAllTimers();
    await flush();
  }

  /** Clients with operations waiting that may land now (not those of frozen processes). */
  private pendingClients(): string[] {
    return this.scheduler.pending().filter((client) => !this.frozen.has(client));
  }

  private inFaultWindow(): boolean {
    return this.elapsedMs() < this.workload.faultWindowMs;
  }

  /** Idle: on to the next timer. Busy (operations queued): a few ms only, as if the network were slow. */
  private advanceTime(busy: boolean): void {
    const before = Date.now();
    if (busy) vi.advanceTimersByTime(this.random.int(1, 50));
    else if (vi.getTimerCount() > 0) vi.advanceTimersToNextTimer();
    else vi.advanceTimersByTime(100);
    if (Date.now() !== before) this.observer.note(`time +${Date.now() - before}`);
  }

  /**
   * Applies the head operation of one client. Sometimes first expires the session of a process at a
   * point that matters: its claim is about to land (a claim that throws), or it is about to delete a
   * task node (a deletion that stops at its very end, after the task's children are gone).
   */
  private stepOne(clientName: string): void {
    const [head] = this.scheduler.queued(clientName);
    const process = this.processes.find(
      (candidate) => candidate.name === clientName && !candidate.crashed,
    );
    const claiming = head !== undefined && head.op === 'create' && head.path.endsWith('/owner');
    const deletingTask = head !== undefined && head.op === 'delete' && TASK_NODE.test(head.path);
    if (
      head !== undefined &&
      process !== undefined &&
      this.inFaultWindow() &&
      (claiming || deletingTask) &&
      this.random.chance(this.workload.faultRate * 5)
    ) {
      this.fault(
        `expire ${clientName} while its ${claiming ? 'claim' : 'deletion'} of ${head.path} is in flight`,
      );
      process.client.expireSession();
      return;
    }
    if (head === undefined) return;
    this.scheduler.step(clientName);
    this.fireAtCancelLanding();
  }

  /** Runs what waits for a plan's cancel to land, right after the step that wrote its control record. */
  private fireAtCancelLanding(): void {
    for (const waiting of [...this.atCancelLanding]) {
      const control = `${waiting.plan}/control`;
      const data = this.server.getData(control);
      const gone = !this.server.exists(waiting.plan);
      if (!gone && (data === undefined || parseControlRecord(control, data).state !== 'cancelled'))
        continue;
      this.atCancelLanding.splice(this.atCancelLanding.indexOf(waiting), 1);
      if (!gone) waiting.fire();
    }
  }

  // ---- processes and faults ----

  private startProcess(loops: number): SimProcess {
    const process = new SimProcess(
      `p${++this.processSerial}`,
      this.server,
      this.observer,
      this.seed,
      loops,
      this.workload.sessionTimeoutMs,
    );
    this.processes.push(process);
    this.observer.note(
      `start ${process.name} with ${loops} loop(s), session ${process.client.sessionId ?? '-'}`,
    );
    return process;
  }

  private fault(description: string): void {
    this.lastFaultAt = Date.now();
    this.observer.note(`FAULT ${description}`);
  }

  private injectFault(): void {
    const live = this.processes.filter((process) => !process.crashed);
    const clients: { name: string; client: MemoryZkClient; process?: SimProcess }[] = [
      ...live.map((process) => ({ name: process.name, client: process.client, process })),
      ...this.writers.map((writer) => ({ name: writer.name, client: writer.client })),
    ];
    const target = this.random.pick(clients);
    const kind = this.random.pick([
      'crash',
      'expire',
      'disconnect',
      'lose-reply',
      'lose-reply',
      'lose-send',
      'freeze',
      'retry-failed',
      'delete-plan',
      'pause',
      'cancel',
    ] as const);
    switch (kind) {
      case 'crash': {
        if (!this.workload.crashes || target.process === undefined) return;
        this.crash(target.process);
        return;
      }
      case 'expire':
        this.fault(`expire the session of ${target.name}`);
        target.client.expireSession();
        return;
      case 'disconnect': {
        const downMs = this.random.int(0, Math.round(this.workload.sessionTimeoutMs * 1.5));
        this.fault(`disconnect ${target.name} for ${downMs} ms`);
        // Down for longer than the session lasts: the server expires it after the session timeout.
        if (downMs > this.workload.sessionTimeoutMs)
          detachAndExpire(this.server, target.client, { afterMs: this.workload.sessionTimeoutMs });
        else target.client.disconnect();
        setTimeout(() => {
          this.observer.note(`reconnect ${target.name}`);
          target.client.reconnect();
        }, downMs);
        return;
      }
      case 'lose-reply':
      case 'lose-send': {
        const which = this.random.pick([
          'any',
          'sequential create',
          'claim',
          'release',
          'result',
          'delete',
          'slot take',
          'slot release',
        ] as const);
        const filter = (op: string, path: string): boolean => {
          switch (which) {
            case 'any':
              return true;
            case 'sequential create':
              return op === 'create' && path.endsWith('-');
            case 'claim':
              return op === 'create' && path.endsWith('/owner');
            case 'release':
              return op === 'delete' && path.endsWith('/owner');
            case 'result':
              return op === 'create' && path.endsWith('/result');
            case 'delete':
              return op === 'delete';
            case 'slot take':
              return op === 'create' && SLOT_NODE.test(path);
            case 'slot release':
              return op === 'delete' && SLOT_NODE.test(path);
          }
        };
        // Cut off for a while (others go on meanwhile), and now and then for longer than the session lasts: the client
        // then sends again through its next session what it had sent through the old one.
        const expireSession = this.random.chance(0.3);
        const options = {
          expireSession,
          reconnectAfterMs: this.random.int(
            0,
            expireSession ? this.workload.sessionTimeoutMs : 200,
          ),
        };
        this.fault(
          `${kind === 'lose-reply' ? 'lose the next reply' : 'lose the next request'} (${which}) of ${target.name}${expireSession ? ', its session expiring' : ''}`,
        );
        if (kind === 'lose-reply') target.client.loseNextReply(filter, options);
        else target.client.failNextSend(filter, options);
        return;
      }
      case 'freeze': {
        if (this.frozen.has(target.name)) return;
        this.freeze(target, this.random.int(50, this.workload.sessionTimeoutMs * 2));
        return;
      }
      case 'retry-failed': {
        const plan = this.random.pick(this.plans);
        if (plan.phase !== 'running' || plan.path === undefined) return;
        this.fault(`retryFailed(${plan.path}) while it runs`);
        this.retryFailed(plan);
        return;
      }
      case 'pause': {
        const plan = this.random.pick(this.plans);
        if (plan.phase !== 'running' || plan.path === undefined) return;
        this.pauseAndResume(plan, this.random.chance(0.5), this.random.int(0, 3_000));
        return;
      }
      case 'cancel': {
        const plan = this.random.pick(this.plans);
        if (plan.phase !== 'running' || plan.path === undefined || !this.random.chance(0.3)) return;
        this.cancel(plan);
        return;
      }
      case 'delete-plan': {
        const plan = this.random.pick(this.plans);
        if (plan.phase !== 'running' || plan.path === undefined || !this.random.chance(0.3)) return;
        this.fault(`deletePlan(${plan.path}) while it runs`);
        plan.endedAs = 'deleted-early';
        this.deletePlan(plan);
        return;
      }
    }
  }

  /** The process dies: the server notices after the session timeout, and a replacement process starts then. */
  private crash(process: SimProcess): void {
    this.fault(`crash ${process.name} (session ${process.client.sessionId ?? '-'})`);
    process.crash({
      afterMs: this.workload.sessionTimeoutMs,
      then: () => {
        this.observer.note(`the server expired the session of crashed ${process.name}`);
        this.startProcess(this.random.int(1, 3));
      },
    });
  }

  /**
   * The process stops for `frozenMs`. The server hears nothing from it: past the session timeout the
   * session expires, which it learns only when it wakes.
   */
  private freeze(
    target: { readonly name: string; readonly client: MemoryZkClient },
    frozenMs: number,
  ): void {
    this.fault(`freeze ${target.name} for ${frozenMs} ms`);
    this.frozen.add(target.name);
    if (frozenMs > this.workload.sessionTimeoutMs)
      freezeAndExpire(this.server, target.client, { afterMs: this.workload.sessionTimeoutMs });
    else target.client.freeze();
    setTimeout(() => {
      this.observer.note(`${target.name} wakes`);
      this.frozen.delete(target.name);
      target.client.thaw();
    }, frozenMs);
  }

  // ---- plans: building, watching them end, retrying and deleting them ----

  private addPlan(writer: SimWriter, spec: SimPlan['spec'], index: number): SimPlan {
    const plan: SimPlan = {
      writer,
      spec,
      index,
      path: undefined,
      tasks: [],
      phase: 'waiting',
      checking: false,
      lastCheckAt: 0,
      retriesLeft: spec.retries,
    };
    this.plans.push(plan);
    return plan;
  }

  /** Runs a driver action, counting it so the seed does not end while one is under way. */
  private async act(action: () => Promise<void>): Promise<void> {
    this.actions += 1;
    try {
      await action();
    } finally {
      this.actions -= 1;
    }
  }

  private async buildAll(writer: SimWriter, plans: readonly SimPlan[]): Promise<void> {
    for (const plan of plans) {
      plan.phase = 'building';
      const built = await writer.build(plan, this.observer);
      if (built) {
        plan.phase = 'running';
        this.observer.note(
          `${writer.name} built ${plan.path ?? '?'} (${plan.spec.tasks.length} tasks, ${plan.spec.failurePolicy}, ${plan.spec.withoutIndex ? 'no index' : 'indexed'})`,
        );
        if (plan.spec.cancel !== undefined) this.scheduleCancel(plan, plan.spec.cancel);
      } else {
        plan.phase = 'abandoned';
        plan.endedAs = 'abandoned';
        this.lastFaultAt = Date.now(); // it failed because of a fault: the deletion counts from here
        if (plan.path === undefined) plan.phase = 'deleted';
        else this.deletePlan(plan);
      }
    }
  }

  /** When nothing is queued: plans that ended are retried or deleted. */
  private lookAtPlans(): void {
    for (const plan of this.plans) {
      if (plan.phase !== 'running' || plan.path === undefined || plan.checking) continue;
      const path = plan.path;
      if (!this.server.exists(path)) {
        this.violate(`plan ${path} vanished although nobody deleted it`);
        return;
      }
      const children = this.server.children(path);
      if (!children.some((name) => name.startsWith('task-'))) {
        plan.endedAs = 'completed';
        this.observer.note(`${path} completed`);
        this.observer.checkLogs(path);
        this.deletePlan(plan);
        continue;
      }
      if (!children.includes('failed') || Date.now() - plan.lastCheckAt < 200) continue;
      plan.checking = true;
      plan.lastCheckAt = Date.now();
      void this.act(async () => {
        try {
          const status = await this.checker.zkPlan.plans.status(path);
          if (status.state !== 'failed' || plan.phase !== 'running') return;
          this.observer.note(`${path} failed: ${status.failed.map(({ task }) => task).join(', ')}`);
          if (plan.retriesLeft > 0 && this.random.chance(0.6)) {
            plan.retriesLeft -= 1;
            this.retryFailed(plan);
          } else {
            plan.endedAs = 'failed';
            this.deletePlan(plan);
          }
        } catch (error) {
          this.observer.note(
            `planStatus(${path}) failed: ${error instanceof Error ? error.message.slice(0, 80) : String(error)}`,
          );
        } finally {
          plan.checking = false;
        }
      });
    }
  }

  private retryFailed(plan: SimPlan): void {
    const path = plan.path;
    if (path === undefined) return;
    plan.phase = 'retrying';
    this.lastFaultAt = Date.now(); // the plan runs again: its time to end starts now
    void this.act(async () => {
      for (let tries = 0; ; tries++) {
        try {
          const reset = await plan.writer.zkPlan.control.retryFailed(path);
          this.observer.note(`retryFailed(${path}) reset ${reset.join(', ') || 'nothing'}`);
          break;
        } catch (error) {
          this.observer.note(
            `retryFailed(${path}) threw ${error instanceof Error ? error.message.slice(0, 80) : String(error)}`,
          );
          if (tries > 50) throw error;
          await sleep(100);
        }
      }
      if (plan.phase === 'retrying') plan.phase = 'running';
    });
  }

  /** Pauses a running plan, then resumes it after `pausedMs`; each call is repeated until it goes through, as a user would. */
  private pauseAndResume(plan: SimPlan, abortRunning: boolean, pausedMs: number): void {
    const path = plan.path as string;
    plan.phase = 'pausing';
    this.fault(`pausePlan(${path}${abortRunning ? ', abortRunning' : ''}) for ${pausedMs} ms`);
    void this.act(async () => {
      const refused = await this.repeat(
        `pausePlan(${path})`,
        async () => {
          const { running } = await plan.writer.zkPlan.control.pause(path, { abortRunning });
          this.observer.note(
            `pausePlan(${path}) acknowledged; held: ${running.join(', ') || 'none'}`,
          );
          this.observer.pauseAcknowledged(path, running);
        },
        isPlanFinished,
      );
      if (refused !== undefined) {
        // Finished before the pause: the plan must be finished indeed. An earlier try of this pause
        // may have written its record before its reply was lost: then the plan is paused (and stays
        // so if it is retried), and the user resumes it, as below.
        await this.checkFinished(path, refused);
        const status = await this.checker.zkPlan.plans.status(path).catch(() => undefined);
        if (status?.control?.state !== 'paused') {
          if (plan.phase === 'pausing') plan.phase = 'running';
          return;
        }
        this.observer.note(
          `pausePlan(${path}) was refused, but an earlier try of it paused the plan`,
        );
      }
      await sleep(pausedMs);
      this.observer.resumeSent(path);
      await this.repeat(`resumePlan(${path})`, () => plan.writer.zkPlan.control.resume(path));
      this.lastFaultAt = Date.now(); // the plan runs again: its time to end starts now
      if (plan.phase === 'pausing') plan.phase = 'running';
    });
  }

  /** Cancels a running plan (repeated until it goes through); the driver then deletes it. */
  private cancel(plan: SimPlan): void {
    const path = plan.path as string;
    plan.phase = 'cancelling';
    this.fault(`cancelPlan(${path})`);
    void this.act(async () => {
      const refused = await this.repeat(
        `cancelPlan(${path})`,
        () => plan.writer.zkPlan.control.cancel(path, { reason: 'simulated' }),
        isPlanFinished,
      );
      if (refused !== undefined) {
        // Finished before the cancel: it keeps the state it ended in, and the driver carries on with it.
        await this.checkFinished(path, refused);
        if (plan.phase === 'cancelling') plan.phase = 'running';
        return;
      }
      this.observer.cancelAcknowledged(path);
      this.observer.checkCancelledPlanRecords(path, plan.tasks);
      const status = await this.checker.zkPlan.plans.status(path).catch(() => undefined);
      if (status !== undefined && status.state !== 'cancelled')
        this.violate(
          `plan ${path} is ${status.state} after cancelPlan resolved, expected cancelled`,
        );
      plan.endedAs = 'cancelled';
      this.deletePlan(plan);
    });
  }

  /**
   * (`cancel` profile) Cancels the plan `spec.afterMs` after it was built, if it still runs then,
   * with the fault its spec draws around the cancel, on a process that holds one of its tasks.
   */
  private scheduleCancel(plan: SimPlan, spec: SimCancelSpec): void {
    setTimeout(() => {
      const path = plan.path;
      // Ended meanwhile, or a random fault paused, cancelled or deleted it: nothing to cancel here.
      if (plan.phase !== 'running' || path === undefined) return;
      const runner = this.runnerOf(path);
      if (runner === undefined) {
        this.observer.note(
          `no process holds a task of ${path}: cancelled without a fault to a runner`,
        );
        this.cancelAround(plan, spec);
        return;
      }
      switch (spec.runnerFault) {
        case 'none':
          this.cancelAround(plan, spec);
          return;
        case 'crash-before':
          this.crash(runner);
          this.cancelAround(plan, spec);
          return;
        case 'crash-at-landing':
          this.cancelAround(plan, spec, () => {
            if (!runner.crashed) this.crash(runner);
          });
          return;
        case 'expire-at-landing':
          this.cancelAround(plan, spec, () => {
            if (runner.crashed) return;
            this.fault(`expire the session of ${runner.name} as the cancel of ${path} lands`);
            runner.client.expireSession();
          });
          return;
        case 'freeze-across': {
          // Its session expires a session timeout from now: the cancel starts a little before or after that.
          plan.phase = 'cancelling'; // no random pause or cancel meanwhile
          this.freeze(runner, this.workload.sessionTimeoutMs * 2);
          const startInMs = this.workload.sessionTimeoutMs + this.random.int(-40, 10);
          setTimeout(() => this.cancelAround(plan, spec), startInMs);
          return;
        }
      }
    }, spec.afterMs);
  }

  /** A live, unfrozen process whose current session holds one of the plan's tasks, picked by the seed. */
  private runnerOf(plan: string): SimProcess | undefined {
    const holders = new Set(
      this.server
        .children(plan)
        .filter((name) => name.startsWith('task-'))
        .map((name) => this.server.stat(`${plan}/${name}/owner`)?.ephemeralOwner),
    );
    const runners = this.processes.filter(
      (process) =>
        !process.crashed &&
        !this.frozen.has(process.name) &&
        process.client.sessionId !== undefined &&
        holders.has(process.client.sessionId),
    );
    return runners.length === 0 ? undefined : this.random.pick(runners);
  }

  /**
   * Cancels the plan through its writer, running `atLanding` right after the cancel's control record
   * lands. Cut short (`spec.cutShort`): a process of its own sends the cancel and dies right after
   * its control record lands; the writer then calls it again.
   */
  private cancelAround(plan: SimPlan, spec: SimCancelSpec, atLanding?: () => void): void {
    const path = plan.path as string;
    if (!spec.cutShort) {
      if (atLanding !== undefined) this.atCancelLanding.push({ plan: path, fire: atLanding });
      this.cancel(plan);
      return;
    }
    plan.phase = 'cancelling';
    const canceller = new SimWriter(
      `canceller-${this.cancellers.length + 1}`,
      this.server,
      this.workload.sessionTimeoutMs,
    );
    this.cancellers.push(canceller);
    this.fault(
      `cancelPlan(${path}) by ${canceller.name}, which dies once its control record lands`,
    );
    let handedOver = false;
    const callAgain = (): void => {
      if (handedOver) return;
      handedOver = true;
      this.cancel(plan);
    };
    const landing: CancelLanding = {
      plan: path,
      fire: () => {
        this.fault(`${canceller.name} dies right after its control record of ${path} landed`);
        crashAndExpire(this.server, canceller.client, { afterMs: this.workload.sessionTimeoutMs });
        atLanding?.();
        callAgain();
      },
    };
    this.atCancelLanding.push(landing);
    // A cancel that dies never settles. One that settles did not land (the plan had finished): the
    // writer asks in its place, and is answered the same way.
    void canceller.zkPlan.control.cancel(path, { reason: 'simulated' }).then(
      () => this.settledWithoutLanding(canceller, landing, 'resolved', callAgain),
      (error: unknown) =>
        this.settledWithoutLanding(
          canceller,
          landing,
          `threw ${error instanceof Error ? error.message.slice(0, 80) : String(error)}`,
          callAgain,
        ),
    );
  }

  /** A canceller's call settled before its control record landed: it exits, and the writer calls again. */
  private settledWithoutLanding(
    canceller: SimWriter,
    landing: CancelLanding,
    outcome: string,
    callAgain: () => void,
  ): void {
    this.observer.note(`${canceller.name}'s cancelPlan ${outcome}`);
    const waiting = this.atCancelLanding.indexOf(landing);
    if (waiting >= 0) this.atCancelLanding.splice(waiting, 1);
    canceller.client.close();
    callAgain();
  }

  /**
   * Calls until the call goes through (undefined) or answers with an error `isAnswer` takes as
   * final (returned): as a user would, who tries again after a connection problem.
   */
  private async repeat<E>(
    what: string,
    call: () => Promise<void>,
    isAnswer: (error: unknown) => error is E = neverAnAnswer,
  ): Promise<E | undefined> {
    for (let tries = 0; ; tries++) {
      try {
        await call();
        return undefined;
      } catch (error) {
        this.observer.note(
          `${what} threw ${error instanceof Error ? error.message.slice(0, 80) : String(error)}`,
        );
        if (isAnswer(error)) return error;
        if (tries > 50) throw error;
        await sleep(100);
      }
    }
  }

  /** A pause or cancel refused with PLAN_FINISHED: the plan is in the state the error names (a failed one may have been retried since). */
  private async checkFinished(path: string, refused: PlanFinishedError): Promise<void> {
    const status = await this.checker.zkPlan.plans.status(path).catch(() => undefined);
    if (status === undefined || status.state === refused.state) return;
    if (refused.state === 'failed' && status.state !== 'completed') return; // retried meanwhile: it may run again
    this.violate(
      `${refused.action} of ${path} was refused as ${refused.state}, but the plan is ${status.state}`,
    );
  }

  private deletePlan(plan: SimPlan): void {
    const path = plan.path;
    if (path === undefined) return;
    plan.phase = 'deleting';
    void this.act(async () => {
      await this.deleteWithRetries(plan.writer, path);
      plan.phase = 'deleted';
    });
  }

  private async deleteWithRetries(writer: SimWriter, path: string): Promise<void> {
    for (let tries = 0; this.server.exists(path); tries++) {
      try {
        await writer.zkPlan.plans.delete(path);
      } catch (error) {
        this.observer.note(
          `deletePlan(${path}) threw ${error instanceof Error ? error.message.slice(0, 80) : String(error)}`,
        );
        if (tries > 50) throw error;
        await sleep(100);
      }
    }
    this.observer.note(`${path} deleted`);
  }

  private allPlansGone(): boolean {
    return this.plans.every((plan) => plan.phase === 'deleted');
  }

  /** Plans whose createPlan lost its reply (or was abandoned before its path was known): the checker deletes them. */
  private deleteOrphans(): void {
    for (const path of this.observer.createdPlans) {
      if (!this.server.exists(path)) continue;
      this.observer.note(`deleting orphan plan ${path}`);
      void this.act(() => this.deleteWithRetries(this.checker, path));
    }
  }

  private violate(message: string): void {
    this.observer.violate(message);
  }

  /** Invariant 4 failed: say which plans are stuck and how they look. */
  private reportUnended(): void {
    const stuck = this.plans.filter((plan) => plan.phase !== 'deleted');
    const details = stuck.map(
      (plan) =>
        `${plan.path ?? `plan #${plan.index}`} (${plan.phase})\n${plan.path && this.server.exists(plan.path) ? this.server.dump(plan.path) : ''}`,
    );
    this.violate(
      `invariant 4: ${stuck.length} plan(s) did not end within ${END_WITHIN_MS / 60_000} min of simulated time after the last fault:\n${details.join('\n')}`,
    );
  }

  /** Invariant 5: with every plan deleted, no live session watches their paths and no live process remembers them. */
  private checkNothingLeft(): void {
    const liveSessions = new Set(this.server.sessions().map(({ sessionId }) => sessionId));
    const plans = [...this.observer.createdPlans];
    const onPlan = (path: string): boolean =>
      plans.some((plan) => path === plan || path.startsWith(`${plan}/`));
    const watches = this.server
      .watches()
      .filter((watch) => liveSessions.has(watch.sessionId) && onPlan(watch.path));
    if (watches.length > 0) {
      this.violate(
        `invariant 5: watches left on deleted plans: ${watches.map((watch) => `${watch.clientName} ${watch.kind} ${watch.path}`).join(', ')}`,
      );
      return;
    }
    for (const process of this.processes) {
      if (process.crashed) continue;
      const footprint = process.zkPlan.footprint();
      const left = {
        plans: footprint.plans,
        candidates: footprint.candidates,
        ownPriorities: footprint.ownPriorities,
        waitingForSlot: footprint.waitingForSlot,
        watchedOwners: footprint.watchedOwners,
        offeredLater: footprint.offeredLater,
        runningStops: footprint.runningStops,
        held: footprint.held,
        rememberedSettings: footprint.rememberedSettings,
      };
      if (Object.values(left).some((count) => count > 0)) {
        this.violate(
          `invariant 5: ${process.name} still remembers deleted plans: ${JSON.stringify(left)}`,
        );
        return;
      }
    }
  }
}

/** A pause in simulated time. */
const isPlanFinished = (error: unknown): error is PlanFinishedError =>
  error instanceof PlanFinishedError;
const neverAnAnswer = (_error: unknown): _error is never => false;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
