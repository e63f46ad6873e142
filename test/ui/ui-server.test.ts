import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { PlanNotFoundError, ResultNotFoundError } from '../../src/errors/plan-errors.js';
import { ZkError } from '../../src/errors/zk-error.js';
import type { PlanStatus } from '../../src/plan/plan-status.js';
import type { PlanSummary, PlanView, TaskView } from '../../src/plan/plan-view.js';
import type { ZkPlan } from '../../src/zk-plan.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { UiCluster, UiTimeline } from '../../src/ui/ui-wire.js';
import type { Watcher } from '../../src/zk/zk-client-types.js';
import type { ZkStat } from '../../src/zk/native-client.js';
import { isLoopbackHost, startUiServer, type UiServer } from '../../src/ui/ui-server.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const PLAN = '/plans/plan-0000000001';
const BARE = '/plans/plan-0000000002'; // a plan without history
const at = new Date('2024-05-06T07:08:09.000Z');

function status(plan: string, total: number): PlanStatus {
  return {
    plan,
    state: 'running',
    failurePolicy: 'continue',
    priority: 0,
    counts: {
      total,
      done: 0,
      remaining: total,
      runnable: 0,
      running: 0,
      waiting: 0,
      blocked: 0,
      failed: 1,
      finishing: 0,
      building: 0,
      cancelled: 0,
      unstarted: 0,
    },
    failed: [],
    blocked: [],
    retrying: [],
  };
}

const tasks: TaskView[] = [
  {
    task: `${PLAN}/task-0000000001`,
    name: 'task-0000000001',
    state: 'done',
    fn: 'load',
    params: [{ id: 12n, at }],
    inputs: [],
    pendingInputs: 0,
    keepResult: true,
    startedAt: at,
    finishedAt: at,
    durationMs: 0,
    workerId: 'w/1',
  },
  {
    task: `${PLAN}/task-0000000002`,
    name: 'task-0000000002',
    state: 'failed',
    fn: '<img src=x onerror=alert(1)>',
    params: ['<b>bold</b>'],
    inputs: [`${PLAN}/task-0000000001`],
    pendingInputs: 0,
    keepResult: false,
    failure: {
      type: 'PermanentError',
      message: 'no such customer',
      code: 'NO_SUCH_CUSTOMER',
      stack: 'PermanentError: no such customer\n    at x',
      retryable: false,
      attempts: 1,
      workerId: 'w/1',
      at,
    },
  },
];

/** A ZkPlan stand-in: the reads the web view makes, and watches that never fire. */
function fakeZkPlan(): ZkPlan {
  const zk = {
    getChildren: async (_path: string, _watcher?: Watcher) => ({
      children: [],
      stat: {} as ZkStat,
    }),
    tryGetChildren: async (_path: string, _watcher?: Watcher) => ({
      children: [],
      stat: {} as ZkStat,
    }),
    exists: async (path: string, _watcher?: Watcher) =>
      path === `${PLAN}/history` ? ({} as ZkStat) : undefined,
    getData: async (path: string, _watcher?: Watcher) => {
      throw new ZkError('getData', -101, path); // no failed marker, no owner
    },
  };
  const views: Record<string, PlanView> = {
    [PLAN]: { plan: PLAN, status: status(PLAN, 1), tasks, done: 1, historyKept: true },
    [BARE]: { plan: BARE, status: status(BARE, 0), tasks: [], done: 0, historyKept: false },
  };
  return {
    zk,
    plans: {
      describe: async (plan: string) => {
        const view = views[plan];
        if (view === undefined) throw new PlanNotFoundError(plan);
        return view;
      },
      list: async (parent: string): Promise<PlanSummary[]> =>
        parent === PARENT
          ? Object.values(views).map((view) => ({
              plan: view.plan,
              status: view.status,
              done: view.done,
            }))
          : [],
    },
    getResult: async (task: string) => {
      if (task === `${PLAN}/task-0000000001`) return new Map([['rows', 3n]]);
      if (task === `${BARE}/task-0000000005`) return 'kept though gone';
      throw new ResultNotFoundError(task, `${task}-result`);
    },
  } as unknown as ZkPlan;
}

let ui: UiServer | undefined;
afterEach(async () => {
  await ui?.close();
  ui = undefined;
});

async function start(): Promise<UiServer> {
  ui = await startUiServer({ zkPlan: fakeZkPlan(), parent: PARENT, port: 0 });
  return ui;
}

