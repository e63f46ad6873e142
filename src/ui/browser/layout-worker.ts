/**
 * `/layout-worker.js`: ELK's bundle runs here, off the page's main thread. A classic worker, so
 * that ELK's bundle loads with importScripts.
 */
import { readElk, type ElkInput, type ElkOutput } from './graph.js';

/** What this script sees of the worker's global scope (the project's browser code compiles with the DOM library). */
interface WorkerScope {
  onmessage: ((event: MessageEvent<{ id: number; graph: ElkInput }>) => void) | null;
  postMessage(message: unknown): void;
  importScripts(...urls: string[]): void;
  ELK: new () => { layout(graph: ElkInput): Promise<ElkOutput> };
}

const scope = self as unknown as WorkerScope;
scope.importScripts('/elk.js');
const elk = new scope.ELK();
// In a worker, ELK's bundle (its fake worker) also claims onmessage: ours replaces it.
scope.onmessage = (event) => {
  const { id, graph } = event.data;
  const started = performance.now();
  elk.layout(graph).then(
    (laidOut) =>
      scope.postMessage({ id, layout: readElk(laidOut), ms: performance.now() - started }),
    (error: unknown) =>
      scope.postMessage({ id, error: String(error instanceof Error ? error.message : error) }),
  );
};
scope.postMessage({ ready: true });
