/**
 * The plan page's drawing: one SVG group per task, coloured by state through `data-state`, edges
 * as paths, a quick layering at once for big graphs and ELK's layout when it comes, pan, zoom and
 * selection. Node elements are kept across updates; only what changed is touched.
 */
import { applyChange, type UiChange, type UiNode } from '../ui-wire.js';
import { svgEl } from './dom.js';
import {
  NODE_H,
  NODE_W,
  edgesOf,
  elkGraph,
  nodeText,
  pathData,
  quickLayout,
  straightEdge,
  structureKey,
  type Edge,
  type Layout,
} from './graph.js';
import { LayoutEngine, type LayoutAnswer } from './layout-engine.js';
import type { PageStats } from './page-stats.js';

interface DrawnNode {
  data: UiNode;
  readonly el: SVGGElement;
  readonly text: SVGTextElement;
  readonly title: SVGTitleElement;
}

export interface CanvasElements {
  readonly svg: SVGSVGElement;
  readonly viewport: SVGGElement;
  readonly edges: SVGGElement;
  readonly nodes: SVGGElement;
  readonly layoutInfo: HTMLElement;
}

/** Graphs bigger than this are drawn at once with the quick layering while ELK works. */
const QUICK_FIRST_ABOVE = 300;

export class GraphCanvas {
  private readonly nodes = new Map<string, DrawnNode>();
  private edgePaths = new Map<string, SVGPathElement>();
  private edges: Edge[] = [];
  private readonly positions = new Map<string, { x: number; y: number }>();
  private structure = '';
  private selected: string | undefined;
  private view = { k: 1, x: 20, y: 20 };
  private fitted = false; // fitted to the drawing once
  private userMoved = false; // panned or zoomed by hand: layouts no longer re-fit
  private readonly layout: LayoutEngine;

  constructor(
    private readonly el: CanvasElements,
    private readonly stats: PageStats,
    private readonly onSelect: (name: string) => void,
  ) {
    this.layout = new LayoutEngine(stats, (answer) => this.onLayout(answer));
    this.listen();
  }

  /** The drawn nodes' data, in drawing order. */
  data(): UiNode[] {
    return Array.from(this.nodes.values(), (entry) => entry.data);
  }

  /** Draws `list`: rebuilds when nodes or edges changed, else recolours what changed. */
  show(list: readonly UiNode[]): void {
    if (structureKey(list) !== this.structure) {
      this.rebuild(list);
      return;
    }
    for (const data of list) {
      const entry = this.nodes.get(data.name);
      if (
        entry &&
        (entry.data.state !== data.state ||
          !entry.data.gone !== !data.gone ||
          entry.data.fn !== data.fn ||
          !entry.data.cancelled !== !data.cancelled ||
          entry.data.key !== data.key)
      )
        this.update(entry, data);
    }
  }

  /** Recolours (and relabels) one node in place (a diff's `changed`); false when it is not drawn. */
  recolour(change: UiChange): boolean {
    const entry = this.nodes.get(change[0]);
    if (entry === undefined) return false;
    this.update(entry, applyChange(entry.data, change));
    return true;
  }

  /** The key of a drawn task, when it has one. */
  keyOf(name: string): string | undefined {
    return this.nodes.get(name)?.data.key;
  }

  /** Marks a node and its neighbours; undefined clears the selection. */
  select(name: string | undefined): void {
    this.selected = name;
    this.highlight();
  }

  fit(): void {
    let width = 0;
    let height = 0;
    for (const name of this.nodes.keys()) {
      const p = this.positions.get(name);
      if (p === undefined) continue;
      width = Math.max(width, p.x + NODE_W);
      height = Math.max(height, p.y + NODE_H);
    }
    const box = this.el.svg.getBoundingClientRect();
    if (width === 0 || box.width === 0) return;
    const k = Math.max(0.02, Math.min((box.width - 40) / width, (box.height - 40) / height, 1.5));
    this.view = {
      k,
      x: (box.width - width * k) / 2,
      y: Math.max(20, (box.height - height * k) / 2),
    };
    this.applyTransform();
  }

  /** Zooms about the centre. */
  zoomBy(factor: number): void {
    const box = this.el.svg.getBoundingClientRect();
    this.zoomAt(box.width / 2, box.height / 2, this.view.k * factor);
  }

