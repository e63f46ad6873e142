/**
 * What the web view's server sends its pages, as JSON: the one definition both sides compile
 * against (src/ui/ui-model.ts builds these; src/ui/browser/ reads them). Dates travel as ISO-8601
 * text. Types only, apart from the legend's order of task states and the nodes' order, so that the
 * browser bundle pulls in nothing of the server.
 */
import type { PlanState, TaskViewState } from '../plan/plan-states.js';

export type { PlanState, TaskViewState };

/** Every task state, in the order of the legend (how far along a task is). */
export const TASK_VIEW_STATES: readonly TaskViewState[] = [
  'building',
  'waiting',
  'runnable',
  'retrying',
  'running',
  'finishing',
  'done',
  'skipped',
  'failed',
  'blocked',
  'cancelled',
  'unstarted',
];

/** One node of the drawn graph: a task, keyed by its name (`task-N`) within the plan. */
export interface UiNode {
  readonly name: string;
  /** The task's key (its spec's, or addTask's `{ key }`), when it has one: the node's label. */
  readonly key?: string;
  readonly state: TaskViewState;
  readonly fn: string;
  /** Names of its input tasks, in argument order. */
  readonly inputs: readonly string[];
  /** The task node is gone and the plan keeps no record of it: shown as done, nothing more is known. */
  readonly gone?: true;
  /** Deleted by control.cancel before it finished, in a plan without history (its last state as this view saw it is kept, not counted as done). */
  readonly cancelled?: true;
  /** The worker loop that runs it, ran it, failed it for good or held it when its plan was cancelled. */
  readonly worker?: string;
  /** When its last try started and when it ended (epoch milliseconds), when known. */
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** Failed tries so far (live) or in all (ended), when any is recorded. */
  readonly failedTries?: number;
  /** Its failure's or last failed try's message, at most 300 characters: what the list view's text filter searches. */
  readonly error?: string;
}

/** Who paused or cancelled a plan, when and why. */
export interface UiControl {
  readonly state: 'paused' | 'cancelled';
  readonly reason?: string;
  readonly at: string;
}

/** A plan's headline: state, priority and progress. */
export interface UiPlanStatus {
  readonly plan: string;
  /** The plan's name, when it has one (`createPlan(parent, { name })`, a spec's, a schedule's). */
  readonly name?: string;
  /** For a sub-plan task's child plan: that task's path (the page links to it). */
  readonly subPlanOf?: string;
  readonly state: PlanState;
  readonly priority: number;
  /** Present while the plan is paused or cancelled. */
  readonly control?: UiControl;
  /** Tasks done: from the history when kept; otherwise the finished tasks this view knows of (gone nodes). */
  readonly done: number;
  readonly total: number;
  readonly historyKept: boolean;
  /** Tasks per state, as drawn. */
  readonly counts: Readonly<Record<TaskViewState, number>>;
}

export interface UiModel {
  readonly plan: string;
  readonly status: UiPlanStatus;
  /** Ordered by name. */
  readonly nodes: readonly UiNode[];
}

/**
 * A node whose state, gone flag, function, key or run (worker, times, failed tries, error) changed,
 * not its inputs: recoloured (and relabelled) in place. A tuple, as big plans send thousands; `key`,
 * `worker` and `error` are '' and the numbers 0 for a task without them.
 */
export type UiChange = readonly [
  name: string,
  state: TaskViewState,
  gone: boolean,
  fn: string,
  cancelled: boolean,
  key: string,
  worker: string,
  startedAt: number,
  finishedAt: number,
  failedTries: number,
  error: string,
];

/** The node a change describes, from the node it had before (its inputs are unchanged). */
export function applyChange(node: UiNode, change: UiChange): UiNode {
  const [name, state, gone, fn, cancelled, key, worker, startedAt, finishedAt, failedTries, error] =
    change;
  return {
    name,
    ...(key !== '' ? { key } : {}),
    state,
    fn,
    inputs: node.inputs,
    ...(gone ? { gone: true } : {}),
    ...(cancelled ? { cancelled: true } : {}),
    ...(worker !== '' ? { worker } : {}),
    ...(startedAt !== 0 ? { startedAt } : {}),
    ...(finishedAt !== 0 ? { finishedAt } : {}),
    ...(failedTries !== 0 ? { failedTries } : {}),
    ...(error !== '' ? { error } : {}),
  };
}

