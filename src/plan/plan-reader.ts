import { outcomeOf } from '../trigger/task-outcome.js';
import { TaskSkippedError } from '../errors/trigger-errors.js';
import {
  PlanCancelledError,
  PlanFailedError,
  PlanNotFoundError,
  ResultNotFoundError,
} from '../errors/plan-errors.js';
import { InvalidArgumentError, WaitTimeoutError } from '../errors/usage-errors.js';
import { TaskKeyNotFoundError } from '../errors/task-key-errors.js';
import { isZkError } from '../errors/zk-error.js';
import { decodeValue } from '../serialization/codec.js';
import {
  ATTEMPTS,
  WAITING,
  DEP_PREFIX,
  CONTROL,
  FAILED,
  HISTORY,
  PROV_PREFIX,
  READY,
  TASK_PREFIX,
  assertSequentialPath,
  batchMarkerName,
  builderNodeName,
  assertValidPath,
  childPath,
  hasSequentialName,
  keptResultPathFor,
  sortBySerial,
} from '../zk/layout.js';
import { parentTaskIn } from '../subplan/sub-plan-origin.js';
import type { Watcher } from '../zk/zk-client-types.js';
import { followWithWatches } from '../zk/recipes/watch-loop.js';
import type { Zk } from '../zk/zk.js';
import { assertPositiveNumber } from '../config/options.js';
import { parseTaskFailure } from '../store/failure-policy.js';
import { classifyTask } from '../store/task-state.js';
import type { TaskStore } from '../store/task-store.js';
import { MAX_TIMER_MS, linkSignals } from '../util/abort-signals.js';
import type { TaskHistoryRecord } from '../store/task-history.js';
import { parseControlRecord, type PlanControlRecord } from '../control/control-record.js';
import {
  summarizePlan,
  unfedDeps,
  type PlanStatus,
  type RecordedTask,
  type TaskSnapshot,
} from './plan-status.js';
import { TaskKeys } from './task-keys.js';

/** Pause before retrying a read that failed because the connection or session was lost. */
const RETRY_PAUSE_MS = 200;

/** The plan's task count and whether it carries the `failed` marker. */
interface PlanListing {
  readonly remaining: number;
  readonly failed: boolean;
  /** The plan has a `control` node: paused or cancelled. */
  readonly controlled: boolean;
}

/**
 * How long waitForCompletion leaves between two reads of a plan: four times what the last read
 * took, at most a second. Every task that ends changes the plan's children, and each change would
 * have the waiter list them all again: for a plan of 100 000 tasks a listing of about 2 MB after
 * nearly every task, which cost the workers more than their own work. Spaced so, the waiter reads
 * at most a fifth of the time, and notices the end at most that much later (well under a
 * millisecond for a plan of a few hundred tasks).
 */
function waitReadGap(lastReadMs: number): number {
  return Math.min(MAX_WAIT_READ_GAP_MS, 4 * lastReadMs);
}

/** The longest gap between two reads of a waited-for plan, in ms. */
const MAX_WAIT_READ_GAP_MS = 1_000;

