/**
 * Pure graph helpers of the plan page, shared by the page and the layout worker: edges, a quick
 * layering, ELK's input and the reading of its output. No DOM: unit tests import them directly.
 */
import type { UiNode } from '../ui-wire.js';

export const NODE_W = 160;
export const NODE_H = 34;
const GAP_X = 60;
const GAP_Y = 14;

/** A closed group's node: wider and taller than a task's, for its title, bar and counts. */
export const GROUP_W = 200;
export const GROUP_H = 58;
/** An open group's frame: a header to close it by, then its members in a grid. */
export const GROUP_HEADER = 26;
const GROUP_PAD = 8;
const MEMBER_GAP_X = 12;
const MEMBER_GAP_Y = 10;
/** The open grid's shape on screen, width to height: about a wide window's. */
const GRID_ASPECT = 1.6;

/** The width and height of a drawn node, in graph units. */
export interface Size {
  readonly width: number;
  readonly height: number;
}
export const TASK_SIZE: Size = { width: NODE_W, height: NODE_H };
/** A node's size by its name; every node is a task's size unless told otherwise. */
export type SizeOf = (name: string) => Size;
const taskSize: SizeOf = () => TASK_SIZE;

/** An open group's members in a grid: its columns, and the size of the frame holding them. */
export function memberGrid(count: number): { readonly columns: number; readonly size: Size } {
  const cellW = NODE_W + MEMBER_GAP_X;
  const cellH = NODE_H + MEMBER_GAP_Y;
  const columns = Math.max(
    1,
    Math.min(count, Math.ceil(Math.sqrt((GRID_ASPECT * count * cellH) / cellW))),
  );
  const rows = Math.ceil(count / columns);
  return {
    columns,
    size: {
      width: 2 * GROUP_PAD + columns * cellW - MEMBER_GAP_X,
      height: GROUP_HEADER + GROUP_PAD + rows * cellH - MEMBER_GAP_Y,
    },
  };
}

/** Where member `index` of an open group sits, from the frame's top left corner. */
export function memberOffset(index: number, columns: number): { x: number; y: number } {
  return {
    x: GROUP_PAD + (index % columns) * (NODE_W + MEMBER_GAP_X),
    y: GROUP_HEADER + Math.floor(index / columns) * (NODE_H + MEMBER_GAP_Y),
  };
}

/** What the helpers need of a node. */
export type GraphNode = Pick<UiNode, 'name' | 'key' | 'fn' | 'inputs' | 'gone'>;

export interface Edge {
  readonly id: string;
  readonly source: string;
  readonly target: string;
}

export type Point = readonly [number, number];

/** Node positions and edge polylines, keyed by node name and edge id. */
export interface Layout {
  readonly positions: Readonly<Record<string, { readonly x: number; readonly y: number }>>;
  readonly edges: Readonly<Record<string, readonly Point[]>>;
  readonly width: number;
  readonly height: number;
}

/** The part of ELK's graph format the page writes. */
export interface ElkInput {
  readonly id: string;
  readonly layoutOptions: Readonly<Record<string, string>>;
  readonly children: readonly {
    readonly id: string;
    readonly width: number;
    readonly height: number;
  }[];
  readonly edges: readonly {
    readonly id: string;
    readonly sources: readonly string[];
    readonly targets: readonly string[];
  }[];
}

/** The part of ELK's laid-out graph the page reads. */
export interface ElkOutput {
  readonly width?: number;
  readonly height?: number;
  readonly children?: readonly { readonly id: string; readonly x?: number; readonly y?: number }[];
  readonly edges?: readonly {
    readonly id: string;
    readonly sections?: readonly {
      readonly startPoint: XY;
      readonly endPoint: XY;
      readonly bendPoints?: readonly XY[];
    }[];
  }[];
}
interface XY {
  readonly x: number;
  readonly y: number;
}

/** 'task-0000000042' → '#42'. */
export function shortLabel(name: string): string {
  const match = /^task-0*(\d+)$/.exec(name);
  return match ? `#${match[1]}` : name;
}

/** The text drawn in a node, within about 20 characters: its key when it has one (else `#42`), then its function. */
export function nodeText(node: GraphNode): string {
  const text = (node.key ?? shortLabel(node.name)) + (node.fn ? ` ${node.fn}` : '');
  return text.length > 21 ? `${text.slice(0, 20)}\u2026` : text;
}

/** One edge per distinct (input, task) pair whose both ends are nodes. */
export function edgesOf(nodes: readonly GraphNode[]): Edge[] {
  const known = new Set(nodes.map((node) => node.name));
  const seen = new Set<string>();
  const edges: Edge[] = [];
  for (const node of nodes) {
    for (const input of node.inputs) {
      const id = `${input}>${node.name}`;
      if (!known.has(input) || seen.has(id) || input === node.name) continue;
      seen.add(id);
      edges.push({ id, source: input, target: node.name });
    }
  }
  return edges;
}

/** A key that changes when the drawn structure (nodes, edges) changes. */
export function structureKey(nodes: readonly GraphNode[]): string {
  return nodes.map((node) => `${node.name}<${node.inputs.join(',')}`).join(';');
}