async function get(
  path: string,
): Promise<{ status: number; type: string; headers: Headers; text: string }> {
  const response = await fetch(new URL(path, ui?.url));
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    headers: response.headers,
    text: await response.text(),
  };
}

describe('startUiServer', () => {
  it('listens on loopback only', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.2', 'example.com']) {
      await expect(
        startUiServer({ zkPlan: fakeZkPlan(), parent: PARENT, port: 0, host }),
        host,
      ).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(
      startUiServer({ zkPlan: fakeZkPlan(), parent: 'plans', port: 0 }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      startUiServer({ zkPlan: fakeZkPlan(), parent: PARENT, port: 70_000 }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    const server = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it('knows loopback host names', () => {
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', 'evil.example', '128.0.0.1', '::', 'localhost.evil.example'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses requests naming another host (DNS rebinding)', async () => {
    const server = await start();
    const { port } = new URL(server.url);
    const answer = await new Promise<number>((resolve, reject) => {
      request(
        { host: '127.0.0.1', port, path: '/api/plans', headers: { Host: `evil.example:${port}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(answer).toBe(403);
  });

  it('serves the pages with a strict content security policy, and the assets', async () => {
    await start();
    const index = await get('/');
    expect(index.status).toBe(200);
    expect(index.type).toBe('text/html; charset=utf-8');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(index.text).toContain('data-parent="/plans"');
    const plan = await get(`/plan?path=${encodeURIComponent(PLAN)}`);
    expect(plan.status).toBe(200);
    expect(plan.text).toContain(`data-plan="${PLAN}"`);
    // The application's other pages, each under the same policy, each with the navigation bar.
    for (const [path, script] of [
      ['/workflows', '/workflows.js'],
      ['/cluster', '/cluster.js'],
      ['/schedules', '/schedules.js'],
      ['/jobs', '/jobs.js'],
    ] as const) {
      const page = await get(path);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('content-security-policy'), path).toContain("script-src 'self'");
      expect(page.text, path).toContain(
        `<script src="/nav.js"></script>\n<script src="${script}">`,
      );
      expect(page.text, path).toContain(`aria-current="page">`);
    }
    // Without --schedules, the schedules answer is empty, not an error.
    expect(JSON.parse((await get('/api/schedules')).text)).toEqual({ schedules: [] });
    expect((await get('/graph.js')).status).toBe(404); // the graph helpers are bundled into plan.js and the worker
    for (const asset of [
      '/ui.css',
      '/plan.js',
      '/plans.js',
      '/nav.js',
      '/workflows.js',
      '/cluster.js',
      '/schedules.js',
      '/jobs.js',
      '/layout-worker.js',
      '/elk.js',
    ]) {
      const answer = await get(asset);
      expect(answer.status, asset).toBe(200);
      expect(answer.type, asset).toMatch(
        asset.endsWith('.css') ? /^text\/css/ : /^text\/javascript/,
      );
    }
    expect((await get('/elk.js')).text.length).toBeGreaterThan(1_000_000);
  });

  it('refuses paths outside the parent, escaping them in its answer', async () => {
    await start();
    const evil = '/x/<script>alert(1)</script>';
    const page = await get(`/plan?path=${encodeURIComponent(evil)}`);
    expect(page.status).toBe(400);
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>alert');
    for (const path of [
      `/api/plan?path=${encodeURIComponent('/elsewhere/plan-0000000001')}`,
      `/api/task?path=${encodeURIComponent(`${PLAN}/owner`)}`,
      '/api/events',
      '/api/plan',
      `/api/timeline?path=${encodeURIComponent('/elsewhere/plan-0000000001')}`,
      '/api/timeline',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(400);
      expect(JSON.parse(answer.text), path).toEqual({
        error: { code: 'INVALID_ARGUMENT', message: expect.any(String) },
      });
    }
    expect(
      (await get(`/api/plan?path=${encodeURIComponent('/plans/plan-0000000009')}`)).status,
    ).toBe(404);
    expect((await get('/nothing')).status).toBe(404);
    expect((await fetch(new URL('/api/plans', ui?.url), { method: 'POST' })).status).toBe(405);
  });

  it('answers the plans and a plan as JSON, whatever values the tasks hold', async () => {
    await start();
    const plans = JSON.parse((await get('/api/plans')).text) as {
      plan: string;
      historyKept: boolean;
    }[];
    expect(plans.map(({ plan, historyKept }) => [plan, historyKept])).toEqual([
      [PLAN, true],
      [BARE, false],
    ]);
    const view = JSON.parse(
      (await get(`/api/plan?path=${encodeURIComponent(PLAN)}`)).text,
    ) as PlanView;
    expect(view.tasks[0]?.params).toEqual([{ id: '12n', at: '2024-05-06T07:08:09.000Z' }]);
  });

  it("answers a plan's timeline: the tries of its tasks that ran, a 404 for a plan that is not there", async () => {
    await start();
    const timeline = JSON.parse(
      (await get(`/api/timeline?path=${encodeURIComponent(PLAN)}`)).text,
    ) as UiTimeline;
    expect(timeline.plan).toBe(PLAN);
    expect(timeline.tries).toEqual({
      'task-0000000001': [
        {
          attempt: 1,
          outcome: 'done',
          worker: 'w/1',
          startedAt: at.getTime(),
          finishedAt: at.getTime(),
        },
      ],
    });
    expect(
      (await get(`/api/timeline?path=${encodeURIComponent('/plans/plan-0000000009')}`)).status,
    ).toBe(404);
  });

  it('answers a task: its error, or its kept result', async () => {
    await start();
    const failed = JSON.parse(
      (await get(`/api/task?path=${encodeURIComponent(`${PLAN}/task-0000000002`)}`)).text,
    );
    expect(failed).toMatchObject({
      state: 'failed',
      fn: '<img src=x onerror=alert(1)>', // JSON, shown with textContent by the page
      params: "[ '<b>bold</b>' ]",
      failure: {
        code: 'NO_SUCH_CUSTOMER',
        message: 'no such customer',
        type: 'PermanentError',
        stack: 'PermanentError: no such customer\n    at x',
      },
    });
    expect(failed.result).toBeUndefined();
    const done = JSON.parse(
      (await get(`/api/task?path=${encodeURIComponent(`${PLAN}/task-0000000001`)}`)).text,
    );
    expect(done).toMatchObject({
      state: 'done',
      result: { value: "Map(1) { 'rows' => 3n }" },
      params: '[ { id: 12n, at: 2024-05-06T07:08:09.000Z } ]',
    });
    expect(
      (await get(`/api/task?path=${encodeURIComponent(`${PLAN}/task-0000000007`)}`)).status,
    ).toBe(404);
    const gone = JSON.parse(
      (await get(`/api/task?path=${encodeURIComponent(`${BARE}/task-0000000005`)}`)).text,
    );
    expect(gone).toMatchObject({
      state: 'done',
      gone: true,
      result: { value: "'kept though gone'" },
    });
  });

  it('streams a plan as Server-Sent Events, and ends the streams on close', async () => {
    const server = await start();
    const response = await fetch(
      new URL(`/api/events?path=${encodeURIComponent(PLAN)}`, server.url),
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('event: snapshot')) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    const data = /event: snapshot\ndata: (.*)\n\n/.exec(text)?.[1];
    expect(JSON.parse(data ?? 'null')).toMatchObject({
      plan: PLAN,
      nodes: [
        { name: 'task-0000000001', state: 'done' },
        { name: 'task-0000000002', state: 'failed', inputs: ['task-0000000001'] },
      ],
    });
    await server.close();
    ui = undefined;
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
    }
  });
});

describe('the jobs of --jobs', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  /** A process running job workers of the function `hold`, which holds its items until they are taken away. */
  const jobProcess = (server: MemoryZooKeeper, name: string): MemoryProcess => {
    const functions = new FunctionRegistry().registerJob('hold', async (ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    });
    const proc = memoryProcess(server, name, functions);
    processes.push(proc);
    return proc;
  };
  const cluster = async (server: UiServer): Promise<UiCluster> =>
    (await (await fetch(new URL('/api/cluster', server.url))).json()) as UiCluster;
  /** Each worker's items as the view shows them, with tokens: [worker, [item, token][]][]. */
  const shares = async (server: UiServer): Promise<[string, [string, number | undefined][]][]> =>
    ((await cluster(server)).jobs[0]?.assignment ?? []).map((share) => [
      share.workerId,
      share.items.map((item) => [item.id, item.token]),
    ]);

  it('lists each job and each job worker’s items with the fencing tokens of their leases, following the assignment', async () => {
    const server = new MemoryZooKeeper();
    const view = jobProcess(server, 'view');
    ui = await startUiServer({
      zkPlan: view.zkPlan as unknown as ZkPlan,
      parent: PARENT,
      port: 0,
      jobs: '/jobs',
    });
    expect(await cluster(ui)).toMatchObject({ jobsParent: '/jobs', jobs: [] });
    expect(await view.zk.exists('/jobs')).toBeUndefined(); // the view reads; it does not create the parent
    expect((await get('/jobs')).text).toContain('<tbody id="job-assignment">');

    const jobs = view.zkPlan.jobs('/jobs');
    await jobs.define({
      name: 'mail',
      fn: 'hold',
      workPool: { items: ['a', 'b', 'c'] },
      mode: 'continuous',
    });
    const first = jobProcess(server, 'a').zkPlan.startJobWorker('/jobs', {
      leaseMs: 600,
      pollMs: 200,
    });
    await expect
      .poll(async () => (await view.zk.exists('/jobs/zk-plan-job-assignment')) !== undefined, {
        timeout: 5_000,
      })
      .toBe(true);
    await expect
      .poll(async () => (await jobs.assignment('mail'))[first.id], { timeout: 5_000 })
      .toEqual(['a', 'b', 'c']);
    await expect
      .poll(
        async () =>
          (await shares(ui as UiServer))[0]?.[1].every(([, token]) => token !== undefined),
        { timeout: 5_000 },
      )
      .toBe(true);
    const leases = (await jobs.list())[0]?.leases ?? {};
    const tokens = (items: readonly string[]): [string, number | undefined][] =>
      items.map((item) => [item, leases[item]?.token]);
    expect(await shares(ui)).toEqual([[first.id, tokens(['a', 'b', 'c'])]]);
    // The job worker is among the live workers too, with its items and as the manager.
    expect((await cluster(ui)).jobWorkers).toEqual([
      {
        id: first.id,
        host: expect.any(String),
        pid: process.pid,
        jobFunctions: ['hold'],
        items: 3,
        manager: true,
        disabled: false,
        startedAt: expect.any(String),
      },
    ]);
    expect((await cluster(ui)).jobs).toEqual([
      {
        name: 'mail',
        fn: 'hold',
        mode: 'continuous',
        strategy: 'evenly',
        disabled: false,
        items: 3,
        unassigned: [],
        assignment: [{ workerId: first.id, live: true, manager: true, items: expect.any(Array) }],
        runs: expect.any(Array),
        runCounts: expect.objectContaining({ failed: 0, interrupted: 0 }),
        failedItems: 0,
      },
    ]);

    // A second worker: the items are spread over both, each shown with the token of the lease its worker took.
    const second = jobProcess(server, 'b').zkPlan.startJobWorker('/jobs', {
      leaseMs: 600,
      pollMs: 200,
    });
    await expect
      .poll(
        async () => {
          const now = await shares(ui as UiServer);
          return (
            now.length === 2 &&
            now.every(
              ([, items]) => items.length > 0 && items.every(([, token]) => token !== undefined),
            )
          );
        },
        { timeout: 5_000 },
      )
      .toBe(true);
    const summary = (await jobs.list())[0];
    const shown = await shares(ui);
    expect(shown.map(([worker]) => worker).sort()).toEqual([first.id, second.id].sort());
    expect(shown.flatMap(([, items]) => items.map(([item]) => item)).sort()).toEqual([
      'a',
      'b',
      'c',
    ]);
    for (const [worker, items] of shown) {
      expect(items.map(([item]) => item)).toEqual(summary?.assignment[worker]);
      for (const [item, token] of items)
        expect(summary?.leases[item]).toMatchObject({ holder: worker, token, released: false });
    }
    const moved = shown.find(([worker]) => worker === second.id)?.[1] ?? [];
    for (const [item, token] of moved)
      expect(token).toBeGreaterThan(leases[item]?.token ?? Infinity); // a new holder's token is greater

    await jobs.disable('mail');
    await expect
      .poll(async () => (await cluster(ui as UiServer)).jobs[0]?.disabled, { timeout: 5_000 })
      .toBe(true);
  });

  it('shows no jobs, and no jobs parent, without --jobs', async () => {
    const view = jobProcess(new MemoryZooKeeper(), 'view');
    await view.zkPlan
      .jobs('/jobs')
      .define({ name: 'mail', fn: 'hold', workPool: { items: ['a'] }, mode: 'continuous' });
    ui = await startUiServer({ zkPlan: view.zkPlan as unknown as ZkPlan, parent: PARENT, port: 0 });
    const answer = await cluster(ui);
    expect(answer.jobs).toEqual([]);
    expect(answer.jobsParent).toBeUndefined();
    await expect(
      startUiServer({
        zkPlan: view.zkPlan as unknown as ZkPlan,
        parent: PARENT,
        port: 0,
        jobs: 'jobs',
      }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
