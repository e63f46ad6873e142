/**
 * How the pages write times: relative to now ("3 min ago"), durations ("took 2.4 s"), and absolute
 * in one time zone the reader picks (`local`, `UTC` or any IANA zone the browser knows). Pure: the
 * zone and the current time are arguments, so each result can be checked in a test.
 */

/** The reader's own zone, as the browser reports it. */
export const LOCAL_ZONE = 'local';

/** Longer names are no time zone (the longest IANA name is about 30 characters). */
const MAX_ZONE_LENGTH = 64;

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** True for `local` and for a zone name Intl accepts (checked by building a formatter with it). */
export function isTimeZone(zone: unknown): zone is string {
  if (typeof zone !== 'string' || zone.length === 0 || zone.length > MAX_ZONE_LENGTH) return false;
  if (zone === LOCAL_ZONE) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The `timeZone` option for a zone: none for `local` (the browser's own). */
function zoneOption(zone: string): { timeZone?: string } {
  return zone === LOCAL_ZONE ? {} : { timeZone: zone };
}

/** Each field of a moment as it reads on the clocks of `zone`. */
function zonedParts(ms: number, zone: string): Record<string, string> {
  const format = new Intl.DateTimeFormat('en-US', {
    ...zoneOption(zone),
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  });
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(ms))) parts[part.type] = part.value;
  return parts;
}

/** An ISO-8601 time's epoch ms; undefined for none, or for text that is no time. */
export function isoMs(iso: string | undefined): number | undefined {
  if (iso === undefined) return undefined;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}

/** `2026-11-27 20:34:05 UTC`: the moment on the clocks of `zone`, with the zone's short name; `—` for none. */
export function formatAbsolute(ms: number | undefined, zone: string): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  const parts = zonedParts(ms, zone);
  const date = `${parts['year']}-${parts['month']}-${parts['day']}`;
  const time = `${parts['hour']}:${parts['minute']}:${parts['second']}`;
  return `${date} ${time} ${parts['timeZoneName'] ?? zone}`;
}

/** `3 min ago`, `in 2 h`, `just now`: how far a moment is from `now`, in its largest whole unit. */
export function formatRelative(ms: number | undefined, now: number): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  const distance = Math.abs(now - ms);
  if (distance < 5 * SECOND) return 'just now';
  const amount =
    distance < MINUTE
      ? `${Math.floor(distance / SECOND)} s`
      : distance < HOUR
        ? `${Math.floor(distance / MINUTE)} min`
        : distance < DAY
          ? `${Math.floor(distance / HOUR)} h`
          : `${Math.floor(distance / DAY)} d`;
  return ms <= now ? `${amount} ago` : `in ${amount}`;
}

/** `850 ms`, `2.4 s`, `3 min 12 s`, `1 h 4 min`, `2 d 3 h`: a duration in its two largest units. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < SECOND) return `${Math.round(ms)} ms`;
  if (ms < MINUTE) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  if (ms < HOUR) return `${Math.floor(ms / MINUTE)} min ${Math.floor((ms % MINUTE) / SECOND)} s`;
  if (ms < DAY) return `${Math.floor(ms / HOUR)} h ${Math.floor((ms % HOUR) / MINUTE)} min`;
  return `${Math.floor(ms / DAY)} d ${Math.floor((ms % DAY) / HOUR)} h`;
}

/** How far the clocks of `zone` are ahead of UTC at a moment, in ms. */
function zoneOffset(ms: number, zone: string): number {
  const parts = zonedParts(ms, zone);
  const asUtc = Date.UTC(
    Number(parts['year']),
    Number(parts['month']) - 1,
    Number(parts['day']),
    Number(parts['hour']),
    Number(parts['minute']),
    Number(parts['second']),
  );
  return asUtc - Math.floor(ms / SECOND) * SECOND;
}

/**
 * The moment a day (`YYYY-MM-DD`, as a date input gives it) begins on the clocks of `zone`;
 * undefined for anything else. The offset is taken twice: a change of summer time between UTC
 * midnight and the zone's midnight moves it.
 */
export function startOfDay(day: string, zone: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (match === null) return undefined;
  const utcMidnight = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  if (!Number.isFinite(utcMidnight) || new Date(utcMidnight).getUTCDate() !== Number(match[3]))
    return undefined;
  const guess = utcMidnight - zoneOffset(utcMidnight, zone);
  return utcMidnight - zoneOffset(guess, zone);
}
