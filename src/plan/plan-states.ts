/**
 * The names of where a plan and a task stand. A module of types alone, imported by the web view's
 * browser code too (src/ui/ui-wire.ts), so it imports nothing.
 */

/**
 * Where a plan stands as a whole.
 *
 * @category Plan status
 */
export type PlanState = 'building' | 'running' | 'paused' | 'cancelled' | 'completed' | 'failed';

/**
 * Where one task stands, as shown by `zk-plan show` and the web view. `cancelled` and `unstarted`
 * are tasks of a cancelled plan, from its history: cancelled while running or ready to run, or
 * before they could start (waiting for inputs, blocked, or still being written). `skipped`: it
 * completed without a result (`skip(reason)`, or its trigger rule): a finished task, counted done.
 *
 * @category Plan status
 */
export type TaskViewState =
  | 'building'
  | 'waiting'
  | 'runnable'
  | 'retrying'
  | 'running'
  | 'finishing'
  | 'done'
  | 'skipped'
  | 'failed'
  | 'blocked'
  | 'cancelled'
  | 'unstarted';
