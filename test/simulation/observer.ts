/**
 * The simulation's shared log and invariant checks 1–3, 6, 7, 9 and 10: every applied ZooKeeper operation (via
 * `server.onApplied`), every start and end of a task function, and what was first stored where.
 */
import { parseControlRecord } from '../../src/control/control-record.js';
import { decodeAttemptLog } from '../../src/logs/attempt-log-record.js';
import { parseHistoryRecord } from '../../src/store/task-history.js';
import { historyEntryFor } from '../../src/zk/layout.js';
import { taskLogsPath } from '../../src/logs/task-log-store.js';
import { isDeepStrictEqual } from 'node:util';
import { decodeValue } from '../../src/serialization/codec.js';
import type { AppliedOperation, MemoryZooKeeper } from '../../src/testing/index.js';
import type { SimTaskParams } from './workload.js';
import type { SimChildParams, SimSumParams } from './cluster.js';
import { outcomeOf, type InputOutcome } from '../../src/trigger/task-outcome.js';

/** Who runs a task function: a simulated process, with its fate. */
export interface RunOwner {
  readonly name: string;
  readonly crashed: boolean;
}

/** How a run ended, as far as invariant 10 needs to know. */
export interface RunEnd {
  /** It threw because its signal aborted for its plan's cancel (PlanCancelledError). */
  readonly byCancel: boolean;
  /** Its process had crashed before: a dead process's leftover timers, not a worker giving the task back. */
  readonly afterCrash: boolean;
}

export interface RunRecord {
  readonly id: number;
  readonly task: string;
  readonly owner: RunOwner;
  /** The worker loop that runs it (the task context's workerId). */
  readonly workerId: string;
  /** The server's id of the session the process had when the run started. */
  readonly sessionId: string | undefined;
  /** 1 for the task's first start, across all processes. */
  readonly number: number;
  ended: boolean;
  /** The function returned (its result may or may not have been stored). */
  returned?: boolean;
  /** Set with `ended`. */
  end?: RunEnd;
}

const TASK_NODE = /^(.*\/task-\d{10})$/;
const TASK_CHILD = /^(.*\/task-\d{10})\/([a-z]+)$/;
const PLAN_NODE = /^\/plans\/plan-\d{10}$/;
const CONTROL_NODE = /^(\/plans\/plan-\d{10})\/control$/;
const HISTORY_RECORD = /^(\/plans\/plan-\d{10})\/history\/(task-\d{10})$/;

export class SimObserver {
  readonly trace: string[] = [];
  /** The first violation found; the driver stops at the end of the step. */
  violation: string | undefined;
  /** Every plan node ever created (also by a createPlan whose reply was lost). */
  readonly createdPlans = new Set<string>();
  private readonly runsByTask = new Map<string, RunRecord[]>();
  private readonly firstResult = new Map<string, Buffer>();
  private readonly failedForGood = new Set<string>();
  /** Tasks that failed for good at some time (a retryFailed since does not take it back: what was handed on stays). */
  private readonly everFailedForGood = new Set<string>();
  /** `spawner#index` → the sim-child tasks that started for that place (invariant 9: one). */
  private readonly childTasks = new Map<string, Set<string>>();
  /** A spawner → the sim-sum tasks that started for it (invariant 9: one). */
  private readonly sumTasks = new Map<string, Set<string>>();
  /** `plan#label` → task path, from the definitions the writers created. */
  private readonly taskByLabel = new Map<string, string>();
  private runCount = 0;
  /**
   * Plans paused or cancelled, from the first write of the plan node after the server applied the
   * control node's creation (pausePlan and cancelPlan touch the plan right after; every process
   * hears that touch before the answer to any later request, and pausePlan reports the tasks held
   * after it): the tasks that had an owner then, each of which may still start once. Nothing
   * else of the plan may start (invariant 6).
   */
  private readonly halted = new Map<string, Set<string>>();
  /** Plans whose control node exists and whose plan node has not been written since. */
  private readonly haltPending = new Set<string>();
  /**
   * The promise of docs/guide/control.md (Guarantees), checked as the caller sees it: from the moment pausePlan resolved (until
   * resumePlan is sent), only the tasks it reported held may start, each once; from the moment
   * cancelPlan resolved, only the tasks owned then (invariant 6 too).
   */
  private readonly acknowledged = new Map<
    string,
    { readonly call: string; readonly allowed: Set<string> }
  >();
  /** Each task's concurrency key (`k<limit>`: the key names its limit), from the definitions the writers created. */
  private readonly keyOf = new Map<string, string>();
  /**
   * Invariant 10: for each plan whose control record came to say cancelled, the runs going on right
   * then, by task: each run's function was running under its process's live session, and that
   * session held the task's owner node.
   */
  private readonly runningAtCancel = new Map<string, Map<string, RunRecord>>();
  /** Every history record ever created: a record is written once, never again (invariant 10). */
  private readonly historyRecords = new Set<string>();

