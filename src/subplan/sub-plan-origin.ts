/**
 * A child plan's node names the sub-plan task that made it (`origin: { parentTask }`), from its
 * first write on: a check finds its own child by it, and views link the child back to the task.
 */
import { decodeValue } from '../serialization/codec.js';
import {
  TASK_PREFIX,
  assertValidPath,
  hasSequentialName,
  isZkPlanPlanName,
  nameOf,
  parentOf,
  subPlanPath,
} from '../zk/layout.js';

/** What a child plan's node stores as its origin. */
export interface SubPlanOrigin {
  readonly parentTask: string;
}

/**
 * The sub-plan task a plan node's stored settings name as its maker; undefined when they name
 * none, or name a task whose child could not be this plan (a forged or foreign origin).
 */
export function parentTaskOf(plan: string, data: Buffer | null): string | undefined {
  if (data === null || data.length === 0) return undefined;
  let value: unknown;
  try {
    value = decodeValue(plan, data);
  } catch {
    return undefined;
  }
  return parentTaskIn(plan, value);
}

/** The same, from settings already decoded. */
export function parentTaskIn(plan: string, stored: unknown): string | undefined {
  const origin = (stored as { origin?: unknown } | null)?.origin;
  const task = (origin as Partial<SubPlanOrigin> | null | undefined)?.parentTask;
  if (typeof task !== 'string' || task.length > MAX_PATH_LENGTH || !isValidPath(task))
    return undefined;
  if (!hasSequentialName(nameOf(task), TASK_PREFIX)) return undefined;
  // Its plan is a plan zk-plan makes, not the root or a node of another kind.
  if (parentOf(task) === '/' || !isZkPlanPlanName(nameOf(parentOf(task)))) return undefined;
  return subPlanPath(parentOf(plan), task) === plan ? task : undefined;
}

/** The longest task path taken from a plan node: far beyond any real one. */
const MAX_PATH_LENGTH = 4_096;

function isValidPath(path: string): boolean {
  try {
    assertValidPath('parentTask', path);
    return true;
  } catch {
    return false;
  }
}
