/**
 * A plan's record of one sub-plan task's child (`<plan>/sub-plans/task-N`): the child's path, and
 * whether the child was made. Written under the task's claim before the child exists, so that pause,
 * resume, cancel and retryFailed of the plan find every child that may exist; `created` is set
 * before the child is readied, so that a child found missing later is known to have been made (and
 * is never made a second time).
 */
import { isZkError } from '../errors/zk-error.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import {
  SUB_PLANS,
  TASK_PREFIX,
  assertValidPath,
  childPath,
  hasSequentialName,
  parentOf,
  subPlanPath,
  subPlanRecordPath,
} from '../zk/layout.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import type { ZkStat } from '../zk/native-client.js';
import { parentTaskOf } from './sub-plan-origin.js';

export interface SubPlanRecord {
  /** The child plan's path. */
  readonly child: string;
  /** The child's node was made (it may have been deleted since). */
  readonly created: boolean;
}

/** The largest record read: a path and a flag (anyone may write the node; a bigger one is not decoded). */
const MAX_RECORD_BYTES = 4_096;

/** The record, checked; undefined when it is absent or is not one (a forged or foreign node). */
export function parseSubPlanRecord(path: string, data: Buffer | null): SubPlanRecord | undefined {
  if (data === null || data.length === 0 || data.length > MAX_RECORD_BYTES) return undefined;
  let value: unknown;
  try {
    value = decodeValue(path, data);
  } catch {
    return undefined;
  }
  const record = value as Partial<SubPlanRecord> | null;
  if (typeof record !== 'object' || record === null || typeof record.created !== 'boolean')
    return undefined;
  try {
    assertValidPath('child', record.child);
  } catch {
    return undefined;
  }
  return { child: record.child, created: record.created };
}

/** The task's record and the node's stat; undefined when there is none. */
export async function readSubPlanRecord(
  zk: Zk,
  task: string,
): Promise<{ record: SubPlanRecord | undefined; stat: ZkStat } | undefined> {
  const path = subPlanRecordPath(task);
  const node = await zk.tryGetData(path);
  return node === undefined
    ? undefined
    : { record: parseSubPlanRecord(path, node.data), stat: node.stat };
}

/** Makes the record (and the plan's `sub-plans` node) unless it exists; every write fenced by the claim. */
export async function createSubPlanRecord(
  zk: Zk,
  task: string,
  child: string,
  fence: ZkSession,
): Promise<void> {
  const path = subPlanRecordPath(task);
  await zk.createIfAbsent(parentOf(path), null, 'persistent', { fence });
  await zk.createIfAbsent(
    path,
    encodeValue({ child, created: false }, `the sub-plan record of task ${task}`, path),
    'persistent',
    { fence },
  );
}

/**
 * Marks the record `created` (the node as read, fenced by the claim). Only the task's claim writes
 * it; a resend whose first try had landed fails BAD_VERSION, and the record then reads as written.
 */
export async function markSubPlanCreated(
  zk: Zk,
  task: string,
  child: string,
  stat: ZkStat,
  fence: ZkSession,
): Promise<void> {
  const path = subPlanRecordPath(task);
  try {
    await zk.setData(
      path,
      encodeValue({ child, created: true }, `the sub-plan record of task ${task}`, path),
      stat.version,
      { fence, incarnation: stat.czxid },
    );
  } catch (error) {
    if (!isZkError(error, 'BAD_VERSION')) throw error;
    const again = await readSubPlanRecord(zk, task);
    if (again?.record?.created !== true || again.record.child !== child) throw error;
  }
}

/**
 * The children a plan's sub-plan tasks recorded and made: each task's path and its child plan's.
 * Only a child named after its task (`<plan name>~task-N`) whose node names the task as its maker
 * counts: a forged record, or that of a task whose path another plan's child took, never points a
 * pause, cancel, retry or delete at another plan. A child not made yet is left out (its task's
 * check follows the plan's control and deletion itself).
 */
export async function listSubPlans(
  zk: Zk,
  plan: string,
): Promise<{ readonly task: string; readonly child: string }[]> {
  const parent = childPath(plan, SUB_PLANS);
  const listing = await zk.tryGetChildren(parent);
  if (listing === undefined) return [];
  const records = await Promise.all(
    listing.children.map(async (name) => {
      const task = childPath(plan, name);
      if (!hasSequentialName(name, TASK_PREFIX)) return undefined;
      const read = await readSubPlanRecord(zk, task);
      const child = read?.record?.child;
      if (child === undefined || child !== subPlanPath(parentOf(child), task)) return undefined;
      const node = await zk.tryGetData(child);
      return node !== undefined && parentTaskOf(child, node.data) === task
        ? { task, child }
        : undefined;
    }),
  );
  return records.filter((entry) => entry !== undefined);
}