  constructor(private readonly server: MemoryZooKeeper) {}

  note(line: string): void {
    this.trace.push(`${Date.now()} ${line}`);
  }

  violate(message: string): void {
    this.violation ??= message;
    this.note(`VIOLATION ${message}`);
  }

  /** The server's hook: logs the operation and records results, failures for good and task labels. */
  readonly onApplied = (event: AppliedOperation): void => {
    const path = event.createdPath ?? event.path;
    this.trace.push(
      `${event.clientName} ${event.op} ${path} ${event.ok ? 'ok' : `rc=${event.rc}`}`,
    );
    if (!event.ok) return;
    if (event.op === 'create' && PLAN_NODE.test(path)) this.createdPlans.add(path);
    const child = TASK_CHILD.exec(path);
    if (event.op === 'create' && child !== null) {
      const [, task, name] = child as unknown as [string, string, string];
      if (name === 'result' && !this.firstResult.has(task) && event.data)
        this.firstResult.set(task, event.data);
      if (name === 'failed') {
        this.failedForGood.add(task);
        this.everFailedForGood.add(task);
      }
    }
    // A final try's record (its failure not retryable) is where a task fails for good: its failure
    // is handed on from there, before the task is marked failed.
    // From then on it never runs again, unless retryFailed resets it (deleting `attempts`, then `failed`).
    if (
      (event.op === 'create' || event.op === 'setData') &&
      child !== null &&
      child[2] === 'attempts' &&
      event.data &&
      isFinalTry(path, event.data)
    ) {
      this.failedForGood.add(child[1] as string);
      this.everFailedForGood.add(child[1] as string);
    }
    if (
      event.op === 'delete' &&
      child !== null &&
      (child[2] === 'failed' || child[2] === 'attempts')
    )
      this.failedForGood.delete(child[1] as string);
    const control = CONTROL_NODE.exec(path);
    if (control !== null && event.op === 'create') this.haltPending.add(control[1] as string);
    if (control !== null && event.op === 'delete') {
      this.halted.delete(control[1] as string);
      this.haltPending.delete(control[1] as string);
    }
    if (event.op === 'setData' && this.haltPending.delete(path))
      this.halted.set(path, this.ownedTasks(path));
    if (control !== null && (event.op === 'create' || event.op === 'setData'))
      this.controlWritten(control[1] as string, path, event.data ?? null);
    const history = HISTORY_RECORD.exec(path);
    if (history !== null && event.op === 'setData')
      this.violate(`invariant 10: the history record ${path} was written again (setData)`);
    if (history !== null && event.op === 'create')
      this.historyRecordCreated(`${history[1]}/${history[2]}`, path, event.data ?? null);
    if (event.op === 'create' && TASK_NODE.test(path) && event.data) {
      const label = labelOf(path, event.data);
      if (label !== undefined) this.taskByLabel.set(`${planOf(path)}#${label}`, path);
      const key = concurrencyKeyOf(path, event.data);
      if (key !== undefined) this.keyOf.set(path, key);
    }
  };

  /** pausePlan resolved, reporting `held`. */
  pauseAcknowledged(plan: string, held: readonly string[]): void {
    this.acknowledged.set(plan, { call: 'pausePlan', allowed: new Set(held) });
  }

  /** cancelPlan resolved: the tasks owned now may still start (and are aborted). */
  cancelAcknowledged(plan: string): void {
    this.acknowledged.set(plan, { call: 'cancelPlan', allowed: this.ownedTasks(plan) });
  }

  /** resumePlan is about to be sent: the plan may run again. */
  resumeSent(plan: string): void {
    if (this.acknowledged.get(plan)?.call === 'pausePlan') this.acknowledged.delete(plan);
  }