/** A straight edge from the right side of one node to the left side of another. */
export function straightEdge(
  from: { x: number; y: number },
  to: { x: number; y: number },
  fromSize: Size = TASK_SIZE,
  toSize: Size = TASK_SIZE,
): Point[] {
  return [
    [from.x + fromSize.width, from.y + fromSize.height / 2],
    [to.x, to.y + toSize.height / 2],
  ];
}

/**
 * A layering in O(nodes + edges): a node's column is the longest chain of inputs before it
 * (Kahn's order; nodes on a cycle go after the rest), rows in node order; a column is as wide as
 * its widest node. Straight edges.
 */
export function quickLayout(
  nodes: readonly GraphNode[],
  edges: readonly Edge[],
  sizeOf: SizeOf = taskSize,
): Layout {
  const depth = new Map<string, number>();
  const indegree = new Map<string, number>();
  const outs = new Map<string, string[]>();
  for (const node of nodes) {
    depth.set(node.name, 0);
    indegree.set(node.name, 0);
    outs.set(node.name, []);
  }
  for (const edge of edges) {
    outs.get(edge.source)?.push(edge.target);
    indegree.set(edge.target, (indegree.get(edge.target) ?? 0) + 1);
  }
  const queue = nodes.filter((node) => indegree.get(node.name) === 0).map((node) => node.name);
  for (let head = 0; head < queue.length; head++) {
    const name = queue[head] as string;
    for (const target of outs.get(name) ?? []) {
      depth.set(target, Math.max(depth.get(target) ?? 0, (depth.get(name) ?? 0) + 1));
      const left = (indegree.get(target) ?? 0) - 1;
      indegree.set(target, left);
      if (left === 0) queue.push(target);
    }
  }
  const columnWidths: number[] = [];
  for (const node of nodes) {
    const column = depth.get(node.name) ?? 0;
    columnWidths[column] = Math.max(columnWidths[column] ?? 0, sizeOf(node.name).width);
  }
  const columnX: number[] = [];
  let across = 0;
  for (let column = 0; column < columnWidths.length; column++) {
    columnX[column] = across;
    across += (columnWidths[column] ?? 0) + GAP_X;
  }
  const filled: number[] = [];
  const positions: Record<string, { x: number; y: number }> = {};
  let width = 0;
  let height = 0;
  for (const node of nodes) {
    const column = depth.get(node.name) ?? 0;
    const size = sizeOf(node.name);
    const x = columnX[column] ?? 0;
    const y = filled[column] ?? 0;
    filled[column] = y + size.height + GAP_Y;
    positions[node.name] = { x, y };
    width = Math.max(width, x + size.width);
    height = Math.max(height, y + size.height);
  }
  const edgePoints: Record<string, Point[]> = {};
  for (const edge of edges) {
    const from = positions[edge.source];
    const to = positions[edge.target];
    if (from !== undefined && to !== undefined)
      edgePoints[edge.id] = straightEdge(from, to, sizeOf(edge.source), sizeOf(edge.target));
  }
  return { positions, edges: edgePoints, width, height };
}

/** ELK's input: layered, left to right; big graphs get the cheaper settings. */
export function elkGraph(
  nodes: readonly GraphNode[],
  edges: readonly Edge[],
  sizeOf: SizeOf = taskSize,
): ElkInput {
  const big = nodes.length > 300;
  return {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.spacing.nodeNode': '14',
      'elk.layered.spacing.nodeNodeBetweenLayers': '48',
      'elk.spacing.componentComponent': '30',
      'elk.edgeRouting': big ? 'POLYLINE' : 'ORTHOGONAL',
      'elk.layered.thoroughness': big ? '1' : '7',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
    },
    children: nodes.map((node) => ({ id: node.name, ...sizeOf(node.name) })),
    edges: edges.map((edge) => ({ id: edge.id, sources: [edge.source], targets: [edge.target] })),
  };
}

/** Positions and edge polylines from ELK's output, in the shape quickLayout returns. */
export function readElk(graph: ElkOutput): Layout {
  const positions: Record<string, { x: number; y: number }> = {};
  const edgePoints: Record<string, Point[]> = {};
  for (const child of graph.children ?? [])
    positions[child.id] = { x: child.x ?? 0, y: child.y ?? 0 };
  for (const edge of graph.edges ?? []) {
    const section = edge.sections?.[0];
    if (section === undefined) continue;
    edgePoints[edge.id] = [
      [section.startPoint.x, section.startPoint.y],
      ...(section.bendPoints ?? []).map((point): Point => [point.x, point.y]),
      [section.endPoint.x, section.endPoint.y],
    ];
  }
  return { positions, edges: edgePoints, width: graph.width ?? 0, height: graph.height ?? 0 };
}

/** SVG path data of a polyline. */
export function pathData(points: readonly Point[]): string {
  const round = (value: number): number => Math.round(value * 10) / 10;
  return points
    .map((point, index) => `${index === 0 ? 'M' : 'L'}${round(point[0])} ${round(point[1])}`)
    .join(' ');
}