  // ---- drawing ------------------------------------------------------------------------------
  private make(data: UiNode): DrawnNode {
    const el = svgEl('g', { class: 'node', 'data-task': data.name, 'data-state': data.state });
    if (data.key !== undefined) el.dataset['key'] = data.key;
    el.appendChild(svgEl('rect', { width: NODE_W, height: NODE_H, rx: 6 }));
    const text = svgEl('text', { x: 10, y: NODE_H / 2 + 4 });
    el.appendChild(text);
    const title = svgEl('title');
    el.appendChild(title);
    const entry: DrawnNode = { data, el, text, title };
    this.update(entry, data);
    return entry;
  }

  private update(entry: DrawnNode, data: UiNode): void {
    entry.data = data;
    entry.el.setAttribute('data-state', data.state);
    entry.el.classList.toggle('gone', data.gone === true);
    entry.el.classList.toggle('cancelled', data.cancelled === true);
    if (data.key !== undefined) entry.el.dataset['key'] = data.key;
    entry.text.textContent = nodeText(data);
    const note = data.cancelled
      ? ' (deleted by the cancel)'
      : data.gone
        ? ' (finished; no record kept)'
        : '';
    const key = data.key !== undefined ? `${data.key} \u00b7 ` : '';
    entry.title.textContent = `${key}${data.name}${data.fn ? ` \u00b7 ${data.fn}` : ''} \u00b7 ${data.state}${note}`;
  }

  private applyTransform(): void {
    this.el.viewport.setAttribute(
      'transform',
      `translate(${this.view.x},${this.view.y}) scale(${this.view.k})`,
    );
  }

  /** Moves nodes to a layout and redraws the edges; node elements are kept (colours are not touched). */
  private apply(layout: Layout, engine: 'quick' | 'elk'): void {
    for (const [name, position] of Object.entries(layout.positions)) {
      this.positions.set(name, position);
      this.nodes.get(name)?.el.setAttribute('transform', `translate(${position.x},${position.y})`);
    }
    const fragment = document.createDocumentFragment();
    this.edgePaths = new Map();
    for (const edge of this.edges) {
      const from = this.positions.get(edge.source);
      const to = this.positions.get(edge.target);
      const points = layout.edges[edge.id] ?? (from && to ? straightEdge(from, to) : undefined);
      if (points === undefined) continue;
      const path = svgEl('path', {
        d: pathData(points),
        'marker-end': 'url(#arrow)',
        'data-edge': edge.id,
      });
      this.edgePaths.set(edge.id, path);
      fragment.appendChild(path);
    }
    this.el.edges.textContent = '';
    this.el.edges.appendChild(fragment);
    this.el.viewport.removeAttribute('visibility');
    document.documentElement.dataset['layout'] = engine;
    if (this.stats.firstRenderMs === null) {
      this.stats.firstRenderMs = performance.now();
      document.documentElement.dataset['rendered'] = 'true';
    }
    // Fit once, and again when ELK's layout replaces the quick one, unless the user moved the view.
    if (!this.fitted || (engine === 'elk' && this.stats.layouts === 1 && !this.userMoved)) {
      this.fit();
      this.fitted = true;
    }
    this.highlight();
  }

  private onLayout(answer: LayoutAnswer): void {
    if ('error' in answer) {
      this.el.layoutInfo.textContent = `layout failed: ${answer.error}`;
      if (this.stats.quickLayouts === 0) {
        this.stats.quickLayouts++;
        this.apply(quickLayout(this.data(), this.edges), 'quick');
      }
      return;
    }
    this.stats.layouts++;
    this.stats.elkMs = Math.round(answer.ms);
    this.apply(answer.layout, 'elk');
    this.stats.elkAppliedMs = performance.now();
    const where = this.stats.engine === 'worker' ? 'web worker' : 'page';
    this.el.layoutInfo.textContent = `${this.nodes.size} tasks \u00b7 ${this.edges.length} edges \u00b7 ELK layout ${this.stats.elkMs} ms (${where})`;
  }

