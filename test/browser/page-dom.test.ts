// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderCluster } from '../../src/ui/browser/cluster-view.js';
import { renderSchedules } from '../../src/ui/browser/schedules-view.js';
import { GraphCanvas } from '../../src/ui/browser/graph-canvas.js';
import { publishStats } from '../../src/ui/browser/page-stats.js';
import { PlanActions, allowedActions } from '../../src/ui/browser/plan-actions.js';
import { TaskPanel } from '../../src/ui/browser/task-panel.js';
import { clusterPageHtml, planPageHtml, schedulesPageHtml } from '../../src/ui/page-html.js';
import type {
  UiActionsInfo,
  UiCluster,
  UiExplanation,
  UiNode,
  UiPlanStatus,
  UiTaskDetail,
} from '../../src/ui/ui-wire.js';

const PLAN = '/plans/plan-0000000001';
const EVIL = '<img src=x onerror="globalThis.pwned=1">';

/** Loads a page's server-made HTML (the body only: its scripts are what these tests drive). */
function loadPage(html: string): void {
  const body = /<body ([^>]*)>([\s\S]*?)<script/.exec(html);
  document.body.innerHTML = body?.[2] ?? '';
  for (const [, name, value] of (body?.[1] ?? '').matchAll(/([a-z-]+)="([^"]*)"/g))
    document.body.setAttribute(name as string, (value as string).replace(/&quot;/g, '"'));
}

interface Call {
  readonly url: string;
  readonly init: RequestInit | undefined;
}
/** Stubs fetch with answers by path; records each call. */
function stubFetch(answers: Record<string, (url: URL) => unknown>): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', async (input: string, init?: RequestInit) => {
    calls.push({ url: input, init });
    const url = new URL(input, 'http://127.0.0.1/');
    const answer = answers[url.pathname];
    if (answer === undefined)
      return new Response(
        JSON.stringify({ error: { code: 'NOT_FOUND', message: `nothing at ${url.pathname}` } }),
        { status: 404 },
      );
    return new Response(JSON.stringify(answer(url)), {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
  });
  return calls;
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

function status(state: UiPlanStatus['state'], failed = 0): UiPlanStatus {
  const counts = {
    building: 0,
    waiting: 1,
    runnable: 0,
    retrying: 0,
    running: 1,
    finishing: 0,
    done: 0,
    skipped: 0,
    failed,
    blocked: 0,
    cancelled: 0,
    unstarted: 0,
  };
  return { plan: PLAN, state, priority: 0, done: 0, total: 2 + failed, historyKept: true, counts };
}

/** Panels a test opened: closed before fetch is unstubbed, so that no poll of theirs outlives the test. */
const panels: TaskPanel[] = [];

function openPanel(...args: ConstructorParameters<typeof TaskPanel>): TaskPanel {
  const panel = new TaskPanel(...args);
  panels.push(panel);
  return panel;
}

afterEach(() => {
  for (const panel of panels.splice(0)) panel.close();
  vi.unstubAllGlobals();
  sessionStorage.clear();
  document.body.innerHTML = '';
});

