/**
 * `rerunPlan(plan, { from })`: a new run of a plan's spec in which `from` (a task key, or every
 * failed task with `'failed'`) and everything downstream of it run again, and every other task
 * reuses what the plan has of it (DolphinScheduler's "start from this node"). It is an export of
 * the plan with those tasks set back to pending, imported under the same parent: so it needs the
 * results of the tasks upstream of `from`, which submitted plans keep (every task keeps its result
 * unless its options say `keepResult: false`) for as long as retention keeps the plan.
 */
import { SnapshotError } from '../errors/snapshot-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { PlanSpec } from '../spec/plan-spec.js';
import type { PlanSnapshot, SnapshotTask } from './plan-snapshot.js';

/** `rerunPlan`'s `{ from }`, checked. */
export function rerunFrom(plan: string, options: unknown): string {
  const from = (options as { from?: unknown } | null)?.from;
  if (typeof from !== 'string' || from === '') throw new InvalidArgumentError('options', "expected { from: <task key> | 'failed' }", plan);
  return from;
}

/** The keys that run again: the seeds (`from`, or the failed keys) and every task that depends on one of them, directly or not. */
export function rerunSelection(spec: PlanSpec, from: string, failed: readonly string[]): Set<string> {
  const keys = Object.keys(spec.tasks);
  let seeds: string[];
  if (from === 'failed') {
    if (failed.length === 0)
      throw new SnapshotError('RERUN_NOTHING_FAILED', undefined, 'the plan has no failed task to rerun from (pass a task key as `from`)');
    seeds = [...failed];
  } else {
    if (typeof from !== 'string' || !keys.includes(from))
      throw new SnapshotError(
        'RERUN_UNKNOWN_KEY',
        undefined,
        `"${String(from)}" is not a task key of the plan's spec (its keys: ${keys.join(', ')}), nor 'failed'`,
      );
    seeds = [from];
  }
  const selected = new Set(seeds);
  for (let grew = true; grew;) {
    grew = false;
    for (const key of keys) {
      if (selected.has(key)) continue;
      if ((spec.tasks[key]?.inputs ?? []).some((input) => selected.has(input))) {
        selected.add(key);
        grew = true;
      }
    }
  }
  return selected;
}

/** The snapshot a rerun imports: the selected tasks pending, the others as the plan has them. */
export function rerunSnapshot(snapshot: PlanSnapshot, from: string): PlanSnapshot {
  const failed = Object.entries(snapshot.tasks)
    .filter(([, task]) => task.state === 'failed')
    .map(([key]) => key);
  const selected = rerunSelection(snapshot.spec, from, failed);
  const tasks: Record<string, SnapshotTask> = {};
  for (const [key, task] of Object.entries(snapshot.tasks)) tasks[key] = selected.has(key) ? { state: 'pending', failures: 0 } : task;
  return { ...snapshot, tasks };
}
