// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import { publishStats } from '../../src/ui/browser/page-stats.js';
import {
  DEFAULT_TASK_LIST_QUERY,
  TASK_LIST_COLUMNS,
  TaskListModel,
  attemptsOf,
  durationOf,
  nextFailed,
  queryTasks,
  type TaskListQuery,
} from '../../src/ui/browser/task-list-model.js';
import { shortDuration } from '../../src/ui/browser/task-list-format.js';
import { LIST_ROW_HEIGHT, TaskList } from '../../src/ui/browser/task-list.js';
import { ViewTabs, viewOfUrl, type PlanView } from '../../src/ui/browser/view-tabs.js';
import { planPageHtml } from '../../src/ui/page-html.js';
import type { UiChange, UiDiff, UiNode, UiPlanStatus } from '../../src/ui/ui-wire.js';

const PLAN = '/plans/plan-0000000001';
const NOW = Date.now();

const name = (serial: number): string => `task-${String(serial).padStart(10, '0')}`;

function task(serial: number, fields: Partial<UiNode> = {}): UiNode {
  return { name: name(serial), state: 'waiting', fn: 'f', inputs: [], ...fields };
}

/** A small plan with every column filled differently. */
const NODES: readonly UiNode[] = [
  task(1, {
    key: 'load-10',
    fn: 'load',
    state: 'done',
    worker: 'w-b',
    startedAt: NOW - 9_000,
    finishedAt: NOW - 8_000,
  }),
  task(2, {
    key: 'load-9',
    fn: 'load',
    state: 'failed',
    worker: 'w-a',
    startedAt: NOW - 7_000,
    finishedAt: NOW - 6_500,
    failedTries: 3,
    error: 'Connection REFUSED by db-7',
  }),
  task(3, {
    fn: 'merge',
    state: 'running',
    worker: 'w-c',
    startedAt: NOW - 60_000,
    failedTries: 1,
  }),
  task(4, { key: 'report', fn: 'report', state: 'blocked' }),
  task(5, {
    key: 'load-11',
    fn: 'load',
    state: 'failed',
    worker: 'w-a',
    startedAt: NOW - 5_000,
    finishedAt: NOW - 4_000,
    failedTries: 1,
    error: 'timeout',
  }),
  task(6, {
    key: 'load-12',
    fn: 'load',
    state: 'retrying',
    failedTries: 2,
    error: 'flaky upstream',
  }),
];

const query = (fields: Partial<TaskListQuery>): TaskListQuery => ({
  ...DEFAULT_TASK_LIST_QUERY,
  ...fields,
});

function model(nodes: readonly UiNode[] = NODES): TaskListModel {
  const made = new TaskListModel(PLAN);
  made.reset(nodes);
  return made;
}

const namesOf = (nodes: readonly UiNode[]): string[] => nodes.map((node) => node.name);
const serials = (nodes: readonly UiNode[]): number[] =>
  nodes.map((node) => Number(node.name.slice('task-'.length)));