describe('the task panel', () => {
  const detail = (state: UiTaskDetail['state']): UiTaskDetail => ({
    task: `${PLAN}/task-0000000002`,
    name: 'task-0000000002',
    plan: PLAN,
    state,
    gone: false,
    fn: EVIL,
    params: `[ '${EVIL}' ]`,
    inputs: [`${PLAN}/task-0000000001`],
    pendingInputs: 1,
    keepResult: false,
    priority: 7,
    concurrencyKey: 'warehouse',
  });
  const why: UiExplanation = {
    task: `${PLAN}/task-0000000002`,
    code: 'WAITING_FOR_INPUTS',
    message: `waits for #1 (${EVIL})`,
    details: { inputs: ['x'] },
  };

  it('shows a task’s values as text, never as markup, and why it is not running', async () => {
    loadPage(planPageHtml(PLAN));
    stubFetch({ '/api/task': () => detail('waiting'), '/api/why': () => why });
    const selected: string[] = [];
    const panel = openPanel(document.getElementById('panel') as HTMLElement, PLAN, (name) =>
      selected.push(name),
    );
    panel.show('task-0000000002');
    await vi.waitFor(() =>
      expect(document.getElementById('why-code')?.textContent).toBe('WAITING_FOR_INPUTS'),
    );
    expect(document.querySelector('#panel img')).toBeNull();
    expect(document.querySelector('#panel code.fn')?.textContent).toBe(EVIL);
    expect(document.querySelector('#detail-why .message')?.textContent).toBe(
      `waits for #1 (${EVIL})`,
    );
    const text = document.getElementById('panel')?.textContent ?? '';
    expect(text).toContain('7 (its own)');
    expect(text).toContain('warehouse');
    (document.querySelector('#panel ul.inputs a') as HTMLAnchorElement).click();
    expect(selected).toEqual(['task-0000000001']);
  });

  it('names a task by its key, and its inputs by theirs', async () => {
    loadPage(planPageHtml(PLAN));
    stubFetch({ '/api/task': () => ({ ...detail('done'), key: 'report', pendingInputs: 0 }) });
    const keys: Record<string, string> = { 'task-0000000001': 'load-eu' };
    const panel = openPanel(
      document.getElementById('panel') as HTMLElement,
      PLAN,
      () => undefined,
      (name) => keys[name],
    );
    panel.show('task-0000000002');
    await vi.waitFor(() =>
      expect(document.getElementById('detail-title')?.firstChild?.textContent).toBe('report'),
    );
    expect(document.querySelector('#detail-title small')?.textContent).toBe('#2 task-0000000002');
    expect(document.querySelector('#panel code.key')?.textContent).toBe('report');
    expect(document.querySelector('#panel ul.inputs a')?.textContent).toBe(
      'load-eu task-0000000001',
    );
  });

  it('asks no "why" for a task that is done, and shows a failed read as a hint', async () => {
    loadPage(planPageHtml(PLAN));
    const calls = stubFetch({ '/api/task': () => ({ ...detail('done'), pendingInputs: 0 }) });
    const panel = openPanel(document.getElementById('panel') as HTMLElement, PLAN, () => undefined);
    panel.show('task-0000000002');
    await vi.waitFor(() =>
      expect(document.getElementById('detail-state')?.textContent).toBe('done'),
    );
    await settle();
    // Its log is read once (it is done: no polling), its "why" never.
    expect(calls.map((call) => new URL(call.url, 'http://h/').pathname)).toEqual([
      '/api/task',
      '/api/task-log',
    ]);
    expect(document.getElementById('detail-why')).toBeNull();
    stubFetch({});
    panel.show('task-0000000009');
    await vi.waitFor(() =>
      expect(document.querySelector('#panel p.hint')?.textContent).toContain('NOT_FOUND'),
    );
  });

  it('shows each try as text, never as markup, says what was cut and where the whole log is, and links the download', async () => {
    loadPage(planPageHtml(PLAN));
    const line = (msg: string, level = 'info'): Record<string, unknown> => ({
      time: '2026-11-26T19:00:00.123Z',
      level,
      msg,
    });
    stubFetch({
      '/api/task': () => ({ ...detail('done'), pendingInputs: 0 }),
      '/api/task-log': () => [
        {
          attempt: 1,
          workerId: EVIL,
          startedAt: '2026-11-26T18:59:00.000Z',
          finishedAt: '2026-11-26T18:59:01.000Z',
          truncated: false,
          droppedLines: 0,
          droppedBytes: 0,
          planCapReached: false,
          lines: [line('first try', 'error')],
        },
        {
          attempt: 3,
          workerId: 'w3',
          startedAt: '2026-11-26T19:01:00.000Z',
          truncated: true,
          droppedLines: 2,
          droppedBytes: 300,
          planCapReached: false,
          fullLog: {
            host: 'h3',
            location: '/tmp/zk-plan-logs/y.jsonl',
            url: 'http://10.0.0.3:9464/logs/y.jsonl',
          },
          lines: [line('served')],
        },
        {
          attempt: 4,
          workerId: 'w4',
          startedAt: '2026-11-26T19:02:00.000Z',
          truncated: true,
          droppedLines: 1,
          droppedBytes: 100,
          planCapReached: false,
          fullLog: { host: 'h4', location: '/z.jsonl', url: 'javascript:globalThis.pwned=1' },
          lines: [line('forged url')],
        },
        {
          attempt: 2,
          workerId: 'w2',
          startedAt: '2026-11-26T19:00:00.000Z',
          finishedAt: '2026-11-26T19:00:01.000Z',
          truncated: true,
          droppedLines: 40,
          droppedBytes: 9_000,
          planCapReached: false,
          fullLog: { host: 'h2', location: '/tmp/zk-plan-logs/x.jsonl' },
          lines: [line(EVIL), { ...line('with fields', 'warn'), fields: { rows: 3 } }],
        },
      ],
    });
    const panel = openPanel(document.getElementById('panel') as HTMLElement, PLAN, () => undefined);
    panel.show('task-0000000002');
    await vi.waitFor(() => expect(document.querySelectorAll('#detail-log .try')).toHaveLength(4));
    const log = document.getElementById('detail-log') as HTMLElement;
    expect(log.querySelector('img')).toBeNull();
    expect(log.textContent).toContain(EVIL);
    expect(log.querySelector('.try[data-attempt="1"] .level-error')?.textContent).toContain(
      'first try',
    );
    expect(log.querySelector('.try[data-attempt="2"] .level-warn')?.textContent).toContain(
      'with fields {"rows":3}',
    );
    expect(log.querySelector('.try[data-attempt="2"] p.hint')?.textContent).toBe(
      '40 earlier line(s) (9000 bytes) are not kept here. The whole log is on h2 in /tmp/zk-plan-logs/x.jsonl (zk-plan logs --full there).',
    );
    // Served by its worker: a link to the whole log; a URL that is not http(s) (forged in ZooKeeper) is never a link.
    const served = log.querySelector('.try[data-attempt="3"] a.full-log');
    expect(served?.getAttribute('href')).toBe('http://10.0.0.3:9464/logs/y.jsonl');
    expect(served?.getAttribute('rel')).toBe('noopener noreferrer');
    expect(log.querySelector('.try[data-attempt="4"] a.full-log')).toBeNull();
    expect(log.querySelector('a.download')?.getAttribute('href')).toBe(
      `/api/task-log.txt?path=${encodeURIComponent(`${PLAN}/task-0000000002`)}`,
    );
  });
});

