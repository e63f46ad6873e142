/**
 * A schedule's tick: its id (the node name under `<schedule>/ticks`), the path of the plan it
 * makes (fixed by the tick, so that a second firing of the tick finds the plan instead of making
 * another), and its record.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { childPath } from '../zk/layout.js';
import type { OverlapPolicy } from './tick-decisions.js';

/**
 * A tick of the schedule's cron expression, one `trigger` made, or a past cron tick a backfill fires.
 *
 * @category Schedules
 */
export type TickKind = 'cron' | 'manual' | 'backfill';

/**
 * `pending` until the plan is built and ready (`fired`), or the tick is passed over (`skipped`) or cannot build (`failed`).
 *
 * @category Schedules
 */
export type TickState = 'pending' | 'fired' | 'skipped' | 'failed';

export interface TickRecord {
  readonly kind: TickKind;
  /** The backfill that made the record (kind `backfill`): its id under the schedule's `backfills`. */
  readonly backfill?: string;
  /** The tick's time, ms since the epoch. */
  readonly tick: number;
  /** The same, ISO-8601: the spec parameter `firedAt`. */
  readonly firedAt: string;
  /** The plan the tick makes (or made). */
  readonly plan: string;
  readonly state: TickState;
  /** Why it was skipped or failed. */
  readonly reason?: string;
  /** The process that last worked on it. */
  readonly by?: string;
  /** Set once the plan's node exists (before any of its tasks): a tick whose plan is gone after that is not built again. */
  readonly planCreated?: boolean;
  /**
   * The overlap policy a cron tick's plan was made under. Under 'skip' and 'cancelPrevious' every
   * earlier run had finished (or was cancelled) then, so the overlap check looks no further back.
   */
  readonly overlap?: OverlapPolicy;
  readonly updatedAt: string;
  /**
   * The schedule node the tick was decided for (its czxid): a record made late for a schedule of the
   * same name that was removed and put again since is not fired by the new one.
   */
  readonly scheduleNode?: number;
}

/** True when a fired cron tick's record vouches that every run before it had finished when it fired. */
export function firedAfterEarlierRuns(record: TickRecord): boolean {
  return (
    record.kind === 'cron' && (record.overlap === 'skip' || record.overlap === 'cancelPrevious')
  );
}

const TICK = /^tick-(\d{15})$/;
const MANUAL = /^manual-(\d{15})-[0-9a-f]{8}$/;

/** `tick-001764036000000`: ids sort by time as strings. */
export function cronTickId(tick: number): string {
  return `tick-${String(tick).padStart(15, '0')}`;
}

/** `manual-001764036000000-1a2b3c4d`: one per trigger call. */
export function manualTickId(at: number, nonce: string): string {
  return `manual-${String(at).padStart(15, '0')}-${nonce}`;
}

/** True for the id of a manual tick (a trigger). */
export function isManualTickId(id: string): boolean {
  return MANUAL.test(id);
}

/** The time of a tick id; undefined for a name that is none. */
export function timeOfTickId(id: string): number | undefined {
  const match = TICK.exec(id) ?? MANUAL.exec(id);
  return match === null ? undefined : Number(match[1]);
}

/** Tick ids (other names dropped) by time, then by name. */
export function sortTickIds(names: readonly string[]): string[] {
  return names
    .filter((name) => timeOfTickId(name) !== undefined)
    .sort(
      (a, b) =>
        (timeOfTickId(a) as number) - (timeOfTickId(b) as number) || (a < b ? -1 : a > b ? 1 : 0),
    );
}

/** `<planParent>/<schedule>@20261125T020000.000Z` (manual: `…-manual-<nonce>`). */
export function planPathForTick(planParent: string, schedule: string, id: string): string {
  const at = timeOfTickId(id) as number;
  const stamp = new Date(at).toISOString().replace(/[-:]/g, '');
  const manual = isManualTickId(id) ? `-manual-${id.slice(id.lastIndexOf('-') + 1)}` : '';
  return childPath(planParent, `${schedule}@${stamp}${manual}`);
}

export function isFinal(state: TickState): boolean {
  return state !== 'pending';
}

export function parseTickRecord(path: string, value: unknown): TickRecord {
  const record = value as Partial<TickRecord> | null;
  if (
    typeof record !== 'object' ||
    record === null ||
    (record.kind !== 'cron' && record.kind !== 'manual' && record.kind !== 'backfill') ||
    (record.kind === 'backfill' &&
      (typeof record.backfill !== 'string' || record.backfill.length > 100)) ||
    typeof record.tick !== 'number' ||
    typeof record.plan !== 'string' ||
    !['pending', 'fired', 'skipped', 'failed'].includes(record.state as string)
  )
    throw new MalformedNodeError(
      path,
      'expected a tick record { kind, backfill?, tick, firedAt, plan, state, … }',
    );
  return record as TickRecord;
}
