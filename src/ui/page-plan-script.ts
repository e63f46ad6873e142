/**
 * `/plan.js`: the plan page's script, plain ES2017 for the browser. One function in two parts:
 * this file opens it (drawing, layout, live state), `page-plan-panel-script.ts` closes it (the side
 * panel, pan and zoom, the event stream). Values from ZooKeeper go in with `textContent` or
 * `setAttribute`, never as markup.
 */
import { PLAN_PANEL_JS } from './page-plan-panel-script.js';

/** The opening of the plan page's function: its elements and state, the SVG drawing, the layout, snapshots and diffs. */
const PLAN_GRAPH_JS = String.raw`(function () {
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

`;

/** Script of the plan page: the graph, live colours, the side panel. */
export const PLAN_JS = PLAN_GRAPH_JS + PLAN_PANEL_JS;
