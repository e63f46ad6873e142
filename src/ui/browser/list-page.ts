/**
 * What the list pages (plans, workflows, cluster, schedules, jobs) share: writing their data again
 * when the reader picks another zone and as relative times age, and marking the item a deep link
 * (`?name=…`) names.
 */
import { getJson, showLive } from './api.js';
import { onZoneChange } from './time-zone.js';

/** Workers rewrite their records at least this often (src/registry/worker-info.ts): the pages that show them read as often. */
export const CLUSTER_REFRESH_MS = 5_000;

/** Relative times ("3 min ago") are written again this often. */
const AGE_REFRESH_MS = 15_000;

/** Calls `render` when the zone changes and every AGE_REFRESH_MS (it writes the last data it got). */
export function rerenderOnTime(render: () => void): void {
  onZoneChange(render);
  setInterval(render, AGE_REFRESH_MS);
}

/** The `name` of the page's query: the item a deep link opens, undefined without one. */
export function linkedName(): string | undefined {
  const name = new URLSearchParams(location.search).get('name');
  return name === null || name === '' || name.length > 400 ? undefined : name;
}

/**
 * Marks the row whose `data-<key>` is `name` (`data-linked`), and scrolls it into view the first
 * time it appears; true when one is there.
 */
export function markLinked(
  rows: HTMLElement,
  key: string,
  name: string | undefined,
  scrolled: { done: boolean },
): boolean {
  if (name === undefined) return false;
  let found = false;
  for (const row of rows.querySelectorAll<HTMLElement>('tr')) {
    if (row.dataset[key] !== name) continue;
    row.dataset['linked'] = 'true';
    found = true;
    if (!scrolled.done) {
      scrolled.done = true;
      row.scrollIntoView?.({ block: 'center' });
    }
  }
  return found;
}

/** Where pollJson says how its reads go, and how often it reads. */
export interface PollOptions {
  /** Says a failed read, emptied after a good one. */
  readonly note: HTMLElement;
  /** The page's live indicator, when these reads are what keeps the page current. */
  readonly live?: HTMLElement;
  /** @defaultValue CLUSTER_REFRESH_MS */
  readonly intervalMs?: number;
}

/**
 * Reads `url` now and every `intervalMs` after each read ends, handing each answer to `render`;
 * a failed read is said in `note` (and on the live indicator), and tried again at the next turn.
 */
export function pollJson<T>(url: string, render: (answer: T) => void, options: PollOptions): void {
  const { note, live } = options;
  const read = async (): Promise<void> => {
    try {
      render(await getJson<T>(url));
      note.textContent = '';
      if (live !== undefined) showLive(live, true, 'live');
    } catch (error) {
      note.textContent = `Could not read ${url}: ${error instanceof Error ? error.message : String(error)}`;
      if (live !== undefined) showLive(live, false, 'read failed, trying again');
    } finally {
      setTimeout(() => void read(), options.intervalMs ?? CLUSTER_REFRESH_MS);
    }
  };
  void read();
}
