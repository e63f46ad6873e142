/**
 * The plan page's drawing. Repeated shapes (graph-groups.ts) are drawn as one group node that
 * opens into a grid of its members; the layout (a quick layering at once for big graphs, ELK's
 * when it comes) runs on this collapsed graph, so a plan of thousands of tasks in big fan-outs
 * lays out as a graph of tens of nodes. Text is hidden when too small to read (graph-view.ts),
 * a minimap shows where the view is, and a search finds and centres tasks. Elements are kept
 * across updates; only what changed is touched.
 */
import { applyChange, type UiChange, type UiNode } from '../ui-wire.js';
import { svgEl } from './dom.js';
import {
  GROUP_H,
  GROUP_W,
  NODE_H,
  NODE_W,
  TASK_SIZE,
  edgesOf,
  elkGraph,
  memberGrid,
  memberOffset,
  pathData,
  quickLayout,
  straightEdge,
  structureKey,
  type Edge,
  type GraphNode,
  type Layout,
  type Size,
} from './graph.js';
import {
  groupTasks,
  mainState,
  stateCounts,
  type Grouping,
  type TaskGroup,
} from './graph-groups.js';
import {
  drawGroupElement,
  makeGroupElement,
  makeTaskElement,
  updateTaskElement,
  type GroupElement,
  type TaskElement,
} from './graph-nodes.js';
import { searchTasks } from './graph-search.js';
import {
  READABLE_ZOOM,
  centreOn,
  contains,
  fitView,
  initialView,
  levelOfDetail,
  minimapFrame,
  toMinimap,
  viewForMinimapPoint,
  visibleBox,
  zoomAbout,
  type Box,
  type View,
} from './graph-view.js';
import { LayoutEngine, type LayoutAnswer } from './layout-engine.js';
import { MINIMAP_H, MINIMAP_PAD, MINIMAP_W, Minimap, type MinimapItem } from './minimap.js';
import type { PageStats } from './page-stats.js';

export interface CanvasElements {
  readonly svg: SVGSVGElement;
  readonly viewport: SVGGElement;
  readonly edges: SVGGElement;
  readonly nodes: SVGGElement;
  readonly layoutInfo: HTMLElement;
  /** The minimap's box (a `<canvas>` and a `.minimap-view` inside); none, no minimap. */
  readonly minimap?: HTMLElement;
  /** The search input and where it says how many it found; none, no search box. */
  readonly search?: HTMLInputElement;
  readonly searchInfo?: HTMLElement;
}

/** Graphs with more tasks or drawn nodes than this are drawn at once with the quick layering while ELK works. */
const QUICK_FIRST_ABOVE = 300;
/** Screen pixels left around a fitted graph. */
const FIT_MARGIN = 20;
/** A search waits this long after the last key before it centres a task. */
const SEARCH_DELAY_MS = 150;

/** The tasks' structure as grouping sees it: names, inputs and functions. */
function shapeKey(list: readonly UiNode[]): string {
  return `${structureKey(list)}|${list.map((node) => node.fn).join(',')}`;
}

export class GraphCanvas {
  /** Every task, in the wire's order. */
  private tasks = new Map<string, UiNode>();
  private grouping: Grouping = { groups: [], groupOf: new Map() };
  private groupById = new Map<string, TaskGroup>();
  private readonly openGroups = new Set<string>();
  /** Groups opened by the search, closed again when it moves on. */
  private readonly openedBySearch = new Set<string>();
  private readonly taskEls = new Map<string, TaskElement>();
  private readonly groupEls = new Map<string, GroupElement>();
  private taskEdges: Edge[] = [];
  /** The drawn graph: tasks outside groups and groups, and the edges between them. */
  private items: GraphNode[] = [];
  private itemEdges: Edge[] = [];
  private readonly sizes = new Map<string, Size>();
  private edgePaths = new Map<string, SVGPathElement>();
  private readonly positions = new Map<string, { x: number; y: number }>();
  private bounds: Box = { x: 0, y: 0, width: 0, height: 0 };
  private shape = '';
  private drawnShape = '';
  private selected: string | undefined;
  private matches: string[] = [];
  private matchIndex = -1;
  private query = '';
  /** A task to centre once the layout under way is applied (its group was just opened). */
  private pendingFocus: string | undefined;
  /** A group opened or closed by hand: kept where it is on screen when the new layout lands. */
  private anchor: { readonly id: string; readonly x: number; readonly y: number } | undefined;
  private view: View = { k: 1, x: 20, y: 20 };
  private fitted = false; // fitted to the drawing once
  private userMoved = false; // panned or zoomed by hand: layouts no longer re-fit
  private readonly marked = new Set<Element>();
  private readonly dirtyGroups = new Set<string>();
  private minimapQueued = false;
  private readonly groupsLayer: SVGGElement;
  private readonly minimap: Minimap | undefined;
  private readonly layout: LayoutEngine;

