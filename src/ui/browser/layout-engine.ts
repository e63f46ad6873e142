/**
 * Lays graphs out with ELK in a Web Worker (`/layout-worker.js`), or in the page when workers
 * fail (a CSP or a browser that refuses them). Only the answer to the latest request is passed on.
 */
import { readElk, type ElkInput, type ElkOutput, type Layout } from './graph.js';
import type { PageStats } from './page-stats.js';

/** ELK's bundle (`/elk.js`) as the page sees it. */
interface Elk {
  layout(graph: ElkInput): Promise<ElkOutput>;
}
declare global {
  interface Window {
    ELK?: new () => Elk;
  }
}

/** The worker's answer to request `id`. */
export type LayoutAnswer =
  | { readonly id: number; readonly layout: Layout; readonly ms: number }
  | { readonly id: number; readonly error: string };

export class LayoutEngine {
  private worker: Worker | undefined;
  /** ELK loaded into the page, once (when the worker is not there). */
  private pageElk: Promise<Elk> | undefined;
  private latest = 0;
  /** The graph of the latest request, until it is answered: laid out again in the page if the worker dies. */
  private pending: ElkInput | undefined;

  constructor(
    private readonly stats: PageStats,
    private readonly onLayout: (answer: LayoutAnswer) => void,
  ) {
    try {
      const worker = new Worker('/layout-worker.js');
      worker.onmessage = (event: MessageEvent<LayoutAnswer | { ready: true }>) => {
        if ('id' in event.data) this.deliver(event.data);
      };
      worker.onerror = (event) => {
        event.preventDefault();
        worker.terminate();
        this.worker = undefined;
        if (this.pending !== undefined) this.request(this.pending); // again, in the page
      };
      this.worker = worker;
    } catch {
      this.worker = undefined;
    }
  }

  /** Lays `graph` out; an earlier request still under way is answered but not passed on. */
  request(graph: ElkInput): void {
    const id = ++this.latest;
    this.pending = graph;
    if (this.worker !== undefined) {
      this.stats.engine = 'worker';
      this.worker.postMessage({ id, graph });
      return;
    }
    this.stats.engine = 'page';
    void this.loadPageElk().then(
      async (elk) => {
        const started = performance.now();
        try {
          this.deliver({
            id,
            layout: readElk(await elk.layout(graph)),
            ms: performance.now() - started,
          });
        } catch (error) {
          this.deliver({ id, error: String(error) });
        }
      },
      (error: unknown) => this.deliver({ id, error: String(error) }),
    );
  }

  private deliver(answer: LayoutAnswer): void {
    if (answer.id !== this.latest) return; // a newer layout is on its way
    this.pending = undefined;
    this.onLayout(answer);
  }

  private loadPageElk(): Promise<Elk> {
    this.pageElk ??= new Promise<Elk>((resolve, reject) => {
      const script = document.createElement('script');
      script.src = '/elk.js';
      script.onload = () =>
        window.ELK === undefined
          ? reject(new Error('elk.js defines no ELK'))
          : resolve(new window.ELK());
      script.onerror = () => reject(new Error('elk.js did not load'));
      document.head.appendChild(script);
    });
    // A failed load is tried again by the next layout.
    this.pageElk.catch(() => (this.pageElk = undefined));
    return this.pageElk;
  }
}
