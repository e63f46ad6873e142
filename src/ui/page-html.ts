/**
 * The web view's HTML pages. The only markup built on the server; every value in it is escaped
 * with `escapeHtml`.
 */
import { planViewTabsHtml, taskListHtml, timelineSectionHtml } from './plan-views-html.js';
import { escapeHtml } from './ui-model.js';
import { TASK_VIEW_STATES } from './ui-wire.js';

/** The application's pages, in the navigation bar's order: the key marks the current one. */
const NAV_PAGES = [
  { key: 'plans', href: '/', label: 'Plans' },
  { key: 'workflows', href: '/workflows', label: 'Workflows' },
  { key: 'cluster', href: '/cluster', label: 'Cluster' },
  { key: 'schedules', href: '/schedules', label: 'Schedules' },
  { key: 'jobs', href: '/jobs', label: 'Jobs' },
] as const;

/** A page of the navigation bar. */
export type NavPage = (typeof NAV_PAGES)[number]['key'];

/**
 * The navigation bar on top of every page: the pages, the current one marked, and the time-zone
 * selector (filled and remembered by /nav.js, nav-bar.ts).
 */
function navBar(current: NavPage, parent: string): string {
  const links = NAV_PAGES.map(
    ({ key, href, label }) =>
      `<a href="${href}" data-nav="${key}"${key === current ? ' aria-current="page"' : ''}>${label}</a>`,
  ).join('');
  return (
    `<nav id="app-nav" class="app-nav"><span class="brand">zk-plan</span><span class="nav-parent mono" title="the plans' parent this view serves">${escapeHtml(parent)}</span>${links}` +
    `<span class="nav-spacer"></span><label class="zone">Times in <select id="time-zone" aria-label="time zone"></select></label></nav>`
  );
}

