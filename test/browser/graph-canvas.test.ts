// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GraphCanvas } from '../../src/ui/browser/graph-canvas.js';
import { NODE_H, NODE_W } from '../../src/ui/browser/graph.js';
import { publishStats } from '../../src/ui/browser/page-stats.js';
import { planPageHtml } from '../../src/ui/page-html.js';
import type { UiChange, UiNode } from '../../src/ui/ui-wire.js';

const PLAN = '/plans/plan-0000000001';
const name = (serial: number): string => `task-${String(serial).padStart(10, '0')}`;
const FAN_OUT = 12;
const GROUP = `group:${name(2)}`;

/** list (1) → 12 × map (2..13) → reduce (14), and a chain 15 → 16. */
function plan(mapState: (serial: number) => UiNode['state'] = () => 'waiting'): UiNode[] {
  const maps = Array.from({ length: FAN_OUT }, (_, i): UiNode => {
    const serial = i + 2;
    return {
      name: name(serial),
      state: mapState(serial),
      fn: 'map',
      inputs: [name(1)],
      ...(serial === 7 ? { key: 'map-eu' } : {}),
    };
  });
  return [
    { name: name(1), state: 'done', fn: 'list', inputs: [] },
    ...maps,
    { name: name(14), state: 'waiting', fn: 'reduce', inputs: maps.map((map) => map.name) },
    { name: name(15), state: 'done', fn: 'check', inputs: [] },
    { name: name(16), state: 'waiting', fn: 'check', inputs: [name(15)] },
  ];
}

const change = (serial: number, state: UiNode['state']): UiChange => [
  name(serial),
  state,
  false,
  'map',
  false,
  serial === 7 ? 'map-eu' : '',
  '',
  0,
  0,
  0,
  '',
];

const get = <T extends Element>(id: string): T => document.getElementById(id) as unknown as T;
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** The page's graph with a layout worker that fails every request (the page's quick layering draws). */
function newCanvas(): { canvas: GraphCanvas; selected: string[] } {
  const body = /<body ([^>]*)>([\s\S]*?)<script/.exec(planPageHtml(PLAN));
  document.body.innerHTML = body?.[2] ?? '';
  vi.stubGlobal(
    'Worker',
    class {
      onmessage: ((event: { data: unknown }) => void) | null = null;
      postMessage(message: { id: number }): void {
        setTimeout(() => this.onmessage?.({ data: { id: message.id, error: 'no ELK here' } }), 0);
      }
      terminate(): void {}
    },
  );
  const svg = get<SVGSVGElement>('graph');
  // happy-dom lays nothing out: the drawing gets a 1000×600 screen.
  svg.getBoundingClientRect = () => new DOMRect(0, 0, 1000, 600);
  const selected: string[] = [];
  const canvas = new GraphCanvas(
    {
      svg,
      viewport: get('viewport'),
      edges: get('edges'),
      nodes: get('nodes'),
      layoutInfo: get('layout-info'),
      minimap: get('minimap'),
      search: get<HTMLInputElement>('graph-search'),
      searchInfo: get('search-info'),
    },
    publishStats(PLAN),
    (task) => selected.push(task),
  );
  return { canvas, selected };
}

const drawnTasks = (): string[] =>
  [...document.querySelectorAll('g.node')].map((el) => el.getAttribute('data-task') ?? '');
const group = (): Element | null => document.querySelector(`g.group[data-group="${GROUP}"]`);
const bar = (): string[] =>
  [...(group()?.querySelectorAll('rect.seg') ?? [])].map(
    (seg) => `${seg.getAttribute('data-state')}:${seg.getAttribute('width')}`,
  );
/** The screen point the viewport's transform puts graph point (gx, gy) at. */
function onScreen(gx: number, gy: number): [number, number] {
  const transform = get('viewport').getAttribute('transform') ?? '';
  const [x, y, k] = (/translate\(([-\d.e]+),([-\d.e]+)\) scale\(([-\d.e]+)\)/.exec(transform) ?? [])
    .slice(1)
    .map(Number);
  return [(x ?? NaN) + gx * (k ?? NaN), (y ?? NaN) + gy * (k ?? NaN)];
}
function placeOf(task: string): [number, number] {
  const transform =
    document.querySelector(`g.node[data-task="${task}"]`)?.getAttribute('transform') ?? '';
  const [x, y] = (/translate\(([-\d.e]+),([-\d.e]+)\)/.exec(transform) ?? []).slice(1).map(Number);
  return [x ?? NaN, y ?? NaN];
}