/** The ZooKeeper reads that tell how far a plan is, and its kept results. */
export class PlanReader {
  /** The keys of the plans' tasks, for reports; shared with the describer and the writer (one cache per ZkPlan). */
  readonly keys: TaskKeys;

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
  ) {
    this.keys = new TaskKeys(zk);
  }

  /** The spec's `plan-completed?`: true once the plan has no task-* child left. */
  async planCompleted(plan: string): Promise<boolean> {
    await this.zk.sync(plan); // see plans.status
    return (await this.listPlan(plan)).remaining === 0;
  }

  /**
   * Resolves when the plan has no task left; rejects with PlanFailedError once it has failed.
   * Driven by watches on the plan's children and on its `failed` marker (no polling); re-armed
   * after every change and after a new session replaces an expired one.
   */
  async waitForCompletion(plan: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    assertValidPath('plan', plan);
    assertPositiveNumber('timeoutMs', timeoutMs);
    // A timer and linked signals that are all released on return (AbortSignal.timeout/any keep theirs).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), Math.min(timeoutMs, MAX_TIMER_MS));
    const giveUp = linkSignals(deadline.signal, signal);
    let remaining = Number.NaN;
    try {
      const completed = await followWithWatches(
        this.zk,
        async (onChange) => {
          const listing = await this.listPlan(plan, onChange);
          remaining = listing.remaining;
          if (listing.controlled) {
            // Paused or cancelled: a data watch too, since a pause turns into a cancel by a write to the node.
            const control = await this.zk
              .getData(childPath(plan, CONTROL), onChange)
              .catch((error: unknown) => {
                if (isZkError(error, 'NO_NODE')) return undefined; // resumed meanwhile: the child watch tells
                throw error;
              });
            const record = control && parseControlRecord(childPath(plan, CONTROL), control.data);
            if (record?.state === 'cancelled') throw new PlanCancelledError(plan, record.reason);
          }
          if (remaining === 0) return { done: true, value: true };
          if (listing.failed) {
            // Each further failure rewrites the marker: its data watch wakes us when the last live task fails.
            const marker = await this.zk
              .getData(childPath(plan, FAILED), onChange)
              .catch((error: unknown) => {
                if (isZkError(error, 'NO_NODE')) return undefined; // retried meanwhile (retryFailed deleted it): the child watch tells
                throw error;
              });
            const status = marker === undefined ? undefined : await this.planStatus(plan);
            if (status?.state === 'failed')
              throw new PlanFailedError(
                plan,
                status.failed,
                status.blocked.map(({ task }) => task),
              );
          }
          return { done: false };
        },
        { stop: giveUp.signal, retryPauseMs: RETRY_PAUSE_MS, minIntervalMs: waitReadGap },
      );
      if (completed) return;
    } finally {
      clearTimeout(timer);
      giveUp.dispose();
    }
    if (signal?.aborted) throw signal.reason;
    throw new WaitTimeoutError(plan, timeoutMs, remaining);
  }

  /** Where the plan stands: its state, task counts (done ones from its history), failed tasks with their errors, and tasks blocked forever. */
  async planStatus(plan: string): Promise<PlanStatus> {
    assertValidPath('plan', plan);
    // The server this session reads from may lag: a change another process was answered before this call (a cancel, say) must show.
    await this.zk.sync(plan);
    const listing = await this.zk.tryGetChildren(plan);
    if (listing === undefined) throw new PlanNotFoundError(plan);
    const tasks = sortBySerial(listing.children, TASK_PREFIX).map((name) => childPath(plan, name));
    const snapshots = await Promise.all(
      tasks.map((task) => this.snapshotTask(task, listing.children)),
    );
    // Only the names of the history: every record is `done` until a cancel, which writes its records
    // after its control record. So the control node is read after the names, and when it is there the
    // records themselves are read.
    const names = listing.children.includes(HISTORY) ? await this.historyNames(plan) : [];
    const control = await this.readControl(plan);
    const recorded =
      control === undefined
        ? names.map((task): RecordedTask => ({ task, state: 'done' }))
        : recordedTasks(await this.store.reads.readHistory(plan));
    return await this.summarize(
      plan,
      listing.children,
      snapshots.filter((snapshot): snapshot is TaskSnapshot => snapshot !== undefined),
      recorded,
      control,
    );
  }

  /** A plan's status from its tasks' snapshots, its history and its control record (shared with plans.describe). */
  async summarize(
    plan: string,
    planChildren: readonly string[],
    snapshots: readonly TaskSnapshot[],
    recorded: readonly RecordedTask[],
    control: PlanControlRecord | undefined,
  ): Promise<PlanStatus> {
    const settings = await this.store.reads.readPlanSettings(plan);
    // A dep nobody feeds may only look so because its producer finished while we were reading: check it again.
    const unfed = unfedDeps(snapshots);
    const stillThere = await Promise.all(
      unfed.map(async (dep) => ((await this.zk.exists(dep)) ? dep : undefined)),
    );
    const status = summarizePlan({
      plan,
      ready: planChildren.includes(READY),
      failurePolicy: settings.failurePolicy,
      priority: settings.priority,
      tasks: snapshots,
      recorded,
      orphanDeps: new Set(stillThere.filter((dep): dep is string => dep !== undefined)),
      ...(control !== undefined ? { control } : {}),
    });
    const parentTask =
      settings.parentTask === undefined
        ? undefined
        : parentTaskIn(plan, { origin: { parentTask: settings.parentTask } });
    const named = {
      ...status,
      ...(settings.name === undefined ? {} : { name: settings.name }),
      ...(parentTask === undefined ? {} : { subPlanOf: parentTask }),
    };
    if (status.failed.length === 0 && status.blocked.length === 0) return named;
    // Failed and blocked tasks are what people read a status for (wait, alerts): named by their keys.
    const keys = await this.keys.of(plan, planChildren);
    if (keys.size === 0) return named;
    const keyOf = <T extends { readonly task: string }>(entry: T): T =>
      keys.has(entry.task) ? { ...entry, key: keys.get(entry.task) as string } : entry;
    return { ...named, failed: named.failed.map(keyOf), blocked: named.blocked.map(keyOf) };
  }

  /** The task of the plan known by `key` (it may have finished since); TaskKeyNotFoundError when no task of the plan has it. */
  async taskOfKey(plan: string, key: string): Promise<string> {
    assertValidPath('plan', plan);
    if (typeof key !== 'string' || key === '')
      throw new InvalidArgumentError(
        'key',
        "expected the key of a task of the plan (a spec key, or addTask's { key })",
      );
    await this.zk.sync(plan); // a plan or task made by another process just before must show
    if ((await this.zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
    const task = await this.keys.taskOf(plan, key);
    if (task === undefined) throw new TaskKeyNotFoundError(plan, key);
    return task;
  }

  /** The plan's control record (paused or cancelled); undefined while it runs. */
  async readControl(plan: string): Promise<PlanControlRecord | undefined> {
    const path = childPath(plan, CONTROL);
    const node = await this.zk.tryGetData(path);
    return node === undefined ? undefined : parseControlRecord(path, node.data);
  }

  /** The tasks the plan's history names (by task path, oldest first); their records are not read. */
  private async historyNames(plan: string): Promise<string[]> {
    const listing = await this.zk.tryGetChildren(childPath(plan, HISTORY));
    return sortBySerial(listing?.children ?? [], TASK_PREFIX).map((name) => childPath(plan, name));
  }

  /** The kept result of a task added with `{ keepResult: true }`, once it completed. */
  async getResult(task: string): Promise<unknown> {
    assertSequentialPath('task', task, TASK_PREFIX);
    const resultPath = keptResultPathFor(task);
    const kept = await this.store.reads.readStoredValue(resultPath);
    if (kept === undefined) throw new ResultNotFoundError(task, resultPath);
    const value = decodeValue(resultPath, kept);
    const outcome = outcomeOf(value);
    if (outcome.status === 'skipped') throw new TaskSkippedError(task, outcome.reason);
    return value;
  }

  private async listPlan(plan: string, watcher?: Watcher): Promise<PlanListing> {
    assertValidPath('plan', plan);
    try {
      const listing = await this.zk.getChildren(plan, watcher);
      return {
        remaining: sortBySerial(listing.children, TASK_PREFIX).length,
        failed: listing.children.includes(FAILED),
        controlled: listing.children.includes(CONTROL),
      };
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) throw new PlanNotFoundError(plan);
      throw error;
    }
  }

  /**
   * What a status report needs of one task; undefined when it is gone. With the plan's children, a
   * task that is not ready and whose builder's session is gone counts as `abandoned` (it will be
   * deleted, never run), so it does not keep the plan open.
   */
  async snapshotTask(
    task: string,
    planChildren?: readonly string[],
  ): Promise<TaskSnapshot | undefined> {
    const listing = await this.zk.tryGetChildren(task);
    if (listing === undefined) return undefined;
    const children = listing.children;
    let state = classifyTask(children, listing.stat.cversion);
    if (state === 'building' && planChildren !== undefined) {
      // A dead builder's unfinished task is debris, unless its batch was committed (workers make it ready).
      const stamp = await this.store.reads.readStamp(task);
      if (
        stamp !== undefined &&
        !planChildren.includes(builderNodeName(stamp.builder)) &&
        !planChildren.includes(batchMarkerName(stamp.batch))
      )
        state = 'abandoned';
    }
    const provs = children.filter((name) => hasSequentialName(name, PROV_PREFIX));
    const [feeds, storedFailure, attempts, waiting] = await Promise.all([
      Promise.all(provs.map((name) => readDecoded(this.zk, childPath(task, name)))),
      children.includes(FAILED) ? readDecoded(this.zk, childPath(task, FAILED)) : undefined,
      children.includes(ATTEMPTS)
        ? this.store.reads.readAttempts(task).catch(() => undefined)
        : undefined,
      children.includes(WAITING)
        ? this.store.reads.readWaiting(task).catch(() => undefined)
        : undefined,
    ]);
    // Checked field by field: anyone may have written the node, and its fields are shown and its time formatted.
    const failure = parseTaskFailure(storedFailure);
    return {
      task,
      state,
      deps: children
        .filter((name) => hasSequentialName(name, DEP_PREFIX))
        .map((name) => childPath(task, name)),
      feeds: feeds.filter((dep): dep is string => typeof dep === 'string'),
      ...(failure !== undefined ? { failure } : {}),
      ...(attempts !== undefined ? { attempts } : {}),
      ...(waiting !== undefined ? { waiting } : {}),
    };
  }
}

/** What a status counts of the plan's history records: each task's final state, and a failed one's failure. */
export function recordedTasks(history: ReadonlyMap<string, TaskHistoryRecord>): RecordedTask[] {
  return [...history].map(([task, record]) => ({
    task,
    state: record.state,
    ...(record.state === 'failed' ? { failure: record.failure } : {}),
  }));
}

/** A node's decoded value; undefined when it is gone or unreadable (a report says what it can). */
export async function readDecoded(zk: Zk, path: string): Promise<unknown> {
  try {
    const node = await zk.tryGetData(path);
    return node && decodeValue(path, node.data);
  } catch (error) {
    if (isZkError(error)) throw error;
    return undefined;
  }
}