  /**
   * Invariant 8, when a plan completed: every log line kept under a task was written by a run of
   * that task (console capture and ctx.log never cross tasks), and every task kept the last line
   * of a run that returned (a try's lines are written before its completion is).
   */
  checkLogs(plan: string): void {
    for (const [task, runs] of this.runsByTask) {
      if (!task.startsWith(`${plan}/`)) continue;
      const dir = taskLogsPath(task);
      const ids = new Set(runs.map(({ id }) => id));
      let ended = false;
      for (const name of this.server.exists(dir) ? this.server.children(dir) : []) {
        const path = `${dir}/${name}`;
        const record = decodeAttemptLog(path, this.server.getData(path) ?? null);
        for (const { msg } of record.lines) {
          const match = /^run (\d+) (starts|works|ends)$/.exec(msg);
          if (match === null || !ids.has(Number(match[1]))) {
            this.violate(
              `invariant 8: the log of ${task} (${name}) holds "${msg}", not a line of one of its runs (${[...ids].join(', ')})`,
            );
            return;
          }
          if (match[2] === 'ends') ended = true;
        }
      }
      if (!ended && runs.some((run) => run.returned))
        this.violate(
          `invariant 8: ${task} completed but no kept log has the last line of a run that returned`,
        );
    }
  }

  /** A task function starts: checks invariants 1 (one live runner), 2 (never after failing for good) and 3 (exact inputs). */
  startRun(
    owner: RunOwner,
    currentSession: string | undefined,
    workerId: string,
    task: string,
    params: SimTaskParams,
    args: readonly unknown[],
  ): RunRecord {
    const runs = this.runsByTask.get(task) ?? [];
    this.runsByTask.set(task, runs);
    // A run owns the task only while the owner node is its process's current session's. When the claim's
    // session expired before the function started (its reply came after the expiry), the run is no owner:
    // its writes are fenced, so it does not count for invariant 1; the trace says so (its signal should be aborted).
    const holder = this.server.stat(`${task}/owner`)?.ephemeralOwner;
    const sessionId =
      holder !== undefined && holder === currentSession ? currentSession : undefined;
    const run: RunRecord = {
      id: ++this.runCount,
      task,
      owner,
      workerId,
      sessionId,
      number: runs.length + 1,
      ended: false,
    };
    this.note(
      `start ${task} run#${run.id} (${run.number}) by ${owner.name} session ${currentSession ?? '-'}${sessionId === undefined ? ` WITHOUT OWNERSHIP (owner node: ${holder ?? 'none'})` : ''}`,
    );
    for (const other of sessionId === undefined ? [] : runs) {
      if (
        other.ended ||
        other.owner.crashed ||
        other.sessionId === undefined ||
        !this.server.isAlive(other.sessionId)
      )
        continue;
      this.violate(
        `invariant 1: ${task} started (run#${run.id} by ${owner.name}) while run#${other.id} by ${other.owner.name} is still running under live session ${other.sessionId}`,
      );
    }
    if (this.failedForGood.has(task))
      this.violate(
        `invariant 2: ${task} failed for good but started again (run#${run.id} by ${owner.name})`,
      );
    const promised = this.acknowledged.get(planOf(task));
    if (promised !== undefined && !promised.allowed.delete(task)) {
      this.violate(
        `invariant 6: ${task} started (run#${run.id} by ${owner.name}) after ${promised.call} resolved, and it was not held then`,
      );
    }
    const allowed = this.halted.get(planOf(task));
    if (allowed !== undefined && !allowed.delete(task)) {
      this.violate(
        `invariant 6: ${task} started (run#${run.id} by ${owner.name}) while its plan is paused or cancelled, and it had no owner when that happened`,
      );
    }
    this.checkInputs(run, params, args);
    runs.push(run);
    if (sessionId !== undefined) this.checkLimit(run);
    return run;
  }

  /** Invariant 7: no more live runs of a concurrency key at once than its limit. */
  private checkLimit(run: RunRecord): void {
    const key = this.keyOf.get(run.task);
    if (key === undefined) return;
    const limit = Number(key.slice(1));
    const live = [...this.runsByTask.entries()]
      .filter(([task]) => this.keyOf.get(task) === key)
      .flatMap(([, runs]) => runs)
      .filter(
        (other) =>
          !other.ended &&
          !other.owner.crashed &&
          other.sessionId !== undefined &&
          this.server.isAlive(other.sessionId),
      );
    if (live.length > limit) {
      this.violate(
        `invariant 7: ${live.length} runs of key ${key} (limit ${limit}) at once: ${live.map((other) => `${other.task} run#${other.id} by ${other.owner.name}`).join(', ')}`,
      );
    }
  }

  /** Tasks of the plan with an owner node right now. */
  private ownedTasks(plan: string): Set<string> {
    return new Set(
      this.server
        .children(plan)
        .filter((name) => name.startsWith('task-'))
        .map((name) => `${plan}/${name}`)
        .filter((task) => this.server.exists(`${task}/owner`)),
    );
  }

