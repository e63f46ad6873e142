/**
 * `zk-plan/ui`: the live web view of the plans under a parent (see ui-server.ts).
 *
 * @module zk-plan/ui
 */
export { startUiServer, isLoopbackHost, type UiServer, type UiServerOptions } from './ui-server.js';
export type { FeedTiming } from './feed.js';
