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
