import type { JobRunCause, JobRunItem, JobRunOutcome } from '../jobs/job-run-record.js';

/**
 * What a worker's task events say about the task besides its path: how people know it (the plan's
 * name, the task's key), its function, and which try this is. Taken from what the worker already
 * read to run the task; absent when it has not read them (a failure before the function started).
 *
 * @category Workers
 */
export interface TaskEventLabels {
  /** The plan's name (its settings' `name`), when it has one. */
  readonly planName?: string;
  /** The task's key within its plan (its definition's `key`), when it has one. */
  readonly key?: string;
  /** The registered function the task calls; `inline` for an inline task. */
  readonly fn?: string;
  /** The number of this try, 1 for the first (earlier tries charged to the task, plus one). */
  readonly attempt?: number;
  /** How many tries the task's retry policy allows in all. */
  readonly maxAttempts?: number;
}

/**
 * Why a running task was given back uncharged: the worker stopped and its drain timeout passed
 * (`drain`), its plan was paused, cancelled or failed (failFast), or the worker's ZooKeeper
 * session expired (another worker may run it); `given-back` for any other fault that is not the
 * task's (a lost connection, a malformed node).
 *
 * @category Workers
 */
export type TaskGivenBackReason =
  'drain' | 'paused' | 'cancelled' | 'plan-failed' | 'session-expired' | 'given-back';

/**
 * Events a ZkPlan emits about its workers; tests and metrics listen to these instead of sleeping.
 *
 * @category Workers
 */
