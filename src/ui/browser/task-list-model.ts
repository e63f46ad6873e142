/**
 * The task list's data, without the DOM: every task of the plan as the page's snapshot and diffs
 * describe it, which of them a filter shows, in which order, and where "go to failed" goes next.
 * Unit tests import it directly (test/browser/task-list.test.ts).
 */
import {
  TASK_VIEW_STATES,
  applyChange,
  byName,
  type TaskViewState,
  type UiDiff,
  type UiNode,
} from '../ui-wire.js';

/** The list's columns, in the order they are shown. */
export const TASK_LIST_COLUMNS = [
  'task',
  'fn',
  'state',
  'attempts',
  'worker',
  'start',
  'end',
  'duration',
] as const;

export type TaskListColumn = (typeof TASK_LIST_COLUMNS)[number];

export function isTaskListColumn(value: string): value is TaskListColumn {
  return (TASK_LIST_COLUMNS as readonly string[]).includes(value);
}

/** Which rows the list shows and in which order. An empty `states` set shows every state; `fn` '' every function. */
export interface TaskListQuery {
  readonly states: ReadonlySet<TaskViewState>;
  readonly fn: string;
  readonly text: string;
  readonly sort: TaskListColumn;
  readonly descending: boolean;
}

export const DEFAULT_TASK_LIST_QUERY: TaskListQuery = {
  states: new Set(),
  fn: '',
  text: '',
  sort: 'task',
  descending: false,
};

/** What the list shows of a task: its key, else its name (`task-N`). */
export function taskLabel(node: UiNode): string {
  return node.key ?? node.name;
}

/**
 * How many tries a task has made: a failed task's failed tries are all of them; a task that runs,
 * finishes or is done made one more than its failed tries; one that waits for its next try (or
 * never ran) made its failed tries, if any.
 */
export function attemptsOf(node: UiNode): number | undefined {
  const failed = node.failedTries ?? 0;
  switch (node.state) {
    case 'failed':
      return failed > 0 ? failed : 1;
    case 'running':
    case 'finishing':
    case 'done':
    case 'cancelled':
      return node.startedAt !== undefined || failed > 0 ? failed + 1 : undefined;
    default:
      return failed > 0 ? failed : undefined;
  }
}

/** A task's run time: its last try's start to its end, or to `now` while it runs; undefined when not known. */
export function durationOf(node: UiNode, now: number): number | undefined {
  if (node.startedAt === undefined) return undefined;
  if (node.finishedAt !== undefined) return Math.max(0, node.finishedAt - node.startedAt);
  if (node.state === 'running' || node.state === 'finishing')
    return Math.max(0, now - node.startedAt);
  return undefined;
}

/** The legend's order of states: a state sorts by how far along a task is, not by its name. */
const STATE_RANK = new Map(TASK_VIEW_STATES.map((state, rank) => [state, rank]));

/** A column's sort value of a task; undefined (nothing to show) sorts last in either direction. */
function sortValue(node: UiNode, column: TaskListColumn, now: number): string | number | undefined {
  switch (column) {
    case 'task':
      return taskLabel(node);
    case 'fn':
      return node.fn === '' ? undefined : node.fn;
    case 'state':
      return STATE_RANK.get(node.state);
    case 'attempts':
      return attemptsOf(node);
    case 'worker':
      return node.worker;
    case 'start':
      return node.startedAt;
    case 'end':
      return node.finishedAt;
    case 'duration':
      return durationOf(node, now);
  }
}

/** Text compares as people read it: `load-9` before `load-10`. */
const collator = new Intl.Collator(undefined, { numeric: true });

function compareValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return collator.compare(String(a), String(b));
}

/**
 * The tasks `query` shows, in its order. Ties go by name as the server orders them (serials as
 * numbers), reversed with the rest, so the order is stable; tasks with nothing in the column come
 * last, in name order, either way.
 */
