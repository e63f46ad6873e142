/**
 * The plan page's timeline (Gantt): a bar per try of each task on its worker's row (or its task's,
 * switchable), coloured by how the try ended, on a time axis, with the critical path outlined. Drawn
 * on a canvas, only the rows in sight, so a plan of thousands of tasks draws in a few milliseconds.
 * Hovering a bar says what it was; clicking it selects its task (the page's side panel).
 *
 * Live: the page hands it the nodes after every snapshot and diff (running bars grow from them);
 * each try's detail comes from `GET /api/timeline`, asked again at most once a second while the
 * view is shown and the plan changed.
 */
import type { UiNode, UiTimeline, UiTryOutcome } from '../ui-wire.js';
import { getJson } from './api.js';
import { h } from './dom.js';
import type { PageStats } from './page-stats.js';
import {
  layoutTimeline,
  tickStep,
  type LaidBar,
  type TimelineLayout,
  type TimelineRows,
} from './timeline-layout.js';

/** How often the tries are asked for at most, and running bars redrawn, while the view is shown. */
const REFRESH_MS = 1_000;
const ROW_HEIGHT = { worker: 22, task: 14 } as const;
const AXIS_HEIGHT = 26;
const LABEL_WIDTH = 170;
const RIGHT_PAD = 12;
const MIN_TICK_GAP_PX = 90;
/** The critical path's mark: a strip of this colour and height along the foot of its tasks' bars, and before their labels. */
const CRITICAL_COLOUR = '#111827';
const CRITICAL_STRIP_PX = 3;
/** A bar narrower than this is drawn this wide, so that a short try stays visible and hoverable. */
const MIN_BAR_PX = 2;

/** Bar colours by outcome (the states' colours of ui.css; a retried try orange). */
export const OUTCOME_COLOURS: Readonly<Record<UiTryOutcome | 'retried', string>> = {
  done: '#2e9e5b',
  skipped: '#c9d3c4',
  failed: '#d63a3a',
  retried: '#f08c00',
  running: '#1f7fd1',
  cancelled: '#39404d',
};

const OUTCOME_WORDS: Readonly<Record<UiTryOutcome | 'retried', string>> = {
  done: 'done',
  skipped: 'skipped',
  failed: 'failed',
  retried: 'failed, retried',
  running: 'running',
  cancelled: 'cancelled',
};

export class TimelineView {
  private readonly scroller: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly tooltip: HTMLDivElement;
  private readonly info: HTMLSpanElement;
  private readonly rowButtons: Record<TimelineRows, HTMLButtonElement>;
  private nodes: readonly UiNode[] = [];
  /** The page's snapshot arrived: the server's feed has just read the plan, and the tries are asked for from that read. */
  private snapshotSeen = false;
  private readonly fnOf = new Map<string, UiNode>();
  private timeline: UiTimeline | undefined;
  private rows: TimelineRows = 'worker';
  private layout: TimelineLayout | undefined;
  /** The tries, the nodes, the rows or the time of a running bar changed: lay out again before drawing (a scroll only draws). */
  private layoutDirty = true;
  private shown = false;
  /** The plan changed since the tries were last asked for. */
  private stale = true;
  private fetching = false;
  private lastFetch = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private frame: number | undefined;
  /** When show() was called, until the first drawing with the tries read: the render time. */
  private shownAt: number | undefined;

