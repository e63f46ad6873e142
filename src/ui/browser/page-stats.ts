/** Timings and counters of the plan page, exposed as `window.zkPlanUi` for the browser test. */
export interface PageStats {
  readonly plan: string;
  snapshotMs: number | null;
  firstRenderMs: number | null;
  /** When the task list first drew rows (it draws only while shown). */
  listFirstRenderMs: number | null;
  /** How long the last text filter took, from its input event to the list's rows redrawn. */
  lastFilterMs: number | null;
  elkMs: number | null;
  elkAppliedMs: number | null;
  layouts: number;
  quickLayouts: number;
  engine: 'worker' | 'page' | null;
  snapshots: number;
  diffs: number;
  /** Tasks in the graph (each one, drawn alone or inside a group). */
  nodes: number;
  structureChanges: number;
  /** Groups of similar tasks (graph-groups.ts), how many are open, and the node elements drawn (tasks outside closed groups, plus closed groups). */
  groups: number;
  openGroups: number;
  drawn: number;
  /** From the timeline's show() to its first drawing with the tries read (ms); null until then. */
  timelineRenderMs: number | null;
  /** The timeline's last layout and drawing alone (ms). */
  timelineDrawMs: number | null;
  /** The timeline's last read of the tries (GET /api/timeline, ms). */
  timelineFetchMs: number | null;
  /** Bars the timeline laid out last. */
  timelineBars: number;
}

declare global {
  interface Window {
    zkPlanUi?: PageStats;
  }
}

/** A fresh set of counters, published on `window`. */
export function publishStats(plan: string): PageStats {
  const stats: PageStats = {
    plan,
    snapshotMs: null,
    firstRenderMs: null,
    listFirstRenderMs: null,
    lastFilterMs: null,
    elkMs: null,
    elkAppliedMs: null,
    layouts: 0,
    quickLayouts: 0,
    engine: null,
    snapshots: 0,
    diffs: 0,
    nodes: 0,
    structureChanges: 0,
    groups: 0,
    openGroups: 0,
    drawn: 0,
    timelineRenderMs: null,
    timelineDrawMs: null,
    timelineFetchMs: null,
    timelineBars: 0,
  };
  window.zkPlanUi = stats;
  return stats;
}
