/**
 * The web view's timeline data (`GET /api/timeline`): each task's tries, out of a plan's view
 * (src/plan/task-tries-view.ts), every text cut to a bound. The page draws them
 * (src/ui/browser/timeline-view.ts) and keeps the running ones growing from the live diffs.
 */
import type { PlanView } from '../plan/plan-view.js';
import { triesToDraw } from '../plan/timeline-tries.js';
import type { UiTimeline, UiTry } from './ui-wire.js';

/** A try's error on the wire is cut to this many characters (its code and message together). */
const MAX_ERROR_CHARS = 300;
/** A worker id on the wire is cut to this many characters. */
const MAX_WORKER_CHARS = 200;

/** The timeline of a plan's view, read at `at`. */
export function buildTimeline(view: PlanView, at: number): UiTimeline {
  const tries: Record<string, UiTry[]> = {};
  for (const task of view.tasks) {
    const shown = triesToDraw(task).map((entry): UiTry => ({
      attempt: entry.attempt,
      outcome: entry.outcome,
      worker: clip(entry.workerId ?? '', MAX_WORKER_CHARS),
      startedAt: timeOf(entry.startedAt),
      finishedAt: timeOf(entry.finishedAt),
      ...(entry.error === undefined
        ? {}
        : { error: clip(`${entry.error.code}: ${entry.error.message}`, MAX_ERROR_CHARS) }),
    }));
    if (shown.length > 0) tries[task.name] = shown;
  }
  return { plan: view.plan, at, tries };
}

function timeOf(date: Date | undefined): number {
  const time = date?.getTime() ?? 0;
  return Number.isFinite(time) ? time : 0;
}

function clip(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}
