import { PlanNotFoundError } from '../errors/plan-errors.js';
import type { TaskDefinition } from '../exec/task-spec.js';
import type { AttemptRecord } from '../store/failure-policy.js';
import type { TaskStore } from '../store/task-store.js';
import { DEP_PREFIX, HISTORY, READY, TASK_PREFIX, assertValidPath, childPath, nameOf, parentOf, serialOf, sortBySerial, sortPlanNames } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { countPlanTasks, countedState, planStateOf } from './plan-progress.js';
import type { PlanStatus, TaskSnapshot } from './plan-status.js';
import { readDecoded, type PlanReader } from './plan-reader.js';
import type { PlanSummary, PlanView, TaskHistoryRecord, TaskView, TaskViewState } from './plan-view.js';
import type { TaskKeys } from './task-keys.js';

/** Everything read about one live task. */
interface LiveTask {
  readonly snapshot: TaskSnapshot;
  readonly definition: TaskDefinition | undefined;
  readonly owner: { workerId: string; claimedAt: Date } | undefined;
}

/**
 * Reads a whole plan for people (`zk-plan show`, the web view): every live task with its state,
 * function, inputs, owner, attempts and failure, and the finished ones from the plan's history.
 * Costs a few reads per task; meant for operators, not for the workers' hot path.
 */
