/**
 * The fault run's faults. The injector follows the execution log as the workers append to it; at
 * each execution of the plan under test that starts, it may hit the worker process running it (or
 * the server) with one of the faults asked for, chosen with the seeded random source
 * (fault-choice.ts: drawn, or forced for a kind still owed its one injection): so faults land while
 * tasks are running, whatever the plan's pace. At most one fault per worker, and one worker always
 * left untouched, so the plan keeps going; a server restart waits for every other fault to end and
 * holds off the others while it runs. A fault's end (SIGCONT, the link restored) is never skipped,
 * even on stop.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { OP_CODE, type TcpProxy } from './tcp-proxy.js';
import type { WorkerFleet, WorkerProcess } from './worker-process.js';
import { pauseUntil } from './pause.js';
import { parseExecutionRecords, type StartRecord } from './execution-record.js';
import { chooseFault, owedRestartStart } from './fault-choice.js';
import type { FaultKind, InjectedFault } from './fault-report.js';
import type { ResolvedFaultRate } from './harness-options.js';

/** One worker's place: its proxy to ZooKeeper, and the process in it (a killed one's replacement). */
export interface WorkerSlot {
  readonly proxy: TcpProxy;
  worker: WorkerProcess;
}

/** What the injector works with. */
export interface FaultInjectorSetup {
  readonly slots: WorkerSlot[];
  readonly fleet: WorkerFleet;
  readonly faults: ReadonlyMap<FaultKind, ResolvedFaultRate>;
  readonly random: () => number;
  /** Owe each fault asked for one injection (the `atLeastOnce` option). */
  readonly atLeastOnce: boolean;
  /** Executions of the plan the fault-free run started: when owed faults come due. */
  readonly expectedStarts: number;
  readonly logFile: string;
  readonly sessionTimeoutMs: number;
  /** Stops the server, waits `downMs`, starts it again on the same port and data. */
  readonly restartZooKeeper: (downMs: number) => Promise<void>;
}

/** How often the log is read for new execution starts. */
const FOLLOW_EVERY_MS = 25;
/** The request types a lost reply follows: the writes. */
const WRITE_OP_CODES = [OP_CODE.create, OP_CODE.setData, OP_CODE.delete];

/** Injects faults into one plan's run; `stop()` ends it and resolves what was injected. */
export class FaultInjector {
  private readonly injected: InjectedFault[] = [];
  private readonly used = new Map<FaultKind, number>();
  private readonly ready = new Set<WorkerProcess>();
  private readonly stopping = new AbortController();
  private offset = 0;
  private partial = '';
  /** Executions of the plan started so far, those no fault could hit included. */
  private startsSeen = 0;
  /** The start at which an owed server restart hits (drawn only when one is owed). */
  private readonly restartDueAt: number;
  /** The faults in progress, and the slots they hit. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly busy = new Set<WorkerSlot>();
  private restarting = false;
  private follower: Promise<void> | undefined;
  private plan = '';
  private startedAt = 0;

  constructor(private readonly setup: FaultInjectorSetup) {
    for (const slot of setup.slots) this.ready.add(slot.worker);
    // Drawn only when a restart is owed, so that a run without one draws as it always did.
    const restartOwed = setup.atLeastOnce && setup.faults.has('restartZooKeeper');
    this.restartDueAt = restartOwed ? owedRestartStart(setup.expectedStarts, setup.random) : 1;
  }

  /** Starts following the log for executions of `plan` (those already logged are skipped). */
  start(plan: string, startedAt: number): void {
    this.plan = plan;
    this.startedAt = startedAt;
    this.follower = this.follow();
  }

  /** Stops injecting, ends the fault in progress, and resolves every fault injected. */
  async stop(): Promise<InjectedFault[]> {
    this.stopping.abort();
    await this.follower;
    await Promise.all([...this.inFlight]);
    return [...this.injected];
  }

