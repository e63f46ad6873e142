/**
 * The web view's actions against a real ZooKeeper and a real browser, with the view's default
 * options on loopback (no token): a click on the page acts; a request from another origin or
 * through a foreign Host is refused and changes nothing; rerun-from-here makes the new plan;
 * trigger starts a schedule run; a task that failed for good is not called retryable.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../src/index.js';
import { startUiServer, type UiServer } from '../src/ui/ui-server.js';
import { nameOf } from '../src/zk/layout.js';
import { launchChromium } from './support/browser.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('ui-actions');

const WAIT_MS = 20_000 * TIMING;

let browser: Browser | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterEach(async () => {
  // Before useZooKeeper's own afterEach (hooks run in reverse order): views and pages go before their ZkPlans.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await browser?.close();
});

/** Counts each function's calls; `hold` runs until released; `flaky` always fails (a retryable error). */
function functions(calls: Map<string, number>, held: Promise<void>): FunctionRegistry {
  const count = (name: string): void => {
    calls.set(name, (calls.get(name) ?? 0) + 1);
  };
  return new FunctionRegistry()
    .register('constant', (ctx) => {
      count('constant');
      return ctx.params[0];
    })
    .register('hold', async () => {
      count('hold');
      await held;
      return 'held';
    })
    .register('flaky', () => {
      count('flaky');
      throw new Error('the warehouse timed out');
    });
}

