/**
 * `/plan.js`: the plan page. The graph (graph-canvas.ts), live state from the event stream (a
 * snapshot, then diffs), the headline (state, priority, progress, counts), the side panel
 * (task-panel.ts) and the action buttons (plan-actions.ts).
 */
import {
  TASK_VIEW_STATES,
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
import { TaskPanel } from './task-panel.js';
import { TimelineView } from './timeline-view.js';

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

const timeline = new TimelineView(byId('timeline-view'), plan, stats, (name) => select(name));

function select(name: string): void {
  canvas.select(name);
  panel.show(name);
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

function onSnapshot(model: UiModel): void {
  stats.snapshotMs ??= performance.now();
  stats.snapshots++;
  setStatus(model.status);
  canvas.show(model.nodes);
  timeline.setNodes(model.nodes);
  panel.refresh();
  if (requestedTask !== undefined && model.nodes.some((node) => node.name === requestedTask))
    select(requestedTask);
  requestedTask = undefined;
}

function onDiff(diff: UiDiff): void {
  stats.diffs++;
  setStatus(diff.status);
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
  if (diff.changed.length > 0 || diff.added.length > 0 || diff.removed.length > 0)
    timeline.setNodes(canvas.data());
}

byId('fit').addEventListener('click', () => canvas.fit());
byId('zoom-in').addEventListener('click', () => canvas.zoomBy(1.25));
byId('zoom-out').addEventListener('click', () => canvas.zoomBy(0.8));
// Until the page's view switch takes it: the timeline shows under the graph, and `?view=timeline` opens it.
const timelineToggle = byId('timeline-toggle');
function toggleTimeline(on: boolean): void {
  timelineToggle.setAttribute('aria-pressed', String(on));
  if (on) timeline.show();
  else timeline.hide();
}
timelineToggle.addEventListener('click', () => toggleTimeline(!timeline.visible));
if (new URLSearchParams(window.location.search).get('view') === 'timeline') toggleTimeline(true);

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
