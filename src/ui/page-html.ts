/**
 * The web view's HTML pages. The only markup built on the server; every value in it is escaped
 * with `escapeHtml`.
 */
import { escapeHtml } from './ui-model.js';
import { TASK_VIEW_STATES } from './ui-wire.js';

function pageShell(
  title: string,
  bodyAttributes: string,
  body: string,
  scripts: readonly string[],
): string {
  return (
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<title>${escapeHtml(title)}</title>\n<link rel="stylesheet" href="/ui.css">\n</head>\n<body ${bodyAttributes}>\n${body}\n` +
    scripts.map((src) => `<script src="${escapeHtml(src)}"></script>`).join('\n') +
    `\n</body>\n</html>\n`
  );
}

/** The plans page. */
export function plansPageHtml(parent: string): string {
  const body =
    `<header><h1>${escapeHtml(parent)}</h1><span class="crumb">zk-plan · plans</span><span id="live" class="live">connecting…</span></header>\n` +
    `<table class="plans"><thead><tr><th>Plan</th><th>Name</th><th>State</th><th>Priority</th><th>Progress</th><th>Running</th><th>Waiting</th><th>Failed</th><th>Blocked</th></tr></thead>` +
    `<tbody id="plans"></tbody></table>\n<p id="empty" class="empty"></p>\n` +
    `<section class="cluster"><p id="cluster-note" class="empty"></p>` +
    `<h2>Live workers</h2><table class="cluster"><thead><tr><th>Worker</th><th>Host</th><th>Busy loops</th><th>Functions</th><th>Version</th><th>Started</th><th>Last seen</th></tr></thead>` +
    `<tbody id="workers"></tbody></table><p id="workers-empty" class="empty"></p>` +
    `<h2>Concurrency limits</h2><table class="cluster"><thead><tr><th>Key</th><th>Held</th><th>Held by</th></tr></thead>` +
    `<tbody id="limits"></tbody></table><p id="limits-empty" class="empty"></p>` +
    `<h2>Schedules</h2><table class="cluster"><thead><tr><th>Schedule</th><th>Cron</th><th>Next</th><th>Recent runs</th></tr></thead>` +
    `<tbody id="schedules"></tbody></table><p id="schedules-empty" class="empty"></p>` +
    `<h2>Jobs</h2><table class="cluster"><thead><tr><th>Job</th><th>Function</th><th>Mode</th><th>Strategy</th><th>State</th><th>Assigned</th><th>Unassigned</th><th>Runs</th></tr></thead>` +
    `<tbody id="jobs"></tbody></table><p id="jobs-empty" class="empty"></p>` +
    `<h2>Job runs</h2><table class="cluster"><thead><tr><th>Job</th><th>Started</th><th>State</th><th>Cause</th><th>Try</th><th>Took</th><th>Worker</th><th>Items (fencing token)</th></tr></thead>` +
    `<tbody id="job-runs"></tbody></table><p id="job-runs-empty" class="empty"></p>` +
    `<h2>Job assignment</h2><table class="cluster"><thead><tr><th>Job</th><th>Worker</th><th>Items (fencing token)</th></tr></thead>` +
    `<tbody id="job-assignment"></tbody></table></section>`;
  return pageShell(
    `${parent} · zk-plan`,
    `class="plans-page" data-parent="${escapeHtml(parent)}"`,
    body,
    ['/plans.js'],
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
    `<main class="plan"><section id="canvas">` +
    `<svg id="graph" xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#8a94a6"></path></marker></defs>` +
    `<g id="viewport" visibility="hidden"><g id="edges"></g><g id="nodes"></g></g></svg>` +
    `<div id="notice"></div>` +
    `<div class="toolbar"><button id="fit" type="button">Fit</button><button id="zoom-in" type="button">+</button><button id="zoom-out" type="button">−</button><button id="timeline-toggle" type="button" aria-pressed="false">Timeline</button><span id="layout-info"></span></div>` +
    `</section>\n<aside id="panel"><p class="hint">Click a task to see its function, params, inputs, and its result or error.</p></aside></main>\n` +
    `<section id="timeline-view" class="timeline-view" hidden></section>`;
  return pageShell(
    `${plan.slice(plan.lastIndexOf('/') + 1)} · zk-plan`,
    `class="plan-page" data-plan="${escapeHtml(plan)}" data-actions="${String(actions)}"`,
    body,
    ['/plan.js'],
  );
}
