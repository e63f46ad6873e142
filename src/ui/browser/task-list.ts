/**
 * The plan page's task list: one row per task (key, function, state, attempts, worker, start, end,
 * duration), sortable by every column, filtered by state, function and text, with "go to failed".
 * Only the rows in sight are in the DOM (@tanstack/virtual-core places them), so a plan of
 * thousands of tasks scrolls as smoothly as one of ten. Kept live from the page's snapshot and
 * diffs; the data and its queries are task-list-model.ts.
 */
import {
  Virtualizer,
  elementScroll,
  observeElementOffset,
  observeElementRect,
} from '@tanstack/virtual-core';
import { TASK_VIEW_STATES, type TaskViewState, type UiDiff, type UiNode } from '../ui-wire.js';
import { h } from './dom.js';
import type { PageStats } from './page-stats.js';
import {
  DEFAULT_TASK_LIST_QUERY,
  TASK_LIST_COLUMNS,
  TaskListModel,
  attemptsOf,
  durationOf,
  isTaskListColumn,
  nextFailed,
  queryTasks,
  taskLabel,
  type TaskListQuery,
} from './task-list-model.js';
import { exactTime, shortDuration, shortTime } from './task-list-format.js';

/** Every row is this tall (ui.css `.list-row`): the virtualiser places rows without measuring them. */
export const LIST_ROW_HEIGHT = 28;
/** Rows drawn beyond each edge of the visible ones, so that a fast scroll shows no blank. */
const OVERSCAN_ROWS = 12;
/** How often a running task's elapsed time is redrawn. */
const ELAPSED_TICK_MS = 1_000;
/** Rows PageUp and PageDown move the selection by. */
const KEY_PAGE_ROWS = 20;

export interface TaskListElements {
  /** The state chips' container. */
  readonly states: HTMLElement;
  readonly fn: HTMLSelectElement;
  readonly text: HTMLInputElement;
  readonly goFailed: HTMLButtonElement;
  readonly count: HTMLElement;
  /** The header row: a `[data-sort]` button per column. */
  readonly head: HTMLElement;
  /** The scrolling box and, inside it, the rows' box as tall as every row together. */
  readonly scroller: HTMLElement;
  readonly rows: HTMLElement;
  readonly empty: HTMLElement;
}

/** One drawn row and its cells, reused as the list scrolls. */
interface RowElements {
  readonly row: HTMLDivElement;
  readonly cells: readonly HTMLSpanElement[];
}

export class TaskList {
  private readonly model: TaskListModel;
  private query: TaskListQuery = DEFAULT_TASK_LIST_QUERY;
  private shown: UiNode[] = [];
  private selected: string | undefined;
  private visible = false;
  /** Data changed while the list was hidden: the rows are queried again when it is shown. */
  private stale = false;
  /** The selection changed while hidden: it is scrolled to when the list is shown. */
  private revealPending = false;
  private readonly pool: RowElements[] = [];
  private readonly chips = new Map<
    TaskViewState,
    { chip: HTMLButtonElement; count: HTMLElement }
  >();
  private functionsShown = '';
  private firstDrawn = false;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private readonly virtualizer: Virtualizer<HTMLElement, HTMLDivElement>;
  private readonly unmount: () => void;

  constructor(
    private readonly el: TaskListElements,
    plan: string,
    private readonly stats: PageStats,
    private readonly onSelect: (name: string) => void,
  ) {
    this.model = new TaskListModel(plan);
    this.makeChips();
    this.listen();
    this.virtualizer = new Virtualizer<HTMLElement, HTMLDivElement>({
      count: 0,
      getScrollElement: () => this.el.scroller,
      estimateSize: () => LIST_ROW_HEIGHT,
      overscan: OVERSCAN_ROWS,
      scrollToFn: elementScroll,
      observeElementRect,
      observeElementOffset,
      onChange: () => this.drawRows(),
    });
    this.unmount = this.virtualizer._didMount();
    this.virtualizer._willUpdate();
    this.drawHead();
  }