describe('the task list’s rows', () => {
  it('count a task’s tries: all of a failed task’s, one more than the failed ones of a task that ran, the failed ones of a task that waits', () => {
    expect(NODES.map(attemptsOf)).toEqual([1, 3, 2, undefined, 1, 2]);
    expect(attemptsOf(task(7, { state: 'done' }))).toBeUndefined(); // gone without a record: not known
    expect(attemptsOf(task(7, { state: 'failed' }))).toBe(1);
  });

  it('time a task from start to end, and a running one to now', () => {
    expect(NODES.map((node) => durationOf(node, NOW))).toEqual([
      1_000,
      500,
      60_000,
      undefined,
      1_000,
      undefined,
    ]);
    expect(durationOf(NODES[2] as UiNode, NOW + 5_000)).toBe(65_000);
    expect([850, 12_340, 245_000, 7_380_000].map(shortDuration)).toEqual([
      '850 ms',
      '12.3 s',
      '4 m 05 s',
      '2 h 03 m',
    ]);
  });

  it('sort by every column, again reversed; empty values last either way; ties by name', () => {
    const all = model().all();
    const sorted = (sort: TaskListQuery['sort'], descending = false): number[] =>
      serials(queryTasks(all, query({ sort, descending }), NOW));
    // Keys as people read them (load-9 before load-10); a task without a key by its name.
    expect(sorted('task')).toEqual([2, 1, 5, 6, 4, 3]);
    expect(sorted('task', true)).toEqual([3, 4, 6, 5, 1, 2]);
    expect(sorted('fn')).toEqual([1, 2, 5, 6, 3, 4]);
    // States in the legend's order, not by name: retrying, running, done, failed, blocked.
    expect(sorted('state')).toEqual([6, 3, 1, 2, 5, 4]);
    expect(sorted('state', true)).toEqual([4, 5, 2, 1, 3, 6]);
    expect(sorted('attempts')).toEqual([1, 5, 3, 6, 2, 4]);
    expect(sorted('attempts', true)).toEqual([2, 6, 3, 5, 1, 4]);
    expect(sorted('worker')).toEqual([2, 5, 1, 3, 4, 6]);
    expect(sorted('start')).toEqual([3, 1, 2, 5, 4, 6]);
    expect(sorted('end', true)).toEqual([5, 2, 1, 3, 4, 6]);
    // A running task's duration is its time so far.
    expect(sorted('duration', true)).toEqual([3, 5, 1, 2, 4, 6]); // 5 and 1 tie: reversed too
  });

  it('filter by states, by function and by text (key, name, path, error message; any case), together', () => {
    const all = model().all();
    const shown = (fields: Partial<TaskListQuery>): number[] =>
      serials(queryTasks(all, query(fields), NOW));
    expect(shown({ states: new Set(['failed']) })).toEqual([2, 5]);
    expect(shown({ states: new Set(['failed', 'running']) })).toEqual([2, 5, 3]);
    expect(shown({ fn: 'load' })).toEqual([2, 1, 5, 6]);
    expect(shown({ text: 'refused' })).toEqual([2]); // the error message
    expect(shown({ text: 'LOAD-1' })).toEqual([1, 5, 6]); // keys
    expect(shown({ text: name(3) })).toEqual([3]); // a name
    expect(shown({ text: `${PLAN}/${name(4)}` })).toEqual([4]); // a path
    expect(shown({ text: 'upstream', fn: 'load', states: new Set(['failed']) })).toEqual([]);
    expect(shown({ text: 'upstream', fn: 'load', states: new Set(['retrying']) })).toEqual([6]);
    expect(shown({ fn: 'nothing' })).toEqual([]);
  });

  it('go to failed: the next failed task in the list’s order after the selected one, round to the first', () => {
    const shown = queryTasks(model().all(), query({ sort: 'task' }), NOW); // 2, 1, 5, 6, 4, 3
    expect(nextFailed(shown, undefined)?.name).toBe(name(2));
    expect(nextFailed(shown, name(2))?.name).toBe(name(5));
    expect(nextFailed(shown, name(6))?.name).toBe(name(2)); // round
    expect(nextFailed(shown, name(99))?.name).toBe(name(2)); // the selected one is not shown
    expect(
      nextFailed(
        shown.filter((node) => node.state !== 'failed'),
        name(1),
      ),
    ).toBeUndefined();
    const byEnd = queryTasks(model().all(), query({ sort: 'end', descending: true }), NOW);
    expect(nextFailed(byEnd, undefined)?.name).toBe(name(5)); // the order shown, not the names'
  });

  it('follow a diff: changed (and searchable by the new error), added and removed tasks', () => {
    const tasks = model();
    const change: UiChange = [
      name(6),
      'failed',
      false,
      'load',
      false,
      'load-12',
      'w-d',
      NOW - 1_000,
      NOW,
      3,
      'disk full on w-d',
    ];
    expect(
      tasks.applyDiff(
        diff({ changed: [change], added: [task(7, { key: 'late' })], removed: [name(4)] }),
      ),
    ).toBe(true);
    expect(tasks.get(name(6))).toMatchObject({
      state: 'failed',
      worker: 'w-d',
      failedTries: 3,
      error: 'disk full on w-d',
    });
    expect(serials(queryTasks(tasks.all(), query({ text: 'disk full' }), NOW))).toEqual([6]);
    expect(serials(queryTasks(tasks.all(), query({}), NOW))).toEqual([7, 2, 1, 5, 6, 3]);
    expect(tasks.get(name(4))).toBeUndefined();
    expect(tasks.counts().get('failed')).toBe(3);
    expect(tasks.applyDiff(diff({}))).toBe(false);
  });
});

