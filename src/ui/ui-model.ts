/**
 * Pure helpers of the web view: HTML escaping, JSON-safe values, the compact graph model the
 * page draws (built from a PlanView), the diffs pushed on the event stream, and the checks that
 * keep requests inside the served parent.
 */
import { inspect } from 'node:util';
import { countPlanTasks } from '../plan/plan-progress.js';
import type { PlanControlRecord } from '../control/control-record.js';
import type { PlanSummary, PlanView, TaskView } from '../plan/plan-view.js';
import type { TaskViewState } from '../plan/plan-progress.js';
import {
  TASK_PREFIX,
  childPath,
  hasSequentialName,
  isZkPlanPlanName,
  nameOf,
  parentOf,
} from '../zk/layout.js';
import {
  TASK_VIEW_STATES,
  byName,
  type UiChange,
  type UiControl,
  type UiDiff,
  type UiModel,
  type UiNode,
  type UiPlanRow,
  type UiPlanStatus,
  type UiTaskDetail,
} from './ui-wire.js';

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

/**
 * A value that JSON.stringify renders without throwing or losing it silently: Dates as ISO text,
 * BigInts as `123n`, Maps and Sets as tagged arrays, undefined as null, errors as name and
 * message, cycles and depth beyond `maxDepth` as markers. Params and results are superjson
 * values, so they may hold any of these.
 */
export function toJsonSafe(value: unknown, maxDepth = 12): unknown {
  const seen = new WeakSet<object>();
  const convert = (item: unknown, depth: number): unknown => {
    switch (typeof item) {
      case 'bigint':
        return `${item}n`;
      case 'undefined':
        return null;
      case 'number':
        return Number.isFinite(item) ? item : String(item);
      case 'function':
        return `[function ${item.name || 'anonymous'}]`;
      case 'symbol':
        return item.toString();
      case 'object':
        break;
      default:
        return item;
    }
    if (item === null) return null;
    if (item instanceof Date)
      return Number.isNaN(item.getTime()) ? 'Invalid Date' : item.toISOString();
    if (item instanceof RegExp || item instanceof URL) return item.toString();
    if (seen.has(item)) return '[circular]';
    if (depth >= maxDepth) return '[…]';
    seen.add(item);
    try {
      if (item instanceof Error) return { name: item.name, message: item.message };
      if (item instanceof Map)
        return {
          $map: [...item].map(([key, entry]) => [
            convert(key, depth + 1),
            convert(entry, depth + 1),
          ]),
        };
      if (item instanceof Set) return { $set: [...item].map((entry) => convert(entry, depth + 1)) };
      if (Array.isArray(item)) return item.map((entry) => convert(entry, depth + 1));
      const result: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(item)) result[key] = convert(entry, depth + 1);
      return result;
    } finally {
      seen.delete(item);
    }
  };
  return convert(value, 0);
}

/** JSON text of any value (see toJsonSafe). */
export function stringifySafe(value: unknown): string {
  return JSON.stringify(toJsonSafe(value));
}

/** A value as readable text for the side panel (Node's inspect, bounded so a huge result cannot flood the page). */
export function formatValue(value: unknown, maxChars = 20_000): string {
  const text = inspect(value, {
    depth: 6,
    maxArrayLength: 100,
    maxStringLength: 4_000,
    breakLength: 80,
    compact: 3,
    sorted: false,
    colors: false,
  });
  return text.length > maxChars
    ? `${text.slice(0, maxChars)}\n… (${text.length - maxChars} more characters)`
    : text;
}

/** The first `lines` lines of a stack trace. */
export function stackExcerpt(stack: string | undefined, lines = 10): string | undefined {
  if (stack === undefined || stack === '') return undefined;
  const all = stack.split('\n');
  return all.length <= lines
    ? stack
    : `${all.slice(0, lines).join('\n')}\n    … ${all.length - lines} more lines`;
}

// ---------------------------------------------------------------------------------------------
// Paths

/** True when `path` is a plan directly under `parent` (`<parent>/plan-N`, or a named plan such as a schedule's): the only plans the view serves. */
export function isPlanUnder(parent: string, path: string): boolean {
  return (
    typeof path === 'string' &&
    isZkPlanPlanName(nameOf(path)) &&
    path === childPath(parent, nameOf(path))
  );
}

/** True when `path` is a task of a plan under `parent` (`<parent>/plan-N/task-N`). */
export function isTaskUnder(parent: string, path: string): boolean {
  return (
    typeof path === 'string' &&
    hasSequentialName(nameOf(path), TASK_PREFIX) &&
    isPlanUnder(parent, parentOf(path)) &&
    path === childPath(parentOf(path), nameOf(path))
  );
}

