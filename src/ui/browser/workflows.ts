/**
 * Plans as runs of workflows: grouped by the plan's name (a spec's, a schedule's,
 * `createPlan(parent, { name })`), newest run first, each workflow summed up (its last run, how
 * many, how many succeeded); and the filters of the workflows page (state, date range, a
 * backfill's ticks). Pure: the page renders what these answer.
 */
import type { UiBackfill, UiPlanRow } from '../ui-wire.js';
import { startOfDay } from './time-format.js';

/** States a run can be filtered by: the plan states. */
export const RUN_STATES = [
  'building',
  'running',
  'paused',
  'completed',
  'failed',
  'cancelled',
] as const;
export type RunState = (typeof RUN_STATES)[number];

/** Plan states after which a run does not move any more. */
const ENDED: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** One workflow: its runs, newest first, and what the page says of them. */
export interface Workflow {
  readonly name: string;
  readonly runs: readonly UiPlanRow[];
  /** The newest run. */
  readonly last: UiPlanRow;
  /** Runs that ended: completed, failed or cancelled. */
  readonly ended: number;
  readonly completed: number;
  readonly failed: number;
  readonly running: number;
  /** Completed runs among the ended ones, 0 to 1; undefined before any ended. */
  readonly successRate: number | undefined;
}

/** `<schedule>@20261125T013000.000Z` (optionally `-manual-<nonce>`): the tick's time, else undefined. */
export function tickTimeOf(planNodeName: string): number | undefined {
  const match =
    /@(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})\.(\d{3})Z(-manual-[0-9a-f]{8})?$/.exec(
      planNodeName,
    );
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second, milli] = match.slice(1, 8).map(Number) as number[];
  const at = Date.UTC(
    year as number,
    (month as number) - 1,
    day as number,
    hour as number,
    minute as number,
    second as number,
    milli as number,
  );
  return Number.isFinite(at) ? at : undefined;
}

/** True for a manual trigger's plan (`…-manual-<nonce>`): not a cron tick, so in no backfill. */
export function isManualRun(planNodeName: string): boolean {
  return /-manual-[0-9a-f]{8}$/.test(planNodeName);
}

/** When a run began, for ordering: its node's creation, else its tick's time. */
function startOf(run: UiPlanRow): number {
  return run.createdAt ?? tickTimeOf(run.name) ?? 0;
}

/** Newest first: by start, then by node name (a later `plan-N` is newer). */
export function newestFirst(a: UiPlanRow, b: UiPlanRow): number {
  return startOf(b) - startOf(a) || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0);
}

function summarise(name: string, rows: readonly UiPlanRow[]): Workflow {
  const runs = [...rows].sort(newestFirst);
  const count = (state: string): number => runs.filter((run) => run.state === state).length;
  const ended = runs.filter((run) => ENDED.has(run.state)).length;
  const completed = count('completed');
  return {
    name,
    runs,
    last: runs[0] as UiPlanRow,
    ended,
    completed,
    failed: count('failed'),
    running: count('running'),
    successRate: ended === 0 ? undefined : completed / ended,
  };
}

/**
 * The plans as workflows, the one with the newest run first. Plans without a name, and the child
 * plans of sub-plan tasks (steps of another run), belong to none: `unnamed` counts the first.
 */
export function groupWorkflows(rows: readonly UiPlanRow[]): {
  readonly workflows: readonly Workflow[];
  readonly unnamed: number;
} {
  const byName = new Map<string, UiPlanRow[]>();
  let unnamed = 0;
  for (const row of rows) {
    if (row.subPlanOf !== undefined) continue;
    if (row.planName === undefined || row.planName === '') {
      unnamed += 1;
      continue;
    }
    const runs = byName.get(row.planName);
    if (runs === undefined) byName.set(row.planName, [row]);
    else runs.push(row);
  }
  const workflows = [...byName].map(([name, runs]) => summarise(name, runs));
  workflows.sort((a, b) => newestFirst(a.last, b.last) || (a.name < b.name ? -1 : 1));
  return { workflows, unnamed };
}

/** What the runs are filtered by: a state, a range of start days, a backfill's range of ticks. */
export interface RunFilter {
  readonly state?: RunState;
  /** Started on or after this day (`YYYY-MM-DD`), in the reader's zone. */
  readonly from?: string;
  /** Started on or before this day, in the reader's zone. */
  readonly to?: string;
  /** Only the cron ticks of this backfill (its id). */
  readonly backfill?: string;
}

function isRunState(value: string): value is RunState {
  return (RUN_STATES as readonly string[]).includes(value);
}

/** The filter a page's query asks for; a value that is none of the expected ones is dropped. */
export function parseRunFilter(query: URLSearchParams): RunFilter {
  const state = query.get('state') ?? '';
  const day = (key: string): string | undefined => {
    const value = query.get(key) ?? '';
    return /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : undefined;
  };
  const from = day('from');
  const to = day('to');
  const backfill = query.get('backfill') ?? '';
  return {
    ...(isRunState(state) ? { state } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(/^backfill-[0-9a-z-]{1,80}$/.test(backfill) ? { backfill } : {}),
  };
}

/** The workflows page of a plan name. */
export function workflowHref(name: string): string {
  return `/workflows?${new URLSearchParams({ name }).toString()}`;
}

/** The query of a filter (for the address bar, so the filtered page can be linked). */
export function filterQuery(name: string, filter: RunFilter): string {
  const query = new URLSearchParams({ name });
  if (filter.state !== undefined) query.set('state', filter.state);
  if (filter.from !== undefined) query.set('from', filter.from);
  if (filter.to !== undefined) query.set('to', filter.to);
  if (filter.backfill !== undefined) query.set('backfill', filter.backfill);
  return query.toString();
}

/** True when a run's cron tick falls in the backfill's range (both ends included). */
export function isRunOfBackfill(run: UiPlanRow, backfill: UiBackfill): boolean {
  const tick = tickTimeOf(run.name);
  if (tick === undefined || isManualRun(run.name)) return false;
  return tick >= Date.parse(backfill.from) && tick <= Date.parse(backfill.to);
}

/**
 * The runs the filter keeps, in their order. Days are read on the clocks of `zone`: `to` keeps
 * the whole day. A run whose start is unknown is kept only without a date range. A filter by a
 * backfill the page does not know keeps nothing.
 */
export function filterRuns(
  runs: readonly UiPlanRow[],
  filter: RunFilter,
  zone: string,
  backfills: readonly UiBackfill[] = [],
): UiPlanRow[] {
  const from = filter.from === undefined ? undefined : startOfDay(filter.from, zone);
  const toDay = filter.to === undefined ? undefined : startOfDay(nextDay(filter.to), zone);
  const backfill =
    filter.backfill === undefined
      ? undefined
      : (backfills.find((candidate) => candidate.id === filter.backfill) ?? null);
  return runs.filter((run) => {
    if (filter.state !== undefined && run.state !== filter.state) return false;
    if (from !== undefined || toDay !== undefined) {
      const started = run.createdAt;
      if (started === undefined) return false;
      if (from !== undefined && started < from) return false;
      if (toDay !== undefined && started >= toDay) return false;
    }
    if (backfill === null) return false;
    if (backfill !== undefined && !isRunOfBackfill(run, backfill)) return false;
    return true;
  });
}

/** The day after `YYYY-MM-DD`, same form. */
function nextDay(day: string): string {
  const at = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
  return Number.isFinite(at) ? new Date(at).toISOString().slice(0, 10) : day;
}
