/**
 * The web view's page assets, embedded as strings so they are served the same from `src/`
 * (tsx, vitest) and from `dist/` (no copy step). The scripts are plain ES2017 for the browser:
 * every value from ZooKeeper is put into the page with `textContent` or `setAttribute`, never as
 * markup; the only markup built on the server is escaped with `escapeHtml`.
 */
import { TASK_VIEW_STATES, escapeHtml } from './ui-model.js';

/** Fill and text colour of each task state (legend order). */
export const STATE_COLORS: Readonly<Record<(typeof TASK_VIEW_STATES)[number], { readonly fill: string; readonly text: string }>> = {
  building: { fill: '#d5d9e0', text: '#39404d' },
  waiting: { fill: '#eef1f6', text: '#39404d' },
  runnable: { fill: '#a9d6f5', text: '#0d3550' },
  retrying: { fill: '#ffc857', text: '#4a3400' },
  running: { fill: '#1f7fd1', text: '#ffffff' },
  finishing: { fill: '#8fd18b', text: '#123d10' },
  done: { fill: '#2e9e5b', text: '#ffffff' },
  failed: { fill: '#d63a3a', text: '#ffffff' },
  blocked: { fill: '#8e5bc8', text: '#ffffff' },
};

const stateRules = TASK_VIEW_STATES.map((state) => {
  const { fill, text } = STATE_COLORS[state];
  return (
    `[data-state="${state}"] { --fill: ${fill}; --ink: ${text}; }\n` +
    `g.node[data-state="${state}"] > rect { fill: ${fill}; }\n` +
    `g.node[data-state="${state}"] > text { fill: ${text}; }`
  );
}).join('\n');

export const UI_CSS =
  String.raw`
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; background: #f6f7f9; }
a { color: #1463b3; text-decoration: none; }
a:hover { text-decoration: underline; }
header { display: flex; align-items: center; gap: 14px; padding: 10px 16px; background: #fff; border-bottom: 1px solid #dde1e7; flex-wrap: wrap; }
header h1 { font-size: 17px; margin: 0; font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.crumb { color: #5b6474; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; background: #e3e6eb; color: #39404d; }
.badge[data-state="running"] { background: #1f7fd1; color: #fff; }
.badge[data-state="completed"] { background: #2e9e5b; color: #fff; }
.badge[data-state="failed"] { background: #d63a3a; color: #fff; }
.badge[data-state="building"] { background: #d5d9e0; color: #39404d; }
.badge[data-state="gone"] { background: #5b6474; color: #fff; }
.progress { display: flex; align-items: center; gap: 8px; }
.bar { width: 180px; height: 8px; background: #e3e6eb; border-radius: 4px; overflow: hidden; }
.bar > div { height: 100%; width: 0; background: #2e9e5b; transition: width .3s; }
.live { margin-left: auto; color: #5b6474; font-size: 12px; }
.live[data-live="live"]::before { content: "● "; color: #2e9e5b; }
.live[data-live="down"]::before { content: "● "; color: #d63a3a; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; padding: 8px 16px; background: #fff; border-bottom: 1px solid #dde1e7; font-size: 12px; }
.legend span.item { display: inline-flex; align-items: center; gap: 5px; }
.legend i { width: 14px; height: 14px; border-radius: 3px; display: inline-block; background: var(--fill); border: 1px solid rgba(0,0,0,.15); }
.legend b { font-weight: 600; }
body.plan-page { display: flex; flex-direction: column; }
main.plan { display: flex; flex: 1; min-height: 300px; }
#canvas { flex: 1; position: relative; overflow: hidden; background: #fbfcfd; }
#graph { width: 100%; height: 100%; display: block; cursor: grab; user-select: none; }
#graph.panning { cursor: grabbing; }
g.node { cursor: pointer; }
g.node > rect { stroke: rgba(0,0,0,.25); stroke-width: 1; }
g.node > text { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; pointer-events: none; }
g.node.gone > rect { stroke-dasharray: 4 3; }
g.node.selected > rect { stroke: #111; stroke-width: 3; }
g.node.related > rect { stroke: #111; stroke-width: 2; stroke-dasharray: 2 2; }
#edges path { fill: none; stroke: #8a94a6; stroke-width: 1.2; }
#edges path.hot { stroke: #111; stroke-width: 2; }
.toolbar { position: absolute; left: 10px; bottom: 10px; display: flex; gap: 6px; align-items: center; font-size: 12px; color: #5b6474; }
.toolbar button { border: 1px solid #c9ced6; background: #fff; border-radius: 4px; padding: 3px 9px; cursor: pointer; font: inherit; color: #1d2330; }
#notice { position: absolute; top: 10px; left: 50%; transform: translateX(-50%); background: #fff4d6; border: 1px solid #e9c46a; padding: 4px 12px; border-radius: 4px; font-size: 12px; }
#notice:empty { display: none; }
aside#panel { width: 400px; flex: none; overflow: auto; background: #fff; border-left: 1px solid #dde1e7; padding: 14px 16px; }
aside#panel h2 { margin: 0 0 6px; font-size: 18px; }
aside#panel h2 small { font-weight: normal; color: #5b6474; font-size: 12px; font-family: ui-monospace, monospace; margin-left: 6px; }
aside#panel h3 { font-size: 13px; margin: 16px 0 6px; text-transform: uppercase; letter-spacing: .04em; color: #5b6474; }
aside#panel .hint { color: #5b6474; }
.pill { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px; font-weight: 600; background: var(--fill); color: var(--ink); border: 1px solid rgba(0,0,0,.15); }
dl { display: grid; grid-template-columns: 110px 1fr; gap: 4px 10px; margin: 10px 0 0; }
dt { color: #5b6474; }
dd { margin: 0; word-break: break-word; }
pre { margin: 0; padding: 8px; background: #f3f4f7; border-radius: 4px; font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; word-break: break-word; max-height: 320px; overflow: auto; }
section.error { border-left: 4px solid #d63a3a; padding-left: 10px; }
section.error .message { font-weight: 600; margin: 4px 0 8px; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f3f4f7; padding: 1px 4px; border-radius: 3px; }
ul.inputs { margin: 0; padding-left: 18px; }
table.plans { border-collapse: collapse; margin: 16px; background: #fff; min-width: 820px; border: 1px solid #dde1e7; }
table.plans th, table.plans td { text-align: left; padding: 8px 12px; border-bottom: 1px solid #eceef2; }
table.plans th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: #5b6474; background: #fafbfc; }
table.plans td.num { font-variant-numeric: tabular-nums; }
.empty { margin: 16px; color: #5b6474; }
` + stateRules;

