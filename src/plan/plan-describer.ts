import { failedInputsOf, type FailedInput } from '../trigger/failed-inputs.js';
import { PlanNotFoundError } from '../errors/plan-errors.js';
import type { TaskDefinition } from '../exec/task-spec.js';
import { resolveRetryPolicy, type PlanSettings } from '../config/plan-options.js';
import type { AttemptRecord } from '../store/failure-policy.js';
import type { TaskStore } from '../store/task-store.js';
import {
  ARG_PREFIX,
  DEP_PREFIX,
  HISTORY,
  SUB_PLANS,
  READY,
  TASK_PREFIX,
  assertValidPath,
  childPath,
  isContinuedSerial,
  nameOf,
  parentOf,
  serialOf,
  sortBySerial,
  sortPlanNames,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { listSubPlans } from '../subplan/sub-plan-record.js';
import { decodeValue } from '../serialization/codec.js';
import { isZkError } from '../errors/zk-error.js';
import { countedState } from './plan-progress.js';
import { planTimes } from './plan-times.js';
import type { TaskSnapshot } from './plan-status.js';
import { recordedTasks, type PlanReader } from './plan-reader.js';
import type { PlanSummary, PlanView, TaskView } from './plan-view.js';
import type { TaskHistoryRecord } from '../store/task-history.js';
import type { TaskViewState } from './plan-progress.js';
import type { TaskKeys } from './task-keys.js';
import { taskTries, type LastTry, type TaskTry } from './task-tries-view.js';

/** Everything read about one live task. */
interface LiveTask {
  readonly snapshot: TaskSnapshot;
  readonly definition: TaskDefinition | undefined;
  readonly owner: { workerId: string; claimedAt: Date } | undefined;
  /** A task with a trigger rule: the inputs it took as failures (their producers' links are gone). */
  readonly failedInputs: readonly FailedInput[];
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
    return (await this.readPlan(plan)).view;
  }

  /**
   * The plan's view, and its live tasks that have no history record yet, each with the dep-* nodes
   * it feeds (what control.cancel records as the task's outputs before it deletes the task).
   */
  async readPlan(
    plan: string,
  ): Promise<{ view: PlanView; unrecorded: ReadonlyMap<string, readonly string[]> }> {
    assertValidPath('plan', plan);
    await this.zk.sync(plan); // the server this session reads from may lag behind another process's change
    const listing = await this.zk.tryGetChildren(plan);
    if (listing === undefined) throw new PlanNotFoundError(plan);
    const names = sortBySerial(listing.children, TASK_PREFIX);
    const [live, history, keys, subPlans] = await Promise.all([
      Promise.all(names.map((name) => this.readLiveTask(childPath(plan, name)))),
      listing.children.includes(HISTORY)
        ? this.store.reads.readHistory(plan)
        : Promise.resolve(new Map<string, TaskHistoryRecord>()),
      this.keys.of(plan, listing.children),
      listing.children.includes(SUB_PLANS) ? listSubPlans(this.zk, plan) : Promise.resolve([]),
    ]);
    const children = new Map(subPlans.map(({ task, child }) => [task, child]));
    const present = live.filter((task): task is LiveTask => task !== undefined);
    // Read after the history: a cancel writes its control record before any record of its own.
    const control = await this.reader.readControl(plan);
    const status = await this.reader.summarize(
      plan,
      listing.children,
      present.map(({ snapshot }) => snapshot),
      recordedTasks(history),
      control,
    );
    const blocked = new Map(status.blocked.map(({ task, reason }) => [task, reason]));
    // The retry policy says how many tries a failed task had: read only when a task failed a try.
    const tried = present.some(({ snapshot }) => snapshot.failure ?? snapshot.attempts);
    const settings = tried ? await this.store.reads.readPlanSettings(plan) : undefined;
    const { inputs, continuations } = inputsByTask(present, history);
    // A task read while its worker (or a cancel) deletes it has ended: its history record wins over what is left of it.
    const views: TaskView[] = [
      ...present
        .filter(({ snapshot }) => !history.has(snapshot.task))
        .map((task) =>
          liveView(
            task,
            blocked.get(task.snapshot.task),
            inputs.get(task.snapshot.task) ?? [],
            continuations.get(task.snapshot.task),
            settings,
          ),
        ),
      ...[...history].map(([task, record]) => recordedView(task, record, inputs.get(task) ?? [])),
    ]
      .map((view) => withKey(view, keys.get(view.task) ?? history.get(view.task)?.key))
      .map((view) => {
        const child = children.get(view.task);
        return child === undefined ? view : { ...view, subPlan: child };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const view = {
      plan,
      status,
      tasks: views,
      done: status.counts.done,
      historyKept: listing.children.includes(HISTORY),
      ...planTimes(
        status.state,
        listing.stat.ctime,
        views.map((task) => task.finishedAt),
        status.control,
      ),
    };
    const unrecorded = present
      .filter(({ snapshot }) => !history.has(snapshot.task))
      .map(({ snapshot }) => [snapshot.task, snapshot.feeds] as const);
    return { view, unrecorded: new Map(unrecorded) };
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
          return {
            plan,
            status: view.status,
            done: view.done,
            historyKept: view.historyKept,
            ...(view.createdAt === undefined ? {} : { createdAt: view.createdAt }),
            ...(view.finishedAt === undefined ? {} : { finishedAt: view.finishedAt }),
          };
        } catch (error) {
          if (error instanceof PlanNotFoundError) return undefined; // removed meanwhile
          throw error;
        }
      }),
    );
    return views.filter((view): view is PlanSummary => view !== undefined);
  }

  /**
   * Removes a plan and everything below it (running workers find its tasks gone and move on), and
   * the child plans of its sub-plan tasks. The tasks go before the children are listed: a sub-plan
   * check that made its child after the listing finds its task gone and deletes the child itself
   * (src/subplan); the few cases left over (a check that dies first) are orphans, which retention
   * deletes (docs/design/sub-plans.md).
   */
  async deletePlan(plan: string): Promise<void> {
    assertValidPath('plan', plan);
    if ((await this.zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
    // Every task's `ready` goes first: the recursive delete removes live owner nodes, and a task that
    // still had `ready` then could be taken and run again while its owner is still running it.
    const tasks = (await this.store.reads.listTasks(plan)) ?? [];
    await Promise.all(tasks.map((task) => this.zk.deleteIfPresent(childPath(task, READY))));
    await Promise.all(tasks.map((task) => this.zk.deleteRecursive(task)));
    const children = await listSubPlans(this.zk, plan);
    await Promise.all(
      children.map(({ child }) =>
        this.deletePlan(child).catch((error: unknown) => {
          if (!(error instanceof PlanNotFoundError)) throw error;
        }),
      ),
    );
    await this.zk.deleteRecursive(plan);
  }

  private async readLiveTask(task: string): Promise<LiveTask | undefined> {
    const [snapshot, definition] = await Promise.all([
      this.reader.snapshotTask(task),
      this.store.reads.readDefinition(task).catch(() => undefined),
    ]);
    if (snapshot === undefined) return undefined;
    // Read only for a task its listing shows held: most tasks of a big plan are not, and a read
    // of each one's missing owner node was a third of what describing a plan cost.
    const owner =
      snapshot.state === 'owned'
        ? await this.store.reads.readOwner(task).catch(() => undefined)
        : undefined;
    // An owner record without a real time (not one a worker writes) is shown as no owner: its time is formatted.
    const claimed =
      owner !== undefined &&
      owner.claimedAt instanceof Date &&
      !Number.isNaN(owner.claimedAt.getTime());
    return {
      snapshot,
      definition,
      owner: claimed ? { workerId: owner.workerId, claimedAt: owner.claimedAt } : undefined,
      failedInputs: definition?.trigger === undefined ? [] : await this.readFailedInputs(task),
    };
  }

  /** The inputs a task with a trigger rule took as failures, from its `arg-N` (a few reads, for such tasks only). */
  private async readFailedInputs(task: string): Promise<FailedInput[]> {
    const listing = await this.zk.tryGetChildren(task);
    const names = sortBySerial(listing?.children ?? [], ARG_PREFIX);
    const values = await Promise.all(
      names.map(async (name) => {
        const path = childPath(task, name);
        try {
          const stored = await this.store.reads.readStoredValue(path);
          return stored === undefined ? undefined : decodeValue(path, stored);
        } catch (error) {
          if (isZkError(error)) throw error;
          return undefined; // not a value a writer makes, or half written: no failure to show
        }
      }),
    );
    return failedInputsOf(task, names, values);
  }
}

/**
 * Each task's inputs in argument order, from the producers' side: live prov-* links and finished
 * tasks' outputs; and apart from them, the continuation a task handed over to (the producer of
 * its input with a continued serial), which is not one of its arguments.
 */
function inputsByTask(
  live: readonly LiveTask[],
  history: ReadonlyMap<string, TaskHistoryRecord>,
): { inputs: Map<string, string[]>; continuations: Map<string, string> } {
  const edges: { producer: string; dep: string }[] = [
    ...live.flatMap(({ snapshot }) =>
      snapshot.feeds.map((dep) => ({ producer: snapshot.task, dep })),
    ),
    ...[...history].flatMap(([producer, record]) =>
      record.outputs.map((dep) => ({ producer, dep })),
    ),
    // Failures handed on: the link is gone from the producer, the task that took it keeps it.
    ...live.flatMap(({ failedInputs }) => failedInputs),
    ...[...history].flatMap(([, record]) =>
      record.state === 'done' ? (record.failedInputs ?? []) : [],
    ),
  ];
  const byDependent = new Map<string, { producer: string; serial: string }[]>();
  const continuations = new Map<string, string>();
  const seen = new Set<string>(); // a producer read while finishing shows its links live and in its history
  for (const { producer, dep } of edges) {
    if (seen.has(dep)) continue;
    seen.add(dep);
    const dependent = parentOf(dep);
    const serial = serialOf(nameOf(dep), DEP_PREFIX);
    if (isContinuedSerial(serial)) {
      continuations.set(dependent, producer);
      continue;
    }
    const list = byDependent.get(dependent) ?? [];
    list.push({ producer, serial: serial ?? '' });
    byDependent.set(dependent, list);
  }
  const inputs = new Map(
    [...byDependent].map(([dependent, list]) => [
      dependent,
      list.sort((a, b) => (a.serial < b.serial ? -1 : 1)).map(({ producer }) => producer),
    ]),
  );
  return { inputs, continuations };
}

function viewState(snapshot: TaskSnapshot, blocked: boolean): TaskViewState {
  if (
    !blocked &&
    snapshot.state === 'runnable' &&
    snapshot.attempts &&
    snapshot.attempts.notBefore.getTime() > Date.now()
  )
    return 'retrying';
  return countedState(snapshot.state, blocked);
}

function withKey(view: TaskView, key: string | undefined): TaskView {
  return key === undefined ? view : { ...view, key };
}

function liveView(
  task: LiveTask,
  blockedReason: string | undefined,
  inputs: readonly string[],
  continuedBy: string | undefined,
  settings: PlanSettings | undefined,
): TaskView {
  const { snapshot, definition, owner } = task;
  const attempts: AttemptRecord | undefined = snapshot.attempts;
  const failure = snapshot.failure;
  const state = viewState(snapshot, blockedReason !== undefined);
  const running: LastTry | undefined =
    state === 'running' && owner !== undefined
      ? { outcome: 'running', workerId: owner.workerId, startedAt: owner.claimedAt }
      : undefined;
  const tries = taskTries(attempts?.tries ?? [], attempts?.failures ?? 0, running);
  const maxAttempts =
    settings !== undefined && (failure || attempts)
      ? maxAttemptsOf(settings, definition)
      : undefined;
  return {
    task: snapshot.task,
    name: nameOf(snapshot.task),
    state,
    fn: definition === undefined ? '?' : 'fn' in definition ? definition.fn : 'inline',
    params: definition !== undefined && 'fn' in definition ? definition.params : [],
    inputs,
    pendingInputs: snapshot.deps.filter(
      (dep) => !isContinuedSerial(serialOf(nameOf(dep), DEP_PREFIX)),
    ).length,
    ...(continuedBy !== undefined ? { continuedBy } : {}),
    keepResult: definition?.keepResult === true,
    ...(definition?.key !== undefined ? { key: definition.key } : {}),
    ...(definition?.priority !== undefined ? { priority: definition.priority } : {}),
    ...(definition?.concurrencyKey !== undefined
      ? { concurrencyKey: definition.concurrencyKey }
      : {}),
    ...(definition?.trigger !== undefined ? { trigger: definition.trigger } : {}),
    ...(owner ? { owner, workerId: owner.workerId, startedAt: owner.claimedAt } : {}),
    ...(attempts
      ? {
          attempts: {
            failures: attempts.failures,
            nextTryAt: attempts.notBefore,
            lastError: attempts.lastFailure.message,
          },
        }
      : {}),
    ...(snapshot.waiting
      ? {
          waiting: {
            reason: snapshot.waiting.reason,
            since: snapshot.waiting.since,
            checks: snapshot.waiting.checks,
            nextCheckAt: snapshot.waiting.notBefore,
          },
        }
      : {}),
    ...(failure || attempts ? { failedTries: failure?.attempts ?? attempts?.failures } : {}),
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    ...(failure ? { failure, workerId: failure.workerId, finishedAt: failure.at } : {}),
    ...(tries === undefined ? {} : { tries }),
    ...(blockedReason ? { blockedReason } : {}),
  };
}

/** Tries in all that a task's retry policy allows; undefined when its own policy is malformed (its worker then fails it). */
function maxAttemptsOf(
  settings: PlanSettings,
  definition: TaskDefinition | undefined,
): number | undefined {
  try {
    return definition?.retry
      ? resolveRetryPolicy(definition.retry, settings.retry).maxAttempts
      : settings.retry.maxAttempts;
  } catch {
    return undefined;
  }
}

/** A task from its history record: done, failed, cancelled or unstarted (the last three in a cancelled plan). */
function recordedView(
  task: string,
  record: TaskHistoryRecord,
  inputs: readonly string[],
): TaskView {
  const tries = recordedTries(record);
  const common = {
    task,
    name: nameOf(task),
    state: record.state,
    fn: record.fn,
    params: record.params ?? [],
    inputs,
    pendingInputs: 0,
    keepResult: record.keepResult,
    ...(record.failedTries > 0 ? { failedTries: record.failedTries } : {}),
    ...(record.omitted ? { omitted: true as const } : {}),
    ...(tries === undefined ? {} : { tries }),
  };
  switch (record.state) {
    case 'done':
      return {
        ...common,
        ...(record.skipped !== undefined
          ? { state: 'skipped' as const, skipped: record.skipped }
          : {}),
        ...(record.workerId !== undefined ? { workerId: record.workerId } : {}),
        ...(record.startedAt !== undefined
          ? {
              startedAt: record.startedAt,
              durationMs: record.finishedAt.getTime() - record.startedAt.getTime(),
            }
          : {}),
        finishedAt: record.finishedAt,
        ...(record.continuedBy !== undefined ? { continuedBy: record.continuedBy } : {}),
      };
    case 'failed':
      return {
        ...common,
        failure: record.failure,
        failedTries: record.failure.attempts,
        workerId: record.failure.workerId,
        finishedAt: record.failure.at,
      };
    case 'cancelled':
      return {
        ...common,
        cancelledAt: record.cancelledAt,
        was: record.was,
        ...(record.workerId !== undefined ? { workerId: record.workerId } : {}),
        ...(record.startedAt !== undefined
          ? {
              startedAt: record.startedAt,
              finishedAt: record.cancelledAt,
              durationMs: record.cancelledAt.getTime() - record.startedAt.getTime(),
            }
          : {}),
      };
    case 'unstarted':
      return { ...common, cancelledAt: record.cancelledAt, was: record.was };
  }
}

/** A recorded task's tries: its kept failed ones, then the try that completed it or ran when its plan was cancelled. */
function recordedTries(record: TaskHistoryRecord): TaskTry[] | undefined {
  const failed = record.tries ?? [];
  switch (record.state) {
    case 'done':
      return taskTries(failed, record.failedTries, {
        outcome: record.skipped === undefined ? 'done' : 'skipped',
        ...(record.workerId === undefined ? {} : { workerId: record.workerId }),
        ...(record.startedAt === undefined ? {} : { startedAt: record.startedAt }),
        finishedAt: record.finishedAt,
      });
    case 'cancelled':
      return taskTries(
        failed,
        record.failedTries,
        record.was === 'running'
          ? {
              outcome: 'cancelled',
              ...(record.workerId === undefined ? {} : { workerId: record.workerId }),
              ...(record.startedAt === undefined ? {} : { startedAt: record.startedAt }),
              finishedAt: record.cancelledAt,
            }
          : undefined,
      );
    case 'failed':
    case 'unstarted':
      return taskTries(failed, record.failedTries, undefined);
  }
}
