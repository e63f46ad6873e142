/**
 * What a plan built from a spec keeps of its definition, in `<plan>/spec`: the spec as submitted
 * (placeholders and all), the params it was submitted with, each task key's path, and, for a plan
 * a schedule fired, which schedule and tick. Reruns and exports start from it; the web view and
 * `schedules().list()` read the origin.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import { SPEC_RECORD, childPath } from '../zk/layout.js';
import { readValue, writeValue } from '../zk/chunked-value.js';
import type { WriteOptions } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import type { PlanSpec } from './plan-spec.js';

/** Which schedule tick made a plan. */
export interface PlanOrigin {
  /** The schedules' parent and the schedule's name. */
  readonly schedules: string;
  readonly schedule: string;
  /** The tick's id under the schedule (`tick-…` or `manual-…`). */
  readonly tick: string;
  /** The tick's time, ISO-8601: the spec parameter `firedAt`. */
  readonly firedAt: string;
}

export interface SpecRecord {
  readonly spec: PlanSpec;
  readonly params: Readonly<Record<string, unknown>>;
  /** Each task key's path in the plan. */
  readonly tasks: Readonly<Record<string, string>>;
  readonly submittedAt: string;
  readonly origin?: PlanOrigin;
  /** For a plan made by snapshots.import or snapshots.rerun: the plan it continues (and the rerun's `from`, the snapshot's identity). */
  readonly continues?: {
    readonly plan: string;
    readonly exportedAt: string;
    readonly rerunFrom?: string;
    readonly snapshot?: string;
  };
}

export async function writeSpecRecord(
  zk: Zk,
  plan: string,
  record: SpecRecord,
  options: WriteOptions,
): Promise<void> {
  const path = childPath(plan, SPEC_RECORD);
  // A spec is as large as the plan it describes: no result-size limit applies (chunked past 900 kB).
  await writeValue(
    zk,
    path,
    encodeValue(record, `the spec record of ${plan}`, path, Number.MAX_SAFE_INTEGER),
    {
      ...options,
      maxBytes: Number.MAX_SAFE_INTEGER,
    },
  );
}

/** The plan's spec record; undefined for a plan not built from a spec (or gone). */
export async function readSpecRecord(zk: Zk, plan: string): Promise<SpecRecord | undefined> {
  const path = childPath(plan, SPEC_RECORD);
  // Written without a size limit, so read without one: the header is still checked, and its
  // chunks listed before any is read, so a forged header costs no more than what is stored.
  const data = await readValue(zk, path, { maxBytes: Number.MAX_SAFE_INTEGER });
  if (data === undefined) return undefined;
  const value = decodeValue(path, data);
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof (value as SpecRecord).tasks !== 'object' ||
    typeof (value as SpecRecord).spec !== 'object'
  )
    throw new MalformedNodeError(path, 'expected { spec, params, tasks, submittedAt, origin? }');
  return value as SpecRecord;
}