// ---------------------------------------------------------------------------------------------
// The graph model pushed to the page

function controlOf(record: PlanControlRecord): UiControl {
  return {
    state: record.state,
    ...(record.reason !== undefined ? { reason: record.reason } : {}),
    at: iso(record.at) ?? '',
  };
}

function countStates(nodes: readonly UiNode[]): Record<TaskViewState, number> {
  const counts = Object.fromEntries(TASK_VIEW_STATES.map((state) => [state, 0])) as Record<
    TaskViewState,
    number
  >;
  for (const node of nodes) counts[node.state] += 1;
  return counts;
}

/** Distinct names, in order of first appearance. */
function distinct(names: readonly string[]): string[] {
  return [...new Set(names)];
}

/**
 * A task as read now, reconciled with what the page was sent before. A read of a plan is not
 * atomic: it can catch a task half-deleted (no definition, no children: function `?`, state
 * `building`) or a producer in neither the live tasks nor the history (an input missing), or in
 * both (an input listed twice). What is fixed once a task is built is kept: its function, its
 * inputs (they only grow while it is built, so the union is taken), and it never goes back to
 * `building`.
 */
function reconcile(fresh: UiNode, old: UiNode | undefined): UiNode {
  if (old === undefined) return fresh;
  const fn = fresh.fn === '?' && old.fn !== '' ? old.fn : fresh.fn;
  const inputs = distinct([...old.inputs, ...fresh.inputs]);
  const state = fresh.state === 'building' && old.state !== 'building' ? old.state : fresh.state;
  // A key never changes once known; a read that caught the task half-deleted (no definition) does not lose it.
  const key = fresh.key ?? old.key;
  // A read that caught the task half-deleted keeps the old state: and the run that goes with it.
  const run = state === fresh.state ? runOf(fresh) : runOf(old);
  return {
    ...run,
    name: fresh.name,
    ...(key !== undefined ? { key } : {}),
    state,
    fn,
    inputs: inputs.length === old.inputs.length ? old.inputs : inputs,
  };
}

/** The longest error message a node carries to the page (the panel reads the whole failure). */
const NODE_ERROR_CHARS = 300;
/** The longest worker id a node carries (a worker id is a host, a pid and a loop; anything longer was not written by a worker). */
const NODE_WORKER_CHARS = 200;

/** A node's run: who ran it, when, failed tries, its error; only the fields it has. */
function runOf(node: UiNode): Partial<UiNode> {
  return {
    ...(node.worker !== undefined ? { worker: node.worker } : {}),
    ...(node.startedAt !== undefined ? { startedAt: node.startedAt } : {}),
    ...(node.finishedAt !== undefined ? { finishedAt: node.finishedAt } : {}),
    ...(node.failedTries !== undefined ? { failedTries: node.failedTries } : {}),
    ...(node.error !== undefined ? { error: node.error } : {}),
  };
}

/** Who ran a task and when, as its view tells (the owner's claim while it runs). */
function taskRun(task: TaskView): Partial<UiNode> {
  const worker = task.workerId ?? task.owner?.workerId;
  const startedAt = task.startedAt ?? task.owner?.claimedAt;
  const failedTries = task.failedTries ?? task.attempts?.failures;
  const error = task.failure?.message ?? task.attempts?.lastError;
  return {
    ...(worker !== undefined ? { worker: worker.slice(0, NODE_WORKER_CHARS) } : {}),
    ...(startedAt !== undefined ? { startedAt: startedAt.getTime() } : {}),
    ...(task.finishedAt !== undefined ? { finishedAt: task.finishedAt.getTime() } : {}),
    ...(failedTries !== undefined && failedTries > 0 ? { failedTries } : {}),
    ...(error !== undefined && error !== '' ? { error: error.slice(0, NODE_ERROR_CHARS) } : {}),
  };
}

/**
 * The graph the page draws; inputs are distinct names (an input used twice is one edge).
 * Inputs that name a task the view does not hold (finished in a plan without history) become
 * `gone` nodes shown as done. With `previous` (the model pushed last), a task that vanished since
 * is kept as a `gone` node shown as done (as `cancelled`, in its last state, once the plan is
 * cancelled: control.cancel deletes unfinished tasks), so the drawing does not shrink as a plan without
 * history progresses, nor flicker when a read falls between a task's deletion and its history
 * record; and what is fixed once a task is built is kept (see reconcile).
 */
