/**
 * A job as defined by users and as stored in `<jobs>/<name>` (the node's data): a registered
 * function, a work pool (ElasticJob's sharding items, or DJM's named work items), a run mode and
 * an assignment strategy. Validated in full before it is written.
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { MalformedNodeError } from '../errors/task-errors.js';
import { assertFunctionName } from '../exec/function-name.js';
import { assertSerializable } from '../serialization/codec.js';
import { RESERVED_PREFIX } from '../zk/layout.js';
import { cronTimes } from '../schedule/cron-times.js';
import { DEFAULTS } from '../config/defaults.js';

/**
 * `{ shards: n, params? }`: items `'0'` … `'n-1'`, item i with `params[i]`; or `{ items }`: named items, replaceable with `setWorkPool`.
 *
 * @category Jobs
 */
export type WorkPool =
  | { readonly shards: number; readonly params?: readonly unknown[] }
  | { readonly items: readonly string[] };

/**
 * `'continuous'`: the function runs for as long as it holds its share; `{ everyMs }`: a run every everyMs; `{ cron, timezone? }`: a run at each tick.
 *
 * @category Jobs
 */
export type JobMode =
  | 'continuous'
  | { readonly everyMs: number }
  | { readonly cron: string; readonly timezone?: string };

/**
 * What `jobs(parent).define` takes.
 *
 * @category Jobs
 */
export interface JobDefinition {
  /** Unique under the jobs' parent: letters, digits, `_`, `.`, `-` (up to 100). */
  readonly name: string;
  /** A function registered with `FunctionRegistry.registerJob` on the job workers. */
  readonly fn: string;
  readonly workPool: WorkPool;
  readonly mode: JobMode;
  /** `'evenly'`, `'rendezvous'`, `'evenlyRendezvous'`, or a name registered on every job worker. @defaultValue DEFAULTS.jobs.strategy ('evenly') */
  readonly strategy?: string;
  /** Defined disabled: no item is assigned until `enable`. @defaultValue false */
  readonly disabled?: boolean;
  /**
   * A tick that comes while the previous run of the same share still runs: `'runOnce'` runs once
   * right after that run ends (however many ticks it missed), `'skip'` drops it. Either way the
   * runs of one share never overlap. @defaultValue DEFAULTS.jobs.misfire ('runOnce')
   */
  readonly misfire?: JobMisfire;
  /**
   * When a holder dies (or is cut off) in the middle of a run, the new holder of its items runs
   * them again as soon as it has taken them, instead of at the next tick; `false` waits for the
   * next tick. Continuous jobs restart at once either way. @defaultValue DEFAULTS.jobs.failover (true)
   */
  readonly failover?: boolean;
  /**
   * How many times a run that threw is tried again, after `restartDelayMs` doubling with each
   * failure, before the next tick (a tick that comes first replaces the retry). Continuous jobs
   * restart after a throw whatever this says, with the same growing pause. @defaultValue DEFAULTS.jobs.retries (3)
   */
  readonly retries?: number;
  /** How many runs the job's history keeps (the oldest go first); the last failure of each item is kept apart. @defaultValue DEFAULTS.jobs.keepRuns (100) */
  readonly keepRuns?: number;
}

/**
 * What a tick that finds the previous run still going does: run once after it, or be dropped.
 *
 * @category Jobs
 */
export type JobMisfire = 'runOnce' | 'skip';

/**
 * A job as stored.
 *
 * @category Jobs
 */
export interface StoredJob {
  readonly name: string;
  readonly fn: string;
  readonly workPool: WorkPool;
  readonly mode: JobMode;
  readonly strategy: string;
  readonly disabled: boolean;
  readonly misfire: JobMisfire;
  readonly failover: boolean;
  readonly retries: number;
  readonly keepRuns: number;
  readonly updatedAt: string;
}

/** One work item of a pool. */
export interface PoolItem {
  readonly id: string;
  readonly params?: unknown;
}

export const MAX_POOL_ITEMS = 10_000;
export const MAX_POOL_BYTES = 400_000;
const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
/** Item ids are znode names (a lease each): no "/" and nothing ZooKeeper or a shell would trip on. */
const ITEM_ID = /^[A-Za-z0-9_][A-Za-z0-9_.:@=+-]{0,199}$/;
const DEFINITION_KEYS = new Set([
  'name',
  'fn',
  'workPool',
  'mode',
  'strategy',
  'disabled',
  'misfire',
  'failover',
  'retries',
  'keepRuns',
]);
/** The most runs a job's history may keep: each is a node, read when the history is shown. */
export const MAX_KEEP_RUNS = 10_000;
/** The most retries of one failed run. */
export const MAX_RETRIES = 100;
const STRATEGY_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export function assertJobName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !JOB_NAME.test(name) || name.startsWith(RESERVED_PREFIX))
    throw new InvalidArgumentError(
      'name',
      `expected a job name of letters, digits, "_", "." and "-" (up to 100, not starting with "${RESERVED_PREFIX}"), got ${JSON.stringify(name)}`,
    );
}

