/**
 * Which tasks of a plan the graph draws as one group node: the rule, pure (no DOM), so that it is
 * unit-tested directly. A fan-out of many tasks that run the same function on the same inputs and
 * feed the same dependents is one repeated shape: drawn as a single node with its count and
 * counts per state, the members opened on demand.
 */
import { TASK_VIEW_STATES, type TaskViewState, type UiNode } from '../ui-wire.js';

/** Fewer similar tasks than this stay drawn one by one: a handful of boxes reads fine. */
export const MIN_GROUP_SIZE = 8;

/** What grouping reads of a task. */
export type GroupableNode = Pick<UiNode, 'name' | 'fn' | 'inputs'>;

/** Tasks drawn as one node; `id` is `group:` and its first member's name. */
export interface TaskGroup {
  readonly id: string;
  readonly fn: string;
  /** In the order the nodes were given (the wire's order, by name). */
  readonly members: readonly string[];
}

export interface Grouping {
  /** In the order of their first members. */
  readonly groups: readonly TaskGroup[];
  /** Task name → the id of its group, for the tasks that are in one. */
  readonly groupOf: ReadonlyMap<string, string>;
}

/**
 * Groups tasks that share all three of: function, set of input tasks, set of dependent tasks
 * (inputs that are not among `nodes` are ignored, as the drawing ignores them). A group has at
 * least `minSize` members. Because the members of a group are joined to exactly the same tasks,
 * drawing one edge per input and per dependent of the group loses nothing of the graph.
 */
export function groupTasks(
  nodes: readonly GroupableNode[],
  minSize: number = MIN_GROUP_SIZE,
): Grouping {
  const inputsOf = new Map<string, string[]>();
  const dependentsOf = new Map<string, string[]>();
  for (const node of nodes) dependentsOf.set(node.name, []);
  for (const node of nodes) {
    const inputs = [...new Set(node.inputs)].filter(
      (input) => input !== node.name && dependentsOf.has(input),
    );
    inputsOf.set(node.name, inputs);
    for (const input of inputs) dependentsOf.get(input)?.push(node.name);
  }
  const buckets = new Map<string, string[]>();
  for (const node of nodes) {
    const inputs = [...(inputsOf.get(node.name) ?? [])].sort();
    const dependents = [...(dependentsOf.get(node.name) ?? [])].sort();
    const shape = `${node.fn}\u0000${inputs.join('\u0001')}\u0000${dependents.join('\u0001')}`;
    const bucket = buckets.get(shape);
    if (bucket === undefined) buckets.set(shape, [node.name]);
    else bucket.push(node.name);
  }
  const fnOf = new Map(nodes.map((node) => [node.name, node.fn]));
  const groups: TaskGroup[] = [];
  const groupOf = new Map<string, string>();
  for (const members of buckets.values()) {
    if (members.length < Math.max(2, minSize)) continue;
    const first = members[0] as string;
    const group: TaskGroup = { id: `group:${first}`, fn: fnOf.get(first) ?? '', members };
    groups.push(group);
    for (const member of members) groupOf.set(member, group.id);
  }
  // Buckets are in first-seen order already; this keeps the order stated above explicit.
  const position = new Map(nodes.map((node, index) => [node.name, index]));
  groups.sort(
    (a, b) => (position.get(a.members[0] ?? '') ?? 0) - (position.get(b.members[0] ?? '') ?? 0),
  );
  return { groups, groupOf };
}

/** How many members are in each state (every state present, zero or more). */
export function stateCounts(
  members: readonly string[],
  nodes: ReadonlyMap<string, Pick<UiNode, 'state'>>,
): Record<TaskViewState, number> {
  const counts = Object.fromEntries(TASK_VIEW_STATES.map((state) => [state, 0])) as Record<
    TaskViewState,
    number
  >;
  for (const member of members) {
    const state = nodes.get(member)?.state;
    if (state !== undefined) counts[state]++;
  }
  return counts;
}

/** One piece of a group's stacked bar. */
export interface BarSegment {
  readonly state: TaskViewState;
  readonly x: number;
  readonly width: number;
}

/**
 * The stacked bar of a group's counts, `width` wide, states in the legend's order. Edges are
 * rounded from the running total, so the pieces meet and end exactly at `width`; a state with
 * any member gets at least one unit, so a single failed task among a thousand still shows.
 */
export function barSegments(
  counts: Readonly<Record<TaskViewState, number>>,
  width: number,
): BarSegment[] {
  const present = TASK_VIEW_STATES.filter((state) => counts[state] > 0);
  const total = present.reduce((sum, state) => sum + counts[state], 0);
  if (total === 0) return [];
  const segments: BarSegment[] = [];
  let before = 0;
  let x = 0;
  for (const [index, state] of present.entries()) {
    before += counts[state];
    const left = present.length - index - 1; // pieces still to place, each needing a unit
    const end =
      index === present.length - 1
        ? width
        : Math.min(width - left, Math.max(x + 1, Math.round((before / total) * width)));
    segments.push({ state, x, width: end - x });
    x = end;
  }
  return segments;
}

/** The biggest state of a group (the first in the legend's order on a tie): its colour on the minimap. */
export function mainState(counts: Readonly<Record<TaskViewState, number>>): TaskViewState {
  let best: TaskViewState = 'waiting';
  let most = -1;
  for (const state of TASK_VIEW_STATES) {
    if (counts[state] <= most) continue;
    best = state;
    most = counts[state];
  }
  return best;
}

/** A short summary of a group's counts: the two biggest states, then how many other tasks. */
export function countsSummary(counts: Readonly<Record<TaskViewState, number>>): string {
  const present = TASK_VIEW_STATES.filter((state) => counts[state] > 0).sort(
    (a, b) => counts[b] - counts[a],
  );
  const shown = present.slice(0, 2).map((state) => `${counts[state]} ${state}`);
  const rest = present.slice(2).reduce((sum, state) => sum + counts[state], 0);
  return rest > 0 ? `${shown.join(' · ')} · ${rest} other` : shown.join(' · ');
}