  /**
   * @param container The element the view fills (its section on the plan page).
   * @param plan The plan's path.
   * @param stats The page's stats: `timelineRenderMs` and `timelineBars` are set here.
   * @param onSelect Called with a task's name when its bar is clicked (the page selects it).
   */
  constructor(
    private readonly container: HTMLElement,
    private readonly plan: string,
    private readonly stats: PageStats,
    private readonly onSelect: (name: string) => void,
  ) {
    const toolbar = h('div', undefined, 'timeline-toolbar');
    toolbar.appendChild(h('span', 'Rows:', 'timeline-label'));
    this.rowButtons = {
      worker: this.rowButton(toolbar, 'worker', 'Workers'),
      task: this.rowButton(toolbar, 'task', 'Tasks'),
    };
    const legend = h('span', undefined, 'timeline-legend');
    for (const [outcome, colour] of Object.entries(OUTCOME_COLOURS)) {
      const item = h('span', OUTCOME_WORDS[outcome as UiTryOutcome | 'retried'], 'item');
      const swatch = h('i');
      swatch.style.background = colour;
      item.prepend(swatch);
      legend.appendChild(item);
    }
    const criticalItem = h('span', 'critical path', 'item critical');
    criticalItem.prepend(h('i'));
    legend.appendChild(criticalItem);
    toolbar.appendChild(legend);
    this.info = h('span', undefined, 'timeline-info');
    toolbar.appendChild(this.info);
    this.scroller = h('div', undefined, 'timeline-scroll');
    this.spacer = h('div', undefined, 'timeline-spacer');
    this.canvas = h('canvas');
    this.canvas.id = 'timeline-canvas';
    this.spacer.appendChild(this.canvas);
    this.scroller.appendChild(this.spacer);
    this.tooltip = h('div', undefined, 'timeline-tooltip');
    this.tooltip.hidden = true;
    container.replaceChildren(toolbar, this.scroller, this.tooltip);
    this.scroller.addEventListener('scroll', () => this.requestDraw());
    this.canvas.addEventListener('mousemove', (event) => this.hover(event));
    this.canvas.addEventListener('mouseleave', () => {
      this.tooltip.hidden = true;
    });
    this.canvas.addEventListener('click', (event) => {
      const bar = this.barAt(event);
      if (bar !== undefined) this.onSelect(bar.name);
    });
    window.addEventListener('resize', () => this.requestDraw());
    this.setRows('worker');
  }

  /** Whether the view is shown. */
  get visible(): boolean {
    return this.shown;
  }

  /** Shows the view: asks for the tries now, then keeps it live. */
  show(): void {
    if (this.shown) return;
    this.shown = true;
    this.container.hidden = false;
    this.shownAt = performance.now();
    this.stats.timelineRenderMs = null;
    this.stale = true;
    this.tick();
  }