export function buildModel(view: PlanView, previous?: UiModel): UiModel {
  const before = new Map((previous?.nodes ?? []).map((node) => [node.name, node]));
  const nodes = new Map<string, UiNode>();
  for (const task of view.tasks) {
    const fresh: UiNode = {
      name: task.name,
      ...(task.key !== undefined ? { key: task.key } : {}),
      state: task.state,
      fn: task.fn,
      ...taskRun(task),
      // A task that handed over is drawn fed by its continuation, whose result becomes its own.
      inputs: distinct(
        [...task.inputs, ...(task.continuedBy === undefined ? [] : [task.continuedBy])].map(
          (input) => nameOf(input),
        ),
      ),
    };
    nodes.set(task.name, reconcile(fresh, before.get(task.name)));
  }
  // A cancel deletes the unfinished tasks of a plan without history: they keep their last state, marked cancelled, and are not counted done.
  const cancelled = view.status.state === 'cancelled';
  for (const node of before.values()) {
    if (nodes.has(node.name)) continue;
    const unfinished = cancelled && node.state !== 'done';
    const key = node.key !== undefined ? { key: node.key } : {};
    nodes.set(
      node.name,
      unfinished
        ? { ...node, cancelled: true }
        : {
            ...runOf(node),
            name: node.name,
            ...key,
            state: 'done',
            fn: node.fn,
            inputs: node.inputs,
            gone: true,
          },
    );
  }
  for (const node of [...nodes.values()]) {
    for (const input of node.inputs) {
      if (!nodes.has(input))
        nodes.set(input, { name: input, state: 'done', fn: '', inputs: [], gone: true });
    }
  }
  const ordered = [...nodes.values()].sort(byName);
  // Counted as the API counts (each task once), over what this view knows: gone nodes are done.
  const { done, total } = countPlanTasks(
    ordered.map((node) => ({ task: node.name, state: node.state })),
  );
  return {
    plan: view.plan,
    status: {
      plan: view.plan,
      ...(view.status.name !== undefined ? { name: view.status.name } : {}),
      ...(view.status.subPlanOf !== undefined ? { subPlanOf: view.status.subPlanOf } : {}),
      state: view.status.state,
      priority: view.status.priority,
      ...(view.status.control !== undefined ? { control: controlOf(view.status.control) } : {}),
      done,
      total,
      historyKept: view.historyKept,
      counts: countStates(ordered),
    },
    nodes: ordered,
  };
}

function sameInputs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((input, index) => input === b[index]);
}

/** What changed from `previous` to `next`. */
export function diffModels(previous: UiModel, next: UiModel): UiDiff {
  const before = new Map(previous.nodes.map((node) => [node.name, node]));
  const changed: UiChange[] = [];
  const added: UiNode[] = [];
  const updated: UiNode[] = [];
  for (const node of next.nodes) {
    const old = before.get(node.name);
    before.delete(node.name);
    if (old === undefined) added.push(node);
    else if (!sameInputs(old.inputs, node.inputs)) updated.push(node);
    else if (
      old.state !== node.state ||
      old.gone !== node.gone ||
      old.fn !== node.fn ||
      old.cancelled !== node.cancelled ||
      old.key !== node.key ||
      old.worker !== node.worker ||
      old.startedAt !== node.startedAt ||
      old.finishedAt !== node.finishedAt ||
      old.failedTries !== node.failedTries ||
      old.error !== node.error
    )
      changed.push([
        node.name,
        node.state,
        node.gone === true,
        node.fn,
        node.cancelled === true,
        node.key ?? '',
        node.worker ?? '',
        node.startedAt ?? 0,
        node.finishedAt ?? 0,
        node.failedTries ?? 0,
        node.error ?? '',
      ]);
  }
  return { status: next.status, changed, added, updated, removed: [...before.keys()] };
}

/** True when applying the diff changes nothing the page shows. */
export function isEmptyDiff(diff: UiDiff, previous: UiPlanStatus): boolean {
  return (
    diff.changed.length === 0 &&
    diff.added.length === 0 &&
    diff.updated.length === 0 &&
    diff.removed.length === 0 &&
    diff.status.state === previous.state &&
    diff.status.name === previous.name &&
    diff.status.priority === previous.priority &&
    diff.status.control?.reason === previous.control?.reason &&
    diff.status.done === previous.done &&
    diff.status.total === previous.total
  );
}