/** Checks named work items: each a valid id, no repeats, at most MAX_POOL_ITEMS. */
export function assertItems(job: string, items: unknown): asserts items is readonly string[] {
  if (!Array.isArray(items))
    throw new InvalidArgumentError('workPool.items', `job "${job}": expected an array of item ids`);
  if (items.length > MAX_POOL_ITEMS)
    throw new InvalidArgumentError(
      'workPool.items',
      `job "${job}": at most ${MAX_POOL_ITEMS} items, got ${items.length}`,
    );
  const seen = new Set<string>();
  let bytes = 0;
  for (const item of items) {
    bytes += typeof item === 'string' ? item.length + 3 : 0;
    if (typeof item !== 'string' || !ITEM_ID.test(item) || item === '.' || item === '..')
      throw new InvalidArgumentError(
        'workPool.items',
        `job "${job}": item ${JSON.stringify(item)} is not an item id (letters, digits and _ . : @ = + -, up to 200, not starting with a sign)`,
      );
    if (seen.has(item))
      throw new InvalidArgumentError(
        'workPool.items',
        `job "${job}": item "${item}" is listed twice`,
      );
    seen.add(item);
  }
  // The job's node and its share of the one assignment node must fit in a ZooKeeper node (1 MB).
  if (bytes > MAX_POOL_BYTES)
    throw new InvalidArgumentError(
      'workPool.items',
      `job "${job}": the item ids take ${bytes} bytes, at most ${MAX_POOL_BYTES}: use shorter ids or fewer items`,
    );
}

function assertWorkPool(job: string, pool: unknown): asserts pool is WorkPool {
  if (typeof pool !== 'object' || pool === null || Array.isArray(pool))
    throw new InvalidArgumentError(
      'workPool',
      `job "${job}": expected { shards: n, params? } or { items: [ids] }`,
    );
  const keys = Object.keys(pool);
  if ('items' in pool) {
    if (keys.length !== 1)
      throw new InvalidArgumentError(
        'workPool',
        `job "${job}": { items } takes no other field (got ${keys.join(', ')})`,
      );
    assertItems(job, pool.items);
    return;
  }
  const { shards, params } = pool as { shards?: unknown; params?: unknown };
  for (const key of keys)
    if (key !== 'shards' && key !== 'params')
      throw new InvalidArgumentError('workPool', `job "${job}": unknown field "${key}"`);
  if (
    typeof shards !== 'number' ||
    !Number.isSafeInteger(shards) ||
    shards < 1 ||
    shards > MAX_POOL_ITEMS
  )
    throw new InvalidArgumentError(
      'workPool.shards',
      `job "${job}": expected a whole number of shards from 1 to ${MAX_POOL_ITEMS}, got ${JSON.stringify(shards)}`,
    );
  if (params !== undefined) {
    if (!Array.isArray(params) || params.length > shards)
      throw new InvalidArgumentError(
        'workPool.params',
        `job "${job}": expected an array of at most ${shards} per-shard params (shard i gets params[i])`,
      );
    assertSerializable(params, `the shard params of job "${job}"`);
  }
}

function assertMode(job: string, mode: unknown): asserts mode is JobMode {
  if (mode === 'continuous') return;
  if (typeof mode === 'object' && mode !== null && 'everyMs' in mode) {
    const { everyMs } = mode as { everyMs: unknown };
    if (
      Object.keys(mode).length !== 1 ||
      typeof everyMs !== 'number' ||
      !Number.isSafeInteger(everyMs) ||
      everyMs < 10 ||
      everyMs > 2_147_483_647
    )
      throw new InvalidArgumentError(
        'mode.everyMs',
        `job "${job}": expected { everyMs } with a whole number of ms from 10 to 2147483647, got ${JSON.stringify(everyMs)}`,
      );
    return;
  }
  if (typeof mode === 'object' && mode !== null && 'cron' in mode) {
    const { cron, timezone, ...rest } = mode as { cron: unknown; timezone?: unknown };
    if (Object.keys(rest).length > 0)
      throw new InvalidArgumentError(
        'mode',
        `job "${job}": { cron, timezone? } takes no other field`,
      );
    cronTimes(cron as string, (timezone ?? 'UTC') as string, `job "${job}"`);
    return;
  }
  throw new InvalidArgumentError(
    'mode',
    `job "${job}": expected 'continuous', { everyMs } or { cron, timezone? }, got ${JSON.stringify(mode)}`,
  );
}