async function newPage(): Promise<Page> {
  if (browser === undefined) throw new Error('no browser');
  const context = await browser.newContext({ viewport: { width: 1400, height: 820 } });
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

/** What the form test uses of the page's document (the project compiles without the DOM library). */
interface FormDocument {
  createElement(tag: 'form'): {
    method: string;
    action: string;
    enctype: string;
    submit(): void;
  };
  readonly body: { appendChild(node: unknown): void };
}

const node = (task: string, state?: string): string =>
  `g.node[data-task="${nameOf(task)}"]${state ? `[data-state="${state}"]` : ''}`;

/** A POST with exactly these headers (node:http sends the Host it is given; fetch would not). */
function rawPost(
  ui: UiServer,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const url = new URL(ui.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method: 'POST', headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('web view actions on loopback, by default', () => {
  it('acts from the page, refuses other origins and hosts, reruns from a task, triggers a schedule, and calls no failed-for-good task retryable', async () => {
    const started = Date.now();
    const calls = new Map<string, number>();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(async () => release());
    const root = env.root();
    const schedulesParent = `${root}-schedules`;
    const worker = await env.zkPlan({ functions: functions(calls, held) });
    const { plan, tasks } = await worker.submitPlan(root, {
      tasks: {
        load: { fn: 'constant', params: ['rows'] },
        flaky: { fn: 'flaky', inputs: ['load'] },
        report: { fn: 'hold', inputs: ['load'] },
      },
      options: { maxAttempts: 2, initialDelayMs: 0 },
    });
    await worker.schedules(schedulesParent).put({
      name: 'nightly',
      cron: '0 0 3 * * *',
      spec: { tasks: { only: { fn: 'constant', params: ['nightly'] } } },
      planParent: root,
      paused: true,
    });
    // Two loops stay held by the two runs' `report`: two more run the rest.
    worker.startWorkers(root, { count: 4 });
    const viewer = await env.zkPlan({ functions: functions(calls, held) }); // the view on a session of its own, as `zk-plan ui` would be
    const ui = await startUiServer({
      zkPlan: viewer,
      parent: root,
      port: 0,
      schedules: schedulesParent,
    });
    cleanups.push(() => ui.close());
    const { load, flaky, report } = tasks as Record<'load' | 'flaky' | 'report', string>;

    // A task that failed for good: the panel says so, and why; never "retryable".
    const page = await newPage();
    await page.goto(`${ui.url}plan?path=${encodeURIComponent(plan)}`);
    await page.waitForSelector(node(flaky, 'failed'));
    await page.waitForSelector(node(report, 'running'));
    await page.click(node(flaky));
    await page.waitForSelector('#detail-outcome');
    expect(await page.textContent('#detail-outcome')).toBe(
      'Failed for good after 2 tries (no tries left: its retry policy allows 2)',
    );
    expect(await page.textContent('#panel')).not.toContain('Retryable');

    // Another site's page, a page reached through a rebound name, or through another port: refused, nothing changes.
    const port = new URL(ui.url).port;
    const pausePath = `/api/actions/pause?path=${encodeURIComponent(plan)}`;
    const foreignOrigin = await rawPost(ui, pausePath, {
      Host: `127.0.0.1:${port}`,
      Origin: 'https://evil.example',
    });
    expect(foreignOrigin.status).toBe(403);
    expect(JSON.parse(foreignOrigin.body)).toMatchObject({ error: { code: 'CROSS_ORIGIN' } });
    for (const host of [`evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`]) {
      const foreignHost = await rawPost(ui, pausePath, { Host: host, Origin: `http://${host}` });
      expect(foreignHost.status, host).toBe(403);
      expect(JSON.parse(foreignHost.body), host).toMatchObject({
        error: { code: 'HOST_MISMATCH' },
      });
    }
    // The same from a real page of another site (a server of its own on another port): a script's
    // POST and a form's are sent by the browser with that page's Origin, and refused.
    const site = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>another site</title><body></body>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => site.close(resolve)));
    if (browser === undefined) throw new Error('no browser');
    const otherContext = await browser.newContext(); // its refused requests log errors: not checked
    cleanups.push(() => otherContext.close());
    const other = await otherContext.newPage();
    await other.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    const target = `${ui.url}api/actions/pause?path=${encodeURIComponent(plan)}`;
    // The browser sends it; the answer never reaches the script (no CORS grant, and
    // Cross-Origin-Resource-Policy: same-origin blocks even an opaque one).
    const seen = await other.evaluate(
      (url) =>
        fetch(url, { method: 'POST', mode: 'no-cors' }).then(
          () => 'answer read',
          () => 'blocked',
        ),
      target,
    );
    expect(seen).toBe('blocked');
    await other.evaluate((url) => {
      const doc = (globalThis as unknown as { document: FormDocument }).document;
      const form = doc.createElement('form');
      form.method = 'POST';
      form.action = url;
      form.enctype = 'text/plain';
      doc.body.appendChild(form);
      form.submit();
    }, target);
    await other.waitForURL(/\/api\/actions\/pause/);
    // A form's body is refused first, whatever its Origin.
    expect(await other.textContent('body')).toContain('FORM_POST');
    expect((await viewer.plans.status(plan)).control).toBeUndefined();

    // A click on the page acts: no flag, no token.
    await page.waitForSelector('#action-pause:not([disabled])');
    await page.click('#action-pause');
    await page.waitForSelector('#plan-state[data-state="paused"]');
    expect((await viewer.plans.status(plan)).control?.state).toBe('paused');
    await page.click('#action-resume');
    await page.waitForSelector('#plan-state[data-state="running"]');

    // Rerun from the failed task: a new plan where it runs again and `load` reuses its result.
    await page.waitForSelector('#action-rerun:not([disabled])');
    await page.click('#action-rerun');
    await page.waitForSelector('#rerun-plan');
    const rerunPlan = decodeURIComponent(
      ((await page.getAttribute('#rerun-plan', 'href')) ?? '').replace('/plan?path=', ''),
    );
    expect(rerunPlan).not.toBe(plan);
    expect(await page.textContent('#rerun-note')).toMatch(/^Rerun from flaky: plan-\d+$/);
    await mkdir('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/ui-actions-rerun.png' });
    await page.click('#rerun-plan');
    await page.waitForURL(/\/plan\?path=/);
    const rerunView = await viewer.plans.describe(rerunPlan);
    const rerunLoad = rerunView.tasks.find((task) => task.key === 'load');
    expect(rerunLoad?.state).toBe('done'); // reused: not run again
    await page.waitForSelector(
      node(rerunView.tasks.find((task) => task.key === 'flaky')?.task ?? '', 'failed'),
    );
    expect(calls.get('constant')).toBe(1);
    expect(calls.get('flaky')).toBe(4); // 2 tries in each run
    expect(load).not.toBe(rerunLoad?.task);

    // Trigger the (paused) schedule from its row on the schedules page: a manual run, its plan linked.
    const list = await newPage();
    await list.goto(new URL('/schedules', ui.url).href);
    await list.waitForSelector('button[data-trigger="nightly"]:not([disabled])');
    await list.click('button[data-trigger="nightly"]');
    await list.waitForSelector('tr[data-schedule="nightly"] .action-note[data-outcome="ok"] a');
    const triggered = decodeURIComponent(
      (
        (await list.getAttribute(
          'tr[data-schedule="nightly"] .action-note[data-outcome="ok"] a',
          'href',
        )) ?? ''
      ).replace('/plan?path=', ''),
    );
    await viewer.waitForCompletion(triggered, { timeoutMs: WAIT_MS });
    const [summary] = await viewer.schedules(schedulesParent).list();
    expect(summary?.recentRuns).toMatchObject([
      { kind: 'manual', state: 'fired', plan: triggered },
    ]);
    await list.screenshot({ path: 'test-output/ui-actions-trigger.png', fullPage: true });
    release();
    console.log(`ui-actions: the whole scenario took ${Date.now() - started} ms`);
  });
});
