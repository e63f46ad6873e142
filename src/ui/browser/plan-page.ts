/**
 * `/plan.js`: the plan page. The graph (graph-canvas.ts) and the task list (task-list.ts), switched
 * by the view tabs (view-tabs.ts), live state from the event stream (a snapshot, then diffs), the
 * headline (state, priority, progress, counts), the side panel (task-panel.ts) and the action
 * buttons (plan-actions.ts).
 */
import {
  TASK_VIEW_STATES,
  applyChange,
  byName,
  type UiDiff,
  type UiModel,
  type UiNode,
  type UiPlanStatus,
} from '../ui-wire.js';
import { showLive, subscribe } from './api.js';
import { byId, percentDone, planTaskHref, when } from './dom.js';
import { GraphCanvas } from './graph-canvas.js';
import { publishStats } from './page-stats.js';
import { PlanActions } from './plan-actions.js';
import { TaskList } from './task-list.js';
import { TaskPanel } from './task-panel.js';
import { TimelineView } from './timeline-view.js';
import { ViewTabs, withQueryParam } from './view-tabs.js';

const plan = document.body.dataset['plan'] ?? '';
const stats = publishStats(plan);
const notice = byId('notice');
const live = byId('live');
const actions = new PlanActions(plan);

const canvas = new GraphCanvas(
  {
    svg: byId<SVGSVGElement>('graph'),
    viewport: byId<SVGGElement>('viewport'),
    edges: byId<SVGGElement>('edges'),
    nodes: byId<SVGGElement>('nodes'),
    layoutInfo: byId('layout-info'),
    minimap: byId('minimap'),
    search: byId<HTMLInputElement>('graph-search'),
    searchInfo: byId('search-info'),
  },
  stats,
  (name) => select(name),
);
const panel = new TaskPanel(
  byId('panel'),
  plan,
  (name) => select(name),
  (name) => canvas.keyOf(name),
);

const taskList = new TaskList(
  {
    states: byId('list-states'),
    fn: byId<HTMLSelectElement>('list-fn'),
    text: byId<HTMLInputElement>('list-text'),
    goFailed: byId<HTMLButtonElement>('list-go-failed'),
    count: byId('list-count'),
    head: byId('list-head'),
    scroller: byId('list-scroller'),
    rows: byId('list-rows'),
    empty: byId('list-empty'),
  },
  plan,
  stats,
  (name) => select(name),
);

const timeline = new TimelineView(byId('timeline-view'), plan, stats, (name) => select(name));

/** The graph is fitted to its box the first time it is shown: hidden, it has no size to fit to. */
let graphShown = false;
const views = new ViewTabs(
  byId('plan-views'),
  { graph: byId('canvas'), list: byId('list-view'), timeline: byId('timeline-view') },
  (view) => {
    taskList.setVisible(view === 'list');
    if (view === 'timeline') timeline.show();
    else if (timeline.visible) timeline.hide();
    if (view !== 'graph' || graphShown) return;
    graphShown = true;
    canvas.fit();
  },
);

/** Selects a task in every view and opens it in the panel; the address names it, so a link or a reload reopens it. */
function select(name: string): void {
  canvas.select(name);
  taskList.select(name);
  panel.show(name);
  history.replaceState(history.state, '', withQueryParam(location.href, 'task', name));
}

let shown: UiPlanStatus | undefined;

/** A sub-plan task's child plan links back to that task, on its plan's page. */
function showParentTask(task: string | undefined): void {
  const link = byId<HTMLAnchorElement>('plan-parent');
  link.hidden = task === undefined;
  if (task === undefined) return;
  const slash = task.lastIndexOf('/');
  link.textContent = `sub-plan of ${task.slice(slash + 1)} in ${task.slice(0, slash)}`;
  link.href = planTaskHref(task.slice(0, slash), task.slice(slash + 1));
}

/** The task a link asked for (`/plan?path=…&task=task-N`), selected once the graph has it. */
let requestedTask = new URLSearchParams(window.location.search).get('task') ?? undefined;

