import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import * as G from '../../src/ui/browser/graph.js';
import type { ElkOutput, GraphNode } from '../../src/ui/browser/graph.js';
import { byName } from '../../src/ui/ui-wire.js';

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const t = (serial: number, inputs: number[] = [], fn = 'f'): GraphNode => ({
  name: `task-${String(serial).padStart(10, '0')}`,
  fn,
  inputs: inputs.map((i) => `task-${String(i).padStart(10, '0')}`),
});

describe('graph helpers of the page', () => {
  it('labels tasks by serial', () => {
    expect(G.shortLabel('task-0000000042')).toBe('#42');
    expect(G.shortLabel('task-0000000000')).toBe('#0');
    expect(G.shortLabel('odd')).toBe('odd');
    expect(G.nodeText(t(7, [], 'sum'))).toBe('#7 sum');
    expect(G.nodeText(t(7, [], 'a-very-long-function-name'))).toBe('#7 a-very-long-funct…');
    expect(G.nodeText({ ...t(7, [], 'sum'), key: 'load-eu' })).toBe('load-eu sum');
    expect(G.nodeText({ ...t(7, [], 'sum'), key: 'a-key-of-thirty-characters-xx' })).toBe(
      'a-key-of-thirty-char…',
    );
  });

  it('makes one edge per distinct input whose producer is drawn', () => {
    const edges = plain(G.edgesOf([t(1), t(2, [1, 1, 9]), t(3, [1, 2, 3])]));
    expect(edges).toEqual([
      {
        id: 'task-0000000001>task-0000000002',
        source: 'task-0000000001',
        target: 'task-0000000002',
      },
      {
        id: 'task-0000000001>task-0000000003',
        source: 'task-0000000001',
        target: 'task-0000000003',
      },
      {
        id: 'task-0000000002>task-0000000003',
        source: 'task-0000000002',
        target: 'task-0000000003',
      },
    ]);
  });

  it('changes the structure key only when nodes or inputs change', () => {
    const nodes = [t(1), t(2, [1])];
    expect(G.structureKey(nodes)).toBe(
      G.structureKey([t(1, [], 'g'), { ...t(2, [1]), gone: true }]),
    );
    expect(G.structureKey(nodes)).not.toBe(G.structureKey([t(1), t(2, [])]));
    expect(G.structureKey(nodes)).not.toBe(G.structureKey([t(1), t(2, [1]), t(3)]));
  });

  it('lays out in columns by longest input chain, left to right', () => {
    const nodes = [t(1), t(2), t(3, [1]), t(4, [3, 2]), t(5, [1])];
    const layout = plain(G.quickLayout(nodes, G.edgesOf(nodes)));
    const column = (serial: number): number =>
      (layout.positions[`task-${String(serial).padStart(10, '0')}`]?.x ?? -1) / (G.NODE_W + 60);
    expect([1, 2, 3, 4, 5].map(column)).toEqual([0, 0, 1, 2, 1]);
    expect(layout.width).toBe(3 * G.NODE_W + 2 * 60);
    expect(Object.keys(layout.edges)).toHaveLength(4);
    // No two nodes overlap.
    const spots = new Set(Object.values(layout.positions).map(({ x, y }) => `${x},${y}`));
    expect(spots.size).toBe(5);
  });

  it('still places every node of a cycle (malformed plans)', () => {
    const nodes = [t(1, [2]), t(2, [1]), t(3)];
    const layout = plain(G.quickLayout(nodes, G.edgesOf(nodes)));
    expect(Object.keys(layout.positions)).toHaveLength(3);
  });

  it('lays out 1 000 nodes quickly', () => {
    const nodes = Array.from({ length: 1000 }, (_, i) =>
      t(i, i < 100 ? [] : [i - 100, i - 100 - (i % 7)]),
    );
    const started = performance.now();
    const layout = G.quickLayout(nodes, G.edgesOf(nodes));
    expect(performance.now() - started).toBeLessThan(200);
    expect(Object.keys(layout.positions)).toHaveLength(1000);
  });

  it('asks ELK for a layered layout, left to right, cheaper for big graphs', () => {
    const nodes = [t(1), t(2, [1])];
    const input = plain(G.elkGraph(nodes, G.edgesOf(nodes)));
    expect(input.layoutOptions['elk.algorithm']).toBe('layered');
    expect(input.layoutOptions['elk.direction']).toBe('RIGHT');
    expect(input.layoutOptions['elk.edgeRouting']).toBe('ORTHOGONAL');
    expect(input.children).toEqual([
      { id: 'task-0000000001', width: G.NODE_W, height: G.NODE_H },
      { id: 'task-0000000002', width: G.NODE_W, height: G.NODE_H },
    ]);
    expect(input.edges).toEqual([
      {
        id: 'task-0000000001>task-0000000002',
        sources: ['task-0000000001'],
        targets: ['task-0000000002'],
      },
    ]);
    const big = Array.from({ length: 301 }, (_, i) => t(i));
    expect(G.elkGraph(big, []).layoutOptions['elk.edgeRouting']).toBe('POLYLINE');
  });

  it('reads ELK output (run by elkjs here) into positions and edge polylines', async () => {
    const ELK = createRequire(import.meta.url)('elkjs/lib/elk.bundled.js') as new () => {
      layout(graph: unknown): Promise<unknown>;
    };
    const nodes = [t(1), t(2, [1]), t(3, [1]), t(4, [2, 3])];
    const out = (await new ELK().layout(plain(G.elkGraph(nodes, G.edgesOf(nodes))))) as ElkOutput;
    const layout = plain(G.readElk(out));
    const x = (serial: number): number =>
      layout.positions[`task-${String(serial).padStart(10, '0')}`]?.x ?? Number.NaN;
    expect(x(1)).toBeLessThan(x(2));
    expect(x(2)).toBe(x(3));
    expect(x(3)).toBeLessThan(x(4));
    expect(Object.keys(layout.edges)).toHaveLength(4);
    for (const points of Object.values(layout.edges))
      expect(points.length).toBeGreaterThanOrEqual(2);
    expect(layout.width).toBeGreaterThan(x(4));
  });

  it('sorts nodes as the server does: serials as numbers', () => {
    const names = ['task-10', 'task-9', 'task-100', 'task-11'].map((name) => ({
      name,
      fn: '',
      inputs: [],
    }));
    expect(names.sort(byName).map((node) => node.name)).toEqual([
      'task-9',
      'task-10',
      'task-11',
      'task-100',
    ]);
  });

  it('writes SVG path data', () => {
    expect(
      G.pathData([
        [0, 0],
        [10.26, 5],
        [20, 5.04],
      ]),
    ).toBe('M0 0 L10.3 5 L20 5');
  });
});