function status(): UiPlanStatus {
  const counts = Object.fromEntries(
    [
      'building',
      'waiting',
      'runnable',
      'retrying',
      'running',
      'finishing',
      'done',
      'skipped',
      'failed',
      'blocked',
      'cancelled',
      'unstarted',
    ].map((state) => [state, 0]),
  ) as unknown as UiPlanStatus['counts'];
  return {
    plan: PLAN,
    state: 'running',
    priority: 0,
    done: 0,
    total: 0,
    historyKept: true,
    counts,
  };
}

function diff(fields: Partial<UiDiff>): UiDiff {
  return { status: status(), changed: [], added: [], updated: [], removed: [], ...fields };
}

/** Loads the plan page's server-made HTML (the body only). */
function loadPage(): void {
  const body = /<body [^>]*>([\s\S]*?)<script/.exec(planPageHtml(PLAN));
  document.body.innerHTML = body?.[1] ?? '';
}

const get = <T extends HTMLElement = HTMLElement>(id: string): T =>
  document.getElementById(id) as T;

const lists: TaskList[] = [];

/** A task list in the page's frame, its scrolling box `height` pixels tall. */
function openList(height: number, selected: string[]): TaskList {
  loadPage();
  const scroller = get('list-scroller');
  Object.defineProperty(scroller, 'clientHeight', { configurable: true, value: height });
  Object.defineProperty(scroller, 'clientWidth', { configurable: true, value: 900 });
  const list = new TaskList(
    {
      states: get('list-states'),
      fn: get<HTMLSelectElement>('list-fn'),
      text: get<HTMLInputElement>('list-text'),
      goFailed: get<HTMLButtonElement>('list-go-failed'),
      count: get('list-count'),
      head: get('list-head'),
      scroller,
      rows: get('list-rows'),
      empty: get('list-empty'),
    },
    PLAN,
    publishStats(PLAN),
    (task) => {
      selected.push(task);
      list.select(task);
    },
  );
  lists.push(list);
  list.setVisible(true);
  return list;
}

/** The rows in the DOM that are shown, top to bottom: [name, state, cells…]. */
function drawnRows(): string[][] {
  return [...document.querySelectorAll<HTMLElement>('#list-rows .list-row')]
    .filter((row) => !row.hidden)
    .map((row) => ({ row, y: Number(/translateY\((\d+)px\)/.exec(row.style.transform)?.[1]) }))
    .sort((a, b) => a.y - b.y)
    .map(({ row }) => [
      row.dataset['task'] ?? '',
      row.dataset['state'] ?? '',
      ...[...row.children].map((cell) => cell.textContent ?? ''),
    ]);
}

afterEach(() => {
  for (const list of lists.splice(0)) list.close();
  document.body.innerHTML = '';
});

