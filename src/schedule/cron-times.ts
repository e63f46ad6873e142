/**
 * Fire times of a cron expression in a time zone, through croner (5 fields, or 6 with seconds
 * first; IANA zones, daylight-saving gaps and repeats as croner resolves them). Times are ms
 * since the epoch; every query is exclusive of its bound.
 */
import { Cron } from 'croner';
import { InvalidArgumentError } from '../errors/usage-errors.js';

/** The default zone, which every runtime knows. */
const UTC = 'UTC';

export interface CronTimes {
  /** The first fire time after `after`; undefined when the expression never fires again. */
  next(after: number): number | undefined;
  /** The next `count` fire times after `after`. */
  nextN(after: number, count: number): number[];
  /**
   * The latest (up to `limit`) fire times in (`after`, `until`], oldest first; `more` when there
   * are earlier ones in the range beyond them. At most FORWARD_PROBE + 1 fire times forward and
   * limit + 1 back are computed, however long the range (croner takes about 0.1 ms for each, on the
   * event loop).
   */
  latestIn(
    after: number,
    until: number,
    limit: number,
  ): { readonly ticks: number[]; readonly more: boolean };
}

/** Fire times looked for forward from the start of a range before the range is walked back from its end instead. */
const FORWARD_PROBE = 64;

/** Parses `cron` in `timezone`; InvalidArgumentError naming `where` (the schedule) for either being wrong. */
export function cronTimes(cron: string, timezone: string, where: string): CronTimes {
  if (typeof cron !== 'string' || cron.trim() === '')
    throw new InvalidArgumentError(
      'cron',
      `${where}: expected a cron expression such as "0 0 2 * * *"`,
    );
  assertTimezone(timezone, where);
  let pattern: Cron;
  try {
    // UTC as a fixed offset of 0: the same times (UTC has no daylight saving), without croner
    // formatting each candidate date through Intl in the zone, which made the default some 50 times slower.
    const zone = timezone === UTC ? { utcOffset: 0 } : { timezone };
    pattern = new Cron(cron, { ...zone, paused: true });
    pattern.nextRun(new Date(0)); // croner checks some patterns only when it computes a time
  } catch (error) {
    throw new InvalidArgumentError(
      'cron',
      `${where}: "${cron}" is not a cron expression croner accepts (${(error as Error).message})`,
    );
  }
  const toMs = (date: Date | null): number | undefined =>
    date === null ? undefined : date.getTime();
  return {
    next: (after) => toMs(pattern.nextRun(new Date(after))),
    nextN: (after, count) => pattern.nextRuns(count, new Date(after)).map((date) => date.getTime()),
    latestIn(after, until, limit) {
      if (until <= after || limit <= 0) return { ticks: [], more: false };
      // Forward from `after` while the range is short (the usual case: a tick or two since the last pass)…
      const probe = Math.min(limit, FORWARD_PROBE);
      const forward: number[] = [];
      for (
        let next = toMs(pattern.nextRun(new Date(after)));
        next !== undefined && next <= until;
        next = toMs(pattern.nextRun(new Date(next)))
      ) {
        if (forward.length === probe) {
          // …else back from `until` (previousRuns is exclusive of its reference: from one ms past it), one more
          // than `limit` to tell whether there are earlier ones: never `limit` forward and `limit` back again.
          const newestFirst = pattern
            .previousRuns(limit + 1, new Date(until + 1))
            .map((date) => date.getTime())
            .filter((tick) => tick > after);
          return { ticks: newestFirst.slice(0, limit).reverse(), more: newestFirst.length > limit };
        }
        forward.push(next);
      }
      return { ticks: forward, more: false };
    },
  };
}

/** An IANA time zone name the runtime knows (`UTC`, `Europe/Berlin`). */
function assertTimezone(timezone: unknown, where: string): asserts timezone is string {
  if (typeof timezone !== 'string' || timezone === '')
    throw new InvalidArgumentError(
      'timezone',
      `${where}: expected an IANA time zone such as "UTC"`,
    );
  // Job and schedule definitions are checked on every read: no Intl.DateTimeFormat built for the default.
  if (timezone === UTC) return;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new InvalidArgumentError(
      'timezone',
      `${where}: "${timezone}" is not an IANA time zone this runtime knows (e.g. "UTC", "Europe/Berlin")`,
    );
  }
}