export function queryTasks(
  nodes: readonly IndexedNode[],
  query: TaskListQuery,
  now: number,
): UiNode[] {
  const text = query.text.trim().toLowerCase();
  const shown = nodes.filter(
    (entry) =>
      (query.states.size === 0 || query.states.has(entry.node.state)) &&
      (query.fn === '' || entry.node.fn === query.fn) &&
      (text === '' || entry.haystack.includes(text)),
  );
  const direction = query.descending ? -1 : 1;
  const keyed = shown.map((entry) => ({
    task: entry.node,
    value: sortValue(entry.node, query.sort, now),
  }));
  keyed.sort((a, b) => {
    if (a.value === undefined || b.value === undefined) {
      if (a.value !== b.value) return a.value === undefined ? 1 : -1;
      return byName(a.task, b.task); // tasks with nothing to show stay in name order
    } else {
      const order = compareValues(a.value, b.value);
      if (order !== 0) return order * direction;
    }
    return byName(a.task, b.task) * direction;
  });
  return keyed.map((entry) => entry.task);
}

/**
 * The next failed task after `after` in `shown` (the list's order), wrapping round; the first
 * failed one when `after` is not shown or undefined; undefined when none is shown.
 */
export function nextFailed(
  shown: readonly UiNode[],
  after: string | undefined,
): UiNode | undefined {
  const from = after === undefined ? -1 : shown.findIndex((node) => node.name === after);
  for (let step = 1; step <= shown.length; step++) {
    const node = shown[(from + step) % shown.length] as UiNode;
    if (node.state === 'failed') return node;
  }
  return undefined;
}

/** A task with the lower-case text the text filter searches: key, name, path and error message. */
export interface IndexedNode {
  readonly node: UiNode;
  readonly haystack: string;
}

function indexNode(plan: string, node: UiNode): IndexedNode {
  const haystack = [node.key ?? '', `${plan}/${node.name}`, node.error ?? '']
    .join('\n')
    .toLowerCase();
  return { node, haystack };
}

/** Every task of a plan, kept current from the page's snapshot and diffs. */
export class TaskListModel {
  private readonly nodes = new Map<string, IndexedNode>();
  private ordered: IndexedNode[] | undefined;

  constructor(private readonly plan: string) {}

  /** Replaces every task (a snapshot). */
  reset(nodes: readonly UiNode[]): void {
    this.nodes.clear();
    for (const node of nodes) this.nodes.set(node.name, indexNode(this.plan, node));
    this.ordered = undefined;
  }

  /** Applies a diff; true when a task was changed, added or removed. */
  applyDiff(diff: UiDiff): boolean {
    let touched = false;
    for (const change of diff.changed) {
      const old = this.nodes.get(change[0]);
      if (old === undefined) continue;
      this.nodes.set(change[0], indexNode(this.plan, applyChange(old.node, change)));
      touched = true;
    }
    for (const name of diff.removed) touched = this.nodes.delete(name) || touched;
    for (const node of [...diff.added, ...diff.updated]) {
      this.nodes.set(node.name, indexNode(this.plan, node));
      touched = true;
    }
    if (touched) this.ordered = undefined;
    return touched;
  }

  get size(): number {
    return this.nodes.size;
  }

  get(name: string): UiNode | undefined {
    return this.nodes.get(name)?.node;
  }

  /** Every task with its search text, in the server's order. */
  all(): readonly IndexedNode[] {
    this.ordered ??= [...this.nodes.values()].sort((a, b) => byName(a.node, b.node));
    return this.ordered;
  }

  /** The functions the plan's tasks run, sorted, each once. */
  functions(): string[] {
    const names = new Set<string>();
    for (const entry of this.nodes.values()) if (entry.node.fn !== '') names.add(entry.node.fn);
    return [...names].sort();
  }

  /** Tasks per state. */
  counts(): Map<TaskViewState, number> {
    const counts = new Map<TaskViewState, number>(TASK_VIEW_STATES.map((state) => [state, 0]));
    for (const entry of this.nodes.values())
      counts.set(entry.node.state, (counts.get(entry.node.state) ?? 0) + 1);
    return counts;
  }

  /** Whether any task is failed. */
  hasFailed(): boolean {
    for (const entry of this.nodes.values()) if (entry.node.state === 'failed') return true;
    return false;
  }
}
