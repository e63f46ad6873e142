/**
 * The web view's timeline in a real browser (issue 25): a 1 000-task plan run by eight worker
 * loops, a tenth of its tasks failing their first try, drawn as a Gantt live while it runs and
 * again on a fresh page once done. Prints the render time (the page's own clock, from the view's
 * show() to its first drawing with every try read) and saves test-output/ui-timeline.png.
 */
import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FunctionRegistry, call, type TaskToAdd } from '../src/index.js';
import { startUiServer } from '../src/ui/ui-server.js';
import type { UiTimeline } from '../src/ui/ui-wire.js';
import { launchChromium } from './support/browser.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('ui-timeline');

const TASKS = 1000;
/** Tasks whose first try throws: every tenth. */
const FLAKY = (index: number): boolean => index % 10 === 3;
const RENDER_LIMIT_MS = 2_000;

let browser: Browser | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await browser?.close();
});

/** What the plan page exposes as `window.zkPlanUi` that this test reads. */
interface TimelineStats {
  readonly timelineRenderMs: number | null;
  readonly timelineDrawMs: number | null;
  readonly timelineFetchMs: number | null;
  readonly timelineBars: number;
}

function stats(page: Page): Promise<TimelineStats> {
  return page.evaluate(() => (globalThis as unknown as { zkPlanUi: TimelineStats }).zkPlanUi);
}

async function newPage(): Promise<Page> {
  if (browser === undefined) throw new Error('no browser');
  const context = await browser.newContext({ viewport: { width: 1500, height: 900 } });
  cleanups.push(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(30_000 * TIMING);
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  cleanups.push(async () => expect(errors, 'errors in the page').toEqual([]));
  return page;
}

describe('web view timeline', () => {
  it(
    'draws a 1 000-task run with retries live and renders it in under 2 s; hover tells a try, a click selects its task',
    async () => {
      const root = env.root();
      const functions = new FunctionRegistry().register('f', (ctx) => {
        const index = ctx.params[0] as number;
        if (FLAKY(index) && ctx.attempt === 1)
          throw Object.assign(new Error(`first try of ${index} refused`), { code: 'FLAKY' });
        return index;
      });
      const builder = await env.zkPlan({ functions });
      const other = await env.zkPlan({ functions });
      const viewer = await env.zkPlan();
      const plan = await builder.createPlan(root, { maxAttempts: 3, initialDelayMs: 20 });
      const tasks: TaskToAdd[] = Array.from({ length: TASKS }, (_, i) => {
        const layer = Math.floor(i / 100);
        const args =
          layer === 0
            ? []
            : [
                ...new Set([
                  (layer - 1) * 100 + ((i * 7) % 100),
                  (layer - 1) * 100 + ((i * 13 + 5) % 100),
                ]),
              ];
        return { task: call('f', i), args, options: { key: `step-${layer}-${i % 100}` } };
      });
      await builder.addTasks(plan, tasks);
      await builder.markAsReady(plan);
      const ui = await startUiServer({ zkPlan: viewer, parent: root, port: 0 });
      cleanups.push(() => ui.close());
      const url = `${ui.url}plan?path=${encodeURIComponent(plan)}&view=timeline`;

      // Live: the timeline is open while the plan runs, and ends with a bar per try.
      const live = await newPage();
      await live.goto(url);
      await live.waitForSelector('#timeline-view:not([hidden]) canvas');
      builder.startWorkers(root, { count: 4, retention: false });
      other.startWorkers(root, { count: 4, retention: false });
      await builder.waitForCompletion(plan, { timeoutMs: 90_000 * TIMING });
      const flaky = tasks.filter((_, index) => FLAKY(index)).length;
      await live.waitForFunction(
        (expected) =>
          (globalThis as unknown as { zkPlanUi: TimelineStats }).zkPlanUi.timelineBars === expected,
        TASKS + flaky,
      );

      // The route: a flaky task's two tries, the failed one first, each with its worker.
      const answer = (await (
        await fetch(`${ui.url}api/timeline?path=${encodeURIComponent(plan)}`)
      ).json()) as UiTimeline;
      const twice = Object.entries(answer.tries).filter(([, tries]) => tries.length > 1);
      expect(twice).toHaveLength(flaky);
      const flakyTries = twice[0]?.[1] ?? [];
      expect(flakyTries.map(({ attempt, outcome }) => [attempt, outcome])).toEqual([
        [1, 'failed'],
        [2, 'done'],
      ]);
      expect(flakyTries[0]?.error).toMatch(/^FLAKY: .*first try of \d*3 refused/);
      expect(flakyTries.every((entry) => /\/\d+$/.test(entry.worker))).toBe(true);
      expect(Object.keys(answer.tries)).toHaveLength(TASKS);

      // A fresh page, its graph drawn, switched to the timeline: the render time, from the view's
      // show() to its first drawing with every try (the page's own load is the graph test's figure).
      const page = await newPage();
      await page.goto(url.replace('&view=timeline', ''));
      await page.waitForFunction(
        () => (globalThis as unknown as { zkPlanUi: { snapshots: number } }).zkPlanUi.snapshots > 0,
      );
      await page.click('#plan-views [data-view="timeline"]');
      await page.waitForFunction(
        () =>
          (globalThis as unknown as { zkPlanUi: TimelineStats }).zkPlanUi.timelineRenderMs !== null,
      );
      const rendered = await stats(page);
      console.log(
        `ui-timeline: ${TASKS} tasks rendered in ${rendered.timelineRenderMs} ms (${rendered.timelineBars} bars; reading the tries ${rendered.timelineFetchMs} ms, the last layout and drawing ${rendered.timelineDrawMs} ms)`,
      );
      expect(rendered.timelineBars).toBe(TASKS + flaky);
      expect(rendered.timelineRenderMs).toBeLessThan(RENDER_LIMIT_MS);

      // Hover a bar of the first worker's row: the tooltip names a task, its try and worker.
      const canvas = page.locator('#timeline-canvas');
      const box = await canvas.boundingBox();
      if (box === null) throw new Error('no timeline canvas');
      let told = '';
      for (let x = 180; x < box.width - 20 && told === ''; x += 6) {
        await page.mouse.move(box.x + x, box.y + 26 + 11);
        if (await page.locator('.timeline-tooltip:not([hidden])').count())
          told = (await page.textContent('.timeline-tooltip')) ?? '';
      }
      expect(told).toMatch(
        /step-\d+-\d+ \(task-\d+\)function f · try \d · (done|failed, retried)worker \S+\/\d+/,
      );
      // A click selects the task: the side panel shows it.
      await page.mouse.down();
      await page.mouse.up();
      await page.waitForSelector('#panel .fn');
      expect(await page.textContent('#panel .fn')).toBe('f');

      await mkdir('test-output', { recursive: true });
      await page.mouse.move(box.x + box.width / 2, box.y + 26 + 3 * 22 + 11);
      await page.screenshot({ path: 'test-output/ui-timeline.png' });
      // Rows per task: a row per task, the critical path marked.
      await page.click('#timeline-rows-task');
      await page.mouse.move(0, 0);
      await page.waitForTimeout(100);
      await page.screenshot({ path: 'test-output/ui-timeline-tasks.png' });
      const after = await stats(page);
      expect(after.timelineBars).toBe(TASKS + flaky);
    },
    150_000 * TIMING,
  );
});