  constructor(
    private readonly el: CanvasElements,
    private readonly stats: PageStats,
    private readonly onSelect: (name: string) => void,
  ) {
    this.groupsLayer = svgEl('g', { class: 'groups' });
    el.viewport.insertBefore(this.groupsLayer, el.nodes);
    this.minimap =
      el.minimap === undefined
        ? undefined
        : new Minimap(el.minimap, (mx, my) => this.onMinimap(mx, my));
    this.layout = new LayoutEngine(stats, (answer) => this.onLayout(answer));
    this.listen();
    this.listenToSearch();
  }

  /** Every task's data (drawn alone or in a group), in the order given. */
  data(): UiNode[] {
    return [...this.tasks.values()];
  }

  /** Draws `list`: regroups and lays out again when tasks, inputs or functions changed, else recolours what changed. */
  show(list: readonly UiNode[]): void {
    if (shapeKey(list) !== this.shape) {
      this.rebuild(list);
      return;
    }
    for (const data of list) {
      const known = this.tasks.get(data.name);
      if (known !== data) this.setTask(data);
    }
  }

  /** Recolours (and relabels) one task in place (a diff's `changed`), or its group's counts; false when it is not known. */
  recolour(change: UiChange): boolean {
    const known = this.tasks.get(change[0]);
    if (known === undefined) return false;
    const data = applyChange(known, change);
    if (data.fn !== known.fn) {
      // The function is part of what groups tasks: group again.
      this.tasks.set(data.name, data);
      this.rebuild(this.data());
      return true;
    }
    this.setTask(data);
    return true;
  }

  /** The key of a task, when it has one. */
  keyOf(name: string): string | undefined {
    return this.tasks.get(name)?.key;
  }

  /** Marks a task and its neighbours (opening its group); undefined clears the selection. */
  select(name: string | undefined): void {
    this.selected = name;
    if (name !== undefined) this.openGroupOf(name);
    this.highlight();
  }

  /** Centres a task, at a zoom where its label reads, opening its group; false when it is not known. */
  focus(name: string): boolean {
    if (!this.tasks.has(name)) return false;
    this.userMoved = true;
    // Centred again when the layout under way lands: its group just opened, or it is not placed yet.
    if (this.openGroupOf(name) || this.taskPosition(name) === undefined) this.pendingFocus = name;
    this.centre(name);
    return true;
  }

  /** Fits the whole graph in the view. */
  fit(): void {
    const box = this.el.svg.getBoundingClientRect();
    if (this.bounds.width === 0 || box.width === 0) return;
    this.view = fitView(this.bounds, box.width, box.height, FIT_MARGIN);
    this.applyTransform();
  }

  /** Zooms about the centre. */
  zoomBy(factor: number): void {
    const box = this.el.svg.getBoundingClientRect();
    this.zoomAt(box.width / 2, box.height / 2, this.view.k * factor);
  }

  /** Opens a group (by its id, `group:<first member>`), or closes it; false when there is no such group. */
  setGroupOpen(id: string, open: boolean): boolean {
    if (!this.groupById.has(id)) return false;
    if (open === this.openGroups.has(id)) return true;
    const position = this.positions.get(id);
    if (position !== undefined)
      this.anchor = {
        id,
        x: this.view.x + position.x * this.view.k,
        y: this.view.y + position.y * this.view.k,
      };
    if (open) this.openGroups.add(id);
    else this.openGroups.delete(id);
    this.openedBySearch.delete(id);
    this.redraw();
    this.highlight();
    return true;
  }

