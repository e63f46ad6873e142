/**
 * The value of a task key's claim, `<plan>/keys/key-<encoded key>` (see src/zk/layout.ts and
 * src/plan/task-key-claims.ts): `{ task }`, the path of the task of the plan that holds the key.
 * Pure. Anyone who can write the plan can write a claim, so a value read is bounded before it is
 * decoded and must name a task of that very plan.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import { TASK_PREFIX, hasSequentialName, nameOf, parentOf } from '../zk/layout.js';

/** The largest claim value read: a task path with room to spare (ZooKeeper paths are not bounded much lower). */
export const MAX_KEY_CLAIM_BYTES = 16 * 1024;

export function encodeKeyClaim(task: string, path: string): Buffer {
  return encodeValue({ task }, 'task key claim', path);
}

/** The task a claim names; MalformedNodeError for a value zk-plan does not write, naming the claim's path. */
export function parseKeyClaim(plan: string, path: string, data: Buffer | null): string {
  if (data !== null && data.length > MAX_KEY_CLAIM_BYTES)
    throw new MalformedNodeError(
      path,
      `its value has ${data.length} bytes, a task key claim at most ${MAX_KEY_CLAIM_BYTES}`,
    );
  const value = decodeValue(path, data) as { task?: unknown } | null;
  const task = typeof value === 'object' && value !== null ? value.task : undefined;
  if (
    typeof task !== 'string' ||
    parentOf(task) !== plan ||
    !hasSequentialName(nameOf(task), TASK_PREFIX)
  )
    throw new MalformedNodeError(
      path,
      `expected { task: "${plan}/${TASK_PREFIX}<serial>" }, the task that holds the key`,
    );
  return task;
}