  /** Every task of the plan (a snapshot). */
  show(nodes: readonly UiNode[]): void {
    this.model.reset(nodes);
    this.changed();
  }

  /** A diff of the plan: changed, added and removed tasks. */
  applyDiff(diff: UiDiff): void {
    if (this.model.applyDiff(diff)) this.changed();
  }

  /** Every task as the list holds it, in the server's order (by name). */
  nodes(): UiNode[] {
    return this.model.all().map((entry) => entry.node);
  }

  /** Marks a task's row selected and scrolls it into sight (a click in the list or the graph). */
  select(name: string | undefined): void {
    this.selected = name;
    if (!this.visible) {
      this.revealPending = true;
      return;
    }
    this.reveal();
    this.drawRows();
  }

  /** The list is shown or hidden (the page's view tabs): only a shown list draws and ticks. */
  setVisible(visible: boolean): void {
    this.visible = visible;
    if (!visible) {
      this.stopTicker();
      return;
    }
    if (this.stale) this.refresh();
    if (this.revealPending) this.reveal();
    this.drawRows();
  }

  /** Stops the elapsed-time ticker and the virtualiser's observers. */
  close(): void {
    this.stopTicker();
    this.unmount();
  }

  /** Changes what is shown; the filters' controls are set to match. */
  setQuery(query: Partial<TaskListQuery>): void {
    this.query = { ...this.query, ...query };
    this.el.text.value = this.query.text;
    this.el.fn.value = this.query.fn;
    this.refresh();
  }

  // ---- querying -----------------------------------------------------------------------------
  private changed(): void {
    if (!this.visible) {
      this.stale = true;
      return;
    }
    this.refresh();
  }

  /** Queries the rows again and redraws the list, its counts and its controls. */
  private refresh(): void {
    this.stale = false;
    this.shown = queryTasks(this.model.all(), this.query, Date.now());
    this.virtualizer.setOptions({ ...this.virtualizer.options, count: this.shown.length });
    this.drawControls();
    this.drawHead();
    this.drawRows();
  }

  /**
   * Scrolls the selected row into sight: by the least scroll when it is next to the rows in sight
   * (the arrow keys), else to the middle (a jump: a click in the graph, "go to failed").
   */
  private reveal(): void {
    this.revealPending = false;
    const index =
      this.selected === undefined ? -1 : this.shown.findIndex((n) => n.name === this.selected);
    if (index < 0) return;
    const range = this.virtualizer.range;
    const near = range !== null && index >= range.startIndex - 1 && index <= range.endIndex + 1;
    this.virtualizer.scrollToIndex(index, { align: near ? 'auto' : 'center' });
  }

  /**
   * "Go to failed": the next failed task in the list's order. When the filters hide every other
   * failed task, they are cleared first, so that the button always leads somewhere new.
   */
  private goToFailed(): void {
    let target = nextFailed(this.shown, this.selected);
    const stuck = target === undefined || target.name === this.selected;
    const failedShown = this.shown.filter((node) => node.state === 'failed').length;
    if (stuck && (this.model.counts().get('failed') ?? 0) > failedShown) {
      this.setQuery({ states: new Set(), fn: '', text: '' });
      target = nextFailed(this.shown, this.selected);
    }
    if (target !== undefined) this.onSelect(target.name);
  }

  /** Selects the row a navigation key leads to, within the rows shown. */
  private selectByKey(key: string): boolean {
    const last = this.shown.length - 1;
    const at = this.shown.findIndex((node) => node.name === this.selected);
    const targets: Readonly<Record<string, number>> = {
      ArrowDown: at + 1,
      ArrowUp: at - 1,
      PageDown: at + KEY_PAGE_ROWS,
      PageUp: at - KEY_PAGE_ROWS,
      Home: 0,
      End: last,
    };
    const index = targets[key];
    if (index === undefined) return false;
    const target = this.shown[Math.max(0, Math.min(last, index))];
    if (target !== undefined) this.onSelect(target.name);
    return true;
  }

