/** How the task list writes times and durations: short enough for a row, exact in the cell's title. */

const timeOfDay = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
const dateAndTime = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** A moment (epoch ms) as the time of day when it is today (by `now`), else with its date. */
export function shortTime(at: number | undefined, now: number): string {
  if (at === undefined) return '';
  const sameDay = new Date(at).toDateString() === new Date(now).toDateString();
  return (sameDay ? timeOfDay : dateAndTime).format(at);
}

/** A moment as an ISO time (the cell's title). */
export function exactTime(at: number | undefined): string {
  return at === undefined ? '' : new Date(at).toISOString();
}

/** A duration: `850 ms`, `12.3 s`, `4 m 05 s`, `2 h 03 m`. */
export function shortDuration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1_000);
  if (seconds < 3_600)
    return `${Math.floor(seconds / 60)} m ${String(seconds % 60).padStart(2, '0')} s`;
  const minutes = Math.floor(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} m`;
}
