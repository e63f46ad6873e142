/** The pages' time formatting (src/ui/browser/time-format.ts): absolute in a chosen zone, relative, durations, days. */
import { describe, expect, it } from 'vitest';
import {
  formatAbsolute,
  formatDuration,
  formatRelative,
  isTimeZone,
  isoMs,
  startOfDay,
} from '../../src/ui/browser/time-format.js';

const AT = Date.parse('2026-11-27T20:34:05.678Z');
const SUMMER = Date.parse('2026-07-01T12:00:00.000Z');

describe('formatAbsolute', () => {
  it('writes a moment on the clocks of the zone picked, with the zone’s short name', () => {
    expect(formatAbsolute(AT, 'UTC')).toBe('2026-11-27 20:34:05 UTC');
    expect(formatAbsolute(AT, 'Asia/Tokyo')).toBe('2026-11-28 05:34:05 GMT+9');
    expect(formatAbsolute(AT, 'America/New_York')).toBe('2026-11-27 15:34:05 EST');
    // Summer time is the zone's, not the reader's machine's.
    expect(formatAbsolute(SUMMER, 'America/New_York')).toBe('2026-07-01 08:00:00 EDT');
    expect(formatAbsolute(SUMMER, 'Europe/Berlin')).toMatch(/^2026-07-01 14:00:00 (GMT\+2|CEST)$/);
  });

  it('writes a dash for no moment', () => {
    expect(formatAbsolute(undefined, 'UTC')).toBe('—');
    expect(formatAbsolute(Number.NaN, 'UTC')).toBe('—');
  });
});

describe('isTimeZone', () => {
  it('takes local, UTC and IANA names Intl knows; refuses anything else', () => {
    for (const zone of ['local', 'UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires'])
      expect(isTimeZone(zone), zone).toBe(true);
    for (const zone of ['', 'Mars/Olympus', 'x'.repeat(65), null, 3, '<img>'])
      expect(isTimeZone(zone), String(zone)).toBe(false);
  });
});

describe('formatRelative', () => {
  it('says how long ago or how soon, in the largest whole unit', () => {
    expect(formatRelative(AT - 2_000, AT)).toBe('just now');
    expect(formatRelative(AT - 42_000, AT)).toBe('42 s ago');
    expect(formatRelative(AT - 3 * 60_000 - 59_000, AT)).toBe('3 min ago');
    expect(formatRelative(AT - 5 * 3_600_000, AT)).toBe('5 h ago');
    expect(formatRelative(AT - 3 * 86_400_000, AT)).toBe('3 d ago');
    expect(formatRelative(AT + 10 * 60_000, AT)).toBe('in 10 min');
    expect(formatRelative(undefined, AT)).toBe('—');
  });
});

describe('formatDuration', () => {
  it('writes a duration in its two largest units', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(2_460)).toBe('2.4 s');
    expect(formatDuration(3 * 60_000 + 12_300)).toBe('3 min 12 s');
    expect(formatDuration(3_600_000 + 4 * 60_000)).toBe('1 h 4 min');
    expect(formatDuration(2 * 86_400_000 + 3 * 3_600_000)).toBe('2 d 3 h');
    expect(formatDuration(-1)).toBe('—');
    expect(formatDuration(undefined)).toBe('—');
  });
});

describe('startOfDay and isoMs', () => {
  it('finds the moment a day begins on the zone’s clocks, summer time included', () => {
    expect(startOfDay('2026-11-27', 'UTC')).toBe(Date.parse('2026-11-27T00:00:00Z'));
    expect(startOfDay('2026-11-27', 'Asia/Tokyo')).toBe(Date.parse('2026-11-26T15:00:00Z'));
    expect(startOfDay('2026-07-01', 'America/New_York')).toBe(Date.parse('2026-07-01T04:00:00Z'));
    expect(startOfDay('2026-01-01', 'America/New_York')).toBe(Date.parse('2026-01-01T05:00:00Z'));
    // The day summer time starts in Berlin (at 02:00): midnight is still winter time.
    expect(startOfDay('2026-03-29', 'Europe/Berlin')).toBe(Date.parse('2026-03-28T23:00:00Z'));
  });

  it('answers undefined for what is no day or no time', () => {
    for (const day of ['2026-02-30', '27.11.2026', '', '2026-11-27T00:00'])
      expect(startOfDay(day, 'UTC'), day).toBeUndefined();
    expect(isoMs('2026-11-27T20:34:05.678Z')).toBe(AT);
    expect(isoMs('yesterday')).toBeUndefined();
    expect(isoMs(undefined)).toBeUndefined();
  });
});