describe('the cluster and schedules pages', () => {
  it('lists live workers and limits, marking a full one', () => {
    loadPage(clusterPageHtml('/plans'));
    const cluster: UiCluster = {
      actions: false,
      workers: [
        {
          id: EVIL,
          host: 'h1',
          pid: 42,
          version: '0.1.0',
          functions: ['load', 'sum'],
          loops: 4,
          running: ['/p/t1'],
          startedAt: '2026-11-24T10:00:00Z',
          updatedAt: '2026-11-24T10:00:05Z',
        },
      ],
      limits: [
        {
          key: 'api',
          limit: 1,
          holders: [
            { task: `${PLAN}/task-0000000003`, workerId: 'w1', at: '2026-11-24T10:00:00Z' },
          ],
        },
        { key: 'warehouse', limit: 2, holders: [] },
      ],
      schedules: [],
      jobs: [],
      jobWorkers: [],
    };
    const byId = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;
    renderCluster(cluster, tablesOf(byId));
    const worker = document.querySelector('#workers tr') as HTMLTableRowElement;
    expect(worker.dataset['worker']).toBe(EVIL);
    expect(document.querySelector('#workers img')).toBeNull();
    expect([...worker.cells].map((cell) => cell.textContent).slice(0, 4)).toEqual([
      EVIL,
      'h1 (pid 42)',
      '1/4',
      'load, sum',
    ]);
    const limits = [...document.querySelectorAll<HTMLTableRowElement>('#limits tr')];
    expect(
      limits.map((row) => [row.dataset['key'], row.dataset['full'], row.cells[1]?.textContent]),
    ).toEqual([
      ['api', 'true', '1/1'],
      ['warehouse', 'false', '0/2'],
    ]);
    expect(limits[0]?.cells[2]?.textContent).toBe('plan-0000000001/task-0000000003 on w1');
    renderCluster(
      { actions: false, workers: [], limits: [], schedules: [], jobs: [], jobWorkers: [] },
      tablesOf(byId),
    );
    expect(document.querySelectorAll('#workers tr')).toHaveLength(0);
    expect(byId('workers-empty').textContent).toContain('No live worker');
    // Started with --jobs: the job workers are looked for too, and said so.
    renderCluster(
      {
        actions: false,
        workers: [],
        limits: [],
        schedules: [],
        jobsParent: '/jobs',
        jobs: [],
        jobWorkers: [],
      },
      tablesOf(byId),
    );
    expect(byId('workers-empty').textContent).toBe(
      'No live worker process is registered under this parent nor job worker under /jobs.',
    );
  });

  it('says why no schedule is listed: no --schedules, or none under it', () => {
    loadPage(schedulesPageHtml('/plans'));
    const byId = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;
    const tables = { schedules: byId('schedules'), schedulesEmpty: byId('schedules-empty') };
    renderSchedules([], undefined, tables, Date.now(), 'UTC');
    expect(byId('schedules-empty').textContent).toBe(
      'No schedules shown (zk-plan ui --schedules <path> lists them).',
    );
    // Started with --schedules: an empty parent is said so, not "start it with --schedules".
    renderSchedules([], '/schedules', tables, Date.now(), 'UTC');
    expect(byId('schedules-empty').textContent).toBe(
      'No schedule is defined under /schedules (zk-plan schedule put <file> --schedules /schedules adds one).',
    );
  });

  it('lists the job workers of --jobs among the live workers, with their job functions, items, the manager and a disabled one', () => {
    loadPage(clusterPageHtml('/plans'));
    const byId = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;
    renderCluster(
      {
        actions: false,
        workers: [],
        limits: [],
        schedules: [],
        jobsParent: '/jobs',
        jobs: [],
        jobWorkers: [
          {
            id: 'jw-1',
            host: 'h2',
            pid: 7,
            jobFunctions: ['poll', EVIL],
            items: 3,
            manager: true,
            disabled: false,
            startedAt: '2026-11-24T10:00:00Z',
          },
          {
            id: 'jw-2',
            host: 'h3',
            pid: 8,
            jobFunctions: ['poll'],
            items: 0,
            manager: false,
            disabled: true,
            startedAt: '2026-11-24T10:00:00Z',
          },
        ],
      },
      tablesOf(byId),
    );
    const rows = [...document.querySelectorAll<HTMLTableRowElement>('#workers tr')];
    expect(rows.map((row) => [row.dataset['worker'], row.dataset['kind']])).toEqual([
      ['jw-1', 'job'],
      ['jw-2', 'job'],
    ]);
    expect([...(rows[0]?.cells ?? [])].map((cell) => cell.textContent).slice(0, 4)).toEqual([
      'jw-1',
      'h2 (pid 7)',
      '3 item(s)',
      `poll, ${EVIL} (job worker, manager)`,
    ]);
    expect(rows[1]?.cells[3]?.textContent).toBe('poll (job worker, disabled: assigned nothing)');
    expect(rows.map((row) => row.dataset['disabled'])).toEqual(['false', 'true']);
    expect(document.querySelector('#workers img')).toBeNull();
    expect(byId('workers-empty').textContent).toBe('');
  });

  it('lists schedules with their next fire times, linking the fired runs the view serves (the rest as text), all their runs and each backfill’s runs', () => {
    loadPage(schedulesPageHtml('/plans'));
    const byId = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;
    const fired = '/plans/nightly@20261125T013000.000Z';
    renderSchedules(
      [
        {
          name: EVIL,
          cron: '0 30 2 * * *',
          timezone: 'Europe/Berlin',
          paused: true,
          planParent: '/plans',
          nextFireTimes: ['2026-11-26T01:30:00.000Z'],
          runs: [
            {
              firedAt: '2026-11-25T01:30:00.000Z',
              kind: 'cron',
              state: 'fired',
              plan: fired,
              detail: 'completed',
              shown: true,
            },
            {
              firedAt: '2026-11-24T01:30:00.000Z',
              kind: 'cron',
              state: 'skipped',
              plan: '/plans/x',
              detail: 'overlap',
              shown: true,
            },
            {
              firedAt: '2026-11-23T01:30:00.000Z',
              kind: 'manual',
              state: 'fired',
              plan: '/elsewhere/y',
              detail: 'failed',
              shown: false,
            },
          ],
          backfills: [
            {
              id: 'backfill-001764036000000-1a2b3c4d',
              from: '2026-11-01T01:30:00.000Z',
              to: '2026-11-03T01:30:00.000Z',
              mode: 'serial',
              state: 'running',
              total: 3,
              started: 2,
              completed: 1,
              failed: 0,
              notRun: 0,
              createdAt: '2026-11-25T10:00:00.000Z',
            },
          ],
        },
      ],
      '/schedules',
      { schedules: byId('schedules'), schedulesEmpty: byId('schedules-empty') },
      Date.parse('2026-11-25T12:00:00.000Z'),
      'UTC',
    );
    const row = document.querySelector('#schedules tr') as HTMLTableRowElement;
    expect(row.dataset['schedule']).toBe(EVIL);
    expect(document.querySelector('#schedules img')).toBeNull();
    expect(row.cells[1]?.textContent).toBe('0 30 2 * * * (Europe/Berlin) · paused');
    const links = [...row.querySelectorAll('a')];
    expect(links.map((link) => link.getAttribute('href'))).toEqual([
      `/plan?path=${encodeURIComponent(fired)}`,
      `/workflows?${new URLSearchParams({ name: EVIL }).toString()}`,
      `/workflows?${new URLSearchParams({ name: EVIL, backfill: 'backfill-001764036000000-1a2b3c4d' }).toString()}`,
    ]);
    expect(row.cells[3]?.querySelector('a')?.textContent).toBe('10 h ago fired: completed');
    expect(row.cells[4]?.textContent).toBe(
      '2026-11-01 01:30:00 UTC – 2026-11-03 01:30:00 UTC' +
        'serial, running: 2/3 started, 1 completed, 0 failed, 0 not run',
    );
    expect(
      [...row.querySelectorAll<HTMLElement>('div.run')].map((run) => run.dataset['state']),
    ).toEqual(['fired', 'skipped', 'fired']);
    expect(row.cells[3]?.textContent).toContain('(manual) fired: failed');
  });
});