  // ---- drawing ------------------------------------------------------------------------------
  private makeChips(): void {
    for (const state of TASK_VIEW_STATES) {
      const chip = h('button', undefined, 'chip');
      chip.type = 'button';
      chip.dataset['state'] = state;
      chip.setAttribute('aria-pressed', 'false');
      chip.appendChild(h('i'));
      chip.appendChild(document.createTextNode(`${state} `));
      const count = h('b', '0');
      chip.appendChild(count);
      this.el.states.appendChild(chip);
      this.chips.set(state, { chip, count });
    }
  }

  /** Chips' counts and pressed states, the function choices, the count line, "go to failed". */
  private drawControls(): void {
    const counts = this.model.counts();
    for (const [state, { chip, count }] of this.chips) {
      const tasks = counts.get(state) ?? 0;
      count.textContent = String(tasks);
      chip.classList.toggle('zero', tasks === 0);
      chip.setAttribute('aria-pressed', String(this.query.states.has(state)));
    }
    const functions = this.model.functions();
    const key = functions.join('\n');
    if (key !== this.functionsShown) {
      this.functionsShown = key;
      const options = [h('option', 'all functions'), ...functions.map((fn) => h('option', fn))];
      options[0]?.setAttribute('value', '');
      this.el.fn.replaceChildren(...options);
    }
    this.el.fn.value = this.query.fn;
    const total = this.model.size;
    this.el.count.textContent = `${this.shown.length} of ${total} tasks shown`;
    this.el.goFailed.disabled = !this.model.hasFailed();
    this.el.empty.textContent =
      total === 0 ? 'No tasks yet.' : this.shown.length === 0 ? 'No task matches the filters.' : '';
  }

  private drawHead(): void {
    for (const button of this.el.head.querySelectorAll<HTMLElement>('[data-sort]')) {
      const column = button.dataset['sort'];
      const sorted = column === this.query.sort;
      button.setAttribute(
        'aria-sort',
        sorted ? (this.query.descending ? 'descending' : 'ascending') : 'none',
      );
    }
  }

  /** Draws the rows in sight (and a few beyond), reusing the row elements. */
  private drawRows(): void {
    this.el.rows.style.height = `${this.virtualizer.getTotalSize()}px`;
    const items = this.visible ? this.virtualizer.getVirtualItems() : [];
    const now = Date.now();
    let running = false;
    items.forEach((item, slot) => {
      const node = this.shown[item.index];
      if (node === undefined) return;
      const drawn = this.pool[slot] ?? this.makeRow();
      this.fillRow(drawn, node, now);
      drawn.row.style.transform = `translateY(${item.start}px)`;
      drawn.row.hidden = false;
      if (node.state === 'running' || node.state === 'finishing') running = true;
    });
    for (let slot = items.length; slot < this.pool.length; slot++)
      (this.pool[slot] as RowElements).row.hidden = true;
    if (items.length > 0 && !this.firstDrawn) {
      this.firstDrawn = true;
      // Taken at the next frame, after whatever else the page does in this task (drawing the graph):
      // the time the rows can first be seen.
      requestAnimationFrame(() => {
        this.stats.listFirstRenderMs = performance.now();
        document.documentElement.dataset['listRendered'] = 'true';
      });
    }
    if (running) this.startTicker();
    else this.stopTicker();
  }

  private makeRow(): RowElements {
    const row = h('div', undefined, 'list-row');
    row.setAttribute('role', 'row');
    const cells = TASK_LIST_COLUMNS.map((column) => {
      const cell = h('span', undefined, `cell ${column}`);
      cell.setAttribute('role', 'cell');
      row.appendChild(cell);
      return cell;
    });
    const drawn = { row, cells };
    this.pool.push(drawn);
    this.el.rows.appendChild(row);
    return drawn;
  }