function assertWholeNumber(
  job: string,
  field: string,
  value: unknown,
  min: number,
  max: number,
): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max)
    throw new InvalidArgumentError(
      field,
      `job "${job}": expected a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`,
    );
}

/** Validates a definition and gives it as stored. */
export function resolveJob(input: JobDefinition, now: Date): StoredJob {
  if (typeof input !== 'object' || input === null)
    throw new InvalidArgumentError(
      'job',
      'expected { name, fn, workPool, mode, strategy?, disabled?, misfire?, failover?, retries?, keepRuns? }',
    );
  for (const key of Object.keys(input))
    if (!DEFINITION_KEYS.has(key)) throw new InvalidArgumentError('job', `unknown field "${key}"`);
  assertJobName(input.name);
  try {
    assertFunctionName(input.fn);
  } catch {
    throw new InvalidArgumentError(
      'fn',
      `job "${input.name}": expected a name of a function registered with registerJob, such as "poll-mailbox", got ${JSON.stringify(input.fn)}`,
    );
  }
  assertWorkPool(input.name, input.workPool);
  assertMode(input.name, input.mode);
  const strategy = input.strategy ?? DEFAULTS.jobs.strategy;
  if (typeof strategy !== 'string' || !STRATEGY_NAME.test(strategy))
    throw new InvalidArgumentError(
      'strategy',
      `job "${input.name}": expected 'evenly', 'rendezvous', 'evenlyRendezvous' or a registered strategy's name, got ${JSON.stringify(strategy)}`,
    );
  if (input.disabled !== undefined && typeof input.disabled !== 'boolean')
    throw new InvalidArgumentError('disabled', `job "${input.name}": expected true or false`);
  const misfire = input.misfire ?? DEFAULTS.jobs.misfire;
  if (misfire !== 'runOnce' && misfire !== 'skip')
    throw new InvalidArgumentError(
      'misfire',
      `job "${input.name}": expected 'runOnce' or 'skip', got ${JSON.stringify(misfire)}`,
    );
  if (input.failover !== undefined && typeof input.failover !== 'boolean')
    throw new InvalidArgumentError('failover', `job "${input.name}": expected true or false`);
  const retries = input.retries ?? DEFAULTS.jobs.retries;
  assertWholeNumber(input.name, 'retries', retries, 0, MAX_RETRIES);
  const keepRuns = input.keepRuns ?? DEFAULTS.jobs.keepRuns;
  assertWholeNumber(input.name, 'keepRuns', keepRuns, 1, MAX_KEEP_RUNS);
  return {
    name: input.name,
    fn: input.fn,
    workPool: input.workPool,
    mode: input.mode,
    strategy,
    disabled: input.disabled ?? false,
    misfire,
    failover: input.failover ?? DEFAULTS.jobs.failover,
    retries,
    keepRuns,
    updatedAt: now.toISOString(),
  };
}

/** A stored job read back: checked again, since anything may have written the node. */
export function parseStoredJob(path: string, value: unknown): StoredJob {
  try {
    const { updatedAt, ...definition } = value as StoredJob;
    const job = resolveJob(definition, new Date(0));
    if (typeof updatedAt !== 'string') throw new Error('no updatedAt');
    return { ...job, updatedAt };
  } catch (error) {
    throw new MalformedNodeError(
      path,
      `not a job definition (${(error as Error).message}): define the job again`,
      error,
    );
  }
}

/** The work items of a pool, in order. */
export function poolItems(pool: WorkPool): PoolItem[] {
  if ('items' in pool) return pool.items.map((id) => ({ id }));
  return Array.from({ length: pool.shards }, (_, index) =>
    pool.params?.[index] === undefined
      ? { id: String(index) }
      : { id: String(index), params: pool.params[index] },
  );
}

/** A job's mode as a phrase: `continuous`, `every 2000 ms`, or the cron expression and its time zone. */
export function describeMode(mode: JobMode): string {
  if (mode === 'continuous') return 'continuous';
  if ('everyMs' in mode) return `every ${mode.everyMs} ms`;
  return `cron "${mode.cron}" (${mode.timezone ?? 'UTC'})`;
}