/** A plans-page row from a summary; `historyKept` (else the summary's own) tells whether `done` counts every finished task. */
export function planRow(
  summary: PlanSummary,
  historyKept = summary.historyKept === true,
): UiPlanRow {
  const { counts } = summary.status;
  return {
    plan: summary.plan,
    name: nameOf(summary.plan),
    ...(summary.status.name !== undefined ? { planName: summary.status.name } : {}),
    state: summary.status.state,
    priority: summary.status.priority,
    done: counts.done,
    total: counts.total,
    historyKept,
    running: counts.running + counts.finishing,
    failed: counts.failed,
    blocked: counts.blocked,
    waiting: counts.waiting + counts.runnable + counts.building,
    ...(summary.createdAt !== undefined ? { createdAt: summary.createdAt.getTime() } : {}),
    ...(summary.finishedAt !== undefined ? { finishedAt: summary.finishedAt.getTime() } : {}),
    ...(summary.status.subPlanOf !== undefined ? { subPlanOf: summary.status.subPlanOf } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// The side panel

function iso(date: Date | string | undefined): string | undefined {
  if (date === undefined) return undefined;
  if (typeof date === 'string') return date;
  return Number.isNaN(date.getTime()) ? 'Invalid Date' : date.toISOString();
}

/** The panel's view of a task. */
export function taskDetail(view: TaskView): UiTaskDetail {
  const failure = view.failure;
  const stack = stackExcerpt(failure?.stack);
  return {
    task: view.task,
    name: view.name,
    ...(view.key !== undefined ? { key: view.key } : {}),
    plan: parentOf(view.task),
    state: view.state,
    gone: false,
    fn: view.fn,
    params: formatValue(view.params),
    inputs: view.inputs,
    pendingInputs: view.pendingInputs,
    ...(view.continuedBy !== undefined ? { continuedBy: view.continuedBy } : {}),
    ...(view.subPlan !== undefined ? { subPlan: view.subPlan } : {}),
    ...(view.skipped !== undefined ? { skipped: view.skipped } : {}),
    ...(view.trigger !== undefined ? { trigger: view.trigger } : {}),
    ...(view.waiting !== undefined
      ? {
          waiting: {
            reason: view.waiting.reason,
            checks: view.waiting.checks,
            nextCheckAt: iso(view.waiting.nextCheckAt) ?? '',
          },
        }
      : {}),
    keepResult: view.keepResult,
    ...(view.priority !== undefined ? { priority: view.priority } : {}),
    ...(view.concurrencyKey !== undefined ? { concurrencyKey: view.concurrencyKey } : {}),
    ...(view.owner
      ? { owner: { workerId: view.owner.workerId, claimedAt: iso(view.owner.claimedAt) ?? '' } }
      : {}),
    ...(view.attempts
      ? {
          attempts: {
            failures: view.attempts.failures,
            nextTryAt: iso(view.attempts.nextTryAt) ?? '',
            lastError: view.attempts.lastError,
          },
        }
      : {}),
    ...(view.maxAttempts !== undefined ? { maxAttempts: view.maxAttempts } : {}),
    ...(failure
      ? {
          failure: {
            type: String(failure.type),
            message: String(failure.message),
            code: String(failure.code),
            ...(stack !== undefined ? { stack } : {}),
            retryable: failure.retryable === true,
            attempts: Number(failure.attempts),
            workerId: String(failure.workerId),
            at: iso(failure.at) ?? '',
          },
        }
      : {}),
    ...(view.blockedReason !== undefined ? { blockedReason: view.blockedReason } : {}),
    ...(view.startedAt ? { startedAt: iso(view.startedAt) } : {}),
    ...(view.finishedAt ? { finishedAt: iso(view.finishedAt) } : {}),
    ...(view.durationMs !== undefined ? { durationMs: view.durationMs } : {}),
    ...(view.workerId !== undefined ? { workerId: view.workerId } : {}),
    ...(view.cancelledAt ? { cancelledAt: iso(view.cancelledAt) } : {}),
    ...(view.was !== undefined ? { was: view.was } : {}),
    ...(view.omitted ? { omitted: true as const } : {}),
  };
}

/** The panel's view of a task whose node is gone and that its plan keeps no record of (created with { history: false }): done, or deleted by a cancel. */
export function goneTaskDetail(
  task: string,
  reason: 'finished' | 'cancelled' = 'finished',
  key?: string,
): UiTaskDetail {
  return {
    goneReason: reason,
    task,
    name: nameOf(task),
    ...(key !== undefined ? { key } : {}),
    plan: parentOf(task),
    state: reason === 'cancelled' ? 'cancelled' : 'done',
    gone: true,
    fn: '',
    params: '',
    inputs: [],
    pendingInputs: 0,
    keepResult: false,
  };
}