  /** Finds the tasks `query` names (graph-search.ts), marks them and centres the first; returns how many. */
  find(query: string): number {
    this.query = query;
    this.matches = searchTasks(this.data(), query);
    this.matchIndex = this.matches.length > 0 ? 0 : -1;
    this.showMatch();
    return this.matches.length;
  }

  /** Centres the next (or, `step` −1, the previous) task the search found. */
  findNext(step = 1): void {
    if (this.matches.length === 0) return;
    this.matchIndex = (this.matchIndex + step + this.matches.length) % this.matches.length;
    this.showMatch();
  }

  // ---- the model ------------------------------------------------------------------------------
  private setTask(data: UiNode): void {
    const known = this.tasks.get(data.name);
    this.tasks.set(data.name, data);
    const entry = this.taskEls.get(data.name);
    if (
      entry !== undefined &&
      (known === undefined ||
        known.state !== data.state ||
        !known.gone !== !data.gone ||
        !known.cancelled !== !data.cancelled ||
        known.key !== data.key)
    )
      updateTaskElement(entry, data);
    const group = this.grouping.groupOf.get(data.name);
    if (group !== undefined && known?.state !== data.state) this.markGroup(group);
    if (known?.state !== data.state) this.queueMinimap();
  }

  /** The tasks' structure changed: group again, then draw. */
  private rebuild(list: readonly UiNode[]): void {
    this.stats.structureChanges++;
    this.tasks = new Map(list.map((data) => [data.name, data]));
    this.shape = shapeKey(list);
    this.grouping = groupTasks(list);
    this.groupById = new Map(this.grouping.groups.map((group) => [group.id, group]));
    for (const id of [...this.openGroups]) if (!this.groupById.has(id)) this.openGroups.delete(id);
    this.taskEdges = edgesOf(list);
    this.stats.nodes = list.length;
    this.stats.groups = this.grouping.groups.length;
    this.redraw();
    if (this.query !== '') this.matches = searchTasks(list, this.query);
    this.highlight();
  }

  /** Opens the closed group holding `name`, if any; true when it did. */
  private openGroupOf(name: string): boolean {
    const group = this.grouping.groupOf.get(name);
    if (group === undefined || this.openGroups.has(group)) return false;
    this.openGroups.add(group);
    this.redraw();
    return true;
  }

  /** The size a group is drawn at: closed, a box; open, a frame around its members. */
  private sizeOfGroup(group: TaskGroup): Size {
    return this.openGroups.has(group.id)
      ? memberGrid(group.members.length).size
      : { width: GROUP_W, height: GROUP_H };
  }

  // ---- drawing --------------------------------------------------------------------------------
  /** Makes the elements the open and closed groups call for, then lays the drawn graph out when it changed. */
  private redraw(): void {
    const { groupOf } = this.grouping;
    const wanted = new Set<string>();
    const fragment = document.createDocumentFragment();
    for (const [name, data] of this.tasks) {
      const group = groupOf.get(name);
      if (group !== undefined && !this.openGroups.has(group)) continue;
      wanted.add(name);
      const entry = this.taskEls.get(name);
      if (entry !== undefined) {
        if (entry.data !== data) updateTaskElement(entry, data);
        continue;
      }
      const made = makeTaskElement(data);
      this.taskEls.set(name, made);
      fragment.appendChild(made.el);
    }
    for (const [name, entry] of this.taskEls) {
      if (wanted.has(name)) continue;
      entry.el.remove();
      this.taskEls.delete(name);
    }
    this.el.nodes.appendChild(fragment);
    for (const [id, entry] of this.groupEls) {
      if (this.groupById.get(id) === entry.group) continue;
      entry.el.remove();
      this.groupEls.delete(id);
    }
    for (const group of this.grouping.groups) {
      let entry = this.groupEls.get(group.id);
      if (entry === undefined) {
        entry = makeGroupElement(group);
        this.groupEls.set(group.id, entry);
        this.groupsLayer.appendChild(entry.el);
      }
      const open = this.openGroups.has(group.id);
      if (entry.open !== open) this.drawGroup(entry);
    }
    this.stats.openGroups = this.openGroups.size;
    this.stats.drawn = this.taskEls.size + this.grouping.groups.length - this.openGroups.size;

    // The drawn graph: a group stands for its members, and edges join what is drawn.
    const items: GraphNode[] = [];
    this.sizes.clear();
    const drawnAs = (name: string): string => groupOf.get(name) ?? name;
    for (const [name, data] of this.tasks) {
      const groupId = groupOf.get(name);
      const group = groupId === undefined ? undefined : this.groupById.get(groupId);
      if (group !== undefined && group.members[0] !== name) continue;
      const id = group?.id ?? name;
      items.push({ name: id, fn: data.fn, inputs: data.inputs.map(drawnAs) });
      this.sizes.set(id, group === undefined ? TASK_SIZE : this.sizeOfGroup(group));
    }
    this.items = items;
    this.itemEdges = edgesOf(items);
    for (const id of [...this.positions.keys()]) if (!this.sizes.has(id)) this.positions.delete(id);
    // An open group grows with its members: its size is part of the drawn shape.
    const openSizes = [...this.openGroups]
      .sort()
      .map((id) => `${id}:${this.sizes.get(id)?.width}x${this.sizes.get(id)?.height}`);
    const drawnShape = `${structureKey(items)}|${openSizes.join(',')}`;
    if (drawnShape === this.drawnShape) return;
    this.drawnShape = drawnShape;
    this.layOut();
  }