  /** A run ended: `byCancel` when it threw because its plan's cancel aborted its signal. */
  endRun(run: RunRecord, outcome: string, byCancel = false): void {
    run.ended = true;
    run.end = { byCancel, afterCrash: run.owner.crashed };
    this.note(`end ${run.task} run#${run.id} ${outcome}`);
  }

  /** A plan's control node was written: the first time it says cancelled, the runs going on then are kept for invariant 10. */
  private controlWritten(plan: string, path: string, data: Buffer | null): void {
    if (this.runningAtCancel.has(plan) || parseControlRecord(path, data).state !== 'cancelled')
      return;
    const running = new Map<string, RunRecord>();
    for (const [task, runs] of this.runsByTask) {
      if (planOf(task) !== plan) continue;
      const holder = this.server.stat(`${task}/owner`)?.ephemeralOwner;
      const run = runs.find(
        (candidate) =>
          !candidate.ended &&
          candidate.sessionId !== undefined &&
          candidate.sessionId === holder &&
          this.server.isAlive(candidate.sessionId),
      );
      if (run !== undefined) running.set(task, run);
    }
    this.runningAtCancel.set(plan, running);
    this.note(
      `${plan} cancelled; running then: ${[...running.values()].map((run) => `${run.task} run#${run.id} by ${run.workerId}`).join(', ') || 'none'}`,
    );
  }

  /**
   * Invariant 10, as each history record lands: it is the task's first, and a task whose function
   * was running under a live session when its plan's cancel landed is recorded as cancelled while
   * running, on that run's worker. Both writers decide it from a read made while that session still
   * held the task: the worker that gives the task back for the cancel writes it before it lets the
   * task go, and otherwise the cancel finds the task held (src/worker/record-cancelled-run.ts).
   * Not required once that session has expired (the cancel may have found the task free), nor when
   * the run ended by itself first (returned or failed: the task moved on, and is recorded where it
   * went).
   */
  private historyRecordCreated(task: string, path: string, data: Buffer | null): void {
    if (this.historyRecords.has(path)) {
      this.violate(`invariant 10: the history record ${path} was created a second time`);
      return;
    }
    this.historyRecords.add(path);
    const run = this.runningAtCancel.get(planOf(task))?.get(task);
    if (run?.sessionId === undefined || !this.server.isAlive(run.sessionId)) return;
    if (run.end !== undefined && !run.end.byCancel && !run.end.afterCrash) return;
    const record = parseHistoryRecord(path, data);
    const recorded =
      record === undefined
        ? 'unreadable'
        : record.state === 'cancelled'
          ? `cancelled, was ${record.was} on ${record.workerId ?? 'no worker'}`
          : record.state;
    this.note(`${task} recorded ${recorded}`);
    if (
      record?.state !== 'cancelled' ||
      record.was !== 'running' ||
      record.workerId !== run.workerId
    )
      this.violate(
        `invariant 10: ${task} was running (run#${run.id} by ${run.workerId}, session ${run.sessionId} alive) when its plan's cancel landed, but its history record says ${recorded}`,
      );
  }

  /**
   * Invariant 10, once control.cancel resolved: every task the plan's writer added has its history
   * record (a plan that keeps one): the cancel records each task it deletes before it deletes any,
   * and a task that ended before had its record written before its node went.
   */
  checkCancelledPlanRecords(plan: string, tasks: readonly string[]): void {
    if (!this.server.exists(`${plan}/history`)) return;
    const missing = tasks.filter((task) => !this.server.exists(historyEntryFor(task)));
    if (missing.length > 0)
      this.violate(
        `invariant 10: control.cancel(${plan}) resolved, but ${missing.length} of its ${tasks.length} task(s) have no history record: ${missing.join(', ')}`,
      );
  }

