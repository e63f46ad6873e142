import { mkdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FunctionRegistry, PermanentError, call, type TaskToAdd } from '../src/index.js';
import { startUiServer } from '../src/ui/ui-server.js';
import { launchChromium } from './support/browser.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('ui-scale');

const WAIT_MS = 30_000 * TIMING;

/** The limits issue 25 sets, on this machine, for the printed figures (checked with a margin for a loaded machine). */
const FIRST_PAINT_LIMIT_MS = 3_000;
const FILTER_LIMIT_MS = 200;

let browser: Browser | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterEach(async () => {
  // Before useZooKeeper's afterEach (hooks run in reverse order): held tasks are released and
  // pages closed before the ZkPlans they use are.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await browser?.close();
});

/** What the plan page publishes as `window.zkPlanUi` (src/ui/browser/page-stats.ts), as read here. */
interface PageStats {
  readonly snapshotMs: number | null;
  readonly firstRenderMs: number | null;
  readonly listFirstRenderMs: number | null;
  readonly lastFilterMs: number | null;
  readonly nodes: number;
}

/** The page's globals these functions read (the project compiles without the DOM library). */
interface PageGlobals {
  readonly zkPlanUi: PageStats;
  readonly document: {
    querySelectorAll(selector: string): { readonly length: number };
    querySelector(selector: string): { readonly textContent: string | null } | null;
  };
}

const TASKS = 5_000;
const FETCHES = 1_000;
const PARSE_PER_MERGE = 20;
const SCORES_PER_MERGE = 40;
/** Fetches that answer at once; the others hold their worker (running) or wait behind the limit. */
const QUICK_FETCHES = 60;
/** At most this many held fetches run at once (a concurrency limit), so the workers go on with the rest. */
const HELD_RUNNING = 4;

const failingFetch = (i: number): boolean => i < QUICK_FETCHES && i % 41 === 7;
const failingScore = (i: number): boolean => i % 13 === 0;

/**
 * A realistic 5 000-task shape: a start fans out to 1 000 fetches, each parsed; parses fan in by
 * twenties into merges; each merge fans out to scores; each score is checked; checks fan in by
 * eighteens into reports; one publish waits for every report.
 */
function pipeline(): TaskToAdd[] {
  const tasks: TaskToAdd[] = [{ task: call('start', 'day'), options: { key: 'start' } }];
  const fetch0 = tasks.length;
  for (let i = 0; i < FETCHES; i++) {
    const held = i >= QUICK_FETCHES;
    tasks.push({
      task: call('fetch', i),
      args: [0],
      options: {
        key: `fetch-${i}`,
        ...(held ? { concurrencyKey: 'upstream', priority: -1 } : {}),
      },
    });
  }
  const parse0 = tasks.length;
  for (let i = 0; i < FETCHES; i++)
    tasks.push({ task: call('parse', i), args: [fetch0 + i], options: { key: `parse-${i}` } });
  const merge0 = tasks.length;
  const merges = FETCHES / PARSE_PER_MERGE;
  for (let m = 0; m < merges; m++) {
    const inputs = Array.from({ length: PARSE_PER_MERGE }, (_, j) => parse0 + m * 20 + j);
    tasks.push({ task: call('merge', m), args: inputs, options: { key: `merge-${m}` } });
  }
  const score0 = tasks.length;
  for (let i = 0; i < merges * SCORES_PER_MERGE; i++)
    tasks.push({
      task: call('score', i),
      args: [merge0 + Math.floor(i / SCORES_PER_MERGE)],
      options: { key: `score-${i}` },
    });
  const reports = 50;
  const checks = TASKS - tasks.length - reports - 1;
  const check0 = tasks.length;
  for (let i = 0; i < checks; i++) tasks.push({ task: call('check', i), args: [score0 + i] }); // no key: named task-N
  const report0 = tasks.length;
  const perReport = Math.ceil(checks / reports);
  for (let r = 0; r < reports; r++) {
    const inputs: number[] = [];
    for (let i = r * perReport; i < Math.min(checks, (r + 1) * perReport); i++)
      inputs.push(check0 + i);
    tasks.push({ task: call('report', r), args: inputs, options: { key: `report-${r}` } });
  }
  tasks.push({
    task: call('publish', 'day'),
    args: Array.from({ length: reports }, (_, r) => report0 + r),
    options: { key: 'publish' },
  });
  return tasks;
}

/** Adds tasks in batches; an input in an earlier batch is passed by its path. */
async function addInBatches(
  add: (batch: TaskToAdd[]) => Promise<string[]>,
  tasks: readonly TaskToAdd[],
  batchSize: number,
): Promise<string[]> {
  const paths: string[] = [];
  for (let first = 0; first < tasks.length; first += batchSize) {
    const batch = tasks.slice(first, first + batchSize).map((task) => ({
      ...task,
      args: (task.args ?? []).map((arg) =>
        typeof arg === 'number' && arg < first ? (paths[arg] as string) : Number(arg) - first,
      ),
    }));
    paths.push(...(await add(batch)));
  }
  return paths;
}