export class PlanDescriber {
  private readonly keys: TaskKeys;

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly reader: PlanReader,
  ) {
    this.keys = reader.keys;
  }

  async describePlan(plan: string): Promise<PlanView> {
    assertValidPath('plan', plan);
    await this.zk.sync(plan); // the server this session reads from may lag behind another process's change
    const listing = await this.zk.tryGetChildren(plan);
    if (listing === undefined) throw new PlanNotFoundError(plan);
    const names = sortBySerial(listing.children, TASK_PREFIX);
    const [live, history, keys] = await Promise.all([
      Promise.all(names.map((name) => this.readLiveTask(childPath(plan, name)))),
      listing.children.includes(HISTORY) ? this.readHistory(plan) : Promise.resolve(new Map<string, TaskHistoryRecord>()),
      this.keys.of(plan, listing.children),
    ]);
    const present = live.filter((task): task is LiveTask => task !== undefined);
    const liveStatus = await this.reader.summarize(
      plan,
      listing.children,
      present.map(({ snapshot }) => snapshot),
    );
    const blocked = new Map(liveStatus.blocked.map(({ task, reason }) => [task, reason]));
    const inputs = inputsByTask(present, history);
    // A task read while its worker deletes it is done: its history record wins over what is left of it.
    const views: TaskView[] = [
      ...present
        .filter(({ snapshot }) => !history.has(snapshot.task))
        .map((task) => liveView(task, blocked.get(task.snapshot.task), inputs.get(task.snapshot.task) ?? [])),
      ...[...history].map(([task, record]) => doneView(task, record, inputs.get(task) ?? [])),
    ]
      // The key recorded for the plan (spec record, key claims), else the one in a live task's definition (a spec plan whose record is not written yet).
      .map((view) => (keys.has(view.task) ? { ...view, key: keys.get(view.task) as string } : view))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const status = withHistory(liveStatus, views, history, listing.children.includes(READY));
    return { plan, status, tasks: views, done: status.counts.done, historyKept: listing.children.includes(HISTORY) };
  }

  /** The plans under `parent`, oldest first, with their status. */
  async listPlans(parent: string): Promise<PlanSummary[]> {
    assertValidPath('parent', parent);
    const listing = await this.zk.tryGetChildren(parent);
    if (listing === undefined) throw new PlanNotFoundError(parent);
    const plans = sortPlanNames(listing.children).map((name) => childPath(parent, name));
    const views = await Promise.all(
      plans.map(async (plan): Promise<PlanSummary | undefined> => {
        try {
          const view = await this.describePlan(plan);
          return { plan, status: view.status, done: view.done, historyKept: view.historyKept };
        } catch (error) {
          if (error instanceof PlanNotFoundError) return undefined; // removed meanwhile
          throw error;
        }
      }),
    );
    return views.filter((view): view is PlanSummary => view !== undefined);
  }

  /** Removes a plan and everything below it (running workers find its tasks gone and move on). */
  async deletePlan(plan: string): Promise<void> {
    assertValidPath('plan', plan);
    if ((await this.zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
    // Every task's `ready` goes first: the recursive delete removes live owner nodes, and a task that
    // still had `ready` then could be taken and run again while its owner is still running it.
    const tasks = (await this.store.listTasks(plan)) ?? [];
    await Promise.all(tasks.map((task) => this.zk.deleteIfPresent(childPath(task, READY))));
    await this.zk.deleteRecursive(plan);
  }

  private async readLiveTask(task: string): Promise<LiveTask | undefined> {
    const [snapshot, definition, owner] = await Promise.all([
      this.reader.snapshotTask(task),
      this.store.readDefinition(task).catch(() => undefined),
      this.store.readOwner(task).catch(() => undefined),
    ]);
    if (snapshot === undefined) return undefined;
    return { snapshot, definition, owner: owner && { workerId: owner.workerId, claimedAt: owner.claimedAt } };
  }

  private async readHistory(plan: string): Promise<Map<string, TaskHistoryRecord>> {
    const listing = await this.zk.tryGetChildren(childPath(plan, HISTORY));
    const names = sortBySerial(listing?.children ?? [], TASK_PREFIX);
    const records = await Promise.all(names.map((name) => readDecoded(this.zk, childPath(childPath(plan, HISTORY), name))));
    return new Map(names.flatMap((name, index) => (records[index] === undefined ? [] : [[childPath(plan, name), records[index] as TaskHistoryRecord]])));
  }
}

/**
 * The plan's status with its finished tasks counted: the counts come from the views (each task
 * once, as done when its history record was read, even if its node was read too), and a task
 * that is done is no longer listed as failed, blocked or retrying.
 */
function withHistory(status: PlanStatus, views: readonly TaskView[], history: ReadonlyMap<string, TaskHistoryRecord>, ready: boolean): PlanStatus {
  const counts = countPlanTasks(views);
  const live = <T extends { readonly task: string }>(list: readonly T[]): T[] => list.filter(({ task }) => !history.has(task));
  return {
    ...status,
    state: planStateOf(counts, ready, status.failurePolicy, status.control?.state),
    counts,
    failed: live(status.failed),
    blocked: live(status.blocked),
    retrying: live(status.retrying),
  };
}

/** Each task's inputs in argument order, from the producers' side: live prov-* links and finished tasks' outputs. */
function inputsByTask(live: readonly LiveTask[], history: ReadonlyMap<string, TaskHistoryRecord>): Map<string, string[]> {
  const edges: { producer: string; dep: string }[] = [
    ...live.flatMap(({ snapshot }) => snapshot.feeds.map((dep) => ({ producer: snapshot.task, dep }))),
    ...[...history].flatMap(([producer, record]) => record.outputs.map((dep) => ({ producer, dep }))),
  ];
  const byDependent = new Map<string, { producer: string; serial: string }[]>();
  const seen = new Set<string>(); // a producer read while finishing shows its links live and in its history
  for (const { producer, dep } of edges) {
    if (seen.has(dep)) continue;
    seen.add(dep);
    const dependent = parentOf(dep);
    const list = byDependent.get(dependent) ?? [];
    list.push({ producer, serial: serialOf(nameOf(dep), DEP_PREFIX) ?? '' });
    byDependent.set(dependent, list);
  }
  return new Map([...byDependent].map(([dependent, list]) => [dependent, list.sort((a, b) => (a.serial < b.serial ? -1 : 1)).map(({ producer }) => producer)]));
}

function viewState(snapshot: TaskSnapshot, blocked: boolean): TaskViewState {
  if (!blocked && snapshot.state === 'runnable' && snapshot.attempts && snapshot.attempts.notBefore.getTime() > Date.now()) return 'retrying';
  return countedState(snapshot.state, blocked);
}

function liveView(task: LiveTask, blockedReason: string | undefined, inputs: readonly string[]): TaskView {
  const { snapshot, definition } = task;
  const attempts: AttemptRecord | undefined = snapshot.attempts;
  return {
    task: snapshot.task,
    name: nameOf(snapshot.task),
    state: viewState(snapshot, blockedReason !== undefined),
    fn: definition === undefined ? '?' : 'fn' in definition ? definition.fn : 'inline',
    params: definition !== undefined && 'fn' in definition ? definition.params : [],
    inputs,
    pendingInputs: snapshot.deps.length,
    keepResult: definition?.keepResult === true,
    ...(definition?.key !== undefined ? { key: definition.key } : {}),
    ...(definition?.priority !== undefined ? { priority: definition.priority } : {}),
    ...(definition?.concurrencyKey !== undefined ? { concurrencyKey: definition.concurrencyKey } : {}),
    ...(task.owner ? { owner: task.owner } : {}),
    ...(attempts ? { attempts: { failures: attempts.failures, nextTryAt: attempts.notBefore, lastError: attempts.lastFailure.message } } : {}),
    ...(snapshot.failure || attempts ? { failedTries: snapshot.failure?.attempts ?? attempts?.failures } : {}),
    ...(snapshot.failure ? { failure: snapshot.failure } : {}),
    ...(blockedReason ? { blockedReason } : {}),
  };
}

function doneView(task: string, record: TaskHistoryRecord, inputs: readonly string[]): TaskView {
  return {
    task,
    name: nameOf(task),
    state: 'done',
    fn: record.fn,
    params: record.params,
    inputs,
    pendingInputs: 0,
    keepResult: record.keepResult,
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    durationMs: record.finishedAt.getTime() - record.startedAt.getTime(),
    workerId: record.workerId,
    ...(record.failedTries > 0 ? { failedTries: record.failedTries } : {}),
  };
}
