/**
 * Times on the pages: the zone the reader picked (remembered in localStorage, told to every page
 * script when it changes), and the elements that show a moment relative to now with its absolute
 * time in that zone beside it.
 */
import { h } from './dom.js';
import {
  LOCAL_ZONE,
  formatAbsolute,
  formatDuration,
  formatRelative,
  isTimeZone,
} from './time-format.js';

/**
 * A moment as the tables show it: relative ("3 min ago") in a `<time>` whose title is the absolute
 * time, and the absolute time beneath in small print; `—` when there is none.
 */
export function timeElement(ms: number | undefined, now: number, zone: string): HTMLElement {
  if (ms === undefined || !Number.isFinite(ms)) return h('span', '—', 'none');
  const wrap = h('span', undefined, 'when');
  const relative = h('time', formatRelative(ms, now), 'rel');
  const absolute = formatAbsolute(ms, zone);
  relative.setAttribute('datetime', new Date(ms).toISOString());
  relative.title = absolute;
  wrap.appendChild(relative);
  wrap.appendChild(h('span', absolute, 'abs'));
  return wrap;
}

/** How long a run took (or has taken so far, while it runs): `took 2.4 s`, `running for 3 min 2 s`. */
export function durationText(
  startedAt: number | undefined,
  finishedAt: number | undefined,
  running: boolean,
  now: number,
): string {
  if (startedAt === undefined) return '—';
  if (finishedAt !== undefined)
    return `took ${formatDuration(Math.max(0, finishedAt - startedAt))}`;
  return running ? `running for ${formatDuration(Math.max(0, now - startedAt))}` : '—';
}
