/**
 * `/graph.js`: the graph helpers of the web view, plain ES2017 for the browser, loaded by the plan
 * page and by the layout worker.
 */

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
