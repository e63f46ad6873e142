/**
 * What makes `snapshots.import` safe to repeat: an imported plan's node names the snapshot it recreates
 * (`importOf`: a hash of the snapshot's content) from its very first write, the create that makes
 * it, beside its settings (a later write of the settings keeps fields it does not read). So a
 * later import of the same snapshot under the same parent finds every plan an earlier one made,
 * however early it was cut short.
 */
import { createHash } from 'node:crypto';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import type { TaskStore } from '../store/task-store.js';
import { readSpecRecord } from '../spec/spec-record.js';
import { READY, childPath } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import type { PlanSnapshot } from './plan-snapshot.js';

/** The field of the plan node's value that names the snapshot. */
export const IMPORT_MARK = 'importOf';

/** What snapshots.import finds of earlier imports of a snapshot under a parent. */
export interface EarlierImports {
  /** A plan an import finished (ready): the import is done, with these task paths by key. */
  readonly whole?: { readonly plan: string; readonly tasks: Readonly<Record<string, string>> };
  /** Plans an import began and never readied: they run nothing. */
  readonly cutShort: readonly string[];
}

/** A hash of the snapshot's content (superjson): the same snapshot, read from its file again, has the same identity. */
export function snapshotIdentity(snapshot: PlanSnapshot): string {
  const encoded = encodeValue(snapshot, 'the snapshot', undefined, Number.MAX_SAFE_INTEGER);
  return createHash('sha256').update(encoded).digest('hex').slice(0, 32);
}

/** Reads every plan node under `parent` (one read each) for those made from the snapshot `identity`. */
export async function findEarlierImports(
  zk: Zk,
  store: TaskStore,
  parent: string,
  identity: string,
): Promise<EarlierImports> {
  const plans = (await store.reads.listPlans(parent)) ?? [];
  const marked = await Promise.all(
    plans.map(async (plan) => ((await markOf(zk, plan)) === identity ? plan : undefined)),
  );
  const matches = await Promise.all(
    marked
      .filter((plan) => plan !== undefined)
      .map(async (plan) => ({
        plan,
        ready: (await zk.exists(childPath(plan, READY))) !== undefined,
      })),
  );
  const ready = matches.find((match) => match.ready);
  // Readied after its spec record: a ready import has one.
  const record = ready === undefined ? undefined : await readSpecRecord(zk, ready.plan);
  return {
    ...(ready !== undefined && record !== undefined
      ? { whole: { plan: ready.plan, tasks: record.tasks } }
      : {}),
    cutShort: matches.filter((match) => !match.ready).map(({ plan }) => plan),
  };
}

async function markOf(zk: Zk, plan: string): Promise<string | undefined> {
  const node = await zk.tryGetData(plan);
  if (!node?.data?.length) return undefined; // deleted meanwhile, or another tool's plan without a value
  try {
    const value = decodeValue(plan, node.data);
    const mark =
      typeof value === 'object' && value !== null
        ? (value as Record<string, unknown>)[IMPORT_MARK]
        : undefined;
    return typeof mark === 'string' ? mark : undefined;
  } catch {
    return undefined; // another tool's plan value
  }
}
