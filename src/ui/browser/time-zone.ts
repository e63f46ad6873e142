/**
 * The time zone the reader picked in the navigation bar: remembered in localStorage across pages
 * and visits, and told to the page's scripts when it changes, so that they write their times again.
 */
import { LOCAL_ZONE, isTimeZone } from './time-format.js';

const ZONE_KEY = 'zk-plan-ui-time-zone';
/** The event the window hears when the reader picks another zone. */
const ZONE_EVENT = 'zk-plan:time-zone';

/** The zone the reader picked, `local` when none (or one this browser does not know) is stored. */
export function preferredZone(): string {
  let stored: string | null = null;
  try {
    stored = localStorage.getItem(ZONE_KEY);
  } catch {
    stored = null; // storage refused (a private window's policy): the browser's own zone
  }
  return isTimeZone(stored) ? stored : LOCAL_ZONE;
}

/** Remembers a zone and tells the page's scripts to show their times in it. */
export function setPreferredZone(zone: string): void {
  if (!isTimeZone(zone)) return;
  try {
    localStorage.setItem(ZONE_KEY, zone);
  } catch {
    // not remembered across pages, still applied to this one
  }
  window.dispatchEvent(new CustomEvent(ZONE_EVENT, { detail: zone }));
}

/** Calls `listener` each time the reader picks another zone. */
export function onZoneChange(listener: (zone: string) => void): void {
  window.addEventListener(ZONE_EVENT, (event) => listener((event as CustomEvent<string>).detail));
}