/** The headline: state (with when and why it was paused or cancelled), priority, progress, counts per state. */
function setStatus(status: UiPlanStatus): void {
  // Why the selected task waits changes with the plan (a pause, a cancel, an input done): read it again.
  if (
    shown !== undefined &&
    (status.state !== shown.state ||
      status.done !== shown.done ||
      status.counts.running !== shown.counts.running)
  )
    panel.refresh();
  shown = status;
  byId('plan-name').textContent = status.name ?? '';
  showParentTask(status.subPlanOf);
  const badge = byId('plan-state');
  badge.textContent = status.state;
  badge.dataset['state'] = status.state;
  byId('plan-priority').textContent = `priority ${status.priority}`;
  const control = status.control;
  byId('plan-control').textContent =
    control === undefined
      ? ''
      : `${control.state} ${when(control.at) ?? ''}${control.reason !== undefined ? `: ${control.reason}` : ''}`;
  byId('progress-fill').style.width = `${percentDone(status.done, status.total, status.state)}%`;
  byId('progress-text').textContent = status.historyKept
    ? `${status.done}/${status.total} done`
    : `${status.done} finished seen, ${status.total - status.done} left (no history kept)`;
  for (const state of TASK_VIEW_STATES)
    byId(`count-${state}`).textContent = String(status.counts[state]);
  actions.update(status);
}

/**
 * Drawing thousands of graph nodes takes a while: when the page shows another view, the graph is
 * drawn after that view's next frame, from the tasks as the list holds them then.
 */
let graphDeferred = false;

function drawGraph(nodes: readonly UiNode[]): void {
  if (views.current === 'graph') {
    canvas.show(nodes);
    return;
  }
  if (graphDeferred) return;
  graphDeferred = true;
  requestAnimationFrame(() =>
    setTimeout(() => {
      graphDeferred = false;
      canvas.show(taskList.nodes());
    }, 0),
  );
}

function onSnapshot(model: UiModel): void {
  stats.snapshotMs ??= performance.now();
  stats.snapshots++;
  setStatus(model.status);
  taskList.show(model.nodes);
  known = new Map(model.nodes.map((node) => [node.name, node]));
  timeline.setNodes(model.nodes);
  drawGraph(model.nodes);
  panel.refresh();
  if (requestedTask !== undefined && model.nodes.some((node) => node.name === requestedTask)) {
    select(requestedTask);
    canvas.focus(requestedTask);
  }
  requestedTask = undefined;
}

/** The plan's tasks as the page knows them, whatever view is shown (the graph's drawing may wait): what the timeline lays out. */
let known = new Map<string, UiNode>();

/** Takes a diff into `known`; true when a task changed, came or went. */
function learn(diff: UiDiff): boolean {
  for (const change of diff.changed) {
    const node = known.get(change[0]);
    if (node !== undefined) known.set(change[0], applyChange(node, change));
  }
  for (const node of [...diff.added, ...diff.updated]) known.set(node.name, node);
  for (const name of diff.removed) known.delete(name);
  return (
    diff.changed.length > 0 ||
    diff.added.length > 0 ||
    diff.updated.length > 0 ||
    diff.removed.length > 0
  );
}

function onDiff(diff: UiDiff): void {
  stats.diffs++;
  setStatus(diff.status);
  taskList.applyDiff(diff);
  if (learn(diff)) timeline.setNodes([...known.values()].sort(byName));
  if (graphDeferred) {
    // The deferred drawing takes the tasks as they are then.
    if (diff.changed.some((change) => change[0] === panel.task) || diff.added.length > 0)
      panel.refresh();
    return;
  }
  let touchedSelected = false;
  for (const change of diff.changed)
    if (canvas.recolour(change) && change[0] === panel.task) touchedSelected = true;
  if (diff.added.length > 0 || diff.updated.length > 0 || diff.removed.length > 0) {
    const list = new Map<string, UiNode>(canvas.data().map((node) => [node.name, node]));
    for (const name of diff.removed) list.delete(name);
    for (const node of [...diff.added, ...diff.updated]) list.set(node.name, node);
    canvas.show([...list.values()].sort(byName));
    touchedSelected = true;
  }
  if (touchedSelected) panel.refresh();
}

byId('fit').addEventListener('click', () => canvas.fit());
byId('zoom-in').addEventListener('click', () => canvas.zoomBy(1.25));
byId('zoom-out').addEventListener('click', () => canvas.zoomBy(0.8));

const source = subscribe(
  `/api/events?path=${encodeURIComponent(plan)}`,
  {
    snapshot: (data) => {
      notice.textContent = '';
      onSnapshot(data as UiModel);
    },
    diff: (data) => {
      notice.textContent = '';
      onDiff(data as UiDiff);
    },
    problem: (data) => {
      notice.textContent = `ZooKeeper: ${(data as { message: string }).message}`;
    },
    gone: () => {
      source.close();
      actions.setOffline(true);
      const badge = byId('plan-state');
      badge.textContent = 'deleted';
      badge.dataset['state'] = 'gone';
      notice.textContent = 'This plan no longer exists.';
      showLive(live, false, 'plan deleted');
    },
  },
  live,
  (up) => actions.setOffline(!up),
);
