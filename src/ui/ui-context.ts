/**
 * What the web view's routes share: the ZkPlan they read through, the parent they serve, the
 * options that change what they answer, the live feeds and the browser assets.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ZkPlan } from '../zk-plan.js';
import type { AssetCache } from './asset-cache.js';
import type { UiFeeds } from './ui-feeds.js';
import type { ActionsAccess } from './ui-actions.js';

export interface UiContext {
  readonly zkPlan: ZkPlan;
  /** The parent whose plans are shown: nothing outside it is served. */
  readonly parent: string;
  /** Who may take actions (src/ui/ui-actions.ts). */
  readonly actions: ActionsAccess;
  /** `zk-plan ui` with this view's parent, port and lists, for the pages to say how to start it with actions. */
  readonly enableActionsCommand: string;
  /** A schedules' parent listed on the schedules page (and the workflows page). */
  readonly schedules: string | undefined;
  /** A jobs' parent listed on the jobs page. */
  readonly jobs: string | undefined;
  readonly feeds: UiFeeds;
  readonly assets: AssetCache;
}

/**
 * Answers a GET or HEAD request for one path. A route throws to answer with an error: an
 * HttpError's status, or the status statusOf (http-rules.ts) gives the error.
 */
export type UiRoute = (
  ctx: UiContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => void | Promise<void>;
