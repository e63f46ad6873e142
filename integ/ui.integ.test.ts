import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  PermanentError,
  call,
  type JobContext,
  type TaskToAdd,
  type ZkPlan,
} from '../src/index.js';
import { startUiServer, type UiServer } from '../src/ui/ui-server.js';
import { nameOf } from '../src/zk/layout.js';
import { launchChromium } from './support/browser.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('ui');

const WAIT_MS = 20_000 * TIMING;

let browser: Browser | undefined;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterEach(async () => {
  // Runs before useZooKeeper's own afterEach (hooks run in reverse order): UI servers and pages
  // go before the ZkPlans they read through are closed.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await browser?.close();
});

/** A promise a test releases, so that it decides when a task may finish. */
interface Gate {
  readonly promise: Promise<void>;
  release(): void;
}
function gate(): Gate {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

/** `step(name)` waits for the gate of that name, then returns `<name> ok`. */
function gatedFunctions(gates: Map<string, Gate>): FunctionRegistry {
  return new FunctionRegistry()
    .register('step', async (ctx) => {
      const name = String(ctx.params[0]);
      const found = gates.get(name);
      if (found === undefined) throw new Error(`no gate ${name}`);
      await found.promise;
      return `${name} ok`;
    })
    .register('constant', (ctx) => ctx.params[0])
    .register('explode', (ctx) => {
      throw new PermanentError(`no such customer: ${String(ctx.params[0])}`, {
        code: 'NO_SUCH_CUSTOMER',
      });
    });
}

async function openUi(
  zkPlan: ZkPlan,
  parent: string,
  actionsToken?: string,
  jobs?: string,
): Promise<UiServer> {
  const ui = await startUiServer({
    zkPlan,
    parent,
    port: 0,
    ...(actionsToken !== undefined ? { actionsToken } : {}),
    ...(jobs !== undefined ? { jobs } : {}),
  });
  cleanups.push(() => ui.close());
  return ui;
}

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

function planUrl(ui: UiServer, plan: string): string {
  return `${ui.url}plan?path=${encodeURIComponent(plan)}`;
}

/** The page's globals these tests read, for functions run in the page (the project compiles without the DOM library). */
interface PageGlobals {
  readonly document: {
    querySelectorAll(selector: string): { readonly length: number };
    readonly documentElement: { readonly dataset: Record<string, string | undefined> };
  };
  readonly zkPlanUi: Omit<PageStats, 'longestTask' | 'edges'>;
  readonly longTasks: number[];
}

/** What the plan page exposes as `window.zkPlanUi`, with what the test adds. */
interface PageStats {
  readonly snapshotMs: number;
  readonly firstRenderMs: number;
  readonly elkMs: number;
  readonly engine: 'worker' | 'page';
  readonly layouts: number;
  readonly structureChanges: number;
  readonly diffs: number;
  readonly nodes: number;
  readonly longestTask: number;
  readonly edges: number;
}

const node = (task: string, state?: string): string =>
  `g.node[data-task="${nameOf(task)}"]${state ? `[data-state="${state}"]` : ''}`;

describe('web view', () => {
  it('lists plans and shows a running plan turn done, live, with kept results in the panel', async () => {
    const gates = new Map(['a', 'b', 'c', 'd'].map((name) => [name, gate()]));
    const zkPlan = await env.zkPlan({ functions: gatedFunctions(gates) });
    const root = env.root();
    const plan = await zkPlan.createPlan(root, { history: true });
    const a = await zkPlan.addTask(plan, call('step', 'a'));
    const b = await zkPlan.addTask(plan, call('step', 'b'), [a]);
    const c = await zkPlan.addTask(plan, call('step', 'c'), [a]);
    const d = await zkPlan.addTask(plan, call('step', 'd'), [b, c], { keepResult: true });
    await zkPlan.markAsReady(plan);
    const ui = await openUi(zkPlan, root);
    cleanups.push(async () => gates.forEach((entry) => entry.release()));

    // The plans page lists it, live.
    const list = await newPage();
    await list.goto(ui.url);
    const row = list.locator(`tr[data-plan="${plan}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-state')).toBe('running');
    expect(await row.locator('.progress-text').textContent()).toBe('0/4 done');

    // The plan page, reached through the list's link.
    const page = await newPage();
    await page.goto(ui.url);
    await page.locator(`tr[data-plan="${plan}"] a`).click();
    await page.waitForURL(/\/plan\?path=/);
    await page.waitForSelector(node(d, 'waiting'));
    expect(await page.locator('g.node').count()).toBe(4);
    expect(await page.locator('#edges path').count()).toBe(4);
    await page.waitForSelector(node(a, 'runnable'));

    zkPlan.startWorkers(root, { count: 2 });
    await page.waitForSelector(node(a, 'running')); // a claim sets no child of the plan: seen through the owner watch
    gates.get('a')?.release();
    await page.waitForSelector(node(a, 'done'));
    await page.waitForSelector(node(b, 'running'));
    await page.waitForSelector(node(c, 'running'));
    expect(await page.getAttribute(node(d), 'data-state')).toBe('waiting');
    gates.get('b')?.release();
    gates.get('c')?.release();
    gates.get('d')?.release();
    for (const task of [b, c, d]) await page.waitForSelector(node(task, 'done'));
    await page.waitForSelector('#plan-state[data-state="completed"]');
    expect(await page.textContent('#progress-text')).toBe('4/4 done');
    expect(await page.textContent('#count-done')).toBe('4');

    // The panel shows the kept result of d and its inputs.
    await page.click(node(d));
    await page.waitForSelector('#detail-result pre');
    expect(await page.textContent('#detail-result pre')).toBe("'d ok'");
    expect(await page.textContent('#panel .fn')).toBe('step');
    expect(await page.textContent('#panel pre.params')).toBe("[ 'd' ]");
    const label = (task: string): string =>
      `#${Number(nameOf(task).slice('task-'.length))} ${nameOf(task)}`;
    expect(await page.locator('#panel ul.inputs li').allTextContents()).toEqual([
      label(b),
      label(c),
    ]);

    // The plans page followed along without a reload.
    await list.waitForSelector(`tr[data-plan="${plan}"][data-state="completed"]`);
    expect(await row.locator('.progress-text').textContent()).toBe('4/4 done');
    await mkdir('test-output', { recursive: true });
    await list.screenshot({ path: 'test-output/ui-plans.png' });
  });

  it('names tasks by key (a spec plan, and addTask { key }) on nodes and in the panel, and plans by name; saves a screenshot', async () => {
    const gates = new Map(['eu', 'us'].map((name) => [name, gate()]));
    const zkPlan = await env.zkPlan({ functions: gatedFunctions(gates) });
    const root = env.root();
    cleanups.push(async () => gates.forEach((entry) => entry.release()));
    const spec = await zkPlan.submitPlan(root, {
      name: 'daily report',
      tasks: {
        'load-eu': { fn: 'step', params: ['eu'] },
        'load-us': { fn: 'step', params: ['us'] },
        report: { fn: 'constant', params: ['report'], inputs: ['load-eu', 'load-us'] },
      },
      options: { history: true },
    });
    const keyed = await zkPlan.createPlan(root, { name: 'regions', history: false });
    const eu = await zkPlan.addTask(keyed, call('constant', 'eu'), [], { key: 'eu' });
    await zkPlan.addTask(keyed, call('constant', 'total'), [eu], { key: 'total' });
    zkPlan.startWorkers(root, { count: 2 });
    const ui = await openUi(zkPlan, root);

    // The plans page names both plans.
    const list = await newPage();
    await list.goto(ui.url);
    await list.waitForSelector(`tr[data-plan="${keyed}"]`);
    expect(await list.textContent(`tr[data-plan="${spec.plan}"] td.plan-name`)).toBe(
      'daily report',
    );
    expect(await list.textContent(`tr[data-plan="${keyed}"] td.plan-name`)).toBe('regions');

    const page = await newPage();
    await page.goto(planUrl(ui, spec.plan));
    const report = spec.tasks['report'] as string;
    await page.waitForSelector(node(spec.tasks['load-eu'] as string, 'running'));
    expect(await page.textContent('#plan-name')).toBe('daily report');
    expect(await page.textContent(`${node(spec.tasks['load-eu'] as string)} text`)).toBe(
      'load-eu step',
    );
    expect(await page.getAttribute(node(report), 'data-key')).toBe('report');
    await page.click(node(report));
    await page.waitForSelector('#panel code.key');
    expect(await page.textContent('#panel code.key')).toBe('report');
    expect(await page.locator('#panel ul.inputs li').allTextContents()).toEqual([
      `load-eu ${nameOf(spec.tasks['load-eu'] as string)}`,
      `load-us ${nameOf(spec.tasks['load-us'] as string)}`,
    ]);
    await mkdir('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/ui-plan-keys.png' });
    gates.forEach((entry) => entry.release());
    await page.waitForSelector(node(report, 'done'));
    expect(await page.textContent(`${node(report)} text`)).toBe('report constant');

    // A plan built with addTask's { key }: labelled by key, and still once done and gone (no history kept).
    const other = await newPage();
    await other.goto(planUrl(ui, keyed));
    await other.waitForSelector(node(eu, 'runnable'));
    expect(await other.textContent('#plan-name')).toBe('regions');
    expect(await other.textContent(`${node(eu)} text`)).toBe('eu constant');
    await zkPlan.markAsReady(keyed);
    await other.waitForSelector('#plan-state[data-state="completed"]');
    await other.waitForSelector(`${node(eu, 'done')}.gone`);
    expect(await other.textContent(`${node(eu)} text`)).toBe('eu constant');
    await other.click(node(eu));
    await other.waitForSelector('#detail-title');
    expect(await other.textContent('#detail-title')).toBe(
      `eu#${Number(nameOf(eu).slice('task-'.length))} ${nameOf(eu)}`,
    );
  });

  it('links a sub-plan task to its child plan and the child back to the task (opened selected); saves screenshots', async () => {
    const gates = new Map([['child', gate()]]);
    const zkPlan = await env.zkPlan({ functions: gatedFunctions(gates) });
    const root = env.root();
    const { plan, tasks } = await zkPlan.submitPlan(root, {
      name: 'nightly',
      tasks: {
        first: { fn: 'constant', params: ['day 1'] },
        'load-day': {
          fn: 'zk-plan:sub-plan',
          inputs: ['first'],
          params: [
            {
              spec: {
                name: 'load-day',
                tasks: {
                  extract: { fn: 'step', params: ['child'] },
                  load: { fn: 'constant', params: [{ $param: 'day' }], inputs: ['extract'] },
                },
              },
              inputs: ['day'],
              result: 'load',
              checkEveryMs: 50,
            },
          ],
        },
      },
    });
    const task = tasks['load-day'] as string;
    const child = `${root}/${nameOf(plan)}~${nameOf(task)}`;
    zkPlan.startWorkers(root, { count: 2 });
    const ui = await openUi(zkPlan, root);

    const page = await newPage();
    await page.goto(planUrl(ui, plan));
    await page.waitForSelector(node(task, 'runnable'));
    await page.click(node(task));
    const childLink = page.locator('#panel dd a', { hasText: child });
    await childLink.waitFor();
    expect(await childLink.getAttribute('href')).toBe(
      `/plan?${new URLSearchParams({ path: child }).toString()}`,
    );
    await mkdir('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/ui-sub-plan-parent.png' });

    // The child's page names the task that made it; the link opens the parent with the task selected.
    await childLink.click();
    await page.waitForSelector('#plan-parent:not([hidden])');
    expect(await page.textContent('#plan-name')).toBe('load-day');
    expect(await page.textContent('#plan-parent')).toBe(`sub-plan of ${nameOf(task)} in ${plan}`);
    await page.waitForSelector('g.node[data-state="running"]');
    await page.screenshot({ path: 'test-output/ui-sub-plan-child.png' });
    await page.click('#plan-parent');
    await page.waitForSelector(`#panel[data-task="${task}"]`);
    expect(await page.textContent('#panel code.key')).toBe('load-day');
    gates.forEach((entry) => entry.release());
    await page.waitForSelector(node(task, 'done'));
  });

  it('shows a failed task with its error, its blocked dependents, and saves a screenshot', async () => {
    const gates = new Map(['slow-1', 'slow-2'].map((name) => [name, gate()]));
    const zkPlan = await env.zkPlan({ functions: gatedFunctions(gates) });
    const root = env.root();
    const plan = await zkPlan.createPlan(root, { history: true });
    const paths = await zkPlan.addTasks(plan, [
      { task: call('constant', { customer: 42, region: 'eu' }) }, // 0
      { task: call('constant', [1, 2, 3]), options: { keepResult: true } }, // 1
      { task: call('constant', 'x') }, // 2
      { task: call('explode', 42), args: [0] }, // 3: fails for good
      { task: call('constant', 'report'), args: [3, 1] }, // 4: blocked
      { task: call('step', 'slow-1'), args: [1] }, // 5: running
      { task: call('step', 'slow-2'), args: [2] }, // 6: running
      { task: call('constant', 'sum'), args: [5, 6] }, // 7: waiting
      { task: call('constant', 'final'), args: [4, 7] }, // 8: blocked
    ]);
    await zkPlan.markAsReady(plan);
    cleanups.push(async () => gates.forEach((entry) => entry.release()));
    zkPlan.startWorkers(root, { count: 3 });
    const ui = await openUi(zkPlan, root);

    const page = await newPage();
    await page.goto(planUrl(ui, plan));
    const [, loaded, , failed, report, slow1, slow2, sum, final] = paths as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    await page.waitForSelector(node(failed, 'failed'));
    await page.waitForSelector(node(report, 'blocked'));
    await page.waitForSelector(node(final, 'blocked'));
    await page.waitForSelector(node(slow1, 'running'));
    await page.waitForSelector(node(slow2, 'running'));
    await page.waitForSelector(node(loaded, 'done'));
    expect(await page.getAttribute(node(sum), 'data-state')).toBe('waiting');

    await page.click(node(failed));
    await page.waitForSelector('#detail-error');
    expect(await page.textContent('#detail-error .code')).toBe('NO_SUCH_CUSTOMER');
    expect(await page.textContent('#detail-error .message')).toContain('no such customer: 42');
    expect(await page.textContent('#detail-error')).toContain('PermanentError');
    expect(await page.textContent('#detail-outcome')).toBe(
      'Failed for good after 1 try (permanent error: another try cannot help)',
    );
    expect(await page.textContent('#detail-error pre.stack')).toMatch(
      /PermanentError: no such customer: 42\n\s+at /,
    );
    expect(await page.textContent('#detail-state')).toBe('failed');
    expect(await page.textContent('#panel .fn')).toBe('explode');

    await mkdir('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/ui-plan.png' });

    // A blocked task says why.
    await page.click(node(report));
    await page.waitForSelector(`#panel[data-task="${report}"]`);
    expect(await page.textContent('#panel')).toContain(
      `its input comes from failed task ${failed}`,
    );
  });

  it("shows a running task's log live in the panel, a line appearing as the task logs it, with a download", async () => {
    const gates = new Map(['first', 'second'].map((name) => [name, gate()]));
    const functions = new FunctionRegistry().register('talk', async (ctx) => {
      ctx.log.info('loading 3 files', { files: 3 });
      console.log('file a.csv: 120 rows');
      await gates.get('first')?.promise;
      ctx.log.warn('file b.csv: 2 rows skipped');
      await gates.get('second')?.promise;
      return 'ok';
    });
    const zkPlan = await env.zkPlan({ functions });
    const root = env.root();
    const plan = await zkPlan.createPlan(root);
    const task = await zkPlan.addTask(plan, call('talk'));
    await zkPlan.markAsReady(plan);
    cleanups.push(async () => gates.forEach((entry) => entry.release()));
    zkPlan.startWorkers(root, { taskLogs: { echo: false, sink: false, flushIntervalMs: 200 } });
    const ui = await openUi(zkPlan, root);

    const page = await newPage();
    await page.goto(planUrl(ui, plan));
    await page.waitForSelector(node(task, 'running'));
    await page.click(node(task));
    await page.waitForSelector('#detail-log pre:has-text("file a.csv: 120 rows")');
    expect(await page.textContent('#detail-log pre')).toContain('loading 3 files {"files":3}');
    expect(await page.textContent('#detail-log')).not.toContain('b.csv');
    gates.get('first')?.release(); // the task logs its next line now: the open panel shows it without a click
    await page.waitForSelector('#detail-log .level-warn');
    expect(await page.textContent('#detail-log .level-warn')).toContain(
      'file b.csv: 2 rows skipped',
    );
    expect(await page.textContent('#detail-log .try-head')).toMatch(/Attempt 1 on .+, running/);
    await mkdir('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/ui-task-log.png' });

    const download = await page.request.get(
      `${ui.url}api/task-log.txt?path=${encodeURIComponent(task)}`,
    );
    expect(download.headers()['content-disposition']).toMatch(
      /attachment; filename="plan-\d+-task-\d+\.log"/,
    );
    expect(await download.text()).toMatch(
      /── attempt 1 on .+\n.+INFO  loading 3 files \{"files":3\}\n.+INFO  file a\.csv: 120 rows\n.+WARN  file b\.csv: 2 rows skipped\n/,
    );
    gates.get('second')?.release();
    await zkPlan.waitForCompletion(plan, { timeoutMs: WAIT_MS });
    await page.waitForSelector('#detail-log .try-head:has-text("ended")'); // the panel stops following once the try has ended
  });

  it('steers a plan: priority, limits and live workers shown; pause, resume and cancel with the token; why a task waits', async () => {
    const gates = new Map(['hold', 'queued', 'other'].map((name) => [name, gate()]));
    const zkPlan = await env.zkPlan({ functions: gatedFunctions(gates) });
    cleanups.push(async () => gates.forEach((entry) => entry.release()));
    const root = env.root();
    await zkPlan.limits(root).set('api', 1);
    const plan = await zkPlan.createPlan(root, { priority: 5 });
    // The first holds the key's one slot (its own priority puts it first); the second waits for it.
    const [holder, queued] = (await zkPlan.addTasks(plan, [
      { task: call('step', 'hold'), options: { concurrencyKey: 'api', priority: 9 } },
      { task: call('step', 'queued'), options: { concurrencyKey: 'api' } },
    ])) as [string, string];
    await zkPlan.markAsReady(plan);
    const other = await zkPlan.createPlan(root);
    await zkPlan.addTask(other, call('step', 'other'));
    await zkPlan.markAsReady(other);
    zkPlan.startWorkers(root, { count: 3 });
    const ui = await openUi(zkPlan, root, 'tok-0123456789abcdef');

    // The plans page: priorities; the token leaves the address bar.
    const list = await newPage();
    await list.goto(`${ui.url}#token=tok-0123456789abcdef`);
    await list.waitForSelector(`tr[data-plan="${plan}"]`);
    expect(list.url()).toBe(ui.url);
    expect(await list.textContent(`tr[data-plan="${plan}"] td.priority`)).toBe('5');
    expect(await list.textContent(`tr[data-plan="${other}"] td.priority`)).toBe('0');
    // The cluster page, through the navigation bar: the live worker pool and the full limit.
    await list.click('#app-nav a[data-nav="cluster"]');
    await list.waitForURL(/\/cluster$/);
    await list.waitForSelector('#limits tr[data-key="api"][data-full="true"]');
    expect(await list.locator('#limits tr[data-key="api"] td').nth(2).textContent()).toContain(
      `${nameOf(holder)} on `,
    );
    await list.waitForSelector('#workers tr');
    expect(await list.locator('#workers tr').count()).toBe(1);
    // Its busy loops, as its record says (rewritten within a second of a change; the section is read every 5 s).
    await list.locator('#workers tr td:nth-child(3)', { hasText: /^[12]\/3$/ }).waitFor();
    await mkdir('test-output', { recursive: true });
    await list.screenshot({ path: 'test-output/ui-cluster.png', fullPage: true });

    // The plan page, in the same tab: the buttons come with the token kept for it.
    await list.click('#app-nav a[data-nav="plans"]');
    await list.locator(`tr[data-plan="${plan}"] a`).click();
    await list.waitForURL(/\/plan\?path=/);
    const page = list;
    await page.waitForSelector(node(holder, 'running'));
    expect(await page.textContent('#plan-priority')).toBe('priority 5');
    await page.waitForSelector('#actions:not([hidden]) #action-pause:not([disabled])');
    expect(await page.isDisabled('#action-resume')).toBe(true);

    // Why the second task is not running: the limit is full.
    await page.click(node(queued));
    await page.waitForSelector('#why-code');
    expect(await page.textContent('#why-code')).toBe('CONCURRENCY_LIMIT');
    expect(await page.textContent('#panel')).toContain('api');

    // Pause: the badge says so (with who did it), and the plans page follows.
    await page.click('#action-pause');
    await page.waitForSelector('#plan-state[data-state="paused"]');
    expect(await page.textContent('#action-note')).toBe(
      'Paused: no new task starts; 1 running task(s) finish.',
    );
    await page.waitForSelector('#why-code:text("PLAN_PAUSED")'); // the panel follows the plan's state
    expect(await page.textContent('#plan-control')).toMatch(/^paused /);
    expect((await zkPlan.plans.status(plan)).state).toBe('paused');
    await mkdir('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/ui-plan-paused.png' });
    await page.waitForSelector('#action-resume:not([disabled])');
    expect(await page.isDisabled('#action-pause')).toBe(true);
    await page.click('#action-resume');
    await page.waitForSelector('#plan-state[data-state="running"]');

    // Cancel asks twice and carries the reason; the plan ends cancelled, its running task aborted.
    await page.fill('#cancel-reason', 'started by mistake');
    await page.click('#action-cancel');
    expect(await page.getAttribute('#action-cancel', 'data-armed')).toBe('true');
    expect((await zkPlan.plans.status(plan)).state).toBe('running');
    await page.click('#action-cancel');
    await page.waitForSelector('#plan-state[data-state="cancelled"]');
    expect(await page.textContent('#plan-control')).toMatch(/^cancelled .*: started by mistake$/);
    expect((await zkPlan.plans.status(plan)).control?.reason).toBe('started by mistake');
    for (const action of ['pause', 'resume', 'cancel', 'retry'])
      expect(await page.isDisabled(`#action-${action}`)).toBe(true);
    // Its deleted tasks stay, from its history: cancelled, where each stood, and not counted done.
    await page.waitForSelector(node(queued, 'cancelled'));
    await page.waitForSelector(node(holder, 'cancelled'));
    await page.waitForSelector('#progress-text:text("0/2 done")');
    expect(await page.textContent('#count-cancelled')).toBe('2');
    await page.click(node(holder));
    // The panel showed the queued task, cancelled too: wait for the holder's own.
    await page.waitForSelector(`#panel:has-text("${nameOf(holder)}")`);
    await page.waitForSelector('#detail-state:text("cancelled")');
    expect(await page.textContent('#panel')).toMatch(/Cancelled.*while running/);
    expect(await page.textContent('#panel')).toMatch(/Worker.*\/\d/);
    await page.click(node(queued));
    await page.waitForSelector('#panel:has-text("while runnable")');
    await page.screenshot({ path: 'test-output/ui-plan-cancelled.png' });

    // A view started read-only: the buttons stay disabled, the page says how to start it with
    // actions, and the API refuses even the view's own origin.
    const readOnly = await startUiServer({ zkPlan, parent: root, port: 0, readOnly: true });
    cleanups.push(() => readOnly.close());
    const view = await newPage();
    await view.goto(planUrl(readOnly, other));
    await view.waitForSelector('#plan-state[data-state="running"]');
    await view.waitForFunction(
      () => (globalThis as unknown as PageGlobals).document.querySelectorAll('g.node').length === 1,
    );
    await view.waitForSelector('#action-note:has-text("Actions are off")');
    expect(await view.textContent('#action-note')).toContain(
      `zk-plan ui ${root} --port ${new URL(readOnly.url).port}`,
    );
    expect(await view.isDisabled('#action-pause')).toBe(true);
    const refused = await fetch(
      `${readOnly.url}api/actions/pause?path=${encodeURIComponent(other)}`,
      {
        method: 'POST',
        headers: { Origin: readOnly.url.slice(0, -1) },
      },
    );
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'ACTIONS_DISABLED' } });
  });

  it("shows the jobs and each worker's items with their fencing tokens, and follows a rebalance live", async () => {
    const root = env.root();
    const jobsParent = `${root}-jobs`;
    const hold = (): FunctionRegistry =>
      new FunctionRegistry().registerJob('hold', async (ctx: JobContext) => {
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
      });
    const [first, second, viewer] = await Promise.all([
      env.zkPlan({ functions: hold() }),
      env.zkPlan({ functions: hold() }),
      env.zkPlan(),
    ]);
    await viewer.jobs(jobsParent).define({
      name: 'mailboxes',
      fn: 'hold',
      workPool: { items: ['t1', 't2', 't3', 't4'] },
      mode: 'continuous',
    });
    const a = first.startJobWorker(jobsParent, { leaseMs: 1_000, pollMs: 200 });
    const ui = await openUi(viewer, root, undefined, jobsParent);
    const page = await newPage();
    await page.goto(`${ui.url}jobs`);
    await page.waitForSelector('#jobs tr[data-job="mailboxes"]');
    const tokens = async (worker: string): Promise<string[]> =>
      page.$$eval(`#job-assignment tr[data-worker="${worker}"] .job-item[data-token]`, (items) =>
        items.map(
          (item) => (item as unknown as { dataset: Record<string, string> }).dataset['item'] ?? '',
        ),
      );
    await expect.poll(() => tokens(a.id), { timeout: WAIT_MS }).toEqual(['t1', 't2', 't3', 't4']);
    const b = second.startJobWorker(jobsParent, { leaseMs: 1_000, pollMs: 200 });
    await expect
      .poll(async () => [(await tokens(a.id)).length, (await tokens(b.id)).length], {
        timeout: WAIT_MS,
      })
      .toEqual([2, 2]); // the next read of the section
    expect(await page.textContent('#jobs tr[data-job="mailboxes"]')).toContain('4/4');
    // The job workers are among the live workers too, with their items; one of them is the manager.
    await expect
      .poll(() => page.$$eval('#workers tr[data-kind="job"]', (rows) => rows.length), {
        timeout: WAIT_MS,
      })
      .toBe(2);
    const jobWorkerCells = await page.$$eval('#workers tr[data-kind="job"]', (rows) =>
      rows.map((row) =>
        Array.from(
          (row as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells,
          (cell) => cell.textContent ?? '',
        ),
      ),
    );
    expect(jobWorkerCells.map((cells) => cells[2])).toEqual(['2 item(s)', '2 item(s)']);
    expect(jobWorkerCells.filter((cells) => cells[3]?.includes('manager'))).toHaveLength(1);
    // An operator disables b: it stays among the live workers, marked, and its items move to a.
    await viewer.jobs(jobsParent).disableWorker(b.id);
    await expect
      .poll(async () => [(await tokens(a.id)).length, (await tokens(b.id)).length], {
        timeout: WAIT_MS,
      })
      .toEqual([4, 0]);
    await expect
      .poll(
        () =>
          page.$$eval('#workers tr[data-kind="job"][data-disabled="true"]', (rows) =>
            rows.map(
              (row) => (row as unknown as { dataset: Record<string, string> }).dataset['worker'],
            ),
          ),
        { timeout: WAIT_MS },
      )
      .toEqual([b.id]);
    await page.screenshot({ path: 'test-output/ui-jobs.png', fullPage: true });
  });

  it("shows each job's newest runs: a misfire caught up, a failed run with its error and its retry, and the counts", async () => {
    const root = env.root();
    const jobsParent = `${root}-jobs`;
    let calls = 0;
    const functions = new FunctionRegistry().registerJob('poll', async (ctx: JobContext) => {
      calls += 1;
      ctx.log.info(`poll number ${calls}`);
      if (calls === 1) await new Promise((resolve) => setTimeout(resolve, 1_200)); // overruns two ticks
      if (calls === 2) throw new Error('mailbox down');
    });
    const [worker, viewer] = await Promise.all([env.zkPlan({ functions }), env.zkPlan()]);
    await viewer.jobs(jobsParent).define({
      name: 'mail',
      fn: 'poll',
      workPool: { items: ['inbox'] },
      mode: { everyMs: 500 },
      retries: 1,
    });
    worker.startJobWorker(jobsParent, { leaseMs: 1_000, pollMs: 200, restartDelayMs: 20 });
    await expect
      .poll(async () => (await viewer.jobs(jobsParent).runs('mail')).runs.length, {
        timeout: WAIT_MS,
      })
      .toBeGreaterThanOrEqual(4);
    const ui = await openUi(viewer, root, undefined, jobsParent);
    const page = await newPage();
    await page.goto(`${ui.url}jobs`);
    await page.waitForSelector('#job-runs tr[data-job="mail"]');
    const rows = await page.$$eval('#job-runs tr[data-job="mail"]', (found) =>
      found.map((row) => {
        const data = (row as unknown as { dataset: Record<string, string> }).dataset;
        return { state: data['state'], cause: data['cause'], text: row.textContent ?? '' };
      }),
    );
    const oldestFirst = [...rows].reverse();
    expect(oldestFirst.slice(0, 4).map((row) => [row.cause, row.state])).toEqual([
      ['tick', 'succeeded'],
      ['misfire', 'failed'],
      ['retry', 'succeeded'],
      ['tick', 'succeeded'],
    ]);
    expect(oldestFirst[0]?.text).toContain('a tick came while it ran');
    expect(oldestFirst[1]?.text).toContain('Error: mailbox down');
    expect(oldestFirst[1]?.text).toContain('INFO poll number 2'); // its ctx.log, kept with the run
    expect(oldestFirst[1]?.text).toMatch(/inbox#\d+/);
    expect(await page.textContent('#jobs tr[data-job="mail"]')).toContain(
      '1 failed, 0 interrupted, 1 misfire(s) (1 caught up), 0 failover(s), 1 retry(ies)',
    );
    await page.screenshot({ path: 'test-output/ui-job-runs.png', fullPage: true });
  });

  it(
    'renders a 1 000-task plan quickly, lays it out once, and recolours it in place as it runs',
    async () => {
      const root = env.root();
      const builder = await env.zkPlan({
        functions: new FunctionRegistry().register('f', (ctx) => ctx.params[0]),
      });
      const viewer = await env.zkPlan(); // the web view on a session of its own, as `zk-plan ui` would be
      const plan = await builder.createPlan(root, { history: true });
      const tasks: TaskToAdd[] = Array.from({ length: 1000 }, (_, i) => {
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
        return { task: call('f', i), args };
      });
      const built = performance.now();
      await builder.addTasks(plan, tasks);
      const buildMs = performance.now() - built;
      const ui = await openUi(viewer, root);

      const page = await newPage(1600, 900);
      // Main-thread tasks over 50 ms, to show the page is not frozen while ELK works.
      await page.addInitScript(`
      window.longTasks = [];
      new PerformanceObserver((list) => { for (const entry of list.getEntries()) window.longTasks.push(entry.duration); })
        .observe({ type: 'longtask', buffered: true });
    `);
      const started = performance.now();
      await page.goto(planUrl(ui, plan));
      await page.waitForFunction(
        () => {
          const { document } = globalThis as unknown as PageGlobals;
          return (
            document.querySelectorAll('g.node').length === 1000 &&
            document.documentElement.dataset['rendered'] === 'true'
          );
        },
        undefined,
        {
          timeout: 30_000 * TIMING,
        },
      );
      const firstRenderMs = performance.now() - started;
      await page.waitForFunction(
        () =>
          (globalThis as unknown as PageGlobals).document.documentElement.dataset['layout'] ===
          'elk',
        undefined,
        {
          timeout: 60_000 * TIMING,
        },
      );
      const elkRenderMs = performance.now() - started;
      const stats = await page.evaluate((): PageStats => {
        const { zkPlanUi, longTasks, document } = globalThis as unknown as PageGlobals;
        return {
          ...zkPlanUi,
          longestTask: Math.max(0, ...longTasks),
          edges: document.querySelectorAll('#edges path').length,
        };
      });
      console.log(
        `[ui] 1000-task plan: built in ${Math.round(buildMs)} ms; all 1000 nodes drawn ${Math.round(firstRenderMs)} ms after navigation ` +
          `(page's clock: snapshot received at ${Math.round(stats.snapshotMs)} ms, drawn with a quick layering at ${Math.round(stats.firstRenderMs)} ms); ` +
          `ELK layout in the ${stats.engine} took ${stats.elkMs} ms, applied ${Math.round(elkRenderMs)} ms after navigation; ${stats.edges} edges; ` +
          `longest main-thread task ${Math.round(stats.longestTask)} ms`,
      );
      await mkdir('test-output', { recursive: true });
      await page.screenshot({ path: 'test-output/ui-plan-1000.png' });
      expect(stats.nodes).toBe(1000);
      expect(stats.edges).toBe(tasks.reduce((count, task) => count + (task.args?.length ?? 0), 0));
      expect(stats.engine).toBe('worker');
      expect(firstRenderMs).toBeLessThan(10_000 * TIMING);
      expect(stats.layouts).toBe(1);

      // Run it: colours change in place, the layout stays.
      await builder.markAsReady(plan);
      builder.startWorkers(root, { count: 8 });
      await page.waitForFunction(
        () =>
          (globalThis as unknown as PageGlobals).document.querySelectorAll(
            'g.node[data-state="done"]',
          ).length === 1000,
        undefined,
        { timeout: 120_000 * TIMING },
      );
      await page.waitForSelector('#plan-state[data-state="completed"]');
      const after = await page.evaluate(() => (globalThis as unknown as PageGlobals).zkPlanUi);
      console.log(
        `[ui] 1000-task plan ran to completion in the page with ${after.diffs} pushed diffs, ${after.layouts} layout(s)`,
      );
      expect(after.layouts).toBe(1);
      expect(after.structureChanges).toBe(1);
      expect(await page.textContent('#progress-text')).toBe('1000/1000 done');
    },
    240_000 * TIMING,
  );
});
