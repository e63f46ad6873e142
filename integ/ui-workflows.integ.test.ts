/**
 * The web view as one application, in a real browser (headless Chromium) on a real ZooKeeper: the
 * workflows page groups named plans and a schedule's runs, newest first, filters by state and opens
 * a backfill's runs; the navigation bar reaches every page; deep links open the right item; the
 * time zone picked is applied and remembered. Saves test-output/ui-workflows.png, ui-plans.png and
 * ui-cluster.png.
 */
import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FunctionRegistry, PermanentError, PlanFailedError } from '../src/index.js';
import { startUiServer } from '../src/ui/ui-server.js';
import { launchChromium } from './support/browser.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('ui-workflows');

const WAIT_MS = 20_000 * TIMING;
const DAY = 86_400_000;

let browser: Browser | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterEach(async () => {
  // Before useZooKeeper's own afterEach: the view and the pages go before the ZkPlans they read through.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await browser?.close();
});

async function newPage(width = 1400, height = 820): Promise<Page> {
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

const functions = new FunctionRegistry()
  .register('ok', (ctx) => ctx.params[0] ?? 'ok')
  .register('boom', () => {
    throw new PermanentError('the warehouse refused the load', { code: 'REFUSED' });
  });

/** The data attribute `key` of every row of a table body. */
async function rowData(page: Page, tbody: string, key: string): Promise<string[]> {
  return page.$$eval(
    `#${tbody} tr`,
    (rows, name) =>
      rows.map(
        (row) => (row as unknown as { dataset: Record<string, string> }).dataset[name] ?? '',
      ),
    key,
  );
}

describe('the web view as one application', () => {
  it('groups runs into workflows, filters them, links schedules and backfills, and navigates between pages', async () => {
    const zkPlan = await env.zkPlan({ functions });
    const root = env.root();
    const schedulesParent = `${root}-schedules`;
    zkPlan.startWorkers(root, { count: 2 });

    // Three runs of etl (the second fails), one of report, all run to their end in turn.
    const etl = (fn: string) => ({
      name: 'etl',
      tasks: {
        extract: { fn: 'ok', params: ['rows'] },
        load: { fn, params: ['load'], inputs: ['extract'] },
      },
    });
    const etlRuns: string[] = [];
    for (const fn of ['ok', 'boom', 'ok']) {
      const { plan } = await zkPlan.submitPlan(root, etl(fn));
      etlRuns.push(plan);
      await zkPlan.waitForCompletion(plan, { timeoutMs: WAIT_MS }).catch((error: unknown) => {
        if (!(error instanceof PlanFailedError)) throw error;
      });
    }
    const report = await zkPlan.submitPlan(root, {
      name: 'report',
      tasks: { write: { fn: 'ok', params: ['report'] } },
    });
    await zkPlan.waitForCompletion(report.plan, { timeoutMs: WAIT_MS });

    // A paused schedule (no cron tick fires): a backfill of two past days (fired by a scheduler), and a manual run.
    const schedules = zkPlan.schedules(schedulesParent);
    await schedules.put({
      name: 'nightly',
      cron: '0 30 1 * * *',
      spec: { tasks: { load: { fn: 'ok', params: [{ $param: 'firedAt' }] } } },
      planParent: root,
      paused: true,
    });
    const today = Math.floor(Date.now() / DAY) * DAY;
    const backfill = await schedules.backfill('nightly', {
      from: today - 3 * DAY,
      to: today - DAY,
      mode: 'parallel',
      concurrency: 5,
    });
    expect(backfill.total).toBe(2);
    const scheduler = zkPlan.startScheduler(schedulesParent, { pollMs: 200 });
    cleanups.push(() => scheduler.stop());
    await expect
      .poll(async () => (await schedules.backfills('nightly'))[0]?.state, { timeout: WAIT_MS })
      .toBe('completed');
    const manual = await schedules.trigger('nightly');
    await zkPlan.waitForCompletion(manual.plan, { timeoutMs: WAIT_MS });

    const ui = await startUiServer({ zkPlan, parent: root, port: 0, schedules: schedulesParent });
    cleanups.push(() => ui.close());
    const page = await newPage();

    // The workflows, the one with the newest run first, each with its summary.
    await page.goto(`${ui.url}workflows`);
    await page.waitForSelector('#workflows tr[data-workflow="etl"]');
    expect(await rowData(page, 'workflows', 'workflow')).toEqual(['nightly', 'report', 'etl']);
    const etlRow = page.locator('#workflows tr[data-workflow="etl"]');
    expect(await etlRow.locator('td').nth(3).textContent()).toBe('3');
    expect(await etlRow.locator('td.success-rate').textContent()).toBe('67 %');
    expect(
      await page.getAttribute('#workflows tr[data-workflow="nightly"] td:last-child a', 'href'),
    ).toBe('/schedules?name=nightly');

    // A workflow's runs, newest first, with their times; the failed one among them.
    await etlRow.locator('a').click();
    await page.waitForURL(/\/workflows\?name=etl$/);
    await page.waitForSelector('#runs tr');
    expect(await rowData(page, 'runs', 'plan')).toEqual([...etlRuns].reverse());
    expect(await rowData(page, 'runs', 'state')).toEqual(['completed', 'failed', 'completed']);
    for (const duration of await page.locator('#runs td.duration').allTextContents())
      expect(duration).toMatch(/^took \d/);
    expect(await page.locator('#runs tr td.failed').allTextContents()).toEqual(['0', '1', '0']);
    await mkdir('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/ui-workflows.png', fullPage: true });

    // Filtered by state: the failed run alone, the filter kept in the address.
    await page.selectOption('#filter-state', 'failed');
    await expect.poll(() => rowData(page, 'runs', 'plan')).toEqual([etlRuns[1]]);
    expect(new URL(page.url()).searchParams.get('state')).toBe('failed');
    await page.reload();
    await page.waitForSelector('#runs tr');
    expect(await rowData(page, 'runs', 'plan')).toEqual([etlRuns[1]]);
    expect(await page.inputValue('#filter-state')).toBe('failed');
    // Its link opens the run's plan page.
    await page.locator('#runs tr a.plan-link').click();
    await page.waitForURL(/\/plan\?path=/);
    await page.waitForSelector('#plan-state[data-state="failed"]');

    // The schedule's workflow: its backfill links to the runs of its ticks, not the manual run.
    await page.goto(`${ui.url}workflows?name=nightly`);
    await page.waitForSelector('#workflow-schedule .backfill a');
    await expect.poll(() => rowData(page, 'runs', 'plan')).toHaveLength(3);
    await page.click('#workflow-schedule .backfill a');
    await page.waitForURL(/backfill=backfill-/);
    await expect
      .poll(async () =>
        (await rowData(page, 'runs', 'plan')).map((plan) => plan.includes('-manual-')),
      )
      .toEqual([false, false]);
    await page.screenshot({ path: 'test-output/ui-workflow-backfill.png', fullPage: true });

    // A deep link to the schedule marks it; the navigation bar reaches every page.
    await page.goto(`${ui.url}schedules?name=nightly`);
    await page.waitForSelector('#schedules tr[data-schedule="nightly"][data-linked="true"]');
    await page.screenshot({ path: 'test-output/ui-schedules.png', fullPage: true });
    expect(
      await page.getAttribute('#schedules tr[data-schedule="nightly"] a.all-runs', 'href'),
    ).toBe('/workflows?name=nightly');
    for (const [nav, path, ready] of [
      ['jobs', '/jobs', '#jobs-empty'],
      ['cluster', '/cluster', '#workers tr'],
      ['workflows', '/workflows', '#workflows tr'],
      ['plans', '/', '#plans tr'],
    ] as const) {
      await page.click(`#app-nav a[data-nav="${nav}"]`);
      await page.waitForURL((url) => url.pathname === path);
      await page.waitForSelector(ready, { state: 'attached' });
      expect(await page.getAttribute('#app-nav a[aria-current="page"]', 'data-nav')).toBe(nav);
    }

    // The plans page: name, state, started, finished and duration of each plan; times in the zone picked, remembered.
    const failedRow = `#plans tr[data-plan="${etlRuns[1]}"]`;
    expect(await page.textContent(`${failedRow} td.plan-name`)).toBe('etl');
    expect(await page.textContent(`${failedRow} td.duration`)).toMatch(/^took \d/);
    await page.selectOption('#time-zone', 'Asia/Tokyo');
    await expect.poll(() => page.textContent(`${failedRow} td.started .abs`)).toMatch(/ GMT\+9$/);
    await page.reload();
    await page.waitForSelector(failedRow);
    expect(await page.inputValue('#time-zone')).toBe('Asia/Tokyo');
    expect(await page.textContent(`${failedRow} td.finished .abs`)).toMatch(/ GMT\+9$/);
    await page.screenshot({ path: 'test-output/ui-plans.png', fullPage: true });

    await page.click('#app-nav a[data-nav="cluster"]');
    await page.waitForSelector('#workers tr');
    await page.screenshot({ path: 'test-output/ui-cluster.png', fullPage: true });
  });
});
