/**
 * Watch-driven feeds of the web view: a plan's graph model, and the list of plans under a parent.
 * A feed re-reads when one of its ZooKeeper watches fires (watches are one-shot: each is armed
 * again before the next read, so no change between the read and the re-arm is missed), coalesces
 * bursts to at most one read per interval, and refreshes slowly on its own as a safety net.
 */
import { PlanNotFoundError } from '../errors/plan-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { PlanSummary, PlanView } from '../plan/plan-view.js';
import {
  FAILED,
  HISTORY,
  OWNER,
  RUNNABLE_INDEX,
  SUB_PLANS,
  childPath,
  nameOf,
} from '../zk/layout.js';
import { Feed, type FeedTiming } from './feed.js';
import { buildModel, diffModels, isEmptyDiff, planRow } from './ui-model.js';
import type { UiDiff, UiModel, UiPlanRow } from './ui-wire.js';
import {
  NO_WATCH,
  watchChildren,
  watchNodeOrParent,
  type WatchClient,
} from '../zk/recipes/watch-set.js';
import { DEFAULTS } from '../config/defaults.js';

/** What a plan's feed tells its listeners. */
export type PlanFeedMessage =
  | { readonly type: 'snapshot'; readonly model: UiModel }
  | { readonly type: 'diff'; readonly diff: UiDiff }
  | { readonly type: 'gone'; readonly plan: string }
  | { readonly type: 'problem'; readonly message: string };

/** Task states during which a task has, or will soon get, an `owner` node worth watching. */
const OWNER_WATCHED = new Set(['runnable', 'retrying', 'running', 'finishing']);

/**
 * A plan's graph model, kept current from watches: a child watch on the plan (tasks added and
 * removed, `ready`, `failed`), on `<plan>/history` (tasks finished) and on `<plan>/runnable`
 * (tasks whose inputs all arrived), on `<plan>/sub-plans` (a sub-plan task's child recorded), a
 * data watch on `<plan>/failed` (each failure rewrites it),
 * and one on the `owner` of each task that is runnable or running (claims and releases). A node
 * not there yet is watched through its parent's children (watchNodeOrParent), so that no watch
 * outlives the plan.
 */
export class PlanFeed extends Feed<PlanFeedMessage> {
  private model: UiModel | undefined;
  private latestView: { readonly view: PlanView; readonly at: number } | undefined;
  private retryAtTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: {
      readonly plans: { describe(plan: string): Promise<PlanView> };
      readonly zk: WatchClient;
    },
    readonly plan: string,
    timing: FeedTiming = {},
    onIdle: () => void = () => undefined,
  ) {
    super(source.zk, timing, onIdle);
  }

  /** The last view read and when (Date.now()), for the task panel. */
  get latest(): { readonly view: PlanView; readonly at: number } | undefined {
    return this.latestView;
  }

  override close(): void {
    clearTimeout(this.retryAtTimer);
    super.close();
  }

  protected current(): PlanFeedMessage | undefined {
    return this.model && { type: 'snapshot', model: this.model };
  }

  protected async refresh(): Promise<void> {
    const { plan } = this;
    try {
      await Promise.all([
        this.watches.arm('plan', (watcher) => this.zk.getChildren(plan, watcher)),
        this.watches.arm('history', (watcher) =>
          watchNodeOrParent(this.zk, childPath(plan, HISTORY), 'children', watcher),
        ),
        this.watches.arm('runnable', (watcher) =>
          watchNodeOrParent(this.zk, childPath(plan, RUNNABLE_INDEX), 'children', watcher),
        ),
        this.watches.arm('failed', (watcher) =>
          watchNodeOrParent(this.zk, childPath(plan, FAILED), 'data', watcher),
        ),
        // A sub-plan task's record of its child: the task's panel links to the child once it is
        // there. Only once `sub-plans` exists (the plan's own child watch sees it made), so that a
        // plan without sub-plans costs no watch of its own.
        this.watches.arm('sub-plans', async (watcher) =>
          (await this.zk.tryGetChildren(childPath(plan, SUB_PLANS), watcher)) === undefined
            ? NO_WATCH
            : true,
        ),
      ]);
      const view = await this.source.plans.describe(plan);
      if (this.closed) return;
      await this.armOwners(view);
      if (this.closed) return;
      this.latestView = { view, at: Date.now() };
      this.publish(view);
    } catch (error) {
      if (this.closed) return;
      if (
        error instanceof PlanNotFoundError ||
        (isZkError(error, 'NO_NODE') && error.path === plan)
      ) {
        this.broadcast({ type: 'gone', plan });
        this.close();
        return;
      }
      this.broadcast({
        type: 'problem',
        message: error instanceof Error ? error.message : String(error),
      });
      this.retrySoon();
    }
  }

  private async armOwners(view: PlanView): Promise<void> {
    const live = view.tasks.filter((task) => OWNER_WATCHED.has(task.state));
    await Promise.all(
      live.map((task) =>
        this.watches.arm(`owner:${task.name}`, (watcher) =>
          watchNodeOrParent(this.zk, childPath(task.task, OWNER), 'data', watcher),
        ),
      ),
    );
    // A task waiting for its next try becomes runnable with no ZooKeeper event: read again then.
    const nextTry = Math.min(
      ...view.tasks.flatMap((task) =>
        task.state === 'retrying' && task.attempts ? [task.attempts.nextTryAt.getTime()] : [],
      ),
    );
    clearTimeout(this.retryAtTimer);
    if (Number.isFinite(nextTry)) {
      this.retryAtTimer = setTimeout(
        () => this.runner.trigger(),
        Math.max(0, nextTry - Date.now()) + 50,
      );
      this.retryAtTimer.unref();
    }
  }

  private publish(view: PlanView): void {
    const previous = this.model;
    const model = buildModel(view, previous);
    this.model = model;
    if (previous === undefined) {
      this.broadcast({ type: 'snapshot', model });
      return;
    }
    const diff = diffModels(previous, model);
    if (!isEmptyDiff(diff, previous.status)) this.broadcast({ type: 'diff', diff });
  }
}