  /**
   * Invariant 3: a run gets exactly its inputs. Under the default rule, each is the value its producer
   * first stored, and none is a skip (a task with a skipped input is skipped, never run: invariant 3
   * too). Under another rule, each is the outcome of its producer: its first stored value (succeeded,
   * or skipped when that value is a skip), or a failure of a task that failed for good (its producer
   * itself, or one upstream that blocks it); and the rule holds for them.
   */
  private checkInputs(run: RunRecord, params: SimTaskParams, args: readonly unknown[]): void {
    if (args.length !== params.inputs.length) {
      this.violate(
        `invariant 3: ${run.task} run#${run.id} got ${args.length} input(s), expected ${params.inputs.length}`,
      );
      return;
    }
    const plan = planOf(run.task);
    const rule = params.trigger ?? 'allSucceeded';
    params.inputs.forEach((label, index) => {
      const producer = this.taskByLabel.get(`${plan}#${label}`);
      const stored = producer === undefined ? undefined : this.firstResult.get(producer);
      const where = `${run.task} run#${run.id} input ${index} (label ${label}, ${producer ?? 'unknown task'})`;
      const expected =
        producer === undefined || stored === undefined
          ? undefined
          : outcomeOf(decodeValue(`${producer}/result`, stored));
      if (rule === 'allSucceeded') {
        if (expected === undefined)
          this.violate(`invariant 3: ${where} had no stored result when the run started`);
        else if (expected.status !== 'succeeded')
          this.violate(`invariant 3: ${where} was skipped, yet its allSucceeded dependent ran`);
        else if (!isDeepStrictEqual(args[index], expected.value))
          this.violate(
            `invariant 3: ${where} is ${JSON.stringify(args[index])}, but ${producer}/result was first stored as ${JSON.stringify(expected.value)}`,
          );
        return;
      }
      const got = args[index] as InputOutcome;
      if (got?.status === 'failed') {
        const failed = got.error.task;
        const through = got.error.blocked ?? failed;
        if (!this.everFailedForGood.has(failed) || through !== producer)
          this.violate(
            `invariant 3: ${where} is a failure of ${failed} (through ${through}), which never failed for good or does not feed this input`,
          );
        return;
      }
      if (expected === undefined || !isDeepStrictEqual(got, expected))
        this.violate(
          `invariant 3: ${where} is ${JSON.stringify(got)}, but its producer's first stored outcome is ${JSON.stringify(expected)}`,
        );
    });
    const statuses = (args as InputOutcome[]).map((outcome) => outcome?.status);
    if (
      (rule === 'anySucceeded' && args.length > 0 && !statuses.includes('succeeded')) ||
      (rule === 'oneFailed' && args.length > 0 && !statuses.includes('failed'))
    )
      this.violate(
        `invariant 3: ${run.task} run#${run.id} ran under ${rule} on ${statuses.join(',')}`,
      );
  }

  /** Invariant 9: one task per place of a spawn, however often the spawner ran. */
  childStarts(task: string, { spawner, index }: SimChildParams): void {
    const place = `${spawner}#${index}`;
    const tasks = this.childTasks.get(place) ?? new Set<string>();
    tasks.add(task);
    this.childTasks.set(place, tasks);
    this.note(`start child ${task} of ${spawner} #${index}`);
    if (tasks.size > 1)
      this.violate(
        `invariant 9: child #${index} of ${spawner} runs as ${tasks.size} tasks: ${[...tasks].join(', ')}`,
      );
  }

  /** Invariant 9: one continuation per spawner, and it gets every child's result, in order. */
  sumStarts(task: string, { spawner, count }: SimSumParams, values: readonly unknown[]): void {
    const tasks = this.sumTasks.get(spawner) ?? new Set<string>();
    tasks.add(task);
    this.sumTasks.set(spawner, tasks);
    this.note(`start sum ${task} of ${spawner}`);
    if (tasks.size > 1)
      this.violate(
        `invariant 9: ${spawner} handed over to ${tasks.size} tasks: ${[...tasks].join(', ')}`,
      );
    const expected = Array.from({ length: count }, (_, index) => index + 1);
    if (!isDeepStrictEqual(values, expected))
      this.violate(
        `invariant 9: the sum of ${spawner}'s children (${task}) got ${JSON.stringify(values)}, expected ${JSON.stringify(expected)}`,
      );
  }
}

export function planOf(task: string): string {
  return task.slice(0, task.lastIndexOf('/'));
}

/** The concurrency key of a task's definition, if it has one. */
function concurrencyKeyOf(task: string, data: Buffer): string | undefined {
  try {
    const key = (decodeValue(task, data) as { concurrencyKey?: unknown } | null)?.concurrencyKey;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** The label a writer put in a task's definition (`call('sim', { label, … })`, or a sub-plan's `params: { label }`). */
function labelOf(task: string, data: Buffer): number | undefined {
  try {
    const definition = decodeValue(task, data) as {
      params?: readonly { label?: unknown; params?: { label?: unknown } }[];
    } | null;
    const label = definition?.params?.[0]?.label ?? definition?.params?.[0]?.params?.label;
    return typeof label === 'number' ? label : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an `attempts` record says its last try was final (no retry may follow). */
function isFinalTry(path: string, data: Buffer): boolean {
  try {
    const record = decodeValue(path, data) as { lastFailure?: { retryable?: unknown } } | null;
    return record?.lastFailure?.retryable === false;
  } catch {
    return false;
  }
}