/** Pure graph helpers shared by the page and the layout worker (and unit-tested in a vm): edges, a quick layering, ELK input and output. */
export const GRAPH_JS = String.raw`(function (root) {
  'use strict';
  var NODE_W = 160, NODE_H = 34, GAP_X = 60, GAP_Y = 14;

  /** 'task-0000000042' -> '#42'. */
  function shortLabel(name) {
    var match = /^task-0*(\d+)$/.exec(name);
    return match ? '#' + match[1] : name;
  }

  /** The text drawn in a node, within about 20 characters. */
  function nodeText(node) {
    var text = shortLabel(node.name) + (node.fn ? ' ' + node.fn : '');
    return text.length > 21 ? text.slice(0, 20) + '\u2026' : text;
  }

  /** One edge per distinct (input, task) pair whose both ends are nodes. */
  function edgesOf(nodes) {
    var known = new Set(nodes.map(function (node) { return node.name; }));
    var seen = new Set();
    var edges = [];
    nodes.forEach(function (node) {
      node.inputs.forEach(function (input) {
        var id = input + '>' + node.name;
        if (!known.has(input) || seen.has(id) || input === node.name) return;
        seen.add(id);
        edges.push({ id: id, source: input, target: node.name });
      });
    });
    return edges;
  }

  /** A key that changes when the drawn structure (nodes, edges) changes. */
  function structureKey(nodes) {
    return nodes.map(function (node) { return node.name + '<' + node.inputs.join(','); }).join(';');
  }

  /**
   * A layering in O(nodes + edges): a node's column is the longest chain of inputs before it
   * (Kahn's order; nodes on a cycle go after the rest), rows in node order. Straight edges.
   */
  function quickLayout(nodes, edges) {
    var depth = new Map(), indegree = new Map(), outs = new Map();
    nodes.forEach(function (node) { depth.set(node.name, 0); indegree.set(node.name, 0); outs.set(node.name, []); });
    edges.forEach(function (edge) { outs.get(edge.source).push(edge.target); indegree.set(edge.target, indegree.get(edge.target) + 1); });
    var queue = nodes.filter(function (node) { return indegree.get(node.name) === 0; }).map(function (node) { return node.name; });
    for (var head = 0; head < queue.length; head++) {
      var name = queue[head];
      outs.get(name).forEach(function (target) {
        depth.set(target, Math.max(depth.get(target), depth.get(name) + 1));
        indegree.set(target, indegree.get(target) - 1);
        if (indegree.get(target) === 0) queue.push(target);
      });
    }
    var rows = [], positions = {}, width = 0, height = 0;
    nodes.forEach(function (node) {
      var column = depth.get(node.name);
      var row = rows[column] || 0;
      rows[column] = row + 1;
      var x = column * (NODE_W + GAP_X), y = row * (NODE_H + GAP_Y);
      positions[node.name] = { x: x, y: y };
      width = Math.max(width, x + NODE_W);
      height = Math.max(height, y + NODE_H);
    });
    var edgePoints = {};
    edges.forEach(function (edge) {
      var from = positions[edge.source], to = positions[edge.target];
      edgePoints[edge.id] = [[from.x + NODE_W, from.y + NODE_H / 2], [to.x, to.y + NODE_H / 2]];
    });
    return { positions: positions, edges: edgePoints, width: width, height: height };
  }

  /** ELK's input: layered, left to right; big graphs get the cheaper settings. */
  function elkGraph(nodes, edges) {
    var big = nodes.length > 300;
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
        'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES'
      },
      children: nodes.map(function (node) { return { id: node.name, width: NODE_W, height: NODE_H }; }),
      edges: edges.map(function (edge) { return { id: edge.id, sources: [edge.source], targets: [edge.target] }; })
    };
  }

  /** Positions and edge polylines from ELK's output, in the shape quickLayout returns. */
  function readElk(graph) {
    var positions = {}, edgePoints = {};
    (graph.children || []).forEach(function (child) { positions[child.id] = { x: child.x || 0, y: child.y || 0 }; });
    (graph.edges || []).forEach(function (edge) {
      var section = edge.sections && edge.sections[0];
      if (!section) return;
      var points = [[section.startPoint.x, section.startPoint.y]];
      (section.bendPoints || []).forEach(function (point) { points.push([point.x, point.y]); });
      points.push([section.endPoint.x, section.endPoint.y]);
      edgePoints[edge.id] = points;
    });
    return { positions: positions, edges: edgePoints, width: graph.width || 0, height: graph.height || 0 };
  }

  /** SVG path data of a polyline. */
  function pathData(points) {
    return points.map(function (point, index) { return (index === 0 ? 'M' : 'L') + Math.round(point[0] * 10) / 10 + ' ' + Math.round(point[1] * 10) / 10; }).join(' ');
  }

  root.ZkPlanGraph = {
    NODE_W: NODE_W, NODE_H: NODE_H,
    shortLabel: shortLabel, nodeText: nodeText, edgesOf: edgesOf, structureKey: structureKey,
    quickLayout: quickLayout, elkGraph: elkGraph, readElk: readElk, pathData: pathData
  };
})(typeof globalThis !== 'undefined' ? globalThis : this);
`;

