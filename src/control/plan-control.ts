/**
 * Pause, resume and cancel: the plan's `control` node, written by version so that concurrent
 * calls (a pause racing a cancel) end in one state, then a touch of the plan node so that every
 * worker process hears it through the data watch it keeps on the plan. Workers also read the
 * control node after each claim, before a task starts: a worker that missed the watch (its
 * session was reconnecting) still starts nothing of a paused or cancelled plan.
 *
 * Every call is safe to repeat, and a call cut short anywhere (a crash, a lost reply) is
 * finished by calling it again: the record is written first, the touch and the clean-up follow.
 */
import { PlanCancelledError, PlanFinishedError, PlanNotFoundError } from '../errors/plan-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { TaskStore } from '../store/task-store.js';
import { listSubPlans } from '../subplan/sub-plan-record.js';
import { assertKnownKeys } from '../config/option-checks.js';
import {
  CONTROL,
  FAILED,
  OWNER,
  READY,
  RUNNABLE_INDEX,
  TASK_PREFIX,
  assertValidPath,
  childPath,
  hasSequentialName,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import type { PlanState } from '../plan/plan-progress.js';
import {
  decideControl,
  encodeControlRecord,
  parseControlRecord,
  type ControlRequest,
  type PlanControlRecord,
} from './control-record.js';

/** Where a plan stands (`plans.status(plan).state`): read before a pause or cancel, which a finished plan refuses. */
export type ReadPlanState = (plan: string) => Promise<PlanState>;

/**
 * Writes a history record of every task of a cancelled plan that has none yet, where it stood
 * (src/plan/cancel-history.ts); `cancelledAt` is the time of the cancel's control record.
 */
export type RecordCancelledTasks = (plan: string, cancelledAt: Date) => Promise<void>;

/**
 * Options of `control.pause`.
 *
 * @category Control
 */
export interface PauseOptions {
  /** Abort the running tasks' signals too; they are given back uncharged and run again after control.resume. @defaultValue false */
  readonly abortRunning?: boolean;
}

/**
 * Options of `control.cancel`.
 *
 * @category Control
 */
export interface CancelOptions {
  /** Why, kept with the plan and reported by waitForCompletion's PlanCancelledError and plans.status. @defaultValue none */
  readonly reason?: string;
}

/**
 * What `control.pause` reports once the pause is in ZooKeeper.
 *
 * @category Control
 */
export interface PauseOutcome {
  readonly plan: string;
  /**
   * Tasks held by a worker when the pause was in place: each may still be starting (its worker
   * read the control node before the pause landed) or running. No other task of the plan starts
   * until control.resume.
   */
  readonly running: readonly string[];
}

const PAUSE_KEYS: Record<keyof PauseOptions, true> = { abortRunning: true };
const CANCEL_KEYS: Record<keyof CancelOptions, true> = { reason: true };
/** The longest cancel reason kept: it is stored in the control node, read by every worker. */
const MAX_CANCEL_REASON_LENGTH = 1_000;

export class PlanControl {
  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly readPlanState: ReadPlanState,
    private readonly recordCancelledTasks: RecordCancelledTasks,
  ) {}

  /** The plan's control record; undefined while it runs (or when the plan does not exist). */
  async read(plan: string): Promise<PlanControlRecord | undefined> {
    const path = childPath(plan, CONTROL);
    const node = await this.zk.tryGetData(path);
    return node === undefined ? undefined : parseControlRecord(path, node.data);
  }

  async pause(plan: string, options: PauseOptions = {}): Promise<PauseOutcome> {
    assertValidPath('plan', plan);
    assertOptionsObject(options);
    assertKnownKeys('control.pause', options, PAUSE_KEYS);
    if (options.abortRunning !== undefined && typeof options.abortRunning !== 'boolean')
      throw new InvalidArgumentError('abortRunning', 'expected a boolean');
    await this.refuseFinished(plan, 'pause');
    await this.apply(plan, {
      kind: 'pause',
      abortRunning: options.abortRunning === true,
      at: new Date(),
    });
    await this.forEachChild(plan, (child) => this.pause(child, options));
    return { plan, running: await this.heldTasks(plan) };
  }

  async resume(plan: string): Promise<void> {
    assertValidPath('plan', plan);
    await this.apply(plan, { kind: 'resume' });
    await this.forEachChild(plan, (child) => this.resume(child));
  }

  /**
   * Cancels for good: the control record first (from then on nothing of the plan starts, and
   * running tasks are aborted), then a history record of each task where it stood (cancelled,
   * unstarted or failed; plans that keep a history), all of them before any task is deleted, then
   * the tasks are deleted so that no worker spends time on them; the plan node stays, with its
   * control record, kept results and history, until plans.delete or retention. Cut short anywhere,
   * the call again writes what is missing and deletes what is left; the first record of a task stays.
   */
  async cancel(plan: string, options: CancelOptions = {}): Promise<void> {
    assertValidPath('plan', plan);
    assertOptionsObject(options);
    assertKnownKeys('control.cancel', options, CANCEL_KEYS);
    if (
      options.reason !== undefined &&
      (typeof options.reason !== 'string' || options.reason.length > MAX_CANCEL_REASON_LENGTH)
    )
      throw new InvalidArgumentError(
        'reason',
        `expected a string of at most ${MAX_CANCEL_REASON_LENGTH} characters`,
      );
    await this.refuseFinished(plan, 'cancel');
    await this.apply(plan, { kind: 'cancel', reason: options.reason, at: new Date() });
    // The time of the cancel that landed first (a repeated call keeps its record).
    const cancelledAt = (await this.read(plan))?.at ?? new Date();
    await this.recordCancelledTasks(plan, cancelledAt);
    const tasks = (await this.store.reads.listTasks(plan)) ?? [];
    // `ready` first, as plans.delete does: once owner nodes go with the delete, nothing may take a task again.
    await Promise.all(tasks.map((task) => this.zk.deleteIfPresent(childPath(task, READY))));
    await Promise.all(tasks.map((task) => this.zk.deleteRecursive(task)));
    const index = await this.zk.tryGetChildren(childPath(plan, RUNNABLE_INDEX));
    await Promise.all(
      (index?.children ?? []).map((name) =>
        this.zk.deleteIfPresent(childPath(childPath(plan, RUNNABLE_INDEX), name)),
      ),
    );
    await this.forEachChild(plan, (child) =>
      this.cancel(child, { reason: `its parent plan ${plan} was cancelled` }),
    );
  }

  /**
   * Applies a pause, resume or cancel of `plan` to the child plans of its sub-plan tasks (and so on
   * down, each child applying it to its own). Called after the plan's own record is written: a
   * child made later follows the plan's control when its check readies it (src/subplan). A child
   * that is gone, finished or cancelled is left as it is.
   */
  private async forEachChild(
    plan: string,
    action: (child: string) => Promise<unknown>,
  ): Promise<void> {
    const children = await listSubPlans(this.zk, plan);
    await Promise.all(
      children.map(async ({ child }) => {
        try {
          await action(child);
        } catch (error) {
          if (
            error instanceof PlanNotFoundError ||
            error instanceof PlanFinishedError ||
            error instanceof PlanCancelledError
          )
            return;
          throw error;
        }
      }),
    );
  }

  /**
   * A completed or failed plan keeps the state it ended in: pausing it would stop nothing, and a
   * cancel would relabel work that finished as cancelled. One listing of the plan tells a completed
   * plan (ready, no task left) and whether it may have failed (its `failed` marker, written when a
   * task fails for good); only then is its whole status read. A plan that finishes between this
   * read and the write is paused or cancelled like one still running (there is no multi-op to tie
   * the two together), which is harmless: its tasks are done either way. A cancelled plan is left
   * to `apply`, which answers as before (a cancel again changes nothing, a pause is refused).
   */
  private async refuseFinished(plan: string, action: 'pause' | 'cancel'): Promise<void> {
    const listing = await this.zk.tryGetChildren(plan);
    if (listing === undefined) return; // apply says PLAN_NOT_FOUND
    const { children } = listing;
    if (children.includes(CONTROL) && (await this.read(plan))?.state === 'cancelled') return;
    // No task left and not marked ready: still being built (or its builder died before adding any).
    if (children.includes(READY) && !children.some((name) => hasSequentialName(name, TASK_PREFIX)))
      throw new PlanFinishedError(plan, 'completed', action);
    if (children.includes(FAILED) && (await this.readPlanState(plan)) === 'failed')
      throw new PlanFinishedError(plan, 'failed', action);
  }

  /** Writes the transition the request makes (re-reading after a concurrent change), then touches the plan. */
  private async apply(plan: string, request: ControlRequest): Promise<void> {
    const path = childPath(plan, CONTROL);
    for (;;) {
      const node = await this.zk.tryGetData(path);
      const decision = decideControl(
        node === undefined ? undefined : parseControlRecord(path, node.data),
        request,
      );
      try {
        if (decision.kind === 'cancelled') throw new PlanCancelledError(plan, decision.reason);
        if (decision.kind === 'write' && node === undefined)
          await this.zk.create(path, encodeControlRecord(decision.record, path));
        // Named by the node read: a resend after a lost reply never lands on a control node made again since (a later pause).
        else if (decision.kind === 'write' && node !== undefined)
          await this.zk.setData(
            path,
            encodeControlRecord(decision.record, path),
            node.stat.version,
            { incarnation: node.stat.czxid },
          );
        else if (decision.kind === 'delete' && node !== undefined)
          await this.zk.delete(path, node.stat.version, { incarnation: node.stat.czxid });
        break;
      } catch (error) {
        if (isZkError(error, 'NO_NODE') && node === undefined) throw new PlanNotFoundError(plan);
        // Changed meanwhile (or a resent write that had landed): read it again and decide again.
        if (!isZkError(error, 'NODE_EXISTS', 'BAD_VERSION', 'NO_NODE', 'NODE_REPLACED'))
          throw error;
      }
    }
    if ((await this.zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
    await this.store.touchPlan(plan);
  }

  /**
   * Tasks with an owner now, all of them: a runnable task may be missing from the runnable index (a
   * retry waiting out its delay, a feeder that crashed before indexing it), and a scan claims it
   * all the same.
   */
  private async heldTasks(plan: string): Promise<string[]> {
    const tasks = (await this.store.reads.listTasks(plan)) ?? [];
    const owned = await Promise.all(
      tasks.map(async (task) =>
        (await this.zk.exists(childPath(task, OWNER))) === undefined ? undefined : task,
      ),
    );
    return owned.filter((task): task is string => task !== undefined);
  }
}

function assertOptionsObject(options: unknown): asserts options is object {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'expected an object');
}