  /** The set of nodes or edges changed: add and remove node elements, place new ones at once, lay out again. */
  private rebuild(list: readonly UiNode[]): void {
    this.stats.structureChanges++;
    const keep = new Set<string>();
    const fragment = document.createDocumentFragment();
    for (const data of list) {
      keep.add(data.name);
      const entry = this.nodes.get(data.name);
      if (entry !== undefined) {
        this.update(entry, data);
        continue;
      }
      const made = this.make(data);
      this.nodes.set(data.name, made);
      fragment.appendChild(made.el);
    }
    for (const [name, entry] of this.nodes) {
      if (keep.has(name)) continue;
      entry.el.remove();
      this.nodes.delete(name);
      this.positions.delete(name);
    }
    this.el.nodes.appendChild(fragment);
    this.edges = edgesOf(list);
    this.stats.nodes = this.nodes.size;
    this.structure = structureKey(list);
    // Big graphs are drawn at once with a quick layering while ELK works; new nodes too.
    const unplaced = list.some((data) => !this.positions.has(data.name));
    if (unplaced && (list.length > QUICK_FIRST_ABOVE || this.stats.layouts > 0)) {
      const quick = quickLayout(list, this.edges);
      const placed = Object.fromEntries(
        list.map((data) => [
          data.name,
          this.positions.get(data.name) ?? quick.positions[data.name] ?? { x: 0, y: 0 },
        ]),
      );
      this.stats.quickLayouts++;
      this.apply(
        { positions: placed, edges: {}, width: quick.width, height: quick.height },
        this.stats.layouts > 0 ? 'elk' : 'quick',
      );
    }
    if (list.length > 0) {
      this.el.layoutInfo.textContent = `${this.nodes.size} tasks \u00b7 laying out\u2026`;
      this.layout.request(elkGraph(list, this.edges));
    } else {
      this.el.layoutInfo.textContent = 'no tasks yet';
    }
  }

  private highlight(): void {
    for (const entry of this.nodes.values()) entry.el.classList.remove('selected', 'related');
    for (const path of this.edgePaths.values()) path.classList.remove('hot');
    const selected = this.selected === undefined ? undefined : this.nodes.get(this.selected);
    if (selected === undefined) return;
    selected.el.classList.add('selected');
    for (const edge of this.edges) {
      if (edge.target !== this.selected && edge.source !== this.selected) continue;
      this.nodes
        .get(edge.target === this.selected ? edge.source : edge.target)
        ?.el.classList.add('related');
      this.edgePaths.get(edge.id)?.classList.add('hot');
    }
  }

  // ---- pan, zoom, click ---------------------------------------------------------------------
  private zoomAt(px: number, py: number, wanted: number): void {
    this.userMoved = true;
    const k = Math.min(4, Math.max(0.02, wanted));
    this.view = {
      k,
      x: px - (px - this.view.x) * (k / this.view.k),
      y: py - (py - this.view.y) * (k / this.view.k),
    };
    this.applyTransform();
  }

  private listen(): void {
    const { svg } = this.el;
    let drag:
      { x: number; y: number; vx: number; vy: number; moved: boolean; id: number } | undefined;
    let suppressClick = false;
    svg.addEventListener('pointerdown', (event) => {
      drag = {
        x: event.clientX,
        y: event.clientY,
        vx: this.view.x,
        vy: this.view.y,
        moved: false,
        id: event.pointerId,
      };
    });
    svg.addEventListener('pointermove', (event) => {
      if (drag === undefined) return;
      const dx = event.clientX - drag.x;
      const dy = event.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.moved) {
        drag.moved = true;
        svg.setPointerCapture(drag.id);
        svg.classList.add('panning');
      }
      this.userMoved = true;
      this.view = { ...this.view, x: drag.vx + dx, y: drag.vy + dy };
      this.applyTransform();
    });
    const endDrag = (): void => {
      if (drag?.moved === true) {
        suppressClick = true; // the click that ends a pan selects nothing
        setTimeout(() => (suppressClick = false), 0);
      }
      drag = undefined;
      svg.classList.remove('panning');
    };
    svg.addEventListener('pointerup', endDrag);
    svg.addEventListener('pointercancel', endDrag);
    svg.addEventListener(
      'wheel',
      (event) => {
        event.preventDefault();
        const box = svg.getBoundingClientRect();
        this.zoomAt(
          event.clientX - box.left,
          event.clientY - box.top,
          this.view.k * Math.exp(-event.deltaY * 0.0015),
        );
      },
      { passive: false },
    );
    this.el.nodes.addEventListener('click', (event) => {
      if (suppressClick) return;
      const target = event.target instanceof Element ? event.target.closest('g.node') : null;
      const name = target?.getAttribute('data-task');
      if (name) this.onSelect(name);
    });
  }
}