function tablesOf(byId: (id: string) => HTMLElement): Parameters<typeof renderCluster>[1] {
  return {
    workers: byId('workers'),
    limits: byId('limits'),
    workersEmpty: byId('workers-empty'),
    limitsEmpty: byId('limits-empty'),
  };
}
describe('the action buttons', () => {
  beforeEach(() => {
    history.replaceState(null, '', '/plan?path=x');
  });

  const controlled = (
    state: UiPlanStatus['state'],
    control: 'paused' | 'cancelled' | undefined,
    failed = 0,
  ): UiPlanStatus => ({
    ...status(state, failed),
    ...(control !== undefined ? { control: { state: control, at: '2026-11-24T10:00:00Z' } } : {}),
  });

  it('allow what the server accepts: by the plan’s control record, not its state alone', () => {
    const allowed = (plan: UiPlanStatus): string[] => [...allowedActions(plan)].sort();
    expect(allowed(status('running'))).toEqual(['cancel', 'pause']);
    expect(allowed(controlled('paused', 'paused', 1))).toEqual(['cancel', 'resume', 'retry']);
    // A failFast plan that failed while paused: still resumable and cancellable.
    expect(allowed(controlled('failed', 'paused', 1))).toEqual(['cancel', 'resume', 'retry']);
    expect(allowed(status('failed', 1))).toEqual(['cancel', 'pause', 'retry']);
    expect(allowed(controlled('cancelled', 'cancelled', 1))).toEqual([]);
    expect(allowed(status('completed'))).toEqual([]);
  });

  const info = (mode: UiActionsInfo['mode'], origins: string[] = []): UiActionsInfo => ({
    mode,
    origins,
    enable:
      mode === 'off'
        ? 'zk-plan ui /plans --port 8080'
        : 'zk-plan ui /plans --port 8080 --allow-actions',
  });

  it('are disabled on a read-only view, which says how to start it with actions', async () => {
    loadPage(planPageHtml(PLAN, false));
    const calls = stubFetch({ '/api/actions': () => info('off') });
    new PlanActions(PLAN).update(status('running'));
    expect((document.getElementById('actions') as HTMLElement).hidden).toBe(false);
    await vi.waitFor(() =>
      expect(document.getElementById('action-note')?.textContent).toBe(
        'Actions are off (read-only view). To take them: zk-plan ui /plans --port 8080',
      ),
    );
    for (const name of ['pause', 'resume', 'cancel', 'retry'])
      expect((document.getElementById(`action-${name}`) as HTMLButtonElement).disabled).toBe(true);
    expect(calls.map((call) => call.url)).toEqual(['/api/actions']);
  });

  it('work without a token on the view’s own origin, and say where they work when the page is reached through another', async () => {
    loadPage(planPageHtml(PLAN, true));
    sessionStorage.clear();
    const calls = stubFetch({
      '/api/actions': () => info('same-origin', [location.origin]),
      '/api/actions/pause': () => ({ state: 'paused', running: [] }),
    });
    const actions = new PlanActions(PLAN);
    actions.update(status('running'));
    const pause = document.getElementById('action-pause') as HTMLButtonElement;
    await vi.waitFor(() => expect(pause.disabled).toBe(false));
    pause.click();
    await vi.waitFor(() =>
      expect(document.getElementById('action-note')?.textContent).toContain('Paused'),
    );
    const sent = calls.find((call) => call.url.startsWith('/api/actions/pause'));
    expect(new Headers(sent?.init?.headers).get('Authorization')).toBeNull();

    loadPage(planPageHtml(PLAN, true));
    stubFetch({ '/api/actions': () => info('same-origin', ['http://127.0.0.1:8080']) });
    new PlanActions(PLAN).update(status('running'));
    await vi.waitFor(() =>
      expect(document.getElementById('action-note')?.textContent).toBe(
        `Actions are taken at http://127.0.0.1:8080 only, not through ${location.origin}. Open that, or start the view with zk-plan ui /plans --port 8080 --allow-actions and open the URL it prints.`,
      ),
    );
    expect((document.getElementById('action-pause') as HTMLButtonElement).disabled).toBe(true);
  });

  it('take the token from the URL’s fragment, send it as a bearer token, and ask twice before cancelling', async () => {
    loadPage(planPageHtml(PLAN, true));
    history.replaceState(null, '', '/plan?path=x#token=s3cret');
    const calls = stubFetch({
      '/api/actions': () => info('token'),
      '/api/actions/pause': (url) => ({
        plan: url.searchParams.get('path'),
        state: 'paused',
        running: ['/t1', '/t2'],
      }),
      '/api/actions/cancel': (url) => ({ plan: url.searchParams.get('path'), state: 'cancelled' }),
    });
    const actions = new PlanActions(PLAN);
    expect(location.hash).toBe('');
    expect(sessionStorage.getItem('zk-plan-ui-token')).toBe('s3cret');
    const button = (name: string): HTMLButtonElement =>
      document.getElementById(`action-${name}`) as HTMLButtonElement;
    expect((document.getElementById('actions') as HTMLElement).hidden).toBe(false);
    expect(button('pause').disabled).toBe(true); // no state yet
    actions.update(status('running'));
    await vi.waitFor(() => expect(button('pause').disabled).toBe(false)); // once /api/actions answered
    expect(['pause', 'resume', 'cancel', 'retry'].map((name) => button(name).disabled)).toEqual([
      false,
      true,
      false,
      true,
    ]);

    button('pause').click();
    await vi.waitFor(() =>
      expect(document.getElementById('action-note')?.textContent).toBe(
        'Paused: no new task starts; 2 running task(s) finish.',
      ),
    );
    const pause = calls.find((call) => call.url.startsWith('/api/actions/pause'));
    expect(pause?.init?.method).toBe('POST');
    expect(new Headers(pause?.init?.headers).get('Authorization')).toBe('Bearer s3cret');
    expect(new URL(pause?.url ?? '', 'http://h/').searchParams.get('path')).toBe(PLAN);

    (document.getElementById('cancel-reason') as HTMLInputElement).value = ' started by mistake ';
    button('cancel').click();
    await settle();
    expect(calls.some((call) => call.url.startsWith('/api/actions/cancel'))).toBe(false); // armed, not sent
    expect(button('cancel').dataset['armed']).toBe('true');
    button('cancel').click();
    await vi.waitFor(() =>
      expect(document.getElementById('action-note')?.textContent).toContain('Cancelled'),
    );
    const cancel = calls.find((call) => call.url.startsWith('/api/actions/cancel'));
    expect(new URL(cancel?.url ?? '', 'http://h/').searchParams.get('reason')).toBe(
      'started by mistake',
    );
    expect((document.getElementById('cancel-reason') as HTMLInputElement).value).toBe('');
    expect(button('cancel').dataset['armed']).toBeUndefined();

    actions.setOffline(true); // the plan was deleted, or its stream is down
    expect(['pause', 'resume', 'cancel', 'retry'].map((name) => button(name).disabled)).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it('a cancel not confirmed in time is disarmed, and an old timer does not disarm a newer confirmation', async () => {
    vi.useFakeTimers();
    try {
      loadPage(planPageHtml(PLAN, true));
      sessionStorage.setItem('zk-plan-ui-token', 's3cret');
      const calls = stubFetch({
        '/api/actions': () => info('token'),
        '/api/actions/cancel': () => ({ state: 'cancelled' }),
      });
      const actions = new PlanActions(PLAN);
      actions.update(status('running'));
      const cancel = document.getElementById('action-cancel') as HTMLButtonElement;
      // /api/actions answers through promises only: flushed without a timer.
      for (let turn = 0; turn < 10 && cancel.disabled; turn += 1) await Promise.resolve();
      expect(cancel.disabled).toBe(false);
      cancel.click();
      vi.advanceTimersByTime(5_001);
      expect(cancel.dataset['armed']).toBeUndefined();
      cancel.click(); // armed again
      vi.advanceTimersByTime(4_000);
      expect(cancel.dataset['armed']).toBe('true');
      expect(calls.map((call) => call.url)).toEqual(['/api/actions']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('show a refused action’s error, a non-JSON answer by its status, and say so when the tab has no token', async () => {
    loadPage(planPageHtml(PLAN, true));
    sessionStorage.setItem('zk-plan-ui-token', 'wrong');
    vi.stubGlobal('fetch', async (input: string) =>
      input === '/api/actions'
        ? new Response(JSON.stringify(info('token')), { status: 200 })
        : input.startsWith('/api/actions/pause')
          ? new Response(
              JSON.stringify({
                error: { code: 'UNAUTHORIZED', message: 'missing or wrong bearer token' },
              }),
              { status: 401 },
            )
          : new Response('Forbidden: the web view answers loopback host names only\n', {
              status: 403,
            }),
    );
    const actions = new PlanActions(PLAN);
    actions.update(controlled('paused', 'paused', 1));
    actions.update(status('running'));
    await vi.waitFor(() =>
      expect((document.getElementById('action-pause') as HTMLButtonElement).disabled).toBe(false),
    );
    (document.getElementById('action-pause') as HTMLButtonElement).click();
    await vi.waitFor(() =>
      expect(document.getElementById('action-note')?.dataset['outcome']).toBe('error'),
    );
    expect(document.getElementById('action-note')?.textContent).toBe(
      'pause failed: UNAUTHORIZED: missing or wrong bearer token',
    );
    actions.update(status('failed', 1));
    await vi.waitFor(() =>
      expect((document.getElementById('action-retry') as HTMLButtonElement).disabled).toBe(false),
    );
    (document.getElementById('action-retry') as HTMLButtonElement).click();
    await vi.waitFor(() =>
      expect(document.getElementById('action-note')?.textContent).toBe(
        'retry failed: 403 Forbidden: the web view answers loopback host names only',
      ),
    );

    sessionStorage.clear();
    loadPage(planPageHtml(PLAN, true));
    const without = new PlanActions(PLAN);
    without.update(status('running'));
    await vi.waitFor(() =>
      expect(document.getElementById('action-note')?.textContent).toBe(
        'Actions need the token: open the URL that zk-plan ui /plans --port 8080 --allow-actions printed (it ends in #token=…).',
      ),
    );
    expect((document.getElementById('action-pause') as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('the graph canvas', () => {
  const node = (serial: number, state: UiNode['state'], inputs: number[] = []): UiNode => ({
    name: `task-${String(serial).padStart(10, '0')}`,
    state,
    fn: serial === 3 ? EVIL : 'f',
    inputs: inputs.map((input) => `task-${String(input).padStart(10, '0')}`),
  });

  it('draws a node per task coloured by state, recolours in place, and rebuilds when the structure changes', async () => {
    loadPage(planPageHtml(PLAN));
    // A layout worker that fails every request, as when ELK cannot load: the page falls back to its quick layering.
    const requests: number[] = [];
    vi.stubGlobal(
      'Worker',
      class {
        onmessage: ((event: { data: unknown }) => void) | null = null;
        postMessage(message: { id: number }): void {
          requests.push(message.id);
          setTimeout(() => this.onmessage?.({ data: { id: message.id, error: 'no ELK here' } }), 0);
        }
        terminate(): void {}
      },
    );
    const stats = publishStats(PLAN);
    const selected: string[] = [];
    const get = <T extends Element>(id: string): T => document.getElementById(id) as unknown as T;
    const canvas = new GraphCanvas(
      {
        svg: get('graph'),
        viewport: get('viewport'),
        edges: get('edges'),
        nodes: get('nodes'),
        layoutInfo: get('layout-info'),
      },
      stats,
      (name) => selected.push(name),
    );
    canvas.show([node(1, 'done'), node(2, 'running', [1]), node(3, 'waiting', [1, 2])]);
    const drawn = (): string[][] =>
      [...document.querySelectorAll('g.node')].map((el) => [
        el.getAttribute('data-task') ?? '',
        el.getAttribute('data-state') ?? '',
      ]);
    expect(drawn()).toEqual([
      ['task-0000000001', 'done'],
      ['task-0000000002', 'running'],
      ['task-0000000003', 'waiting'],
    ]);
    expect(document.querySelector('g.node[data-task="task-0000000003"] text')?.textContent).toBe(
      `#3 ${EVIL}`.slice(0, 20) + '\u2026',
    );
    expect(document.querySelector('#nodes img')).toBeNull();
    const element = document.querySelector('g.node[data-task="task-0000000002"]') as SVGGElement;
    expect(
      canvas.recolour(['task-0000000002', 'done', false, 'f', false, '', '', 0, 0, 0, '']),
    ).toBe(true);
    expect(document.querySelector('g.node[data-task="task-0000000002"]')).toBe(element); // the same element, recoloured
    expect(element.getAttribute('data-state')).toBe('done');
    // A key that arrives later (a spec's record is written after its tasks) relabels the node in place.
    expect(
      canvas.recolour(['task-0000000002', 'done', false, 'f', false, 'load-eu', '', 0, 0, 0, '']),
    ).toBe(true);
    expect(element.querySelector('text')?.textContent).toBe('load-eu f');
    expect(element.getAttribute('data-key')).toBe('load-eu');
    expect(canvas.keyOf('task-0000000002')).toBe('load-eu');
    expect(
      canvas.recolour(['task-0000000099', 'done', false, 'f', false, '', '', 0, 0, 0, '']),
    ).toBe(false);
    expect(
      canvas.recolour(['task-0000000002', 'running', false, 'f', true, 'load-eu', '', 0, 0, 0, '']),
    ).toBe(true); // deleted by a cancel while running
    expect(element.classList.contains('cancelled')).toBe(true);
    expect(element.querySelector('title')?.textContent).toContain('(deleted by the cancel)');
    expect(stats.structureChanges).toBe(1);

    canvas.show([node(1, 'done'), node(2, 'done', [1]), node(3, 'running', [1, 2])]); // same structure
    expect(stats.structureChanges).toBe(1);
    canvas.show([node(1, 'done'), node(3, 'running', [1])]);
    expect(stats.structureChanges).toBe(2);
    expect(drawn().map(([name]) => name)).toEqual(['task-0000000001', 'task-0000000003']);

    (
      document.querySelector('g.node[data-task="task-0000000001"] rect') as SVGRectElement
    ).dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(selected).toEqual(['task-0000000001']);
    canvas.select('task-0000000001');
    expect(document.querySelector('g.node.selected')?.getAttribute('data-task')).toBe(
      'task-0000000001',
    );
    await vi.waitFor(() => expect(document.querySelectorAll('#edges path')).toHaveLength(1));
    expect(stats.engine).toBe('worker');
    expect(requests).toEqual([1, 2]); // one layout per structure; the first answer came too late to be drawn
    expect(document.getElementById('layout-info')?.textContent).toBe('layout failed: no ELK here');
    expect(document.documentElement.dataset['layout']).toBe('quick');
    expect(document.querySelector('g.node.related')?.getAttribute('data-task')).toBe(
      'task-0000000003',
    );
    expect(document.querySelector('#edges path.hot')?.getAttribute('data-edge')).toBe(
      'task-0000000001>task-0000000003',
    );
  });
});