describe('the task list in the page', () => {
  it('has a header of every column the list sorts by, in its order', () => {
    loadPage();
    expect(
      [...get('list-head').querySelectorAll<HTMLElement>('[data-sort]')].map(
        (b) => b.dataset['sort'],
      ),
    ).toEqual([...TASK_LIST_COLUMNS]);
  });

  it('draws only the rows in sight of 5 000 tasks, and the ones further down once scrolled there', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => task(i + 1, { key: `k-${i + 1}` }));
    openList(10 * LIST_ROW_HEIGHT, []).show(many);
    const first = drawnRows();
    expect(first.length).toBeGreaterThanOrEqual(10);
    expect(first.length).toBeLessThan(40);
    expect(first[0]?.[2]).toBe('k-1');
    expect(get('list-rows').style.height).toBe(`${5_000 * LIST_ROW_HEIGHT}px`);
    expect(get('list-count').textContent).toBe('5000 of 5000 tasks shown');
    const scroller = get('list-scroller');
    scroller.scrollTop = 4_000 * LIST_ROW_HEIGHT;
    scroller.dispatchEvent(new Event('scroll'));
    const later = drawnRows();
    expect(later.length).toBeLessThan(40);
    expect(later.map((row) => row[2])).toContain('k-4005');
    expect(later.map((row) => row[2])).not.toContain('k-1');
  });

  it('writes each column of a row as text, and sorts by a header click, reversed by a second', () => {
    const list = openList(20 * LIST_ROW_HEIGHT, []);
    list.show([...NODES, task(8, { key: '<img src=x onerror=alert(1)>', fn: 'f' })]);
    const row = drawnRows().find(([task]) => task === name(2));
    expect(row?.slice(1, 6)).toEqual(['failed', 'load-9', 'load', 'failed', '3']);
    expect(row?.[6]).toBe('w-a');
    expect(row?.[9]).toBe('500 ms');
    expect(document.querySelector('#list-rows img')).toBeNull();
    const running = drawnRows().find(([task]) => task === name(3));
    expect(running?.[2]).toBe(name(3)); // no key: its name
    expect(running?.[9]).toMatch(/^\d+ m \d\d s$/); // time so far
    const head = (column: string): HTMLElement =>
      get('list-head').querySelector(`[data-sort="${column}"]`) as HTMLElement;
    head('attempts').click();
    expect(
      drawnRows()
        .map(([task]) => task)
        .slice(0, 5),
    ).toEqual([1, 5, 3, 6, 2].map(name));
    expect(head('attempts').getAttribute('aria-sort')).toBe('ascending');
    head('attempts').click();
    expect(
      drawnRows()
        .map(([task]) => task)
        .slice(0, 5),
    ).toEqual([2, 6, 3, 5, 1].map(name));
    expect(head('attempts').getAttribute('aria-sort')).toBe('descending');
    expect(head('task').getAttribute('aria-sort')).toBe('none');
  });

  it('filters by state chips, function and text, says how many are shown, and goes to the failed tasks in turn', () => {
    const selected: string[] = [];
    const list = openList(20 * LIST_ROW_HEIGHT, selected);
    list.show(NODES);
    const chip = (state: string): HTMLButtonElement =>
      get('list-states').querySelector(`[data-state="${state}"]`) as HTMLButtonElement;
    expect(chip('failed').textContent).toBe('failed 2');
    chip('failed').click();
    chip('running').click();
    expect(chip('failed').getAttribute('aria-pressed')).toBe('true');
    expect(drawnRows().map(([task]) => task)).toEqual([2, 5, 3].map(name));
    expect(get('list-count').textContent).toBe('3 of 6 tasks shown');
    chip('running').click();
    const fn = get<HTMLSelectElement>('list-fn');
    expect([...fn.options].map((option) => option.value)).toEqual(['', 'load', 'merge', 'report']);
    chip('failed').click();
    fn.value = 'load';
    fn.dispatchEvent(new Event('change'));
    expect(drawnRows().map(([task]) => task)).toEqual([2, 1, 5, 6].map(name));
    const text = get<HTMLInputElement>('list-text');
    text.value = 'REFUSED';
    text.dispatchEvent(new Event('input'));
    expect(drawnRows().map(([task]) => task)).toEqual([name(2)]);
    expect(window.zkPlanUi?.lastFilterMs).toBeTypeOf('number');

    // Go to failed, with the filters hiding one failed task: the next is found in the list's order, then the filters give way.
    const goFailed = get<HTMLButtonElement>('list-go-failed');
    expect(goFailed.disabled).toBe(false);
    goFailed.click();
    expect(selected).toEqual([name(2)]);
    goFailed.click();
    expect(selected).toEqual([name(2), name(5)]);
    expect(text.value).toBe('');
    expect(get('list-count').textContent).toBe('6 of 6 tasks shown');
    expect(drawnRows().find(([task]) => task === name(5))).toBeDefined();
    expect(document.querySelector('#list-rows .list-row.selected')?.getAttribute('data-task')).toBe(
      name(5),
    );
    goFailed.click();
    expect(selected.at(-1)).toBe(name(2));

    // A click on a row selects it; the arrow keys move the selection.
    (
      document.querySelector(`#list-rows .list-row[data-task="${name(4)}"] .cell.fn`) as HTMLElement
    ).click();
    expect(selected.at(-1)).toBe(name(4));
    get('list-scroller').dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown' }));
    expect(selected.at(-1)).toBe(name(3));
  });

  it('follows diffs live: a task turning failed is redrawn, counted, searchable by its error, and go to failed reaches it', () => {
    const selected: string[] = [];
    const list = openList(20 * LIST_ROW_HEIGHT, selected);
    list.show(NODES.filter((node) => node.state !== 'failed'));
    const goFailed = get<HTMLButtonElement>('list-go-failed');
    expect(goFailed.disabled).toBe(true);
    const text = get<HTMLInputElement>('list-text');
    text.value = 'quota';
    text.dispatchEvent(new Event('input'));
    expect(drawnRows()).toEqual([]);
    expect(get('list-empty').textContent).toBe('No task matches the filters.');
    list.applyDiff(
      diff({
        changed: [
          [
            name(3),
            'failed',
            false,
            'merge',
            false,
            '',
            'w-c',
            NOW - 60_000,
            NOW,
            2,
            'quota exceeded',
          ],
        ],
        added: [task(9, { key: 'extra', fn: 'load' })],
      }),
    );
    expect(drawnRows().map((row) => row.slice(0, 4))).toEqual([
      [name(3), 'failed', name(3), 'merge'],
    ]);
    expect(get('list-count').textContent).toBe('1 of 5 tasks shown');
    expect(goFailed.disabled).toBe(false);
    goFailed.click();
    expect(selected).toEqual([name(3)]);
    list.applyDiff(diff({ removed: [name(3)] }));
    expect(drawnRows()).toEqual([]);
    expect(goFailed.disabled).toBe(true);
  });

  it('while hidden draws nothing, and catches up with the diffs it missed when shown', () => {
    const list = openList(20 * LIST_ROW_HEIGHT, []);
    list.setVisible(false);
    list.show(NODES);
    expect(drawnRows()).toEqual([]);
    list.applyDiff(diff({ removed: [name(1)] }));
    list.setVisible(true);
    expect(drawnRows().map(([task]) => task)).toEqual([2, 5, 6, 4, 3].map(name));
  });
});

