/**
 * A schedule as put by users and as stored in `<schedules>/<name>`: validated in full before it
 * is written, defaults filled in from DEFAULTS.schedule.
 */
import { DEFAULTS } from '../config/defaults.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { assertScheduleName } from './schedule-name.js';
import { MalformedNodeError } from '../errors/task-errors.js';
import { checkPlanSpec, type PlanSpec } from '../spec/plan-spec.js';
import { assertSerializable, decodeValue } from '../serialization/codec.js';
import { assertValidPath, nameOf, parentOf } from '../zk/layout.js';
import { cronTimes } from './cron-times.js';
import type { MisfirePolicy, OverlapPolicy } from './tick-decisions.js';

/**
 * What `schedules(parent).put` takes.
 *
 * @category Schedules
 */
export interface ScheduleInput {
  /** Unique under the schedules' parent: letters, digits, `_`, `.`, `-` (up to 100). */
  readonly name: string;
  /** 5 fields, or 6 with seconds first (croner's syntax). */
  readonly cron: string;
  /** IANA time zone the cron expression is read in. @defaultValue DEFAULTS.schedule.timezone ('UTC') */
  readonly timezone?: string;
  /** The plan each tick builds; its `{ $param: 'firedAt' }` is the tick's time (ISO-8601). */
  readonly spec: PlanSpec;
  /** Named params of the spec besides `firedAt`. @defaultValue `{}` */
  readonly params?: Readonly<Record<string, unknown>>;
  /** Where the plans go (workers follow this parent). */
  readonly planParent: string;
  /** A tick while the previous run is unfinished: skip it, run both, or cancel the previous. @defaultValue DEFAULTS.schedule.overlap ('skip') */
  readonly overlap?: OverlapPolicy;
  /** Ticks missed while no scheduler ran: fire each (up to catchUpLimit), fire once, or skip them. @defaultValue DEFAULTS.schedule.misfire ('fireOnce') */
  readonly misfire?: MisfirePolicy;
  /** With `misfire: 'fireAll'`, at most this many missed ticks fire (the newest); from 1 to MAX_CATCH_UP_LIMIT (10 000). @defaultValue DEFAULTS.schedule.catchUpLimit (10) */
  readonly catchUpLimit?: number;
  /** A tick at most this late is on time, not missed. @defaultValue DEFAULTS.schedule.misfireGraceMs (60 000) */
  readonly misfireGraceMs?: number;
  /** Put paused: no tick fires until resume. @defaultValue false */
  readonly paused?: boolean;
}

/**
 * A schedule as stored.
 *
 * @category Schedules
 */
export interface StoredSchedule {
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly spec: PlanSpec;
  readonly params: Readonly<Record<string, unknown>>;
  readonly planParent: string;
  readonly overlap: OverlapPolicy;
  readonly misfire: MisfirePolicy;
  readonly catchUpLimit: number;
  readonly misfireGraceMs: number;
  readonly paused: boolean;
  /** Ticks up to this (ms) never fire: set when the schedule is created, its timing changes, or it is resumed. */
  readonly activeSince: number;
  readonly updatedAt: string;
  /** Set by `remove` before it deletes the schedule's nodes: no tick fires any more (see ScheduleStore.remove). */
  readonly removing?: true;
}

/** The most missed ticks one decision fires (`catchUpLimit`): with the on-time ticks, what bounds a scheduler's work on one schedule per pass. */
export const MAX_CATCH_UP_LIMIT = 10_000;
/** What a definition (with its spec and params) may take, encoded: one znode, with room to spare under ZooKeeper's 1 MB. */
export const MAX_DEFINITION_BYTES = 1_000_000;
/** The latest time a Date can hold (ms): `activeSince` is one. */
const MAX_TIME = 8.64e15;

/** The fields every stored schedule has (those `put` may leave out are filled in before it is written). */
const STORED_KEYS = [
  'name',
  'cron',
  'timezone',
  'spec',
  'params',
  'planParent',
  'overlap',
  'misfire',
  'catchUpLimit',
  'misfireGraceMs',
  'paused',
] as const;
/** What `put` accepts: the same fields (it may leave some out). */
const INPUT_KEYS: ReadonlySet<string> = new Set(STORED_KEYS);
const OVERLAPS: readonly OverlapPolicy[] = ['skip', 'allow', 'cancelPrevious'];
const MISFIRES: readonly MisfirePolicy[] = ['fireAll', 'fireOnce', 'skip'];

/**
 * Validates `input` (the spec's shape and placeholders too: every `$param` must be `firedAt` or
 * one of `params`) and resolves it against the stored version it replaces: `activeSince` moves to
 * `now` when the schedule is new, its cron or time zone changes, or it goes from paused to active.
 */