/** The layout worker: ELK's bundle runs here, off the page's main thread. */
export const LAYOUT_WORKER_JS = String.raw`'use strict';
importScripts('/elk.js', '/graph.js');
var elk = new ELK(); // in a worker, the bundle's fake worker also claims self.onmessage: ours replaces it below
self.onmessage = function (event) {
  var request = event.data;
  var started = performance.now();
  elk.layout(request.graph).then(function (graph) {
    self.postMessage({ id: request.id, layout: ZkPlanGraph.readElk(graph), ms: performance.now() - started });
  }, function (error) {
    self.postMessage({ id: request.id, error: String((error && error.message) || error) });
  });
};
self.postMessage({ ready: true });
`;

/** Script of the plans page. */
export const PLANS_JS = String.raw`(function () {
  'use strict';
  var parent = document.body.dataset.parent;
  var tbody = document.getElementById('plans');
  var empty = document.getElementById('empty');
  var live = document.getElementById('live');

  function cell(row, text, className) {
    var td = document.createElement('td');
    if (className) td.className = className;
    if (text !== undefined) td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function render(plans) {
    var fragment = document.createDocumentFragment();
    plans.forEach(function (plan) {
      var row = document.createElement('tr');
      row.dataset.plan = plan.plan;
      row.dataset.state = plan.state;
      var link = document.createElement('a');
      link.href = '/plan?path=' + encodeURIComponent(plan.plan);
      link.textContent = plan.name;
      cell(row).appendChild(link);
      var badge = document.createElement('span');
      badge.className = 'badge';
      badge.dataset.state = plan.state;
      badge.textContent = plan.state;
      cell(row).appendChild(badge);
      var progress = cell(row, undefined, 'progress-cell');
      var wrap = document.createElement('div');
      wrap.className = 'progress';
      var bar = document.createElement('div');
      bar.className = 'bar';
      var fill = document.createElement('div');
      fill.style.width = (plan.total > 0 ? Math.round((100 * plan.done) / plan.total) : plan.state === 'completed' ? 100 : 0) + '%';
      bar.appendChild(fill);
      var text = document.createElement('span');
      text.className = 'progress-text';
      text.textContent = plan.historyKept ? plan.done + '/' + plan.total + ' done' : (plan.total - plan.done) + ' left (no history)';
      wrap.appendChild(bar);
      wrap.appendChild(text);
      progress.appendChild(wrap);
      cell(row, String(plan.running), 'num');
      cell(row, String(plan.waiting), 'num');
      cell(row, String(plan.failed), 'num');
      cell(row, String(plan.blocked), 'num');
      fragment.appendChild(row);
    });
    tbody.textContent = '';
    tbody.appendChild(fragment);
    empty.textContent = plans.length === 0 ? 'No plans under ' + parent + ' yet.' : '';
  }

  var source = new EventSource('/api/plans/events');
  source.addEventListener('plans', function (event) { render(JSON.parse(event.data)); });
  source.addEventListener('problem', function (event) { live.textContent = 'ZooKeeper: ' + JSON.parse(event.data).message; });
  source.onopen = function () { live.dataset.live = 'live'; live.textContent = 'live'; };
  source.onerror = function () { live.dataset.live = 'down'; live.textContent = 'reconnecting\u2026'; };
})();
`;

