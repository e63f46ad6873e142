/**
 * `snapshots.rerun(plan, { from })`: a new run of a plan's spec in which `from` (a task key, or every
 * failed task with `'failed'`) and everything downstream of it run again (src/spec/rerun-selection.ts),
 * and every other task is as the plan has it: done ones reuse their stored results, failed ones
 * stay failed (so a failFast plan with a failed task outside the rerun is refused:
 * RERUN_BLOCKED_BY_FAILED), unfinished ones run. It is an export of the plan with the selected tasks set back
 * to unfinished, imported under the same parent: so it needs the results of the done tasks that a
 * rerun task takes as inputs, which submitted plans keep (every task keeps its result unless its
 * options say `keepResult: false`) for as long as retention keeps the plan.
 */
import { SnapshotError } from '../errors/snapshot-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { rerunSelection, type RerunFrom } from '../spec/rerun-selection.js';
import type { PlanSnapshot, SnapshotTask } from './plan-snapshot.js';

/**
 * Options of `snapshots.rerun`.
 *
 * @category Snapshots
 */
export interface RerunOptions {
  /** The task key to start from, or `'failed'`: every failed task. */
  readonly from: RerunFrom;
}

/** `snapshots.rerun`'s options, checked: InvalidArgumentError naming the plan. */
export function rerunFrom(plan: string, options: unknown): RerunFrom {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', "expected { from: <task key> | 'failed' }", plan);
  for (const key of Object.keys(options))
    if (key !== 'from')
      throw new InvalidArgumentError(
        key,
        'unknown option of rerunPlan; its one option is from',
        plan,
      );
  const from = (options as { from?: unknown }).from;
  if (typeof from !== 'string' || from === '')
    throw new InvalidArgumentError(
      'from',
      `expected a task key of the plan's spec or 'failed', got ${JSON.stringify(from)}`,
      plan,
    );
  return from;
}

/** The snapshot a rerun imports: the selected tasks unfinished (runnable, no tries yet), the others as the plan has them. */
export function rerunSnapshot(snapshot: PlanSnapshot, from: RerunFrom): PlanSnapshot {
  const failed = Object.entries(snapshot.tasks)
    .filter(([, task]) => task.state === 'failed')
    .map(([key]) => key);
  const selected = rerunSelection(snapshot.spec, from, failed);
  const staysFailed = failed.filter((key) => !selected.has(key));
  // A failFast plan with a failed task runs nothing more: the new run would stop before it began.
  if (snapshot.options.failurePolicy === 'failFast' && staysFailed.length > 0)
    throw new SnapshotError(
      'RERUN_BLOCKED_BY_FAILED',
      from,
      `is not upstream of the failed ${staysFailed.map((key) => `"${key}"`).join(', ')}, which would stay failed, and the plan's failurePolicy failFast stops a plan with a failed task at once: rerun from 'failed' first, then from "${from}" in the plan that makes`,
      snapshot.plan,
    );
  const tasks: Record<string, SnapshotTask> = {};
  for (const [key, task] of Object.entries(snapshot.tasks))
    tasks[key] = selected.has(key) ? { state: 'runnable', failedTries: 0 } : task;
  return { ...snapshot, tasks };
}