export function resolveSchedule(
  input: ScheduleInput,
  previous: StoredSchedule | undefined,
  now: number,
  registered: readonly string[],
): StoredSchedule {
  if (typeof input !== 'object' || input === null)
    throw new InvalidArgumentError('schedule', 'expected { name, cron, spec, planParent, … }');
  for (const key of Object.keys(input))
    if (!INPUT_KEYS.has(key)) throw new InvalidArgumentError('schedule', `unknown field "${key}"`);
  assertScheduleName(input.name);
  const where = `schedule "${input.name}"`;
  const timezone = input.timezone ?? DEFAULTS.schedule.timezone;
  cronTimes(input.cron, timezone, where);
  assertValidPath('planParent', input.planParent);
  const params = input.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw new InvalidArgumentError('params', `${where}: expected an object of named values`);
  if (Object.hasOwn(params, 'firedAt'))
    throw new InvalidArgumentError(
      'params',
      `${where}: "firedAt" is the tick's time, bound by the scheduler`,
    );
  assertSerializable(params, `params of ${where}`);
  checkPlanSpec(input.spec, {
    registered,
    params: { ...params, firedAt: new Date(now).toISOString() },
  });
  const overlap = oneOf('overlap', input.overlap ?? DEFAULTS.schedule.overlap, OVERLAPS, where);
  const misfire = oneOf('misfire', input.misfire ?? DEFAULTS.schedule.misfire, MISFIRES, where);
  const catchUpLimit = wholeNumber(
    'catchUpLimit',
    input.catchUpLimit ?? DEFAULTS.schedule.catchUpLimit,
    1,
    MAX_CATCH_UP_LIMIT,
    where,
  );
  const misfireGraceMs = wholeNumber(
    'misfireGraceMs',
    input.misfireGraceMs ?? DEFAULTS.schedule.misfireGraceMs,
    0,
    2 ** 31 - 1,
    where,
  );
  const paused = input.paused ?? false;
  if (typeof paused !== 'boolean')
    throw new InvalidArgumentError('paused', `${where}: expected true or false`);
  const timingChanged =
    previous === undefined ||
    previous.cron !== input.cron ||
    previous.timezone !== timezone ||
    (previous.paused && !paused);
  return {
    name: input.name,
    cron: input.cron,
    timezone,
    spec: input.spec,
    params,
    planParent: input.planParent,
    overlap,
    misfire,
    catchUpLimit,
    misfireGraceMs,
    paused,
    activeSince: timingChanged || previous === undefined ? now : previous.activeSince,
    updatedAt: new Date(now).toISOString(),
  };
}

/**
 * A stored schedule read back from its node's value: refused unless it fits in MAX_DEFINITION_BYTES
 * and passes the whole validation `put` makes (resolveSchedule: name, cron and time zone, paths,
 * spec and params, every limit), since anything may have written the node. Refused: a
 * MalformedNodeError naming the node and what to do (refusedSchedule).
 */
export function decodeStoredSchedule(path: string, data: Buffer | null): StoredSchedule {
  if (data !== null && data.length > MAX_DEFINITION_BYTES)
    throw refusedSchedule(
      path,
      `it takes ${data.length} bytes, over the ${MAX_DEFINITION_BYTES} a schedule may take`,
    );
  let value: unknown;
  try {
    value = decodeValue(path, data);
  } catch (error) {
    throw refusedSchedule(path, 'its value is not superjson text', error);
  }
  return parseStoredSchedule(path, value);
}

/** A stored schedule, decoded, validated again in full as `put` validates it (see decodeStoredSchedule). */
export function parseStoredSchedule(path: string, value: unknown): StoredSchedule {
  try {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error(
        'expected a schedule { name, cron, timezone, spec, params, planParent, overlap, misfire, catchUpLimit, … }',
      );
    const { activeSince, updatedAt, removing, ...input } = value as Record<string, unknown>;
    for (const key of STORED_KEYS)
      if (!Object.hasOwn(input, key)) throw new Error(`it has no "${key}"`);
    // Its name is its node's: a definition naming another schedule would act on that one's cursor and ticks.
    if (input['name'] !== nameOf(path))
      throw new Error(
        `its name ${JSON.stringify(input['name'])} is not its node's, "${nameOf(path)}"`,
      );
    if (
      typeof activeSince !== 'number' ||
      !Number.isSafeInteger(activeSince) ||
      activeSince < 0 ||
      activeSince > MAX_TIME
    )
      throw new Error(
        `activeSince: expected a time in ms from 0 to ${MAX_TIME}, got ${JSON.stringify(activeSince)}`,
      );
    if (typeof updatedAt !== 'string')
      throw new Error(`updatedAt: expected an ISO-8601 time, got ${JSON.stringify(updatedAt)}`);
    if (removing !== undefined && removing !== true)
      throw new Error(`removing: expected true when present, got ${JSON.stringify(removing)}`);
    // The same validation as put's, all limits included; `activeSince` is kept as stored.
    const schedule = resolveSchedule(input as unknown as ScheduleInput, undefined, activeSince, []);
    return { ...schedule, activeSince, updatedAt, ...(removing === true ? { removing } : {}) };
  } catch (error) {
    throw refusedSchedule(path, (error as Error).message, error);
  }
}

/**
 * Why the schedule at `path` is not run: a MalformedNodeError naming the node, the problem and what
 * to do. No tick of it fires, and schedulers go on with the other schedules (reporting this one).
 */
export function refusedSchedule(
  path: string,
  problem: string,
  cause?: unknown,
): MalformedNodeError {
  const [name, parent] = [nameOf(path), parentOf(path)];
  const refused = `not a schedule zk-plan runs (${problem}): no tick of it fires. Put the schedule again`;
  return new MalformedNodeError(
    path,
    `${refused} (zk-plan schedule put <file> --schedules ${parent}, or schedules('${parent}').put) or remove it (zk-plan schedule rm ${name} --schedules ${parent})`,
    cause,
    `${refused} (zk-plan schedule put <file> --schedules ${parent}) or remove it (zk-plan schedule rm ${name} --schedules ${parent})`,
  );
}

function oneOf<T extends string>(
  argument: string,
  value: unknown,
  allowed: readonly T[],
  where: string,
): T {
  if (!allowed.includes(value as T))
    throw new InvalidArgumentError(
      argument,
      `${where}: expected one of ${allowed.map((v) => `'${v}'`).join(', ')}, got ${JSON.stringify(value)}`,
    );
  return value as T;
}

function wholeNumber(
  argument: string,
  value: unknown,
  min: number,
  max: number,
  where: string,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new InvalidArgumentError(
      argument,
      `${where}: expected a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
  return value;
}