/** Script of the plan page: the graph, live colours, the side panel. */
export const PLAN_JS = String.raw`(function () {
  'use strict';
  var G = window.ZkPlanGraph;
  var SVG = 'http://www.w3.org/2000/svg';
  var plan = document.body.dataset.plan;
  var STATES = JSON.parse(document.body.dataset.states);
  var svg = document.getElementById('graph');
  var viewport = document.getElementById('viewport');
  var edgesLayer = document.getElementById('edges');
  var nodesLayer = document.getElementById('nodes');
  var panel = document.getElementById('panel');
  var live = document.getElementById('live');
  var notice = document.getElementById('notice');
  var layoutInfo = document.getElementById('layout-info');

  /** Timings and counters, read by the browser test. */
  var ui = window.zkPlanUi = {
    plan: plan, snapshotMs: null, firstRenderMs: null, elkMs: null, elkAppliedMs: null, layouts: 0, quickLayouts: 0,
    engine: null, snapshots: 0, diffs: 0, nodes: 0, structureChanges: 0
  };

  var nodes = new Map();    // name -> { data, el }
  var edgePaths = new Map(); // edge id -> path element
  var edges = [];
  var positions = {};
  var structure = '';
  var status = null;
  var selected = null;
  var view = { k: 1, x: 20, y: 20 };
  var fitted = false;     // fitted to the drawing once
  var userMoved = false;  // panned or zoomed by hand: layouts no longer re-fit

  // ---- SVG drawing ----------------------------------------------------------------------
  function svgEl(name, attrs) {
    var element = document.createElementNS(SVG, name);
    for (var key in attrs) element.setAttribute(key, attrs[key]);
    return element;
  }

  function makeNode(data) {
    var g = svgEl('g', { 'class': 'node', 'data-task': data.name, 'data-state': data.state });
    g.appendChild(svgEl('rect', { width: G.NODE_W, height: G.NODE_H, rx: 6 }));
    var text = svgEl('text', { x: 10, y: G.NODE_H / 2 + 4 });
    text.textContent = G.nodeText(data);
    g.appendChild(text);
    var title = svgEl('title', {});
    g.appendChild(title);
    var entry = { data: data, el: g, text: text, title: title };
    updateNode(entry, data);
    return entry;
  }

  function updateNode(entry, data) {
    entry.data = data;
    entry.el.setAttribute('data-state', data.state);
    entry.el.classList.toggle('gone', !!data.gone);
    entry.text.textContent = G.nodeText(data);
    entry.title.textContent = data.name + (data.fn ? ' \u00b7 ' + data.fn : '') + ' \u00b7 ' + data.state + (data.gone ? ' (finished; no record kept)' : '');
  }

  function applyTransform() {
    viewport.setAttribute('transform', 'translate(' + view.x + ',' + view.y + ') scale(' + view.k + ')');
  }

  function fit() {
    var width = 0, height = 0;
    nodes.forEach(function (entry, name) {
      var p = positions[name];
      if (!p) return;
      width = Math.max(width, p.x + G.NODE_W);
      height = Math.max(height, p.y + G.NODE_H);
    });
    var box = svg.getBoundingClientRect();
    if (width === 0 || box.width === 0) return;
    var k = Math.min((box.width - 40) / width, (box.height - 40) / height, 1.5);
    k = Math.max(k, 0.02);
    view = { k: k, x: (box.width - width * k) / 2, y: Math.max(20, (box.height - height * k) / 2) };
    applyTransform();
  }

  /** Moves nodes to a layout and redraws the edges; node elements are kept (colours are not touched). */
  function applyLayout(layout, engine) {
    for (var name in layout.positions) {
      positions[name] = layout.positions[name];
      var entry = nodes.get(name);
      if (entry) entry.el.setAttribute('transform', 'translate(' + layout.positions[name].x + ',' + layout.positions[name].y + ')');
    }
    var fragment = document.createDocumentFragment();
    edgePaths = new Map();
    edges.forEach(function (edge) {
      var points = layout.edges[edge.id];
      if (!points) {
        var from = positions[edge.source], to = positions[edge.target];
        if (!from || !to) return;
        points = [[from.x + G.NODE_W, from.y + G.NODE_H / 2], [to.x, to.y + G.NODE_H / 2]];
      }
      var path = svgEl('path', { d: G.pathData(points), 'marker-end': 'url(#arrow)', 'data-edge': edge.id });
      edgePaths.set(edge.id, path);
      fragment.appendChild(path);
    });
    edgesLayer.textContent = '';
    edgesLayer.appendChild(fragment);
    viewport.removeAttribute('visibility');
    document.documentElement.dataset.layout = engine;
    if (ui.firstRenderMs === null) {
      ui.firstRenderMs = performance.now();
      document.documentElement.dataset.rendered = 'true';
    }
    // Fit once, and again when ELK's layout replaces the quick one, unless the user moved the view.
    if (!fitted || (engine === 'elk' && ui.layouts === 1 && !userMoved)) { fit(); fitted = true; }
    highlight();
  }

  // ---- layout: ELK in a Web Worker (in the page only if workers fail) ---------------------
  var worker = null, workerFailed = false, pageElk = null, layoutSeq = 0, layoutStarted = 0;

  function startWorker() {
    try {
      worker = new Worker('/layout-worker.js');
      worker.onmessage = function (event) { if (event.data.id !== undefined) onLayout(event.data); };
      worker.onerror = function (event) { event.preventDefault(); worker.terminate(); worker = null; workerFailed = true; requestLayout(); };
    } catch (error) {
      worker = null;
      workerFailed = true;
    }
  }

  function loadPageElk(then) {
    if (pageElk) return then();
    var script = document.createElement('script');
    script.src = '/elk.js';
    script.onload = function () { pageElk = new window.ELK(); then(); };
    document.head.appendChild(script);
  }

  function requestLayout() {
    var id = ++layoutSeq;
    var graph = G.elkGraph(currentData(), edges);
    layoutStarted = performance.now();
    layoutInfo.textContent = nodes.size + ' tasks \u00b7 laying out\u2026';
    if (worker) {
      ui.engine = 'worker';
      worker.postMessage({ id: id, graph: graph });
      return;
    }
    ui.engine = 'page';
    loadPageElk(function () {
      var started = performance.now();
      pageElk.layout(graph).then(function (out) {
        onLayout({ id: id, layout: G.readElk(out), ms: performance.now() - started });
      }, function (error) { onLayout({ id: id, error: String(error) }); });
    });
  }

  function onLayout(message) {
    if (message.id !== layoutSeq) return; // a newer layout is on its way
    if (message.error) {
      layoutInfo.textContent = 'layout failed: ' + message.error;
      if (ui.quickLayouts === 0) { ui.quickLayouts++; applyLayout(G.quickLayout(currentData(), edges), 'quick'); }
      return;
    }
    ui.layouts++;
    ui.elkMs = Math.round(message.ms);
    applyLayout(message.layout, 'elk');
    ui.elkAppliedMs = performance.now();
    layoutInfo.textContent = nodes.size + ' tasks \u00b7 ' + edges.length + ' edges \u00b7 ELK layout ' + ui.elkMs + ' ms (' + (ui.engine === 'worker' ? 'web worker' : 'page') + ')';
  }

  function currentData() {
    return Array.from(nodes.values()).map(function (entry) { return entry.data; });
  }

  /** The set of nodes or edges changed: add and remove node elements, place new ones at once, lay out again. */
  function rebuild(list) {
    ui.structureChanges++;
    var keep = new Set();
    var fragment = document.createDocumentFragment();
    list.forEach(function (data) {
      keep.add(data.name);
      var entry = nodes.get(data.name);
      if (entry) { updateNode(entry, data); return; }
      entry = makeNode(data);
      nodes.set(data.name, entry);
      fragment.appendChild(entry.el);
    });
    nodes.forEach(function (entry, name) {
      if (keep.has(name)) return;
      entry.el.remove();
      nodes.delete(name);
      delete positions[name];
    });
    nodesLayer.appendChild(fragment);
    edges = G.edgesOf(list);
    ui.nodes = nodes.size;
    structure = G.structureKey(list);
    // Big graphs are drawn at once with a quick layering while ELK works; new nodes too.
    var unplaced = list.some(function (data) { return !positions[data.name]; });
    if (unplaced && (list.length > 300 || ui.layouts > 0)) {
      var quick = G.quickLayout(list, edges);
      var placed = {};
      list.forEach(function (data) { placed[data.name] = positions[data.name] || quick.positions[data.name]; });
      ui.quickLayouts++;
      applyLayout({ positions: placed, edges: {}, width: quick.width, height: quick.height }, ui.layouts > 0 ? 'elk' : 'quick');
    }
    if (list.length > 0) requestLayout();
    else layoutInfo.textContent = 'no tasks yet';
  }

  // ---- state -----------------------------------------------------------------------------
  function setStatus(next) {
    status = next;
    var badge = document.getElementById('plan-state');
    badge.textContent = next.state;
    badge.dataset.state = next.state;
    var total = next.total;
    var percent = total > 0 ? Math.round((100 * next.done) / total) : next.state === 'completed' ? 100 : 0;
    document.getElementById('progress-fill').style.width = percent + '%';
    document.getElementById('progress-text').textContent = next.historyKept ? next.done + '/' + total + ' done' : next.done + ' finished seen, ' + (total - next.done) + ' left (no history kept)';
    STATES.forEach(function (state) {
      var count = document.getElementById('count-' + state);
      if (count) count.textContent = String(next.counts[state] || 0);
    });
  }

  function onSnapshot(model) {
    if (ui.snapshotMs === null) ui.snapshotMs = performance.now();
    ui.snapshots++;
    setStatus(model.status);
    if (G.structureKey(model.nodes) !== structure) {
      rebuild(model.nodes);
    } else {
      model.nodes.forEach(function (data) { var entry = nodes.get(data.name); if (entry && (entry.data.state !== data.state || !entry.data.gone !== !data.gone || entry.data.fn !== data.fn)) updateNode(entry, data); });
    }
    refreshSelected();
  }

  function onDiff(diff) {
    ui.diffs++;
    setStatus(diff.status);
    var touchedSelected = false;
    diff.changed.forEach(function (change) {
      var entry = nodes.get(change[0]);
      if (!entry) return;
      updateNode(entry, Object.assign({}, entry.data, { state: change[1], gone: change[2] || undefined, fn: change[3] }));
      if (change[0] === selected) touchedSelected = true;
    });
    if (diff.added.length || diff.updated.length || diff.removed.length) {
      var list = new Map();
      nodes.forEach(function (entry, name) { list.set(name, entry.data); });
      diff.removed.forEach(function (name) { list.delete(name); });
      diff.added.concat(diff.updated).forEach(function (data) { list.set(data.name, data); });
      var ordered = Array.from(list.values()).sort(function (a, b) { return a.name.length - b.name.length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });
      rebuild(ordered);
      touchedSelected = true;
    }
    if (touchedSelected) refreshSelected();
  }

  // ---- selection and the side panel ------------------------------------------------------
  function highlight() {
    nodes.forEach(function (entry) { entry.el.classList.remove('selected', 'related'); });
    edgePaths.forEach(function (path) { path.classList.remove('hot'); });
    if (selected === null || !nodes.has(selected)) return;
    nodes.get(selected).el.classList.add('selected');
    edges.forEach(function (edge) {
      if (edge.target !== selected && edge.source !== selected) return;
      var other = nodes.get(edge.target === selected ? edge.source : edge.target);
      if (other) other.el.classList.add('related');
      var path = edgePaths.get(edge.id);
      if (path) path.classList.add('hot');
    });
  }

  var detailSeq = 0, refreshTimer = null;
  function select(name) {
    selected = name;
    highlight();
    loadDetail();
  }
  function refreshSelected() {
    if (selected === null) return;
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(loadDetail, 100);
  }
  function loadDetail() {
    if (selected === null) return;
    var seq = ++detailSeq;
    var name = selected;
    fetch('/api/task?path=' + encodeURIComponent(plan + '/' + name)).then(function (response) {
      return response.json().then(function (body) { return { ok: response.ok, body: body }; });
    }).then(function (answer) {
      if (seq !== detailSeq) return;
      if (!answer.ok) { renderProblem(name, answer.body.error ? answer.body.error.message : 'request failed'); return; }
      renderDetail(answer.body);
    }, function (error) {
      if (seq === detailSeq) renderProblem(name, String(error));
    });
  }

  function h(tag, text, className) {
    var element = document.createElement(tag);
    if (text !== undefined && text !== null) element.textContent = String(text);
    if (className) element.className = className;
    return element;
  }
  function row(list, label, value) {
    if (value === undefined || value === null || value === '') return;
    list.appendChild(h('dt', label));
    var dd = document.createElement('dd');
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
    list.appendChild(dd);
  }
  function when(iso) {
    if (!iso) return undefined;
    var date = new Date(iso);
    return isNaN(date.getTime()) ? iso : date.toLocaleString();
  }

  function renderProblem(name, message) {
    panel.textContent = '';
    panel.appendChild(h('h2', G.shortLabel(name)));
    panel.appendChild(h('p', message, 'hint'));
  }

  function renderDetail(detail) {
    panel.textContent = '';
    panel.dataset.task = detail.task;
    var title = h('h2', G.shortLabel(detail.name));
    title.appendChild(h('small', detail.name));
    panel.appendChild(title);
    var pill = h('span', detail.state + (detail.gone ? ' (no record kept)' : ''), 'pill');
    pill.dataset.state = detail.state;
    pill.id = 'detail-state';
    panel.appendChild(pill);

    var list = document.createElement('dl');
    row(list, 'Path', h('code', detail.task));
    if (!detail.gone) {
      row(list, 'Function', h('code', detail.fn, 'fn'));
      var inputs = document.createElement('ul');
      inputs.className = 'inputs';
      detail.inputs.forEach(function (input) {
        var item = document.createElement('li');
        var name = input.slice(input.lastIndexOf('/') + 1);
        var link = h('a', G.shortLabel(name) + ' ' + name);
        link.href = '#';
        link.addEventListener('click', function (event) { event.preventDefault(); select(name); });
        item.appendChild(link);
        inputs.appendChild(item);
      });
      row(list, 'Inputs', detail.inputs.length ? inputs : 'none');
      if (detail.pendingInputs > 0) row(list, 'Waiting for', detail.pendingInputs + ' input(s)');
      row(list, 'Keeps result', detail.keepResult ? 'yes' : 'no');
      if (detail.owner) row(list, 'Running on', detail.owner.workerId + ' since ' + when(detail.owner.claimedAt));
      if (detail.attempts && !detail.failure) {
        row(list, 'Attempts', detail.attempts.failures + ' failed; next try ' + when(detail.attempts.nextTryAt));
        row(list, 'Last error', detail.attempts.lastError);
      }
      row(list, 'Started', when(detail.startedAt));
      row(list, 'Finished', when(detail.finishedAt));
      if (detail.durationMs !== undefined) row(list, 'Duration', detail.durationMs + ' ms');
      row(list, 'Worker', detail.workerId);
      if (detail.blockedReason) row(list, 'Blocked', detail.blockedReason);
    } else {
      row(list, 'Note', 'The task finished and its node is gone; this plan keeps no history (createPlan with { history: true }).');
    }
    panel.appendChild(list);

    if (!detail.gone) {
      panel.appendChild(h('h3', 'Params'));
      panel.appendChild(h('pre', detail.params, 'params'));
    }
    if (detail.failure) {
      var section = h('section', undefined, 'error');
      section.id = 'detail-error';
      section.appendChild(h('h3', 'Error'));
      var head = h('div');
      head.appendChild(h('code', detail.failure.code, 'code'));
      head.appendChild(document.createTextNode(' ' + detail.failure.type));
      section.appendChild(head);
      section.appendChild(h('div', detail.failure.message, 'message'));
      var facts = document.createElement('dl');
      row(facts, 'Attempts', detail.failure.attempts);
      row(facts, 'Retryable', detail.failure.retryable ? 'yes' : 'no');
      row(facts, 'Worker', detail.failure.workerId);
      row(facts, 'At', when(detail.failure.at));
      section.appendChild(facts);
      if (detail.failure.stack) {
        section.appendChild(h('h3', 'Stack (excerpt)'));
        section.appendChild(h('pre', detail.failure.stack, 'stack'));
      }
      panel.appendChild(section);
    }
    if (detail.result) {
      var result = h('section', undefined, 'result');
      result.id = 'detail-result';
      result.appendChild(h('h3', 'Result'));
      if (detail.result.value !== undefined) result.appendChild(h('pre', detail.result.value, 'value'));
      else result.appendChild(h('p', detail.result.unavailable, 'hint'));
      panel.appendChild(result);
    }
  }

  // ---- pan, zoom, click --------------------------------------------------------------------
  var drag = null;
  svg.addEventListener('pointerdown', function (event) {
    drag = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y, moved: false, id: event.pointerId };
  });
  svg.addEventListener('pointermove', function (event) {
    if (!drag) return;
    var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!drag.moved) { drag.moved = true; svg.setPointerCapture(drag.id); svg.classList.add('panning'); }
    userMoved = true;
    view.x = drag.vx + dx;
    view.y = drag.vy + dy;
    applyTransform();
  });
  function endDrag() { if (drag && drag.moved) { suppressClick = true; setTimeout(function () { suppressClick = false; }, 0); } drag = null; svg.classList.remove('panning'); }
  var suppressClick = false;
  svg.addEventListener('pointerup', endDrag);
  svg.addEventListener('pointercancel', endDrag);
  svg.addEventListener('wheel', function (event) {
    event.preventDefault();
    var box = svg.getBoundingClientRect();
    var px = event.clientX - box.left, py = event.clientY - box.top;
    userMoved = true;
    var k = Math.min(4, Math.max(0.02, view.k * Math.exp(-event.deltaY * 0.0015)));
    view.x = px - (px - view.x) * (k / view.k);
    view.y = py - (py - view.y) * (k / view.k);
    view.k = k;
    applyTransform();
  }, { passive: false });
  nodesLayer.addEventListener('click', function (event) {
    if (suppressClick) return;
    var target = event.target.closest ? event.target.closest('g.node') : null;
    if (target) select(target.getAttribute('data-task'));
  });
  function zoomBy(factor) {
    var box = svg.getBoundingClientRect();
    userMoved = true;
    var px = box.width / 2, py = box.height / 2, k = Math.min(4, Math.max(0.02, view.k * factor));
    view.x = px - (px - view.x) * (k / view.k);
    view.y = py - (py - view.y) * (k / view.k);
    view.k = k;
    applyTransform();
  }
  document.getElementById('fit').addEventListener('click', fit);
  document.getElementById('zoom-in').addEventListener('click', function () { zoomBy(1.25); });
  document.getElementById('zoom-out').addEventListener('click', function () { zoomBy(0.8); });

  // ---- the live stream -----------------------------------------------------------------------
  startWorker();
  var source = new EventSource('/api/events?path=' + encodeURIComponent(plan));
  source.addEventListener('snapshot', function (event) { notice.textContent = ''; onSnapshot(JSON.parse(event.data)); });
  source.addEventListener('diff', function (event) { notice.textContent = ''; onDiff(JSON.parse(event.data)); });
  source.addEventListener('problem', function (event) { notice.textContent = 'ZooKeeper: ' + JSON.parse(event.data).message; });
  source.addEventListener('gone', function () {
    source.close();
    var badge = document.getElementById('plan-state');
    badge.textContent = 'deleted';
    badge.dataset.state = 'gone';
    notice.textContent = 'This plan no longer exists.';
    live.dataset.live = 'down';
    live.textContent = 'plan deleted';
  });
  source.onopen = function () { live.dataset.live = 'live'; live.textContent = 'live'; };
  source.onerror = function () { live.dataset.live = 'down'; live.textContent = 'reconnecting\u2026'; };
})();
`;