  /** Hides the view; nothing is asked for or drawn while hidden. */
  hide(): void {
    this.shown = false;
    this.container.hidden = true;
    this.tooltip.hidden = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The plan's nodes as the page holds them now (after a snapshot or a diff). */
  setNodes(nodes: readonly UiNode[]): void {
    this.nodes = nodes;
    this.snapshotSeen = true;
    this.fnOf.clear();
    for (const node of nodes) this.fnOf.set(node.name, node);
    this.stale = true;
    this.layoutDirty = true;
    if (this.shown) this.requestDraw();
  }

  /** Rows per worker or per task. */
  setRows(rows: TimelineRows): void {
    this.rows = rows;
    for (const [kind, button] of Object.entries(this.rowButtons))
      button.setAttribute('aria-pressed', String(kind === rows));
    this.layoutDirty = true;
    this.requestDraw();
  }

  private rowButton(toolbar: HTMLElement, rows: TimelineRows, text: string): HTMLButtonElement {
    const button = h('button', text);
    button.type = 'button';
    button.id = `timeline-rows-${rows}`;
    button.addEventListener('click', () => this.setRows(rows));
    toolbar.appendChild(button);
    return button;
  }

  /** Asks for the tries when the plan changed (at most once a second), and redraws running bars. */
  private tick(): void {
    if (!this.shown) return;
    if (
      this.snapshotSeen &&
      this.stale &&
      !this.fetching &&
      performance.now() - this.lastFetch >= REFRESH_MS
    )
      void this.fetchTries();
    if (this.layout?.bars.some((row) => row.some((bar) => bar.finishedAt === 0)) === true) {
      this.layoutDirty = true; // running bars grow
      this.requestDraw();
    }
    this.timer = setTimeout(() => this.tick(), REFRESH_MS / 4);
  }

  private async fetchTries(): Promise<void> {
    this.fetching = true;
    this.stale = false;
    this.lastFetch = performance.now();
    try {
      this.timeline = await getJson<UiTimeline>(
        `/api/timeline?path=${encodeURIComponent(this.plan)}`,
      );
      this.stats.timelineFetchMs = Math.round(performance.now() - this.lastFetch);
      this.layoutDirty = true;
      this.info.textContent = '';
    } catch (error) {
      this.stale = true;
      this.info.textContent = `timeline: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.fetching = false;
    }
    this.requestDraw();
  }

  private requestDraw(): void {
    if (!this.shown || this.frame !== undefined) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = undefined;
      this.draw();
    });
  }

  /** Lays the tries out again and draws the rows in sight. */
  private draw(): void {
    const started = performance.now();
    const layout =
      this.layout === undefined || this.layoutDirty
        ? layoutTimeline(this.nodes, this.timeline?.tries ?? {}, this.rows, Date.now())
        : this.layout;
    this.layout = layout;
    this.layoutDirty = false;
    const rowHeight = ROW_HEIGHT[this.rows];
    const width = Math.max(320, this.scroller.clientWidth);
    const height = Math.max(120, this.scroller.clientHeight);
    this.spacer.style.height = `${AXIS_HEIGHT + layout.rows.length * rowHeight + 4}px`;
    const ratio = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(width * ratio))
      this.canvas.width = Math.round(width * ratio);
    if (this.canvas.height !== Math.round(height * ratio))
      this.canvas.height = Math.round(height * ratio);
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    const context = this.canvas.getContext('2d');
    if (context === null) return;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, height);
    const scale = this.scaleOf(layout, width);
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / rowHeight));
    const last = Math.min(layout.rows.length, Math.ceil((top + height) / rowHeight) + 1);
    const onPath = new Set(layout.critical.names);
    context.font = `${this.rows === 'task' ? 11 : 12}px system-ui, sans-serif`;
    context.textBaseline = 'middle';
    for (let row = first; row < last; row++) {
      const y = AXIS_HEIGHT + row * rowHeight - top;
      if (row % 2 === 1) {
        context.fillStyle = '#f3f5f8';
        context.fillRect(0, y, width, rowHeight);
      }
      const label = layout.rows[row];
      // A task on the critical path: a dark mark before its label.
      if (label?.name !== undefined && onPath.has(label.name)) {
        context.fillStyle = CRITICAL_COLOUR;
        context.fillRect(2, y + rowHeight / 2 - 2, 4, 4);
      }
      context.fillStyle = '#4a5263';
      context.fillText(
        fitText(context, label?.label ?? '', LABEL_WIDTH - 14),
        9,
        y + rowHeight / 2,
      );
      for (const bar of layout.bars[row] ?? []) this.drawBar(context, bar, scale, y, rowHeight);
    }
    this.drawAxis(context, layout, width, scale);
    this.stats.timelineBars = layout.barCount;
    const critical = layout.critical.names.length;
    if (this.info.textContent === '' || this.info.textContent?.startsWith('critical') === true)
      this.info.textContent =
        critical === 0
          ? ''
          : `critical path: ${critical} task(s), ${formatMs(layout.critical.totalMs)}`;
    this.stats.timelineDrawMs = Math.round(performance.now() - started);
    if (this.shownAt !== undefined && this.timeline !== undefined) {
      this.stats.timelineRenderMs = Math.round(performance.now() - this.shownAt);
      this.shownAt = undefined;
    }
  }

  private scaleOf(layout: TimelineLayout, width: number): (ms: number) => number {
    const span = layout.endMs - layout.startMs;
    const pixels = width - LABEL_WIDTH - RIGHT_PAD;
    return (ms: number) => LABEL_WIDTH + ((ms - layout.startMs) / span) * pixels;
  }

  private drawBar(
    context: CanvasRenderingContext2D,
    bar: LaidBar,
    scale: (ms: number) => number,
    y: number,
    rowHeight: number,
  ): void {
    const x = scale(bar.startMs);
    const barWidth = Math.max(MIN_BAR_PX, scale(bar.endMs) - x);
    const inset = this.rows === 'task' ? 2 : 3;
    const height = rowHeight - 2 * inset;
    context.fillStyle = OUTCOME_COLOURS[bar.outcome];
    // A try of a task on the critical path: its bar keeps its colour over a dark strip along its foot.
    if (bar.critical) {
      context.fillRect(x, y + inset, barWidth, height - CRITICAL_STRIP_PX);
      context.fillStyle = CRITICAL_COLOUR;
      context.fillRect(x, y + inset + height - CRITICAL_STRIP_PX, barWidth, CRITICAL_STRIP_PX);
      return;
    }
    context.fillRect(x, y + inset, barWidth, height);
  }

  /** The time axis: a round step between ticks, labelled with the time since the first try started. */
  private drawAxis(
    context: CanvasRenderingContext2D,
    layout: TimelineLayout,
    width: number,
    scale: (ms: number) => number,
  ): void {
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, width, AXIS_HEIGHT);
    context.strokeStyle = '#dde1e7';
    context.lineWidth = 1;
    context.beginPath();
    context.moveTo(0, AXIS_HEIGHT - 0.5);
    context.lineTo(width, AXIS_HEIGHT - 0.5);
    context.stroke();
    const span = layout.endMs - layout.startMs;
    const step = tickStep((span * MIN_TICK_GAP_PX) / Math.max(1, width - LABEL_WIDTH - RIGHT_PAD));
    context.fillStyle = '#5b6474';
    context.font = '11px system-ui, sans-serif';
    context.fillText(new Date(layout.startMs).toLocaleTimeString(), 6, AXIS_HEIGHT / 2);
    for (let at = 0; at <= span; at += step) {
      const x = Math.round(scale(layout.startMs + at)) + 0.5;
      context.beginPath();
      context.moveTo(x, AXIS_HEIGHT - 6);
      context.lineTo(x, AXIS_HEIGHT);
      context.stroke();
      context.fillText(`+${formatMs(at)}`, x + 3, AXIS_HEIGHT / 2);
    }
  }

  /** The bar under the pointer, if any (a few pixels of slack around short bars). */
  private barAt(event: MouseEvent): LaidBar | undefined {
    const layout = this.layout;
    if (layout === undefined) return undefined;
    const bounds = this.canvas.getBoundingClientRect();
    const x = event.clientX - bounds.left;
    const y = event.clientY - bounds.top;
    if (y < AXIS_HEIGHT || x < LABEL_WIDTH) return undefined;
    const row = Math.floor((y - AXIS_HEIGHT + this.scroller.scrollTop) / ROW_HEIGHT[this.rows]);
    const scale = this.scaleOf(layout, bounds.width);
    let found: LaidBar | undefined;
    for (const bar of layout.bars[row] ?? []) {
      const left = scale(bar.startMs) - 2;
      const right = Math.max(scale(bar.endMs), scale(bar.startMs) + MIN_BAR_PX) + 2;
      if (x >= left && x <= right) found = bar;
    }
    return found;
  }

  private hover(event: MouseEvent): void {
    const bar = this.barAt(event);
    this.canvas.style.cursor = bar === undefined ? 'default' : 'pointer';
    if (bar === undefined) {
      this.tooltip.hidden = true;
      return;
    }
    const node = this.fnOf.get(bar.name);
    const lines = [
      `${node?.key ?? bar.name}${node?.key !== undefined ? ` (${bar.name})` : ''}`,
      `function ${node?.fn ?? '?'} · try ${bar.attempt} · ${OUTCOME_WORDS[bar.outcome]}`,
      `worker ${bar.worker || 'unknown'}`,
      `started ${new Date(bar.startMs).toLocaleTimeString()}${bar.finishedAt === 0 ? ' · still running' : ` · ended ${new Date(bar.endMs).toLocaleTimeString()}`}`,
      `took ${formatMs(bar.endMs - bar.startMs)}${bar.critical ? ' · on the critical path' : ''}`,
      ...(bar.error === undefined ? [] : [bar.error]),
    ];
    this.tooltip.replaceChildren(...lines.map((line) => h('div', line)));
    const bounds = this.container.getBoundingClientRect();
    this.tooltip.style.left = `${Math.min(event.clientX - bounds.left + 14, bounds.width - 320)}px`;
    this.tooltip.style.top = `${event.clientY - bounds.top + 14}px`;
    this.tooltip.hidden = false;
  }
}

/** `text` cut with `…` to fit `width` pixels. */
function fitText(context: CanvasRenderingContext2D, text: string, width: number): string {
  if (context.measureText(text).width <= width) return text;
  let cut = text;
  while (cut.length > 1 && context.measureText(`${cut}…`).width > width) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** 1234 → `1.2s`, 65000 → `1m05s`, 300 → `300ms`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  const seconds = Math.round(ms / 1_000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}
