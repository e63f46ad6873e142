import { describe, expect, it } from 'vitest';
import * as V from '../../src/ui/browser/graph-view.js';
import { searchTasks } from '../../src/ui/browser/graph-search.js';
import { memberGrid, memberOffset, NODE_H, NODE_W } from '../../src/ui/browser/graph.js';

const screen = { width: 1200, height: 800 };
/** Where graph point (gx, gy) lands on screen under `view`. */
const onScreen = (view: V.View, gx: number, gy: number): [number, number] => [
  view.x + gx * view.k,
  view.y + gy * view.k,
];

describe('level of detail by zoom', () => {
  it('draws each kind of text only while it is at least MIN_TEXT_PX on screen', () => {
    expect(V.levelOfDetail(1)).toEqual({ taskLabels: true, groupLabels: true });
    const taskEdge = V.MIN_TEXT_PX / V.TASK_FONT;
    expect(V.levelOfDetail(taskEdge).taskLabels).toBe(true);
    expect(V.levelOfDetail(taskEdge - 0.01)).toEqual({ taskLabels: false, groupLabels: true });
    expect(V.levelOfDetail(0.1)).toEqual({ taskLabels: false, groupLabels: false });
  });

  it('lets zoom reach far out and far enough in to read any label', () => {
    expect(V.clampZoom(1000)).toBe(V.MAX_ZOOM);
    expect(V.clampZoom(0)).toBe(V.MIN_ZOOM);
    expect(V.levelOfDetail(V.MAX_ZOOM).taskLabels).toBe(true);
  });
});

describe('fitting and the first view', () => {
  it('fits a graph inside the screen with its margin, never enlarging past 1.5', () => {
    const bounds = { x: 12, y: 12, width: 4000, height: 600 };
    const view = V.fitView(bounds, screen.width, screen.height, 20);
    const [left, top] = onScreen(view, bounds.x, bounds.y);
    const [right, bottom] = onScreen(view, bounds.x + bounds.width, bounds.y + bounds.height);
    expect(left).toBeCloseTo(20);
    expect(right).toBeCloseTo(screen.width - 20);
    expect(top).toBeGreaterThanOrEqual(20);
    expect(bottom).toBeLessThanOrEqual(screen.height - 20);
    expect(V.fitView({ x: 0, y: 0, width: 100, height: 40 }, 1200, 800, 20).k).toBe(1.5);
  });

  it('opens a graph that fits readably as fitted, and a big one at its start, readable', () => {
    const small = { x: 0, y: 0, width: 900, height: 300 };
    expect(V.initialView(small, screen.width, screen.height, 20)).toEqual(
      V.fitView(small, screen.width, screen.height, 20),
    );
    // A tall strip (a 1 000-task layered plan): fitted, its labels would be specks.
    const strip = { x: 12, y: 12, width: 2200, height: 48_000 };
    expect(V.levelOfDetail(V.fitView(strip, 1200, 800, 20).k).taskLabels).toBe(false);
    const view = V.initialView(strip, screen.width, screen.height, 20);
    expect(view.k).toBe(V.START_ZOOM);
    expect(V.levelOfDetail(view.k).taskLabels).toBe(true);
    expect(onScreen(view, strip.x, strip.y)).toEqual([20, 20]); // its top left corner
    // Wide but short: starts at the left, centred up and down.
    const wide = { x: 0, y: 0, width: 20_000, height: 100 };
    const across = V.initialView(wide, screen.width, screen.height, 20);
    expect(onScreen(across, 0, 0)[0]).toBe(20);
    expect(onScreen(across, 0, 50)[1]).toBeCloseTo(screen.height / 2);
  });
});

describe('zoom and centring', () => {
  it('zooms about the pointer: the graph point under it stays put', () => {
    const view = { k: 0.5, x: 40, y: -30 };
    const zoomed = V.zoomAbout(view, 300, 200, 2);
    const graphPoint = [(300 - view.x) / view.k, (200 - view.y) / view.k] as const;
    const [x, y] = onScreen(zoomed, graphPoint[0], graphPoint[1]);
    expect(x).toBeCloseTo(300);
    expect(y).toBeCloseTo(200);
    expect(V.zoomAbout(view, 0, 0, 99).k).toBe(V.MAX_ZOOM);
  });

  it('centres a point, and tells what part of the graph is in view', () => {
    const view = V.centreOn(500, 700, 2, screen.width, screen.height);
    expect(onScreen(view, 500, 700)).toEqual([600, 400]);
    expect(V.visibleBox(view, screen.width, screen.height)).toEqual({
      x: 200,
      y: 500,
      width: 600,
      height: 400,
    });
    expect(
      V.contains({ x: 0, y: 0, width: 10, height: 10 }, { x: 1, y: 1, width: 9, height: 9 }),
    ).toBe(true);
    expect(
      V.contains({ x: 0, y: 0, width: 10, height: 10 }, { x: 1, y: 1, width: 10, height: 9 }),
    ).toBe(false);
  });
});