function pageShell(title: string, bodyAttributes: string, body: string, scripts: readonly string[]): string {
  return (
    `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<title>${escapeHtml(title)}</title>\n<link rel="stylesheet" href="/ui.css">\n</head>\n<body ${bodyAttributes}>\n${body}\n` +
    scripts.map((src) => `<script src="${escapeHtml(src)}"></script>`).join('\n') +
    `\n</body>\n</html>\n`
  );
}

/** The plans page. */
export function plansPageHtml(parent: string): string {
  const body =
    `<header><h1>${escapeHtml(parent)}</h1><span class="crumb">zk-plan · plans</span><span id="live" class="live">connecting…</span></header>\n` +
    `<table class="plans"><thead><tr><th>Plan</th><th>State</th><th>Progress</th><th>Running</th><th>Waiting</th><th>Failed</th><th>Blocked</th></tr></thead>` +
    `<tbody id="plans"></tbody></table>\n<p id="empty" class="empty"></p>`;
  return pageShell(`${parent} · zk-plan`, `class="plans-page" data-parent="${escapeHtml(parent)}"`, body, ['/plans.js']);
}

/** The plan page. */
export function planPageHtml(plan: string): string {
  const legend = TASK_VIEW_STATES.map(
    (state) => `<span class="item" data-state="${state}"><i></i>${state} <b id="count-${state}">0</b></span>`,
  ).join('');
  const body =
    `<header><a href="/">Plans</a><span class="crumb">›</span><h1>${escapeHtml(plan)}</h1>` +
    `<span id="plan-state" class="badge">…</span>` +
    `<div class="progress"><div class="bar"><div id="progress-fill"></div></div><span id="progress-text"></span></div>` +
    `<span id="live" class="live">connecting…</span></header>\n` +
    `<div id="legend" class="legend">${legend}</div>\n` +
    `<main class="plan"><section id="canvas">` +
    `<svg id="graph" xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="#8a94a6"></path></marker></defs>` +
    `<g id="viewport" visibility="hidden"><g id="edges"></g><g id="nodes"></g></g></svg>` +
    `<div id="notice"></div>` +
    `<div class="toolbar"><button id="fit" type="button">Fit</button><button id="zoom-in" type="button">+</button><button id="zoom-out" type="button">−</button><span id="layout-info"></span></div>` +
    `</section>\n<aside id="panel"><p class="hint">Click a task to see its function, params, inputs, and its result or error.</p></aside></main>`;
  return pageShell(
    `${plan.slice(plan.lastIndexOf('/') + 1)} · zk-plan`,
    `class="plan-page" data-plan="${escapeHtml(plan)}" data-states="${escapeHtml(JSON.stringify(TASK_VIEW_STATES))}"`,
    body,
    ['/graph.js', '/plan.js'],
  );
}