/** What changed between two models; `added`, `updated` (inputs) and `removed` change the drawn graph (the page lays it out again). */
export interface UiDiff {
  readonly status: UiPlanStatus;
  readonly changed: readonly UiChange[];
  readonly added: readonly UiNode[];
  readonly updated: readonly UiNode[];
  readonly removed: readonly string[];
}

/** The order of nodes on the wire: by name length, then name (task serials sort as numbers). */
export function byName(a: { readonly name: string }, b: { readonly name: string }): number {
  return a.name.length - b.name.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** How a try ended, on the timeline (see TaskTryOutcome). */
export type UiTryOutcome = 'failed' | 'done' | 'skipped' | 'running' | 'cancelled';

/** One try of a task on the timeline: times in epoch ms, 0 when unknown (a running try has no end). */
export interface UiTry {
  /** Which try it was, from 1. */
  readonly attempt: number;
  readonly outcome: UiTryOutcome;
  /** The worker loop that ran it; '' when unknown. */
  readonly worker: string;
  readonly startedAt: number;
  readonly finishedAt: number;
  /** A failed try's `code: message`, at most 300 characters. */
  readonly error?: string;
}

/** `GET /api/timeline?path=<plan>`: every try of the plan's tasks that started, by task name. */
export interface UiTimeline {
  readonly plan: string;
  /** When the plan was read (the server's clock, epoch ms). */
  readonly at: number;
  /** Each task's tries, oldest first; tasks that never ran are left out. */
  readonly tries: Readonly<Record<string, readonly UiTry[]>>;
}

/** A row of the plans page, and a run on the workflows page. */
export interface UiPlanRow {
  readonly plan: string;
  /** The plan node's name (`plan-0000000003`, or a schedule's `<schedule>@<time>`). */
  readonly name: string;
  /** The plan's own name, when it has one (`createPlan(parent, { name })`, a spec's, a schedule's). */
  readonly planName?: string;
  readonly state: PlanState;
  readonly priority: number;
  readonly done: number;
  readonly total: number;
  readonly historyKept: boolean;
  readonly running: number;
  readonly failed: number;
  readonly blocked: number;
  readonly waiting: number;
  /** When the plan's node was created, epoch ms (ZooKeeper's clock). */
  readonly createdAt?: number;
  /** When it ended (completed, failed or cancelled), epoch ms, when that can be told. */
  readonly finishedAt?: number;
  /** For the child plan of a sub-plan task: that task's path (a step of another run, not a run of its own). */
  readonly subPlanOf?: string;
}

/** A task as the side panel shows it: plain JSON, values pre-formatted as text. */
export interface UiTaskDetail {
  readonly task: string;
  readonly name: string;
  /** The task's key, when it has one. */
  readonly key?: string;
  readonly plan: string;
  /** `cancelled` and `unstarted`: from a cancelled plan's history; also `cancelled` for a task a cancel deleted in a plan without history (`gone`). */
  readonly state: TaskViewState;
  readonly gone: boolean;
  readonly fn: string;
  readonly params: string;
  readonly inputs: readonly string[];
  readonly pendingInputs: number;
  /** The task it handed over to with ctx.continueWith, whose result is (or becomes) its own. */
  readonly continuedBy?: string;
  /** A sub-plan task: the child plan it made (or makes). */
  readonly subPlan?: string;
  /** Why it was skipped (`skip(reason)`, or its trigger rule), when it was. */
  readonly skipped?: string;
  /** When its trigger rule is not allSucceeded: allDone, anySucceeded or oneFailed. */
  readonly trigger?: string;
  /** Its function's last "not yet" (ctx.notYet), while it waits: why, how many checks, the next one. */
  readonly waiting?: {
    readonly reason: string;
    readonly checks: number;
    readonly nextCheckAt: string;
  };
  readonly keepResult: boolean;
  /** Its own priority, when it has one (else its plan's applies). */
  readonly priority?: number;
  readonly concurrencyKey?: string;
  readonly owner?: { readonly workerId: string; readonly claimedAt: string };
  readonly attempts?: {
    readonly failures: number;
    readonly nextTryAt: string;
    readonly lastError: string;
  };
  /** Tries in all its retry policy allows (a live task that failed a try). */
  readonly maxAttempts?: number;
  /** Its failure, when it failed for good (a failed task's `retryable` says only whether another try was left when it was recorded). */
  readonly failure?: {
    readonly type: string;
    readonly message: string;
    readonly code: string;
    readonly stack?: string;
    readonly retryable: boolean;
    readonly attempts: number;
    readonly workerId: string;
    readonly at: string;
  };
  readonly blockedReason?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly durationMs?: number;
  readonly workerId?: string;
  /** A task of a cancelled plan: when the plan was cancelled, and where the task stood then (running, runnable, waiting, …). */
  readonly cancelledAt?: string;
  readonly was?: string;
  /** Its history record was too large for one znode: params and inputs were not kept. */
  readonly omitted?: true;
  /** The kept result as text, or why there is none to show. */
  readonly result?: { readonly value: string } | { readonly unavailable: string };
  /** Why a gone task's node is gone: it finished in a plan without history, or the plan was cancelled. */
  readonly goneReason?: 'finished' | 'cancelled';
}

/** `GET /api/why?path=<task>`: why the task is not running (explain.task). */
export interface UiExplanation {
  readonly task: string;
  readonly code: string;
  readonly message: string;
  /** What lets the task go on, as a call and as a `zk-plan` command (FAILED, PLAN_PAUSED, PLAN_NOT_READY). */
  readonly remedy?: { readonly api: string; readonly cli: string };
  readonly details: Readonly<Record<string, unknown>>;
}

/** A live worker pool (listWorkers). */
export interface UiWorker {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly functions: readonly string[];
  readonly loops: number;
  readonly running: readonly string[];
  readonly startedAt: string;
  readonly updatedAt: string;
}

/** A live job worker (`zk-plan ui --jobs`): its job functions and how many items it holds now. */
export interface UiJobWorker {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly jobFunctions: readonly string[];
  /** Items assigned to it, over all jobs. */
  readonly items: number;
  /** It is the job manager (decides the assignment). */
  readonly manager: boolean;
  /** Taken out of every assignment by an operator (`zk-plan jobs disable-worker`). */
  readonly disabled: boolean;
  readonly startedAt: string;
}

/** A concurrency limit and the tasks holding its slots. */
export interface UiLimit {
  readonly key: string;
  readonly limit: number;
  readonly holders: readonly {
    readonly task: string;
    readonly workerId: string;
    readonly at: string;
  }[];
}

/** A schedule (`zk-plan ui --schedules`): its timing, next fire times and recent runs, newest first. */
export interface UiSchedule {
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly paused: boolean;
  readonly planParent: string;
  readonly nextFireTimes: readonly string[];
  readonly runs: readonly {
    readonly firedAt: string;
    readonly kind: string;
    readonly state: string;
    readonly plan: string;
    /** The plan's state now (fired runs), or why the tick was skipped or failed. */
    readonly detail?: string;
    /** True when the plan is one this view serves (under its parent): the page links it. */
    readonly shown: boolean;
  }[];
  /** Its backfills, oldest first (those under way and the newest finished ones). */
  readonly backfills: readonly UiBackfill[];
}

/** What `/api/schedules` answers: the schedules of the view's schedules' parent (`--schedules`), none without one. */
export interface UiSchedules {
  readonly schedulesParent?: string;
  readonly schedules: readonly UiSchedule[];
}

/** A backfill of a schedule: its range of ticks (ISO-8601, both ends included) and how far it got. */
export interface UiBackfill {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly mode: string;
  readonly state: string;
  readonly total: number;
  readonly started: number;
  readonly completed: number;
  readonly failed: number;
  readonly notRun: number;
  readonly reason?: string;
  readonly createdAt: string;
}

/** An item of a worker's share, with its lease as read: `token` when this worker holds it, `heldBy` while another's lease on it lasts. */
export interface UiJobItem {
  readonly id: string;
  readonly token?: number;
  readonly heldBy?: string;
}

/** A worker's share of a job, as the manager last assigned it. */
export interface UiJobShare {
  readonly workerId: string;
  /** The worker is registered now (else the manager has not yet written it out of the assignment). */
  readonly live: boolean;
  /** It is the manager that wrote the assignment. */
  readonly manager: boolean;
  readonly items: readonly UiJobItem[];
}

/** A job (`zk-plan ui --jobs`): its definition, why it could not be assigned, its items nobody got, and each worker's share. */
export interface UiJob {
  readonly name: string;
  readonly fn: string;
  /** `continuous`, `every N ms` or `cron … (timezone)`. */
  readonly mode: string;
  readonly strategy: string;
  readonly disabled: boolean;
  readonly items: number;
  readonly problem?: string;
  readonly unassigned: readonly string[];
  /** By worker id. */
  readonly assignment: readonly UiJobShare[];
  /** Its newest runs (at most UI_JOB_RUNS), newest first, and counts over them. */
  readonly runs: readonly UiJobRun[];
  readonly runCounts: {
    readonly runs: number;
    readonly failed: number;
    readonly interrupted: number;
    readonly misfires: number;
    readonly caughtUp: number;
    readonly failovers: number;
    readonly retries: number;
  };
  /** Items whose last failure is kept (`zk-plan jobs runs` lists them). */
  readonly failedItems: number;
}

/** A run of a job as the jobs section shows it. */
export interface UiJobRun {
  readonly run: string;
  readonly worker: string;
  readonly state: string;
  readonly cause: string;
  readonly attempt: number;
  readonly startedAt: string;
  readonly finishedAt?: string;
  /** Item ids with their tokens (`a#12`), the first few. */
  readonly items: readonly string[];
  readonly itemCount: number;
  readonly error?: string;
  readonly misfire?: string;
  readonly failoverOf?: string;
  /** The last lines it wrote with ctx.log (`LEVEL message`), the newest few. */
  readonly log?: readonly string[];
}

/** `GET /api/cluster`: live workers, limits, schedules, jobs, and whether this view accepts actions. */
export interface UiCluster {
  readonly actions: boolean;
  readonly workers: readonly UiWorker[];
  readonly limits: readonly UiLimit[];
  /** The schedules' parent the view was started with (`--schedules`), if any. */
  readonly schedulesParent?: string;
  /** Empty unless the view was started with a schedules' parent. */
  readonly schedules: readonly UiSchedule[];
  /** The jobs' parent the view was started with (`--jobs`), if any. */
  readonly jobsParent?: string;
  /** Empty unless the view was started with a jobs' parent. */
  readonly jobs: readonly UiJob[];
  /** The live job workers of the jobs' parent; empty without one. */
  readonly jobWorkers: readonly UiJobWorker[];
}

/** `GET /api/actions`: whether the pages may take actions (src/ui/ui-actions.ts), and how to enable them. */
export interface UiActionsInfo {
  /** `same-origin`: from the view's own pages at `origins`; `token`: with the bearer token; `off`: read-only. */
  readonly mode: 'same-origin' | 'token' | 'off';
  /** The origins (`http://127.0.0.1:8080`) whose pages may act without a token; empty in the other modes. */
  readonly origins: readonly string[];
  /** The command that starts this view with actions (with the token, in `same-origin` and `token` mode); its connection options left out. */
  readonly enable: string;
}

/** An error answer of the API. */
export interface UiErrorBody {
  readonly error: { readonly code: string; readonly message: string };
}

/** One try's log as `/api/task-log` answers it (logs.read's records, times as ISO strings). */
export interface UiTaskLogTry {
  readonly attempt: number;
  readonly workerId: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly truncated: boolean;
  readonly droppedLines: number;
  readonly droppedBytes: number;
  readonly planCapReached: boolean;
  readonly fullLog?: { readonly host: string; readonly location: string; readonly url?: string };
  readonly lines: readonly {
    readonly time: string;
    readonly level: string;
    readonly msg: string;
    readonly fields?: Readonly<Record<string, unknown>>;
  }[];
}