function pageShell(
  title: string,
  bodyAttributes: string,
  nav: { readonly current: NavPage; readonly parent: string },
  body: string,
  scripts: readonly string[],
): string {
  return (
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<title>${escapeHtml(title)}</title>\n<link rel="stylesheet" href="/ui.css">\n</head>\n<body ${bodyAttributes}>\n${navBar(nav.current, nav.parent)}\n${body}\n` +
    ['/nav.js', ...scripts].map((src) => `<script src="${escapeHtml(src)}"></script>`).join('\n') +
    `\n</body>\n</html>\n`
  );
}

/** A list page's header: its title, what it shows, and the live indicator. */
function listHeader(title: string, crumb: string): string {
  return `<header><h1>${escapeHtml(title)}</h1><span class="crumb">${escapeHtml(crumb)}</span><span id="live" class="live">connecting…</span></header>\n`;
}

/** A table with its head and an empty note beneath, inside the page's padded main column. */
function table(id: string, heads: readonly string[], className = 'cluster'): string {
  return (
    `<table class="${className}"><thead><tr>${heads.map((head) => `<th>${escapeHtml(head)}</th>`).join('')}</tr></thead>` +
    `<tbody id="${id}"></tbody></table><p id="${id}-empty" class="empty"></p>`
  );
}

/** The plans page: every plan under the parent, with its name, state, times and progress. */
export function plansPageHtml(parent: string): string {
  const body =
    listHeader('Plans', `under ${parent}`) +
    `<main class="page">` +
    `<table class="plans"><thead><tr><th>Plan</th><th>Name</th><th>State</th><th>Started</th><th>Finished</th><th>Duration</th><th>Progress</th><th>Failed</th><th>Tasks now</th><th>Priority</th></tr></thead>` +
    `<tbody id="plans"></tbody></table>\n<p id="empty" class="empty"></p></main>`;
  return pageShell(
    `Plans · ${parent} · zk-plan`,
    `class="plans-page list-page" data-parent="${escapeHtml(parent)}"`,
    { current: 'plans', parent },
    body,
    ['/plans.js'],
  );
}

/** The workflows page: plans grouped by name, each workflow's runs newest first (`?name=` opens one). */
export function workflowsPageHtml(parent: string): string {
  const states = ['all', 'running', 'completed', 'failed', 'cancelled', 'paused', 'building'];
  const body =
    listHeader('Workflows', `runs under ${parent}, grouped by name`) +
    `<main class="page">` +
    `<p id="schedules-note" class="empty"></p><section><h2>Workflows</h2>${table('workflows', ['Workflow', 'Last run', 'Last state', 'Runs', 'Success rate', 'Failed runs', 'Running', 'Schedule'])}</section>` +
    `<section id="workflow" hidden><h2 id="workflow-title"></h2>` +
    `<div id="workflow-schedule" class="schedule-box" hidden></div>` +
    `<form id="run-filter" class="filters">` +
    `<label>State <select id="filter-state">${states.map((state) => `<option value="${state}">${state}</option>`).join('')}</select></label>` +
    `<label>Started from <input id="filter-from" type="date"></label><label>to <input id="filter-to" type="date"></label>` +
    `<button id="filter-clear" type="button">Clear</button><span id="filter-note" class="meta"></span></form>` +
    table('runs', ['Run', 'State', 'Started', 'Finished', 'Duration', 'Failed tasks', 'Progress']) +
    `</section></main>`;
  return pageShell(
    `Workflows · ${parent} · zk-plan`,
    `class="workflows-page list-page" data-parent="${escapeHtml(parent)}"`,
    { current: 'workflows', parent },
    body,
    ['/workflows.js'],
  );
}

/** The cluster page: the live worker processes and the concurrency limits. */
export function clusterPageHtml(parent: string): string {
  const body =
    listHeader('Cluster', `workers and limits of ${parent}`) +
    `<main class="page"><p id="cluster-note" class="empty"></p>` +
    `<section><h2>Live workers</h2>${table('workers', ['Worker', 'Host', 'Busy loops', 'Functions', 'Version', 'Started', 'Last seen'])}</section>` +
    `<section><h2>Concurrency limits</h2>${table('limits', ['Key', 'Held', 'Held by'])}</section></main>`;
  return pageShell(
    `Cluster · ${parent} · zk-plan`,
    `class="cluster-page list-page" data-parent="${escapeHtml(parent)}"`,
    { current: 'cluster', parent },
    body,
    ['/cluster.js'],
  );
}

/** The schedules page: each schedule's timing, next fire times, recent runs and backfills (`?name=` marks one). */
export function schedulesPageHtml(parent: string): string {
  const body =
    listHeader('Schedules', `that make plans under ${parent}`) +
    `<main class="page"><p id="cluster-note" class="empty"></p>` +
    `<section>${table('schedules', ['Schedule', 'Cron', 'Next', 'Recent runs', 'Backfills'])}</section></main>`;
  return pageShell(
    `Schedules · ${parent} · zk-plan`,
    `class="schedules-page list-page" data-parent="${escapeHtml(parent)}"`,
    { current: 'schedules', parent },
    body,
    ['/schedules.js'],
  );
}

/** The jobs page: jobs, their newest runs, the job workers and each one's share (`?name=` marks a job). */
export function jobsPageHtml(parent: string): string {
  const body =
    listHeader('Jobs', 'long-running jobs and their workers') +
    `<main class="page"><p id="cluster-note" class="empty"></p>` +
    `<section><h2>Jobs</h2>${table('jobs', ['Job', 'Function', 'Mode', 'Strategy', 'State', 'Assigned', 'Unassigned', 'Runs'])}</section>` +
    `<section><h2>Job runs</h2>${table('job-runs', ['Job', 'Started', 'State', 'Cause', 'Try', 'Took', 'Worker', 'Items (fencing token)'])}</section>` +
    `<section><h2>Job workers</h2>${table('workers', ['Worker', 'Host', 'Items', 'Job functions', 'Version', 'Started', 'Last seen'])}</section>` +
    `<section><h2>Job assignment</h2><table class="cluster"><thead><tr><th>Job</th><th>Worker</th><th>Items (fencing token)</th></tr></thead><tbody id="job-assignment"></tbody></table></section></main>`;
  return pageShell(
    'Jobs · zk-plan',
    `class="jobs-page list-page" data-parent="${escapeHtml(parent)}"`,
    { current: 'jobs', parent },
    body,
    ['/jobs.js'],
  );
}

/** The plan page; `actions`: the view accepts pause, resume, cancel and retry (with its token), so the page offers them. */
export function planPageHtml(plan: string, actions = false): string {
  const legend = TASK_VIEW_STATES.map(
    (state) =>
      `<span class="item" data-state="${state}"><i></i>${state} <b id="count-${state}">0</b></span>`,
  ).join('');
  const body =
    `<header><a href="/">Plans</a><span class="crumb">›</span><h1>${escapeHtml(plan)}</h1><span id="plan-name" class="plan-name"></span><a id="plan-parent" class="meta" hidden></a>` +
    `<span id="plan-state" class="badge">…</span><span id="plan-priority" class="meta"></span><span id="plan-control" class="meta"></span>` +
    `<div class="progress"><div class="bar"><div id="progress-fill"></div></div><span id="progress-text"></span></div>` +
    `<span id="live" class="live">connecting…</span></header>\n` +
    `<div id="actions" class="actions" hidden>` +
    `<button id="action-pause" type="button" disabled>Pause</button><button id="action-resume" type="button" disabled>Resume</button>` +
    `<input id="cancel-reason" type="text" maxlength="500" placeholder="reason for cancelling (optional)" disabled>` +
    `<button id="action-cancel" type="button" disabled>Cancel</button><button id="action-retry" type="button" disabled>Retry failed</button>` +
    `<span id="action-note"></span></div>\n` +
    `<div id="legend" class="legend">${legend}</div>\n` +
    `${planViewTabsHtml()}\n` +
    `<main class="plan"><section id="canvas">` +
    `<svg id="graph" xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#8a94a6"></path></marker></defs>` +
    `<g id="viewport" visibility="hidden"><g id="edges"></g><g id="nodes"></g></g></svg>` +
    `<div id="notice"></div>` +
    `<div id="minimap" hidden><canvas width="200" height="130"></canvas><div class="minimap-view"></div></div>` +
    `<div class="toolbar"><button id="fit" type="button">Fit</button><button id="zoom-in" type="button">+</button><button id="zoom-out" type="button">−</button>` +
    `<input id="graph-search" type="search" maxlength="200" placeholder="Find a task: key, #serial or function" aria-label="Find a task by key, serial, name or function"><span id="search-info"></span>` +
    `<span id="layout-info"></span></div>` +
    `</section>\n${taskListHtml()}${timelineSectionHtml()}\n<aside id="panel"><p class="hint">Click a task to see its function, params, inputs, and its result or error.</p></aside></main>`;
  return pageShell(
    `${plan.slice(plan.lastIndexOf('/') + 1)} · zk-plan`,
    `class="plan-page" data-plan="${escapeHtml(plan)}" data-actions="${String(actions)}"`,
    { current: 'plans', parent: plan.slice(0, plan.lastIndexOf('/')) || '/' },
    body,
    ['/plan.js'],
  );
}
