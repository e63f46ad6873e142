/**
 * The live feeds of one web view and the event streams they write to: one feed per plan being
 * watched and one of the plans list, shared by every browser looking at it, and closed with the view.
 */
import type { ServerResponse } from 'node:http';
import type { ZkPlan } from '../zk-plan.js';
import { PlanFeed, PlansFeed } from './plan-feed.js';
import type { FeedTiming } from './feed.js';

export class UiFeeds {
  private readonly planFeeds = new Map<string, PlanFeed>();
  private plansFeed: PlansFeed | undefined;
  /** The open event streams, ended when the view closes. */
  readonly streams = new Set<ServerResponse>();
  private closingNow = false;

  constructor(
    private readonly zkPlan: ZkPlan,
    private readonly parent: string,
    private readonly timing: FeedTiming,
  ) {}

  /** True once close() was called: no new stream is opened. */
  get closing(): boolean {
    return this.closingNow;
  }

  /** The plan's feed, started when no open one watches it; a feed that closes forgets itself. */
  planFeed(plan: string): PlanFeed {
    let feed = this.planFeeds.get(plan);
    if (feed === undefined || feed.isClosed) {
      const created: PlanFeed = new PlanFeed(this.zkPlan, plan, this.timing, () => {
        if (this.planFeeds.get(plan) === created) this.planFeeds.delete(plan);
      });
      this.planFeeds.set(plan, created);
      feed = created;
    }
    return feed;
  }

  /** The plans list's feed, started when no open one watches it. */
  listPlansFeed(): PlansFeed {
    if (this.plansFeed === undefined || this.plansFeed.isClosed) {
      const created: PlansFeed = new PlansFeed(this.zkPlan, this.parent, this.timing, () => {
        if (this.plansFeed === created) this.plansFeed = undefined;
      });
      this.plansFeed = created;
    }
    return this.plansFeed;
  }

  /** The latest view a plan's feed read, if a feed watches the plan: it spares a read of the plan. */
  latest(plan: string): PlanFeed['latest'] {
    return this.planFeeds.get(plan)?.latest;
  }

  /** Ends every stream and stops every feed. */
  close(): void {
    this.closingNow = true;
    for (const res of [...this.streams]) res.end();
    this.streams.clear();
    for (const feed of [...this.planFeeds.values()]) feed.close();
    this.planFeeds.clear();
    this.plansFeed?.close();
    this.plansFeed = undefined;
  }
}
