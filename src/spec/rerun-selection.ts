/**
 * Which tasks of a spec a rerun runs again (pure): DolphinScheduler's "start from this node". The
 * seeds are `from` (a task key) or, with `from: 'failed'`, every failed task; the selection is the
 * seeds and every task that depends on one of them, directly or not. `'failed'` always means the
 * failed tasks, even in a spec with a task keyed "failed".
 */
import { SnapshotError } from '../errors/snapshot-errors.js';
import type { PlanSpec } from './plan-spec.js';

/**
 * `snapshots.rerun`'s `from`: a task key, or every failed task.
 *
 * @category Snapshots
 */
export type RerunFrom = string;

/**
 * `rerunPlan(plan, { from: RERUN_FAILED })`: rerun every failed task of the plan and what depends on them.
 *
 * @category Snapshots
 */
export const RERUN_FAILED = 'failed';

/**
 * The keys that run again; RERUN_UNKNOWN_KEY for a `from` that is not a key, RERUN_NOTHING_FAILED
 * for `'failed'` with no failed task. `rerunPlan` applies it; users pass only `from`.
 *
 * @internal
 */
export function rerunSelection(
  spec: PlanSpec,
  from: RerunFrom,
  failed: readonly string[],
): Set<string> {
  const keys = Object.keys(spec.tasks);
  let seeds: readonly string[];
  if (from === RERUN_FAILED) {
    if (failed.length === 0)
      throw new SnapshotError(
        'RERUN_NOTHING_FAILED',
        undefined,
        `the plan has no failed task to rerun from (pass a task key as \`from\`: ${keys.join(', ')})`,
      );
    seeds = failed;
  } else {
    if (!Object.hasOwn(spec.tasks, from))
      throw new SnapshotError(
        'RERUN_UNKNOWN_KEY',
        from,
        `is not a task key of the plan's spec (its keys: ${keys.join(', ')}), nor '${RERUN_FAILED}'`,
      );
    seeds = [from];
  }
  const users = new Map<string, string[]>();
  for (const key of keys)
    for (const input of new Set(spec.tasks[key]?.inputs ?? []))
      users.set(input, [...(users.get(input) ?? []), key]);
  const selected = new Set<string>();
  const queue = [...seeds];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (selected.has(next)) continue;
    selected.add(next);
    queue.push(...(users.get(next) ?? []));
  }
  return selected;
}