/** What the plans feed tells its listeners. */
export type PlansFeedMessage =
  | { readonly type: 'plans'; readonly plans: readonly UiPlanRow[] }
  | { readonly type: 'problem'; readonly message: string };

/**
 * The plans under a parent with their state and progress, kept current from a child watch on the
 * parent and, per plan, child watches on the plan and its history and a data watch on its `failed`
 * marker (each, while absent, on the node above it: see watchNodeOrParent).
 */
export class PlansFeed extends Feed<PlansFeedMessage> {
  private rows: readonly UiPlanRow[] | undefined;
  private lastJson = '';
  private readonly historyKept = new Map<string, boolean>();

  constructor(
    private readonly source: {
      readonly plans: { list(parent: string): Promise<PlanSummary[]> };
      readonly zk: WatchClient;
    },
    readonly parent: string,
    timing: FeedTiming = {},
    onIdle: () => void = () => undefined,
  ) {
    super(source.zk, { minIntervalMs: DEFAULTS.uiFeeds.plansListMinIntervalMs, ...timing }, onIdle);
  }

  protected current(): PlansFeedMessage | undefined {
    return this.rows && { type: 'plans', plans: this.rows };
  }

  protected async refresh(): Promise<void> {
    const { parent } = this;
    try {
      await this.watches.arm('parent', (watcher) => watchChildren(this.zk, parent, watcher));
      let summaries: PlanSummary[];
      try {
        summaries = await this.source.plans.list(parent);
      } catch (error) {
        if (!(error instanceof PlanNotFoundError)) throw error;
        summaries = []; // no parent yet: its existence watch tells when it comes
      }
      await Promise.all(
        summaries.map(async ({ plan }) => {
          const name = nameOf(plan);
          await Promise.all([
            this.watches.arm(`plan:${name}`, (watcher) =>
              watchNodeOrParent(this.zk, plan, 'children', watcher),
            ),
            this.watches.arm(`history:${name}`, async (watcher) => {
              const kept = await watchNodeOrParent(
                this.zk,
                childPath(plan, HISTORY),
                'children',
                watcher,
              );
              this.historyKept.set(plan, kept === true);
              return kept;
            }),
            this.watches.arm(`failed:${name}`, (watcher) =>
              watchNodeOrParent(this.zk, childPath(plan, FAILED), 'data', watcher),
            ),
          ]);
        }),
      );
      if (this.closed) return;
      const listed = new Set(summaries.map(({ plan }) => plan));
      for (const plan of this.historyKept.keys())
        if (!listed.has(plan)) this.historyKept.delete(plan); // deleted plans
      const rows = summaries.map((summary) =>
        planRow(summary, summary.historyKept ?? this.historyKept.get(summary.plan) === true),
      );
      const json = JSON.stringify(rows);
      this.rows = rows;
      if (json === this.lastJson) return;
      this.lastJson = json;
      this.broadcast({ type: 'plans', plans: rows });
    } catch (error) {
      if (this.closed) return;
      this.broadcast({
        type: 'problem',
        message: error instanceof Error ? error.message : String(error),
      });
      this.retrySoon();
    }
  }
}
