/**
 * The timeline's layout, pure: each task's tries (from `GET /api/timeline`) merged with what the
 * live diffs say of its last try (a try started or ended since the tries were read), placed on a
 * row per worker or per task, with the critical path marked. The drawing is timeline-view.ts's.
 */
import { criticalPath } from '../../plan/critical-path.js';
import type { UiNode, UiTry, UiTryOutcome } from '../ui-wire.js';

/** A row per worker (the default) or per task. */
export type TimelineRows = 'worker' | 'task';

/** One bar: a try of a task, on its row, from `startMs` to `endMs` (a running one ends now). */
export interface LaidBar {
  readonly name: string;
  readonly row: number;
  readonly attempt: number;
  /** `retried`: a failed try another one followed. */
  readonly outcome: UiTryOutcome | 'retried';
  readonly worker: string;
  readonly startMs: number;
  readonly endMs: number;
  /** Its recorded end; 0 while it runs. */
  readonly finishedAt: number;
  readonly error?: string;
  /** Its task is on the critical path. */
  readonly critical: boolean;
}

export interface TimelineLayout {
  /** Each row's label (a worker id, or a task's key or name) and, per task, its name. */
  readonly rows: readonly { readonly label: string; readonly name?: string }[];
  /** Bars by row, each row's in start order. */
  readonly bars: readonly (readonly LaidBar[])[];
  readonly startMs: number;
  readonly endMs: number;
  /** The critical path: task names in order, and their run durations' sum. */
  readonly critical: { readonly names: readonly string[]; readonly totalMs: number };
  readonly barCount: number;
}

/** The outcome of a node's last try as its state tells; undefined for a state no try ends in. */
function endedOutcome(node: UiNode): UiTryOutcome | undefined {
  switch (node.state) {
    case 'done':
      return 'done';
    case 'skipped':
      return 'skipped';
    case 'cancelled':
      return 'cancelled';
    case 'failed':
      return 'failed';
    case 'running':
    case 'finishing':
      return 'running';
    default:
      return undefined;
  }
}

/**
 * A task's tries: those read, brought up to date with its node. A node running a try the list
 * does not have gets it; a try the list has running that the node says ended gets its end.
 */
export function mergedTries(node: UiNode, read: readonly UiTry[] | undefined): UiTry[] {
  const tries = [...(read ?? [])];
  const outcome = endedOutcome(node);
  if (outcome === undefined || node.startedAt === undefined) return tries;
  const last = tries.at(-1);
  if (outcome === 'running') {
    if (last?.outcome === 'running' && last.startedAt === node.startedAt) return tries;
    if (last?.outcome === 'running') tries.pop(); // a try that ended since, its end not read yet
    tries.push({
      attempt: (node.failedTries ?? 0) + 1,
      outcome: 'running',
      worker: node.worker ?? '',
      startedAt: node.startedAt,
      finishedAt: 0,
    });
    return tries;
  }
  if (last?.outcome === 'running') {
    tries[tries.length - 1] = {
      ...last,
      outcome,
      finishedAt: node.finishedAt ?? last.startedAt,
      ...(outcome === 'failed' && node.error !== undefined ? { error: node.error } : {}),
    };
    return tries;
  }
  if (tries.length === 0 && outcome !== 'failed')
    tries.push({
      attempt: (node.failedTries ?? 0) + 1,
      outcome,
      worker: node.worker ?? '',
      startedAt: node.startedAt,
      finishedAt: node.finishedAt ?? node.startedAt,
    });
  return tries;
}

/** Lays the tries of `nodes` out on rows; running tries end at `now`. */
export function layoutTimeline(
  nodes: readonly UiNode[],
  read: Readonly<Record<string, readonly UiTry[]>>,
  rows: TimelineRows,
  now: number,
): TimelineLayout {
  const triesByName = new Map<string, UiTry[]>();
  for (const node of nodes) {
    const tries = mergedTries(node, Object.hasOwn(read, node.name) ? read[node.name] : undefined);
    if (tries.length > 0) triesByName.set(node.name, tries);
  }
  const critical = criticalPath(
    nodes.map((node) => ({
      name: node.name,
      inputs: node.inputs,
      durationMs: (triesByName.get(node.name) ?? []).reduce(
        (sum, entry) => sum + runLength(entry, now),
        0,
      ),
    })),
  );
  const onPath = new Set(critical.names);
  const keyOf = new Map(nodes.map((node) => [node.name, node.key ?? node.name]));
  const rowOf = new Map<string, number>();
  const labels: { label: string; name?: string }[] = [];
  const rowKeys = rowOrder(triesByName, rows);
  for (const key of rowKeys) {
    rowOf.set(key, labels.length);
    labels.push(
      rows === 'task' ? { label: keyOf.get(key) ?? key, name: key } : { label: key || '?' },
    );
  }
  const bars: LaidBar[][] = labels.map(() => []);
  let startMs = Number.POSITIVE_INFINITY;
  let endMs = Number.NEGATIVE_INFINITY;
  let barCount = 0;
  for (const [name, tries] of triesByName) {
    for (const [index, entry] of tries.entries()) {
      const end = entry.finishedAt === 0 ? now : entry.finishedAt;
      const start = entry.startedAt === 0 ? end : entry.startedAt;
      const row = rowOf.get(rows === 'task' ? name : entry.worker) ?? 0;
      const retried = entry.outcome === 'failed' && index < tries.length - 1;
      bars[row]?.push({
        name,
        row,
        attempt: entry.attempt,
        outcome: retried ? 'retried' : entry.outcome,
        worker: entry.worker,
        startMs: start,
        endMs: Math.max(start, end),
        finishedAt: entry.finishedAt,
        ...(entry.error === undefined ? {} : { error: entry.error }),
        critical: onPath.has(name),
      });
      barCount++;
      startMs = Math.min(startMs, start);
      endMs = Math.max(endMs, end);
    }
  }
  for (const list of bars) list.sort((a, b) => a.startMs - b.startMs);
  if (barCount === 0) {
    startMs = now;
    endMs = now;
  }
  return { rows: labels, bars, startMs, endMs: Math.max(endMs, startMs + 1), critical, barCount };
}

/** Row keys: workers by id, or tasks by their first try's start. */
function rowOrder(
  triesByName: ReadonlyMap<string, readonly UiTry[]>,
  rows: TimelineRows,
): string[] {
  if (rows === 'task')
    return [...triesByName]
      .map(([name, tries]) => ({ name, first: Math.min(...tries.map(startOf)) }))
      .sort((a, b) => a.first - b.first || (a.name < b.name ? -1 : 1))
      .map(({ name }) => name);
  const workers = new Set<string>();
  for (const tries of triesByName.values()) for (const entry of tries) workers.add(entry.worker);
  return [...workers].sort();
}

function startOf(entry: UiTry): number {
  return entry.startedAt === 0 ? entry.finishedAt : entry.startedAt;
}

function runLength(entry: UiTry, now: number): number {
  if (entry.startedAt === 0) return 0;
  return Math.max(0, (entry.finishedAt === 0 ? now : entry.finishedAt) - entry.startedAt);
}

/** Round steps of the time axis: the smallest 1, 2 or 5 × 10^n ms at least `minimum`. */
export function tickStep(minimum: number): number {
  for (let power = 1; ; power *= 10)
    for (const factor of [1, 2, 5]) if (factor * power >= minimum) return factor * power;
}