describe('the view tabs', () => {
  function openTabs(search: string, shown: PlanView[]): ViewTabs {
    loadPage();
    history.replaceState(null, '', `/plan${search}`);
    return new ViewTabs(
      get('plan-views'),
      { graph: get('canvas'), list: get('list-view'), timeline: get('timeline-view') },
      (view) => shown.push(view),
    );
  }
  const visible = (): string[] =>
    ['canvas', 'list-view', 'timeline-view'].filter((id) => !get(id).hidden);

  it('open the view the address names (the graph by default or for an unknown name)', () => {
    expect(viewOfUrl('?path=/p&view=list')).toBe('list');
    expect(viewOfUrl('?view=timeline')).toBe('timeline');
    expect(viewOfUrl('?view=<b>')).toBe('graph');
    expect(viewOfUrl('')).toBe('graph');
    const shown: PlanView[] = [];
    const tabs = openTabs(`?path=${encodeURIComponent(PLAN)}&view=list&task=${name(2)}`, shown);
    expect(tabs.current).toBe('list');
    expect(shown).toEqual(['list']);
    expect(visible()).toEqual(['list-view']);
    expect(
      get('plan-views').querySelector('[aria-selected="true"]')?.getAttribute('data-view'),
    ).toBe('list');
    expect(document.body.dataset['view']).toBe('list');
  });

  it('switch views on a click, keep the other parameters of the address, and write the view into it', () => {
    const shown: PlanView[] = [];
    openTabs(`?path=${encodeURIComponent(PLAN)}&task=${name(2)}`, shown);
    expect(visible()).toEqual(['canvas']);
    const tab = (view: string): HTMLElement =>
      get('plan-views').querySelector(`[data-view="${view}"]`) as HTMLElement;
    tab('timeline').click();
    expect(visible()).toEqual(['timeline-view']);
    const params = new URLSearchParams(location.search);
    expect(params.get('view')).toBe('timeline');
    expect(params.get('path')).toBe(PLAN);
    expect(params.get('task')).toBe(name(2));
    tab('list').click();
    expect(new URLSearchParams(location.search).get('view')).toBe('list');
    get('plan-views').dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight' }));
    expect(visible()).toEqual(['timeline-view']);
    tab('graph').click();
    expect(visible()).toEqual(['canvas']);
    expect(new URLSearchParams(location.search).has('view')).toBe(false);
    expect(shown).toEqual(['graph', 'timeline', 'list', 'timeline', 'graph']);
  });
});
