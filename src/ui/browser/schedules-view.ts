/**
 * The schedules table (`zk-plan ui --schedules <path>`): each schedule's timing, next fire times,
 * its recent runs linked to their plans, a link to all its runs (its workflow) and its backfills,
 * each linked to the runs of its range of ticks.
 */
import type { UiBackfill, UiSchedule } from '../ui-wire.js';
import { triggerControl } from './schedule-actions.js';
import { cell, h, planTaskHref } from './dom.js';
import { formatAbsolute, formatRelative, isoMs } from './time-format.js';
import { filterQuery, workflowHref } from './workflows.js';

/** The workflows page showing the runs of a backfill. */
export function backfillHref(schedule: string, backfill: string): string {
  return `/workflows?${filterQuery(schedule, { backfill })}`;
}

/** A backfill as one line: range, mode, state and counts, linked to its runs. */
export function backfillLine(schedule: string, backfill: UiBackfill, zone: string): HTMLElement {
  const line = h('div', undefined, 'backfill');
  line.dataset['backfill'] = backfill.id;
  line.dataset['state'] = backfill.state;
  const range = `${formatAbsolute(isoMs(backfill.from), zone)} – ${formatAbsolute(isoMs(backfill.to), zone)}`;
  const link = h('a', range);
  link.setAttribute('href', backfillHref(schedule, backfill.id));
  link.title = `the runs of ${backfill.id}`;
  line.appendChild(link);
  const counts = `${backfill.mode}, ${backfill.state}: ${backfill.started}/${backfill.total} started, ${backfill.completed} completed, ${backfill.failed} failed, ${backfill.notRun} not run`;
  line.appendChild(
    h('span', `${counts}${backfill.reason === undefined ? '' : ` (${backfill.reason})`}`, 'note'),
  );
  return line;
}

/** Rows of the schedules table; `redraw` draws them again once a trigger is answered. */
export function scheduleRows(
  schedules: readonly UiSchedule[],
  now: number,
  zone: string,
  redraw: () => void,
): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const schedule of schedules) {
    const row = h('tr');
    row.dataset['schedule'] = schedule.name;
    row.dataset['paused'] = String(schedule.paused);
    const name = cell(row, schedule.name, 'mono');
    name.title = `plans under ${schedule.planParent}`;
    name.appendChild(triggerControl(schedule.name, redraw));
    cell(
      row,
      `${schedule.cron} (${schedule.timezone})${schedule.paused ? ' · paused' : ''}`,
      'mono',
    );
    cell(
      row,
      schedule.nextFireTimes
        .slice(0, 2)
        .map((at) => `${formatRelative(isoMs(at), now)} (${formatAbsolute(isoMs(at), zone)})`)
        .join(', ') || '—',
    );
    const runs = cell(row);
    for (const run of schedule.runs.slice(0, 5)) {
      const line = h('div', undefined, 'run');
      line.dataset['state'] = run.state;
      const at = isoMs(run.firedAt);
      const label = `${at === undefined ? run.firedAt : formatRelative(at, now)} ${run.kind === 'manual' ? '(manual) ' : ''}${run.state}${run.detail === undefined ? '' : `: ${run.detail}`}`;
      if (run.shown && run.state === 'fired') {
        const link = h('a', label);
        link.setAttribute('href', planTaskHref(run.plan));
        line.appendChild(link);
      } else line.textContent = label;
      line.title = `${run.plan}\nfired for ${formatAbsolute(at, zone)}`;
      runs.appendChild(line);
    }
    const all = h('a', 'all runs →', 'all-runs');
    all.setAttribute('href', workflowHref(schedule.name));
    runs.appendChild(all);
    const backfills = cell(row, schedule.backfills.length === 0 ? '—' : undefined);
    for (const backfill of schedule.backfills)
      backfills.appendChild(backfillLine(schedule.name, backfill, zone));
    fragment.appendChild(row);
  }
  return fragment;
}

/** Fills the schedules table and its empty note. */
export function renderSchedules(
  schedules: readonly UiSchedule[],
  schedulesParent: string | undefined,
  tables: { readonly schedules: HTMLElement; readonly schedulesEmpty: HTMLElement },
  now: number,
  zone: string,
): void {
  tables.schedules.textContent = '';
  const redraw = (): void => renderSchedules(schedules, schedulesParent, tables, Date.now(), zone);
  tables.schedules.appendChild(scheduleRows(schedules, now, zone, redraw));
  tables.schedulesEmpty.textContent =
    schedules.length > 0
      ? ''
      : schedulesParent === undefined
        ? 'No schedules shown (zk-plan ui --schedules <path> lists them).'
        : `No schedule is defined under ${schedulesParent} (zk-plan schedule put <file> --schedules ${schedulesParent} adds one).`;
}