  private drawGroup(entry: GroupElement): void {
    drawGroupElement(
      entry,
      this.openGroups.has(entry.group.id),
      this.sizeOfGroup(entry.group),
      stateCounts(entry.group.members, this.tasks),
    );
  }

  /** Places new nodes at once (big graphs, or after a first layout) and asks ELK for the layout. */
  private layOut(): void {
    const items = this.items;
    const sizeOf = (id: string): Size => this.sizes.get(id) ?? TASK_SIZE;
    const unplaced = items.some((item) => !this.positions.has(item.name));
    const big = items.length > QUICK_FIRST_ABOVE || this.tasks.size > QUICK_FIRST_ABOVE;
    if (unplaced && (big || this.stats.layouts > 0)) {
      const quick = quickLayout(items, this.itemEdges, sizeOf);
      const placed = Object.fromEntries(
        items.map((item) => [
          item.name,
          this.positions.get(item.name) ?? quick.positions[item.name] ?? { x: 0, y: 0 },
        ]),
      );
      this.stats.quickLayouts++;
      this.apply(
        { positions: placed, edges: {}, width: quick.width, height: quick.height },
        this.stats.layouts > 0 ? 'elk' : 'quick',
      );
    } else if (!unplaced && items.length > 0) {
      // Same nodes, new sizes (a group opened or closed): members and edges move at once.
      this.apply({ positions: {}, edges: {}, width: 0, height: 0 }, this.currentEngine());
    }
    if (items.length > 0) {
      this.el.layoutInfo.textContent = `${this.describe()} \u00b7 laying out\u2026`;
      this.layout.request(elkGraph(items, this.itemEdges, sizeOf));
    } else {
      this.el.layoutInfo.textContent = 'no tasks yet';
    }
  }

  private currentEngine(): 'quick' | 'elk' {
    return document.documentElement.dataset['layout'] === 'elk' ? 'elk' : 'quick';
  }

  private describe(): string {
    const groups = this.grouping.groups.length;
    const grouped = groups === 0 ? '' : ` in ${this.items.length} nodes (${groups} groups)`;
    return `${this.tasks.size} tasks${grouped}`;
  }

  private applyTransform(): void {
    this.el.viewport.setAttribute(
      'transform',
      `translate(${this.view.x},${this.view.y}) scale(${this.view.k})`,
    );
    const detail = levelOfDetail(this.view.k);
    this.el.svg.classList.toggle('lod-no-task-labels', !detail.taskLabels);
    this.el.svg.classList.toggle('lod-no-group-labels', !detail.groupLabels);
    this.showViewportOnMinimap();
  }

