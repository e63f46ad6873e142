import type { TriggerRule } from '../trigger/trigger-rule.js';
import type { PlanStatus } from './plan-status.js';
import type { TaskFailure } from '../store/failure-policy.js';

import type { TaskViewState } from './plan-progress.js';
import type { TaskTry } from './task-tries-view.js';

/**
 * One task of a plan, live or ended (from the plan's history: done, or failed, cancelled or unstarted in a cancelled plan).
 *
 * @category Plan status
 */
export interface TaskView {
  /** Path of the task node (gone once done). */
  readonly task: string;
  /** `task-NNNNNNNNNN`. */
  readonly name: string;
  /** The key the task is known by: its spec's (`submitPlan`, a schedule, an import or rerun), or `addTask(…, { key })`'s; absent when it has none. */
  readonly key?: string;
  readonly state: TaskViewState;
  /** Registered function name, or `inline` for inline source. */
  readonly fn: string;
  /** Its bound params (empty when its history record was too large to keep them: `omitted`). */
  readonly params: readonly unknown[];
  /** Paths of its input tasks, in argument order (when recorded: tasks added by zk-plan ≥ this version). */
  readonly inputs: readonly string[];
  /** Inputs still missing (unmet dep-* nodes). */
  readonly pendingInputs: number;
  /** Who runs it, while running (also `workerId` and `startedAt`). */
  readonly owner?: { readonly workerId: string; readonly claimedAt: Date };
  /** Failed tries so far and when the next may start. */
  readonly attempts?: {
    readonly failures: number;
    readonly nextTryAt: Date;
    readonly lastError: string;
  };
  /** Why its function said "not yet" (ctx.notYet) at its last check, and when it is checked again. */
  readonly waiting?: {
    readonly reason: string;
    readonly since: Date;
    readonly checks: number;
    readonly nextCheckAt: Date;
  };
  /** How many tries its retry policy allows in all (its own over its plan's): live tasks with a failed try only. */
  readonly maxAttempts?: number;
  /** Failed tries of the task: so far (live), all of them (failed), or before the try that succeeded (done). Absent when none is recorded. */
  readonly failedTries?: number;
  readonly failure?: TaskFailure;
  /**
   * Its tries, oldest first: the failed ones its records keep (the latest 20), then the one that
   * completed it, runs it, or ran when its plan was cancelled. Absent when none is known.
   */
  readonly tries?: readonly TaskTry[];
  /** Why it can never run, when blocked. */
  readonly blockedReason?: string;
  /**
   * The worker loop that ran it (done), runs it (running), failed it for good (failed) or held it
   * when its plan was cancelled (cancelled); when its last try started (done, running, cancelled
   * while running), when it ended (done, failed, cancelled while running), and how long it took.
   */
  readonly workerId?: string;
  readonly startedAt?: Date;
  readonly finishedAt?: Date;
  readonly durationMs?: number;
  /** Cancelled and unstarted tasks: when the plan was cancelled, and where the task stood then. */
  readonly cancelledAt?: Date;
  readonly was?:
    'running' | 'finishing' | 'runnable' | 'retrying' | 'waiting' | 'blocked' | 'building';
  /**
   * A task that handed over with ctx.continueWith: the task whose result becomes (done: became)
   * its own. A live one waits for it, although no input of its own is missing.
   */
  readonly continuedBy?: string;
  /** Why it was skipped (`skip(reason)`, or its trigger rule), when it was. */
  readonly skipped?: string;
  /** Its history record was too large for one znode: its params and inputs were not kept. */
  readonly omitted?: true;
  /** A sub-plan task (`subPlan`): the child plan it made (or makes). */
  readonly subPlan?: string;
  /** Whether its result is kept (readable with getResult). */
  readonly keepResult: boolean;
  /** Its own priority, when it has one (else its plan's applies). Live tasks only. */
  readonly priority?: number;
  /** The key of the cluster-wide limit it runs under (`addTask(…, { concurrencyKey })`). Live tasks only. */
  readonly concurrencyKey?: string;
  /** Its trigger rule, when it is not `allSucceeded` (`addTask(…, { trigger })`). Live tasks only. */
  readonly trigger?: TriggerRule;
}

/**
 * A plan with every task, for `zk-plan show` and the web view.
 *
 * @category Plan status
 */
export interface PlanView {
  readonly plan: string;
  readonly status: PlanStatus;
  /** Live tasks and, when the plan keeps a history, ended ones; ordered by task name. */
  readonly tasks: readonly TaskView[];
  /** Tasks done (from the history, when kept): `status.counts.done`. */
  readonly done: number;
  /** Whether the plan keeps a history (every plan unless created with `{ history: false }`). */
  readonly historyKept: boolean;
  /** When the plan's node was created (ZooKeeper's clock). */
  readonly createdAt?: Date;
  /** When it ended (completed, failed or cancelled): the latest end of its tasks or its cancel; absent while it runs, or when nothing tells (a completed plan without history). */
  readonly finishedAt?: Date;
}

/**
 * One line per plan, for `zk-plan plans` and the web view's list.
 *
 * @category Plan status
 */
export interface PlanSummary {
  readonly plan: string;
  readonly status: PlanStatus;
  /** Tasks done, when the plan keeps a history: `status.counts.done`. */
  readonly done: number;
  /** Whether the plan keeps a history (so `done` counts every finished task). */
  readonly historyKept?: boolean;
  /** When the plan's node was created (ZooKeeper's clock): PlanView's `createdAt`. */
  readonly createdAt?: Date;
  /** When it ended: PlanView's `finishedAt`. */
  readonly finishedAt?: Date;
}