describe('the minimap', () => {
  const bounds = { x: 100, y: 50, width: 4000, height: 1000 };
  const frame = V.minimapFrame(bounds, 200, 130, 6);

  it('fits the whole graph inside it, centred, and maps the view onto it', () => {
    expect(frame.scale).toBeCloseTo(188 / 4000);
    const whole = V.toMinimap(frame, bounds);
    expect(whole.x).toBeCloseTo(6);
    expect(whole.x + whole.width).toBeCloseTo(194);
    expect(whole.y + whole.height / 2).toBeCloseTo(65);
    const viewBox = V.toMinimap(frame, { x: 100, y: 50, width: 2000, height: 500 });
    expect(viewBox.width).toBeCloseTo(94);
    expect(viewBox.x).toBeCloseTo(6);
  });

  it('moves the view so that a clicked point of the minimap is in the middle of the screen', () => {
    const view = { k: 0.8, x: 0, y: 0 };
    // The middle of the minimap's drawing is the middle of the graph.
    const moved = V.viewForMinimapPoint(frame, 100, 65, view, screen.width, screen.height);
    expect(moved.k).toBe(0.8);
    const [x, y] = onScreen(moved, 100 + 2000, 50 + 500);
    expect(x).toBeCloseTo(600);
    expect(y).toBeCloseTo(400);
  });
});

describe('an open group’s grid', () => {
  it('lays its members out wider than tall, each in its own cell inside the frame', () => {
    const { columns, size } = memberGrid(1000);
    expect(columns).toBeGreaterThan(1);
    expect(size.width / size.height).toBeGreaterThan(1);
    expect(size.width / size.height).toBeLessThan(3);
    const spots = new Set<string>();
    for (let index = 0; index < 1000; index++) {
      const { x, y } = memberOffset(index, columns);
      expect(x + NODE_W).toBeLessThanOrEqual(size.width);
      expect(y + NODE_H).toBeLessThanOrEqual(size.height);
      spots.add(`${x},${y}`);
    }
    expect(spots.size).toBe(1000);
    expect(memberGrid(1).columns).toBe(1);
  });
});

describe('the graph search', () => {
  const nodes = [
    { name: 'task-0000000001', fn: 'load' },
    { name: 'task-0000000002', fn: 'extract', key: 'load-eu' },
    { name: 'task-0000000012', fn: 'unload' },
    { name: 'task-0000000021', fn: 'sum', key: 'reload-us' },
    { name: 'task-0000000022', fn: 'sum', key: 'load' },
  ];

  it('puts an exact key first, then keys starting with the query, then keys containing it, then functions', () => {
    expect(searchTasks(nodes, 'load')).toEqual([
      'task-0000000022', // key "load"
      'task-0000000002', // key starts with it
      'task-0000000021', // key contains it
      'task-0000000001', // function "load"
      'task-0000000012', // function contains it
    ]);
  });

  it('finds a task by serial (with or without #) or by name, ignoring case and blanks; nothing for a blank query', () => {
    expect(searchTasks(nodes, '#2')[0]).toBe('task-0000000002');
    expect(searchTasks(nodes, ' 2 ')[0]).toBe('task-0000000002');
    // '#2' exactly, then the serials starting '#2'; '#12' is another serial.
    expect(searchTasks(nodes, '#2')).toEqual([
      'task-0000000002',
      'task-0000000021',
      'task-0000000022',
    ]);
    expect(searchTasks(nodes, 'TASK-0000000021')).toEqual(['task-0000000021']);
    expect(searchTasks(nodes, 'LOAD-EU')).toEqual(['task-0000000002']);
    expect(searchTasks(nodes, '   ')).toEqual([]);
    expect(searchTasks(nodes, 'nothing like it')).toEqual([]);
  });
});
