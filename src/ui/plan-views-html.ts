/**
 * The plan page's markup for its views: the tabs (graph, task list, timeline) and the task list's
 * frame, which src/ui/browser/task-list.ts fills. Static markup: no value in it comes from ZooKeeper.
 */
const VIEW_TABS: readonly (readonly [view: string, label: string])[] = [
  ['graph', 'Graph'],
  ['list', 'Tasks'],
  ['timeline', 'Timeline'],
];

/** The task list's columns (the browser's TASK_LIST_COLUMNS, in its order: test/browser/task-list.test.ts checks). */
const LIST_COLUMNS: readonly (readonly [column: string, label: string])[] = [
  ['task', 'Task'],
  ['fn', 'Function'],
  ['state', 'State'],
  ['attempts', 'Attempts'],
  ['worker', 'Worker'],
  ['start', 'Start'],
  ['end', 'End'],
  ['duration', 'Duration'],
];

/** The tabs that switch the plan page's view (src/ui/browser/view-tabs.ts). */
export function planViewTabsHtml(): string {
  const tabs = VIEW_TABS.map(
    ([view, label]) =>
      `<button type="button" role="tab" data-view="${view}" aria-controls="${view === 'graph' ? 'canvas' : `${view}-view`}">${label}</button>`,
  ).join('');
  return `<nav id="plan-views" class="views" role="tablist" aria-label="plan views">${tabs}</nav>`;
}

/** The task list's section: filters, the sortable header, the scrolling rows. */
export function taskListHtml(): string {
  const head = LIST_COLUMNS.map(
    ([column, label]) =>
      `<button type="button" role="columnheader" class="cell ${column}" data-sort="${column}">${label}</button>`,
  ).join('');
  return (
    `<section id="list-view" class="task-list" hidden>` +
    `<div class="list-tools"><span id="list-states" class="chips" role="group" aria-label="filter by state"></span>` +
    `<select id="list-fn" aria-label="filter by function"></select>` +
    `<input id="list-text" type="search" maxlength="200" placeholder="filter: key, path, error" aria-label="filter by text">` +
    `<button id="list-go-failed" type="button" disabled>Go to failed</button><span id="list-count" class="meta"></span></div>` +
    `<div class="list-table" role="table" aria-label="tasks"><div id="list-head" class="list-row head" role="row">${head}</div>` +
    `<div id="list-scroller" class="list-scroller" tabindex="0"><div id="list-rows" class="list-rows" role="rowgroup"></div>` +
    `<p id="list-empty" class="empty"></p></div></div></section>`
  );
}

/** The timeline view's container (the timeline fills it). */
export function timelineSectionHtml(): string {
  return `<section id="timeline-view" class="timeline-view" hidden></section>`;
}