  private fillRow(drawn: RowElements, node: UiNode, now: number): void {
    const { row, cells } = drawn;
    row.dataset['task'] = node.name;
    row.dataset['state'] = node.state;
    const selected = node.name === this.selected;
    row.classList.toggle('selected', selected);
    row.setAttribute('aria-selected', String(selected));
    const [task, fn, state, attempts, worker, start, end, duration] = cells as [
      HTMLSpanElement,
      HTMLSpanElement,
      HTMLSpanElement,
      HTMLSpanElement,
      HTMLSpanElement,
      HTMLSpanElement,
      HTMLSpanElement,
      HTMLSpanElement,
    ];
    task.textContent = taskLabel(node);
    task.title = node.error === undefined ? node.name : `${node.name}: ${node.error}`;
    fn.textContent = node.fn;
    state.textContent = node.gone === true ? `${node.state} (gone)` : node.state;
    attempts.textContent = String(attemptsOf(node) ?? '');
    worker.textContent = node.worker ?? '';
    worker.title = node.worker ?? '';
    start.textContent = shortTime(node.startedAt, now);
    start.title = exactTime(node.startedAt);
    end.textContent = shortTime(node.finishedAt, now);
    end.title = exactTime(node.finishedAt);
    duration.textContent = shortDuration(durationOf(node, now));
  }

  /** Running tasks' elapsed time is redrawn each second while the list shows one. */
  private startTicker(): void {
    this.ticker ??= setInterval(() => this.drawRows(), ELAPSED_TICK_MS);
  }

  private stopTicker(): void {
    if (this.ticker === undefined) return;
    clearInterval(this.ticker);
    this.ticker = undefined;
  }

  // ---- input --------------------------------------------------------------------------------
  private listen(): void {
    this.el.states.addEventListener('click', (event) => {
      const chip = event.target instanceof Element ? event.target.closest('button.chip') : null;
      const state = chip instanceof HTMLElement ? chip.dataset['state'] : undefined;
      const known = TASK_VIEW_STATES.find((candidate) => candidate === state);
      if (known === undefined) return;
      const states = new Set(this.query.states);
      if (states.has(known)) states.delete(known);
      else states.add(known);
      this.setQuery({ states });
    });
    this.el.fn.addEventListener('change', () => this.setQuery({ fn: this.el.fn.value }));
    this.el.text.addEventListener('input', (event) => {
      const started = performance.now();
      // The input event's own time when the browser gives it on the page's clock, so that the figure includes its wait.
      const from = event.timeStamp > 0 && event.timeStamp <= started ? event.timeStamp : started;
      this.setQuery({ text: this.el.text.value });
      this.stats.lastFilterMs = Math.round((performance.now() - from) * 10) / 10;
    });
    this.el.text.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.el.text.value !== '') this.setQuery({ text: '' });
    });
    this.el.goFailed.addEventListener('click', () => this.goToFailed());
    this.el.head.addEventListener('click', (event) => {
      const button = event.target instanceof Element ? event.target.closest('[data-sort]') : null;
      const column = button instanceof HTMLElement ? (button.dataset['sort'] ?? '') : '';
      if (!isTaskListColumn(column)) return;
      const again = column === this.query.sort;
      this.setQuery({ sort: column, descending: again ? !this.query.descending : false });
    });
    this.el.rows.addEventListener('click', (event) => {
      const row = event.target instanceof Element ? event.target.closest('.list-row') : null;
      const name = row instanceof HTMLElement ? row.dataset['task'] : undefined;
      if (name !== undefined) this.onSelect(name);
    });
    this.el.scroller.addEventListener('keydown', (event) => {
      if (this.selectByKey(event.key)) event.preventDefault();
    });
  }
}