export interface ZkPlanEvents {
  /** A worker took a task (created its owner node). */
  'task:claimed': [{ readonly task: string; readonly plan: string; readonly workerId: string }];
  /** A worker starts the task's function (the try number `attempt`). */
  'task:started': [
    {
      readonly task: string;
      readonly plan: string;
      readonly workerId: string;
      readonly fn: string;
      readonly attempt: number;
    } & TaskEventLabels,
  ];
  /** A task's result is stored and handed to its dependents, and the task node is deleted. `reusedResult`: a previous owner had stored it. */
  'task:completed': [
    {
      readonly task: string;
      readonly plan: string;
      readonly workerId: string;
      readonly durationMs: number;
      readonly reusedResult: boolean;
      /** Why it completed as skipped (`skip(reason)`, or its trigger rule), when it did: it has no result. */
      readonly skipped?: string;
    } & TaskEventLabels,
  ];
  /**
   * A try of a task spawned tasks (ctx.spawn) or handed over (ctx.continueWith): `count`, the tasks
   * its calls resolved (a run after a crash that gets its earlier run's tasks back counts them again).
   */
  'task:spawned': [
    {
      readonly task: string;
      readonly plan: string;
      readonly workerId: string;
      readonly count: number;
    } & TaskEventLabels,
  ];
  /**
   * A task's function handed over with ctx.continueWith: its continuation exists, and the task,
   * given back, completes with the continuation's result (a `task:completed` then follows).
   */
  'task:continued': [
    {
      readonly task: string;
      readonly plan: string;
      readonly workerId: string;
      readonly durationMs: number;
      readonly continuation: string;
    } & TaskEventLabels,
  ];
  /**
   * A task's function said "not yet" (ctx.notYet): the task was given back, uncharged, and runs
   * again from `nextCheckAt`; `checks`: the checks that said "not yet" so far, this one included.
   */
  'task:waiting': [
    {
      readonly task: string;
      readonly plan: string;
      readonly workerId: string;
      readonly durationMs: number;
      readonly reason: string;
      readonly nextCheckAt: Date;
    } & TaskEventLabels,
  ];
  /**
   * A task's run failed and its owner node was removed. `charged`: the failure counts against the
   * task's attempts (infrastructure faults and aborts by the worker do not; `givenBack` says why
   * one was not charged); `final`: the task has now failed for good; otherwise it may be tried
   * again from `nextTryAt`. `attempts`: the charged failures so far, this one included (the
   * number of the try that failed).
   */
  'task:failed': [
    {
      readonly task: string;
      readonly plan: string;
      readonly workerId: string;
      readonly error: Error;
      readonly charged: boolean;
      readonly final: boolean;
      readonly attempts?: number;
      readonly nextTryAt?: Date;
      readonly givenBack?: TaskGivenBackReason;
      /** From the claim to the failure, in ms. */
      readonly durationMs?: number;
    } & TaskEventLabels,
  ];
  /** A worker found nothing to do and sleeps `sleepMs` (the spec's back-off, round `round`). */
  'worker:idle': [{ readonly workerId: string; readonly round: number; readonly sleepMs: number }];
  /** A scheduler of this ZkPlan brought a tick to its final state: `fired` (its plan is ready), `skipped` or `failed` (`reason`). */
  'schedule:tick': [
    {
      readonly schedules: string;
      readonly schedule: string;
      readonly tick: string;
      readonly state: string;
      readonly plan: string;
    },
  ];
  /** A scheduler pass hit a problem (ZooKeeper unreachable, a malformed node…) and carries on. */
  'schedule:error': [{ readonly schedules: string; readonly error: Error }];
  /**
   * A job worker of this ZkPlan started an item (took its lease: `token`; `failover` when the
   * previous holder's lease ran out instead of being released) or stopped one (`reason`).
   */
  'job:item': [
    {
      readonly jobs: string;
      readonly job: string;
      readonly item: string;
      readonly workerId: string;
      readonly state: 'started' | 'stopped';
      readonly token?: number;
      readonly failover?: boolean;
      readonly reason?: string;
    },
  ];
  /**
   * A job worker of this ZkPlan started a run of a job function (`state: 'started'`) or saw it end
   * (`'ended'`, with its `outcome`, `durationMs` and, for a failed run, `error`). `run` names its
   * record in the job's history; `cause` says why it ran; `attempt` counts tries of one due run.
   */
  'job:run': [
    {
      readonly jobs: string;
      readonly job: string;
      readonly workerId: string;
      readonly run: string;
      readonly cause: JobRunCause;
      readonly attempt: number;
      readonly items: readonly JobRunItem[];
      readonly state: 'started' | 'ended';
      readonly outcome?: JobRunOutcome;
      readonly durationMs?: number;
      readonly error?: Error;
      /** Ended failed with no retry left before the next tick. */
      readonly final?: boolean;
    },
  ];
  /** A tick of a job came while the previous run of the same share still ran: `caught-up` once right after it, or `skipped` (`misfire: 'skip'`). */
  'job:misfire': [
    {
      readonly jobs: string;
      readonly job: string;
      readonly workerId: string;
      readonly tick: Date;
      readonly handling: 'caught-up' | 'skipped';
    },
  ];
  /** A line a job function wrote with `ctx.log`, with its run and the share's items and tokens. */
  'job:log': [
    {
      readonly jobs: string;
      readonly job: string;
      readonly workerId: string;
      readonly run: string;
      readonly items: readonly JobRunItem[];
      readonly level: 'debug' | 'info' | 'warn' | 'error';
      readonly msg: string;
      readonly fields?: Readonly<Record<string, unknown>>;
    },
  ];
  /** The manager of this ZkPlan wrote a new assignment (`moved`: items that changed holder). */
  'job:rebalance': [{ readonly jobs: string; readonly epoch: number; readonly moved: number }];
  /** A job worker renewed its leases; `latencyMs` from sending the renewal to its answer. */
  'job:lease-renewed': [
    { readonly jobs: string; readonly workerId: string; readonly latencyMs: number },
  ];
  /** A job worker or manager hit a problem (a job function threw, ZooKeeper unreachable, a malformed node) and carries on. */
  'job:error': [
    {
      readonly jobs: string;
      readonly job?: string;
      readonly workerId: string;
      readonly error: Error;
    },
  ];
  /** A worker hit a problem outside any task (ZooKeeper unreachable, a malformed node…) and carries on. */
  'worker:error': [{ readonly workerId: string; readonly error: Error }];
}