  private async follow(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      for (const record of this.newRecords()) {
        if (record.kind === 'start' && record.plan === this.plan) this.onExecutionStart(record);
      }
      await pauseUntil(Date.now() + FOLLOW_EVERY_MS, signal);
    }
  }

  /** The records appended since the last read; a line not complete yet waits for the next. */
  private newRecords(): ReturnType<typeof parseExecutionRecords> {
    const fd = openSync(this.setup.logFile, 'r');
    try {
      const chunks: Buffer[] = [];
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const read = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (read === 0) break;
        chunks.push(Buffer.from(buffer.subarray(0, read)));
        this.offset += read;
      }
      const text = this.partial + Buffer.concat(chunks).toString('utf8');
      const cut = text.lastIndexOf('\n');
      this.partial = text.slice(cut + 1);
      return parseExecutionRecords(text.slice(0, cut + 1));
    } finally {
      closeSync(fd);
    }
  }

  private onExecutionStart(start: StartRecord): void {
    this.startsSeen++;
    if (this.restarting || this.stopping.signal.aborted) return;
    const found = this.setup.slots.find(
      (candidate) => candidate.worker.pid === start.pid && this.ready.has(candidate.worker),
    );
    // One fault per worker, and one worker always left alone.
    const slot =
      found !== undefined && !this.busy.has(found) && this.busy.size < this.setup.slots.length - 1
        ? found
        : undefined;
    const choice = chooseFault(
      {
        faults: this.setup.faults,
        used: this.used,
        atLeastOnce: this.setup.atLeastOnce,
        startsSeen: this.startsSeen,
        expectedStarts: this.setup.expectedStarts,
        workerCanTakeFault: slot !== undefined,
        faultsInFlight: this.inFlight.size,
        restartDueAt: this.restartDueAt,
      },
      this.setup.random,
    );
    if (choice === undefined) return;
    const { kind, forced } = choice;
    const rate = this.setup.faults.get(kind);
    if (rate === undefined) return;
    this.used.set(kind, (this.used.get(kind) ?? 0) + 1);
    this.injected.push({
      kind,
      atMs: Date.now() - this.startedAt,
      target: kind === 'restartZooKeeper' ? 'zookeeper' : `pid ${start.pid}`,
      during: start.task,
      forced,
    });
    const target = kind === 'restartZooKeeper' ? undefined : slot;
    if (target === undefined) this.restarting = true;
    else this.busy.add(target);
    const fault: Promise<void> = this.inject(kind, rate, target).finally(() => {
      this.inFlight.delete(fault);
      if (target === undefined) this.restarting = false;
      else this.busy.delete(target);
    });
    this.inFlight.add(fault);
  }

  private async inject(
    kind: FaultKind,
    rate: ResolvedFaultRate,
    slot: WorkerSlot | undefined,
  ): Promise<void> {
    const { sessionTimeoutMs } = this.setup;
    // Past the session timeout, with room for the server's own check (every tick).
    const pastSessionMs = sessionTimeoutMs * 1.5 + 500;
    switch (kind) {
      case 'restartZooKeeper':
        await this.setup.restartZooKeeper(Math.floor(sessionTimeoutMs / 2));
        return;
      case 'killWorkers':
        if (slot !== undefined) await this.kill(slot);
        return;
      case 'freezeWorkers':
        if (slot === undefined) return;
        slot.worker.suspend();
        try {
          await pauseUntil(Date.now() + pastSessionMs, this.stopping.signal);
        } finally {
          slot.worker.resume();
        }
        return;
      case 'expireSessions':
        await this.withLink(slot, pastSessionMs, (proxy) => proxy.setMode('blackhole'));
        return;
      case 'loseReplies': {
        const opCode = WRITE_OP_CODES[Math.floor(this.setup.random() * WRITE_OP_CODES.length)];
        // Shorter than the session: the worker reconnects on the same session, uncertain of its write.
        await this.withLink(slot, sessionTimeoutMs / 2, (proxy) =>
          proxy.loseRepliesFrom(opCode ?? OP_CODE.create),
        );
        return;
      }
      case 'slowLinks':
        await this.withLink(slot, sessionTimeoutMs, (proxy) => proxy.setLatency(rate.latencyMs));
        return;
    }
  }

  /** SIGKILL the slot's process and start a new one in its place (hit again only once it is ready). */
  private async kill(slot: WorkerSlot): Promise<void> {
    const victim = slot.worker;
    this.ready.delete(victim);
    await victim.kill9();
    const replacement = this.setup.fleet.restart(victim);
    slot.worker = replacement;
    void replacement.ready().then(
      () => this.ready.add(replacement),
      () => undefined, // a replacement that does not start shows in the report: its tasks run elsewhere
    );
  }

  /** Applies `fault` to the slot's link for `forMs`, then restores it (cut and pass: the client reconnects). */
  private async withLink(
    slot: WorkerSlot | undefined,
    forMs: number,
    fault: (proxy: TcpProxy) => void,
  ): Promise<void> {
    if (slot === undefined) return;
    fault(slot.proxy);
    try {
      await pauseUntil(Date.now() + forMs, this.stopping.signal);
    } finally {
      slot.proxy.restore();
    }
  }
}