async function newPage(width: number, height: number): Promise<Page> {
  if (browser === undefined) throw new Error('no browser');
  const context = await browser.newContext({ viewport: { width, height } });
  cleanups.push(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  cleanups.push(async () => expect(errors, 'errors in the page').toEqual([]));
  return page;
}

/** How long the view takes to send a plan's first snapshot on its event stream (ms), read here as a page would. */
async function firstSnapshotMs(url: string): Promise<number> {
  const started = performance.now();
  const aborter = new AbortController();
  const response = await fetch(url, { signal: aborter.signal });
  if (response.body === null) throw new Error(`no event stream at ${url}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const at = text.indexOf('event: snapshot\n');
    if (at >= 0 && text.indexOf('\n\n', at) >= 0) break;
    const { value, done } = await reader.read();
    if (done) throw new Error(`the event stream at ${url} ended before its snapshot`);
    text += decoder.decode(value, { stream: true });
  }
  aborter.abort();
  return performance.now() - started;
}

const stats = (page: Page): Promise<PageStats> =>
  page.evaluate(() => (globalThis as unknown as PageGlobals).zkPlanUi);

describe('the web view at 5 000 tasks', () => {
  it(
    'opens the task list of a 5 000-task plan with only the rows in sight in the page, filters it, goes to a failed task, shares the selection with the graph; prints first paint (list, graph) and filter times, saves screenshots',
    async () => {
      const root = env.root();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      cleanups.push(async () => release());
      let calls = 0;
      let heldNow = 0;
      const functions = new FunctionRegistry()
        .register('start', () => 'day')
        .register('fetch', async (ctx) => {
          calls++;
          const i = Number(ctx.params[0]);
          if (failingFetch(i))
            throw new PermanentError(`fetch ${i}: upstream answered 503 for shard ${i}`, {
              code: 'UPSTREAM_503',
            });
          if (i >= QUICK_FETCHES) {
            heldNow++;
            await held;
          }
          return i;
        })
        .register('parse', (ctx) => {
          calls++;
          return ctx.params[0];
        })
        .register('merge', (ctx) => {
          calls++;
          return ctx.params[0];
        })
        .register('score', (ctx) => {
          calls++;
          const i = Number(ctx.params[0]);
          if (failingScore(i))
            throw new PermanentError(`score ${i}: model returned NaN`, { code: 'SCORE_NAN' });
          return i;
        })
        .register('check', (ctx) => {
          calls++;
          return ctx.params[0];
        })
        .register('report', (ctx) => {
          calls++;
          return ctx.params[0];
        })
        .register('publish', (ctx) => {
          calls++;
          return ctx.params[0];
        });
      const builder = await env.zkPlan({ functions });
      const viewer = await env.zkPlan(); // the web view on a session of its own, as `zk-plan ui` would be

      const built = performance.now();
      const plan = await builder.createPlan(root, { history: true, name: 'nightly-scoring' });
      const tasks = pipeline();
      expect(tasks).toHaveLength(TASKS);
      const paths = await addInBatches((batch) => builder.addTasks(plan, batch), tasks, 1_000);
      await builder.limits(root).set('upstream', HELD_RUNNING);
      const buildMs = performance.now() - built;

      // Run it a while: the quick branches finish (some fail), a few fetches hold their workers, the rest waits.
      const ran = performance.now();
      await builder.markAsReady(plan);
      builder.startWorkers(root, { count: HELD_RUNNING + 4 });
      let seen = -1;
      while (heldNow < HELD_RUNNING || calls !== seen) {
        seen = calls;
        await sleep(1_000);
        if (performance.now() - ran > 60_000 * TIMING) throw new Error('the plan did not settle');
      }
      const runMs = performance.now() - ran;

      const ui = await startUiServer({ zkPlan: viewer, parent: root, port: 0 });
      cleanups.push(() => ui.close());
      const url = `${ui.url}plan?path=${encodeURIComponent(plan)}`;
      // The view's first visitor waits for what a running view has ready: the bundle (run from
      // source, esbuild makes it on the first request) and the plan's first read (its feed then
      // lingers, shared by every page). Timed apart, so that both pages below are measured alike.
      const bundled = performance.now();
      expect((await fetch(`${ui.url}plan.js`)).ok).toBe(true);
      const bundleMs = performance.now() - bundled;
      const coldFeedMs = await firstSnapshotMs(
        `${ui.url}api/events?path=${encodeURIComponent(plan)}`,
      );

      // The task list, opened by its link.
      const listPage = await newPage(1500, 900);
      await listPage.goto(`${url}&view=list`);
      await listPage.waitForSelector('#list-rows .list-row:not([hidden])');
      const list = await stats(listPage);
      const drawnRows = await listPage.evaluate(
        () =>
          (globalThis as unknown as PageGlobals).document.querySelectorAll('#list-rows .list-row')
            .length,
      );
      expect(await listPage.textContent('#list-count')).toBe(`${TASKS} of ${TASKS} tasks shown`);
      expect(drawnRows).toBeGreaterThan(10);
      expect(drawnRows).toBeLessThan(100); // only the rows in sight (and a few beyond) exist
      // The failed tasks first (sorted by state, failed after done), then a text filter on their error.
      await listPage.click('#list-head [data-sort="state"]');
      await listPage.click('#list-head [data-sort="state"]');
      await listPage.fill('#list-text', 'upstream answered');
      await listPage.waitForFunction(
        () => (globalThis as unknown as PageGlobals).zkPlanUi.lastFilterMs !== null,
      );
      const filtered = await listPage.textContent('#list-count');
      const filterMs = (await stats(listPage)).lastFilterMs as number;
      const failedFetches = Array.from({ length: QUICK_FETCHES }, (_, i) => i).filter(
        failingFetch,
      ).length;
      expect(filtered).toBe(`${failedFetches} of ${TASKS} tasks shown`);
      // Typing a longer filter over every row again (the slowest case: nothing cached).
      await listPage.fill('#list-text', '');
      await listPage.fill('#list-text', 'task-');
      const everyRowFilterMs = (await stats(listPage)).lastFilterMs as number;
      await listPage.fill('#list-text', '');
      await listPage.click('#list-go-failed');
      await listPage.waitForSelector('#list-rows .list-row.selected[data-state="failed"]');
      await listPage.waitForSelector('#panel #detail-error');
      await mkdir('test-output', { recursive: true });
      await listPage.screenshot({ path: 'test-output/ui-list-5000.png' });

      // One selection across the views: the failed task is selected in the graph and named in the
      // address; a task selected in the graph is the list's selected row, scrolled into sight.
      const failedTask = (await listPage.getAttribute('.list-row.selected', 'data-task')) as string;
      expect(new URL(listPage.url()).searchParams.get('task')).toBe(failedTask);
      await listPage.click('#plan-views [data-view="graph"]');
      await listPage.waitForSelector(`g.node.selected[data-task="${failedTask}"]`);
      const fetch0 = paths[1] as string;
      const fetch0Name = fetch0.slice(fetch0.lastIndexOf('/') + 1);
      await listPage.dispatchEvent(`g.node[data-task="${fetch0Name}"]`, 'click');
      await listPage.waitForSelector(`#panel[data-task="${fetch0}"]`);
      await listPage.click('#plan-views [data-view="list"]');
      await listPage.waitForSelector(`.list-row.selected[data-task="${fetch0Name}"]:not([hidden])`);
      expect(new URL(listPage.url()).searchParams.get('view')).toBe('list');

      // The graph, opened fresh.
      const graphPage = await newPage(1500, 900);
      await graphPage.goto(url);
      await graphPage.waitForFunction(
        () => (globalThis as unknown as PageGlobals).zkPlanUi.firstRenderMs !== null,
        undefined,
        { timeout: 60_000 * TIMING },
      );
      const graph = await stats(graphPage);
      await graphPage.screenshot({ path: 'test-output/ui-graph-5000.png' });

      const listFirstPaint = Math.round(list.listFirstRenderMs as number);
      const graphFirstPaint = Math.round(graph.firstRenderMs as number);
      console.log(
        `ui-scale: ${TASKS} tasks: list first paint ${listFirstPaint} ms, graph first paint ${graphFirstPaint} ms, ` +
          `filter ${filterMs} ms (every row matching: ${everyRowFilterMs} ms); ${drawnRows} row elements for ${TASKS} rows ` +
          `(plan built in ${Math.round(buildMs)} ms, run ${Math.round(runMs)} ms; the view's first read of the plan ${Math.round(coldFeedMs)} ms, bundle ${Math.round(bundleMs)} ms, before both; ` +
          `snapshot in the page at ${Math.round(list.snapshotMs ?? 0)} ms / ${Math.round(graph.snapshotMs ?? 0)} ms) ` +
          `[limits: first paint < ${FIRST_PAINT_LIMIT_MS} ms, filter < ${FILTER_LIMIT_MS} ms]; screenshots test-output/ui-list-5000.png, test-output/ui-graph-5000.png`,
      );
      expect(graph.nodes).toBe(TASKS);
      // Checked with a margin: the machine is shared; the printed figures are what the limits are read against.
      expect(listFirstPaint).toBeLessThan(FIRST_PAINT_LIMIT_MS * 2 * TIMING);
      expect(filterMs).toBeLessThan(FILTER_LIMIT_MS * 2 * TIMING);
    },
    180_000 * TIMING,
  );
});
