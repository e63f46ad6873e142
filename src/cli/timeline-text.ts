/**
 * `zk-plan show --timeline`: a plan's run as a compact text Gantt, one line per task (or per
 * worker), the bars scaled to the terminal's width, the critical path marked. Pure: the view and
 * the time in, the text out (printed through `print`, which makes it printable as a whole; the
 * labels are made printable here too, so that the bars stay aligned).
 */
import type { PlanView } from '../plan/plan-view.js';
import type { TaskTryOutcome } from '../plan/task-tries-view.js';
import { barsOf, planCriticalPath, type TimelineBar } from '../plan/timeline-tries.js';
import { printable } from '../util/printable.js';
import { formatDuration, formatTime, shortName, truncate } from './output.js';

/** How `renderTimeline` lays out the text. */
export interface TimelineTextOptions {
  /** Characters per line (a terminal's); 100 when not given (a pipe), at least 40. */
  readonly width?: number;
  /** One line per worker instead of one per task. */
  readonly byWorker?: boolean;
  /** The time running tries end at (epoch ms). */
  readonly now: number;
}

/** The character each try is drawn with, by how it ended. */
export const BAR_CHARS: Readonly<Record<TaskTryOutcome, string>> = {
  done: '#',
  skipped: '/',
  failed: 'x',
  running: '>',
  cancelled: '-',
};
/** A try of a task on the critical path, drawn on a worker's line. */
const CRITICAL_CHAR = '@';
const DEFAULT_WIDTH = 100;
const MIN_WIDTH = 40;
const MAX_LABEL = 28;
const MIN_TICK_GAP = 10;
const NICE_STEPS = [1, 2, 5] as const;

/** The timeline's text: a header, a time axis, a line per task or worker, and a legend. */
export function renderTimeline(view: PlanView, options: TimelineTextOptions): string {
  const { now } = options;
  const width = Math.max(MIN_WIDTH, options.width ?? DEFAULT_WIDTH);
  const bars = view.tasks.flatMap((task) => barsOf(task, now));
  const header = `${view.plan}: timeline of ${view.tasks.length} task(s), ${bars.length} tr${bars.length === 1 ? 'y' : 'ies'}`;
  if (bars.length === 0) return `${header}\nno task has started yet`;
  const critical = planCriticalPath(view, now);
  const onPath = new Set(critical.names);
  const rows = options.byWorker === true ? workerRows(bars) : taskRows(bars);
  const labelWidth = Math.min(MAX_LABEL, Math.max(...rows.map((row) => row.label.length)));
  const tookWidth = 7;
  // "* label |bar| took": the mark, the label, two bar edges, the spaces.
  const barWidth = width - labelWidth - tookWidth - 6;
  const start = Math.min(...bars.map((bar) => bar.startMs));
  const end = Math.max(...bars.map((bar) => bar.endMs), start + 1);
  const scale = barWidth / (end - start);
  const column = (ms: number): number =>
    Math.min(barWidth - 1, Math.max(0, Math.floor((ms - start) * scale)));
  const lines = rows.map((row) => {
    const cells = Array.from({ length: barWidth }, () => ' ');
    for (const bar of row.bars) {
      const char =
        options.byWorker === true && onPath.has(bar.task.task) && bar.outcome === 'done'
          ? CRITICAL_CHAR
          : BAR_CHARS[bar.outcome];
      const last = Math.max(column(bar.startMs), Math.ceil((bar.endMs - start) * scale) - 1);
      for (let index = column(bar.startMs); index <= Math.min(last, barWidth - 1); index++)
        cells[index] = char;
    }
    const mark = options.byWorker !== true && onPath.has(row.key) ? '*' : ' ';
    const took = formatDuration(row.bars.reduce((sum, bar) => sum + bar.endMs - bar.startMs, 0));
    return `${mark} ${truncate(row.label, labelWidth).padEnd(labelWidth)} |${cells.join('')}| ${took.padStart(tookWidth)}`;
  });
  const axis = `${' '.repeat(labelWidth + 3)}${ticks(barWidth, end - start)}`;
  const span = `from ${formatTime(new Date(start))} to ${formatTime(new Date(end))} (${formatDuration(end - start)}, one column ≈ ${formatDuration((end - start) / barWidth)})`;
  const path = `critical path (${formatDuration(critical.totalMs)}): ${critical.names.map((name) => label(view, name)).join(' → ')}`;
  const legend = `${Object.entries(BAR_CHARS)
    .map(([outcome, char]) => `${char} ${outcome}`)
    .join(
      '  ',
    )}${options.byWorker === true ? `  ${CRITICAL_CHAR} done on the critical path` : '  * on the critical path'}`;
  return [header, span, axis, ...lines, truncate(path, width), legend].join('\n');
}

interface Row {
  /** The task's path, or the worker's id. */
  readonly key: string;
  readonly label: string;
  readonly bars: readonly TimelineBar[];
}

/** A line per task, ordered by its first try's start. */
function taskRows(bars: readonly TimelineBar[]): Row[] {
  const byTask = new Map<string, TimelineBar[]>();
  for (const bar of bars) byTask.set(bar.task.task, [...(byTask.get(bar.task.task) ?? []), bar]);
  return [...byTask.values()]
    .map((list) => {
      const task = (list[0] as TimelineBar).task;
      return {
        key: task.task,
        label: printable(task.key ?? shortName(task.name), { multiline: false }),
        bars: list,
      };
    })
    .sort((a, b) => firstStart(a) - firstStart(b));
}

/** A line per worker, ordered by its id. */
function workerRows(bars: readonly TimelineBar[]): Row[] {
  const byWorker = new Map<string, TimelineBar[]>();
  for (const bar of bars) {
    const worker = bar.workerId ?? '?';
    byWorker.set(worker, [...(byWorker.get(worker) ?? []), bar]);
  }
  return [...byWorker]
    .map(([worker, list]) => ({
      key: worker,
      label: printable(worker, { multiline: false }),
      bars: list,
    }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function firstStart(row: Row): number {
  return Math.min(...row.bars.map((bar) => bar.startMs));
}

/** A task's name on the critical path's line: its key, else its short name. */
function label(view: PlanView, task: string): string {
  const found = view.tasks.find((entry) => entry.task === task);
  return printable(found?.key ?? shortName(task), { multiline: false });
}

/** The axis: a mark every round step, its offset from the start under it, at least MIN_TICK_GAP columns apart. */
function ticks(barWidth: number, spanMs: number): string {
  const step = niceStep((spanMs * MIN_TICK_GAP) / barWidth);
  const cells = Array.from({ length: barWidth + 2 }, () => ' ');
  for (let at = 0; at <= spanMs; at += step) {
    const index = 1 + Math.floor((at / spanMs) * barWidth);
    const text = `|${formatDuration(at)}`;
    if (index + text.length > cells.length) break;
    for (const [offset, char] of [...text].entries()) cells[index + offset] = char;
  }
  return cells.join('').trimEnd();
}

/** The smallest 1, 2 or 5 × 10^n ms at least `minimum`. */
function niceStep(minimum: number): number {
  for (let power = 1; ; power *= 10)
    for (const factor of NICE_STEPS) if (factor * power >= minimum) return factor * power;
}
