/**
 * The names of where a plan and a task stand. A module of types alone, imported by the web view's
 * browser code too (src/ui/ui-wire.ts), so it imports nothing.
 */

/** Where a plan stands as a whole. */
export type PlanState = 'building' | 'running' | 'paused' | 'cancelled' | 'completed' | 'failed';

/** Where one task stands, as shown by `zk-plan show` and the web view. */
export type TaskViewState = 'building' | 'waiting' | 'runnable' | 'retrying' | 'running' | 'finishing' | 'done' | 'failed' | 'blocked';