afterEach(() => {
  vi.unstubAllGlobals();
  document.body.innerHTML = '';
  // The page marks its root when it has drawn (browser tests wait for these): each test starts unmarked.
  delete document.documentElement.dataset['layout'];
  delete document.documentElement.dataset['rendered'];
});

describe('the graph canvas at any size', () => {
  it('draws a fan-out as one group node with its count and a bar of its states, kept live', async () => {
    const { canvas } = newCanvas();
    canvas.show(plan((serial) => (serial < 5 ? 'done' : 'waiting')));
    expect(drawnTasks()).toEqual([name(1), name(14), name(15), name(16)]);
    expect(group()?.querySelector('.group-title')?.textContent).toBe('\u25b8 map \u00d712');
    expect(group()?.querySelector('.group-counts')?.textContent).toBe('9 waiting · 3 done');
    expect(bar().map((piece) => piece.split(':')[0])).toEqual(['waiting', 'done']);
    const stats = window.zkPlanUi;
    expect(stats?.groups).toBe(1);
    expect(stats?.drawn).toBe(5);
    expect(stats?.nodes).toBe(16);
    // One edge into the group and one out of it stand for 24 edges of tasks.
    await vi.waitFor(() => expect(document.querySelectorAll('#edges path')).toHaveLength(3));
    expect(
      [...document.querySelectorAll('#edges path')].map((p) => p.getAttribute('data-edge')),
    ).toEqual([`${name(1)}>${GROUP}`, `${GROUP}>${name(14)}`, `${name(15)}>${name(16)}`]);

    // A member fails and another runs: the bar follows, once the turn's changes are in.
    expect(canvas.recolour(change(9, 'failed'))).toBe(true);
    expect(canvas.recolour(change(10, 'running'))).toBe(true);
    await settle();
    expect(bar().map((piece) => piece.split(':')[0])).toEqual([
      'waiting',
      'running',
      'done',
      'failed',
    ]);
    expect(group()?.querySelector('title')?.textContent).toContain('1 failed');
    expect(canvas.data().find((node) => node.name === name(9))?.state).toBe('failed');
    expect(window.zkPlanUi?.structureChanges).toBe(1);
  });

  it('opens a group into its members on click, and closes it by its header', async () => {
    const { canvas, selected } = newCanvas();
    canvas.show(plan());
    await vi.waitFor(() => expect(document.documentElement.dataset['layout']).toBe('quick'));
    group()
      ?.querySelector('rect.box')
      ?.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(group()?.classList.contains('open')).toBe(true);
    expect(drawnTasks()).toHaveLength(4 + FAN_OUT);
    expect(window.zkPlanUi?.openGroups).toBe(1);
    // Members sit in a grid inside the frame, apart from each other.
    const spots = new Set(
      Array.from({ length: FAN_OUT }, (_, i) => placeOf(name(i + 2)).join(',')),
    );
    expect(spots.size).toBe(FAN_OUT);
    // A member's click selects it; a click inside the frame between members does not close it.
    document
      .querySelector(`g.node[data-task="${name(3)}"] rect`)
      ?.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(selected).toEqual([name(3)]);
    group()
      ?.querySelector('rect.frame')
      ?.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(group()?.classList.contains('open')).toBe(true);
    group()
      ?.querySelector('.group-header rect')
      ?.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(group()?.classList.contains('open')).toBe(false);
    expect(drawnTasks()).toHaveLength(4);
    expect(canvas.setGroupOpen('group:nothing', true)).toBe(false);
  });

  it('places a member that joins an open group inside its grown frame', async () => {
    const { canvas } = newCanvas();
    // Eight notify tasks after the reduce, which nothing reads: a fan-out at the end of the plan.
    const notify = (serial: number): UiNode => ({
      name: name(serial),
      state: 'waiting',
      fn: 'notify',
      inputs: [name(14)],
    });
    const notifications = Array.from({ length: 8 }, (_, i) => notify(20 + i));
    canvas.show([...plan(), ...notifications]);
    await vi.waitFor(() => expect(document.documentElement.dataset['layout']).toBe('quick'));
    const notifyGroup = `group:${name(20)}`;
    expect(canvas.setGroupOpen(notifyGroup, true)).toBe(true);
    const frame = (): Element | null | undefined =>
      document.querySelector(`g.group[data-group="${notifyGroup}"]`)?.querySelector('rect.frame');
    const before = Number(frame()?.getAttribute('height'));
    // A ninth arrives (a diff's `added`): the drawn graph keeps its nodes and edges, the frame grows.
    canvas.show([...plan(), ...notifications, notify(28)]);
    expect(Number(frame()?.getAttribute('height'))).toBeGreaterThan(before);
    const spots = Array.from({ length: 9 }, (_, i) => placeOf(name(20 + i)).join(','));
    expect(spots).not.toContain('NaN,NaN');
    expect(new Set(spots).size).toBe(9);
  });

  it('opens the group of a task selected from elsewhere, and centres a task it is asked to focus', async () => {
    const { canvas } = newCanvas();
    canvas.show(plan());
    await vi.waitFor(() => expect(document.documentElement.dataset['layout']).toBe('quick'));
    canvas.select(name(5));
    expect(group()?.classList.contains('open')).toBe(true);
    expect(document.querySelector('g.node.selected')?.getAttribute('data-task')).toBe(name(5));
    // Its neighbours are marked: the list before it and the reduce after it.
    expect(
      [...document.querySelectorAll('.related')].map((el) => el.getAttribute('data-task')).sort(),
    ).toEqual([name(1), name(14)]);

    expect(canvas.focus(name(16))).toBe(true);
    const [x, y] = placeOf(name(16));
    const [sx, sy] = onScreen(x + NODE_W / 2, y + NODE_H / 2);
    expect(sx).toBeCloseTo(500);
    expect(sy).toBeCloseTo(300);
    expect(canvas.focus('task-0000000999')).toBe(false);
  });

  it('hides task labels when zoomed out too far to read them, and shows the minimap while part of the graph is out of view', async () => {
    const { canvas } = newCanvas();
    canvas.show(plan());
    await vi.waitFor(() => expect(document.documentElement.dataset['layout']).toBe('quick'));
    const svg = get('graph');
    expect(svg.classList.contains('lod-no-task-labels')).toBe(false);
    expect(get<HTMLElement>('minimap').hidden).toBe(true); // the whole graph fits
    for (let i = 0; i < 8; i++) canvas.zoomBy(0.8);
    expect(svg.classList.contains('lod-no-task-labels')).toBe(true);
    for (let i = 0; i < 16; i++) canvas.zoomBy(1.25);
    expect(svg.classList.contains('lod-no-task-labels')).toBe(false);
    expect(get<HTMLElement>('minimap').hidden).toBe(false);
    canvas.fit();
    expect(get<HTMLElement>('minimap').hidden).toBe(true);
  });

  it('finds tasks from the search box, marks them, opens the group of the first and goes on with Enter', async () => {
    const { canvas } = newCanvas();
    canvas.show(plan());
    await vi.waitFor(() => expect(document.documentElement.dataset['layout']).toBe('quick'));
    const input = get<HTMLInputElement>('graph-search');
    input.value = 'map-eu';
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    expect(get('search-info').textContent).toBe('1/1');
    expect(group()?.classList.contains('open')).toBe(true);
    expect(document.querySelector('g.node.current-match')?.getAttribute('data-task')).toBe(name(7));

    // By function: the checks are outside any group; going on past the last wraps round.
    expect(canvas.find('check')).toBe(2);
    expect(group()?.classList.contains('open')).toBe(false); // the search closes what it opened
    expect(document.querySelector('g.node.current-match')?.getAttribute('data-task')).toBe(
      name(15),
    );
    input.value = 'check';
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    expect(get('search-info').textContent).toBe('2/2');
    expect(document.querySelector('g.node.current-match')?.getAttribute('data-task')).toBe(
      name(16),
    );
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    expect(get('search-info').textContent).toBe('1/2');
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
    expect(get('search-info').textContent).toBe('');
    expect(document.querySelector('.match')).toBeNull();
  });
});