  /** Moves nodes to a layout (positions it lacks are kept) and redraws the edges. */
  private apply(layout: Layout, engine: 'quick' | 'elk'): void {
    for (const [name, position] of Object.entries(layout.positions))
      if (this.sizes.has(name)) this.positions.set(name, position);
    this.placeElements();
    const sizeOf = (id: string): Size => this.sizes.get(id) ?? TASK_SIZE;
    const fragment = document.createDocumentFragment();
    this.edgePaths = new Map();
    for (const edge of this.itemEdges) {
      const from = this.positions.get(edge.source);
      const to = this.positions.get(edge.target);
      const points =
        layout.edges[edge.id] ??
        (from && to ? straightEdge(from, to, sizeOf(edge.source), sizeOf(edge.target)) : undefined);
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
    // The first view once, and again when ELK's layout replaces the quick one, unless the user moved the view.
    if (!this.fitted || (engine === 'elk' && this.stats.layouts === 1 && !this.userMoved)) {
      const box = this.el.svg.getBoundingClientRect();
      if (box.width > 0 && this.bounds.width > 0) {
        this.view = initialView(this.bounds, box.width, box.height, FIT_MARGIN);
        this.fitted = true;
      }
    }
    const anchored = this.anchor === undefined ? undefined : this.positions.get(this.anchor.id);
    if (this.anchor !== undefined && anchored !== undefined)
      this.view = {
        k: this.view.k,
        x: this.anchor.x - anchored.x * this.view.k,
        y: this.anchor.y - anchored.y * this.view.k,
      };
    if (this.pendingFocus !== undefined) this.centre(this.pendingFocus);
    this.applyTransform();
    this.highlight();
    this.queueMinimap();
  }

  /** Sets every drawn element's position from the layout, members in their group's grid. */
  private placeElements(): void {
    let right = -Infinity;
    let bottom = -Infinity;
    let left = Infinity;
    let top = Infinity;
    for (const [id, position] of this.positions) {
      const size = this.sizes.get(id) ?? TASK_SIZE;
      left = Math.min(left, position.x);
      top = Math.min(top, position.y);
      right = Math.max(right, position.x + size.width);
      bottom = Math.max(bottom, position.y + size.height);
      const group = this.groupById.get(id);
      if (group === undefined) {
        this.taskEls
          .get(id)
          ?.el.setAttribute('transform', `translate(${position.x},${position.y})`);
        continue;
      }
      this.groupEls.get(id)?.el.setAttribute('transform', `translate(${position.x},${position.y})`);
      if (!this.openGroups.has(id)) continue;
      const { columns } = memberGrid(group.members.length);
      for (const [index, member] of group.members.entries()) {
        const offset = memberOffset(index, columns);
        this.taskEls
          .get(member)
          ?.el.setAttribute(
            'transform',
            `translate(${position.x + offset.x},${position.y + offset.y})`,
          );
      }
    }
    this.bounds =
      left === Infinity
        ? { x: 0, y: 0, width: 0, height: 0 }
        : { x: left, y: top, width: right - left, height: bottom - top };
  }

  /** Where a task is drawn (its box's top left), alone or inside its open group; undefined when not placed. */
  private taskPosition(name: string): { x: number; y: number } | undefined {
    const groupId = this.grouping.groupOf.get(name);
    const group = groupId === undefined ? undefined : this.groupById.get(groupId);
    if (group === undefined) return this.positions.get(name);
    const position = this.positions.get(group.id);
    if (position === undefined) return undefined;
    if (!this.openGroups.has(group.id)) return position;
    const offset = memberOffset(
      group.members.indexOf(name),
      memberGrid(group.members.length).columns,
    );
    return { x: position.x + offset.x, y: position.y + offset.y };
  }

  private centre(name: string): void {
    const position = this.taskPosition(name);
    const box = this.el.svg.getBoundingClientRect();
    if (position === undefined || box.width === 0) return;
    const k = Math.max(this.view.k, READABLE_ZOOM);
    this.view = centreOn(
      position.x + NODE_W / 2,
      position.y + NODE_H / 2,
      k,
      box.width,
      box.height,
    );
    this.applyTransform();
  }

  private onLayout(answer: LayoutAnswer): void {
    if ('error' in answer) {
      this.el.layoutInfo.textContent = `layout failed: ${answer.error}`;
      this.stats.quickLayouts++;
      const sizeOf = (id: string): Size => this.sizes.get(id) ?? TASK_SIZE;
      this.apply(quickLayout(this.items, this.itemEdges, sizeOf), 'quick');
      this.pendingFocus = undefined;
      this.anchor = undefined;
      return;
    }
    this.stats.layouts++;
    this.stats.elkMs = Math.round(answer.ms);
    this.apply(answer.layout, 'elk');
    this.pendingFocus = undefined;
    this.anchor = undefined;
    this.stats.elkAppliedMs = performance.now();
    const where = this.stats.engine === 'worker' ? 'web worker' : 'page';
    this.el.layoutInfo.textContent = `${this.describe()} \u00b7 ${this.itemEdges.length} edges \u00b7 ELK layout ${this.stats.elkMs} ms (${where})`;
  }

  /** The element that shows a task now: its own, or its closed group's. */
  private elementOf(name: string): Element | undefined {
    const own = this.taskEls.get(name);
    if (own !== undefined) return own.el;
    const group = this.grouping.groupOf.get(name);
    return group === undefined ? undefined : this.groupEls.get(group)?.el;
  }

  private mark(element: Element | undefined, name: string): void {
    if (element === undefined) return;
    element.classList.add(name);
    this.marked.add(element);
  }

  private highlight(): void {
    for (const element of this.marked)
      element.classList.remove('selected', 'related', 'match', 'current-match');
    this.marked.clear();
    for (const path of this.edgePaths.values()) path.classList.remove('hot');
    for (const name of this.matches) this.mark(this.elementOf(name), 'match');
    const current = this.matches[this.matchIndex];
    if (current !== undefined) this.mark(this.elementOf(current), 'current-match');
    if (this.selected === undefined) return;
    const selected = this.elementOf(this.selected);
    if (selected === undefined) return;
    this.mark(selected, 'selected');
    for (const edge of this.taskEdges) {
      if (edge.target !== this.selected && edge.source !== this.selected) continue;
      const other = this.elementOf(edge.target === this.selected ? edge.source : edge.target);
      if (other !== selected) this.mark(other, 'related');
    }
    const drawnAs = this.grouping.groupOf.get(this.selected) ?? this.selected;
    for (const edge of this.itemEdges)
      if (edge.source === drawnAs || edge.target === drawnAs)
        this.edgePaths.get(edge.id)?.classList.add('hot');
  }

  // ---- groups' counts, the minimap --------------------------------------------------------------
  /** A member changed state: its group's bar is redrawn once for all the changes of this turn. */
  private markGroup(id: string): void {
    if (this.dirtyGroups.size === 0) queueMicrotask(() => this.flushGroups());
    this.dirtyGroups.add(id);
  }

  private flushGroups(): void {
    for (const id of this.dirtyGroups) {
      const entry = this.groupEls.get(id);
      if (entry !== undefined) this.drawGroup(entry);
    }
    // The marks (selected, match) are on the group's <g>, which is kept: nothing to mark again.
    this.dirtyGroups.clear();
  }

  private queueMinimap(): void {
    if (this.minimap === undefined || this.minimapQueued) return;
    this.minimapQueued = true;
    const draw = (): void => {
      this.minimapQueued = false;
      this.drawMinimap();
    };
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(draw);
    else setTimeout(draw, 16);
  }

  private drawMinimap(): void {
    if (this.minimap === undefined || this.bounds.width === 0) return;
    const items: MinimapItem[] = [];
    for (const [id, position] of this.positions) {
      const size = this.sizes.get(id) ?? TASK_SIZE;
      const group = this.groupById.get(id);
      if (group === undefined) {
        const state = this.tasks.get(id)?.state ?? 'waiting';
        items.push({ ...position, ...size, state });
      } else if (!this.openGroups.has(id)) {
        items.push({
          ...position,
          ...size,
          state: mainState(stateCounts(group.members, this.tasks)),
        });
      } else {
        for (const member of group.members) {
          const at = this.taskPosition(member);
          const state = this.tasks.get(member)?.state ?? 'waiting';
          if (at !== undefined) items.push({ ...at, ...TASK_SIZE, state });
        }
      }
    }
    this.minimap.draw(minimapFrame(this.bounds, MINIMAP_W, MINIMAP_H, MINIMAP_PAD), items);
    this.showViewportOnMinimap();
  }

  /** Shows the minimap while part of the graph is out of view, with the view's rectangle on it. */
  private showViewportOnMinimap(): void {
    if (this.minimap === undefined) return;
    const box = this.el.svg.getBoundingClientRect();
    const visible = visibleBox(this.view, box.width, box.height);
    const needed = this.bounds.width > 0 && !contains(visible, this.bounds);
    const wasVisible = this.minimap.visible;
    this.minimap.setVisible(needed);
    if (!needed) return;
    if (!wasVisible) this.queueMinimap();
    const frame = minimapFrame(this.bounds, MINIMAP_W, MINIMAP_H, MINIMAP_PAD);
    this.minimap.showViewport(toMinimap(frame, visible));
  }

  private onMinimap(mx: number, my: number): void {
    const box = this.el.svg.getBoundingClientRect();
    const frame = minimapFrame(this.bounds, MINIMAP_W, MINIMAP_H, MINIMAP_PAD);
    this.userMoved = true;
    this.view = viewForMinimapPoint(frame, mx, my, this.view, box.width, box.height);
    this.applyTransform();
  }

  // ---- search ---------------------------------------------------------------------------------
  private showMatch(): void {
    const current = this.matches[this.matchIndex];
    // Groups the search opened for an earlier match close again, unless the selection is inside.
    for (const id of [...this.openedBySearch]) {
      const holdsCurrent = current !== undefined && this.grouping.groupOf.get(current) === id;
      const holdsSelected =
        this.selected !== undefined && this.grouping.groupOf.get(this.selected) === id;
      if (holdsCurrent || holdsSelected) continue;
      this.openedBySearch.delete(id);
      this.openGroups.delete(id);
    }
    this.redraw();
    if (current !== undefined) {
      const group = this.grouping.groupOf.get(current);
      if (group !== undefined && !this.openGroups.has(group)) this.openedBySearch.add(group);
      this.focus(current);
    }
    this.highlight();
    if (this.el.searchInfo !== undefined)
      this.el.searchInfo.textContent =
        this.query.trim() === ''
          ? ''
          : this.matches.length === 0
            ? 'no match'
            : `${this.matchIndex + 1}/${this.matches.length}`;
  }

  private listenToSearch(): void {
    const input = this.el.search;
    if (input === undefined) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    input.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.find(input.value), SEARCH_DELAY_MS);
    });
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        clearTimeout(timer);
        if (input.value !== this.query) this.find(input.value);
        else this.findNext(event.shiftKey ? -1 : 1);
      } else if (event.key === 'Escape') {
        clearTimeout(timer);
        input.value = '';
        this.find('');
      }
    });
  }

  // ---- pan, zoom, click -----------------------------------------------------------------------
  private zoomAt(px: number, py: number, wanted: number): void {
    this.userMoved = true;
    this.view = zoomAbout(this.view, px, py, wanted);
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
    // A wheel zooms about the pointer; a touchpad's pinch arrives as a wheel with ctrlKey, finer.
    svg.addEventListener(
      'wheel',
      (event) => {
        event.preventDefault();
        const box = svg.getBoundingClientRect();
        const rate = event.ctrlKey ? 0.01 : 0.0015;
        this.zoomAt(
          event.clientX - box.left,
          event.clientY - box.top,
          this.view.k * Math.exp(-event.deltaY * rate),
        );
      },
      { passive: false },
    );
    this.el.viewport.addEventListener('click', (event) => {
      if (suppressClick) return;
      const target = event.target instanceof Element ? event.target : null;
      const task = target?.closest('g.node')?.getAttribute('data-task');
      if (task) {
        this.onSelect(task);
        return;
      }
      const group = target?.closest('g.group');
      const id = group?.getAttribute('data-group');
      if (group == null || !id) return;
      const open = group.classList.contains('open');
      // An open group closes by its header only: a click between its members is not a close.
      if (!open || target?.closest('.group-header') != null) this.setGroupOpen(id, !open);
    });
  }
}
