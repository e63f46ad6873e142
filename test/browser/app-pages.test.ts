// @vitest-environment happy-dom
/**
 * The application's pages in the DOM: the workflows page (runs grouped by name, newest first, the
 * filters kept in the address, a schedule's backfills), deep links (`?name=`) on the schedules and
 * jobs pages, and the navigation bar's time-zone selector, remembered and applied at once.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  jobsPageHtml,
  plansPageHtml,
  schedulesPageHtml,
  workflowsPageHtml,
} from '../../src/ui/page-html.js';
import type { UiCluster, UiPlanRow, UiSchedule, UiSchedules } from '../../src/ui/ui-wire.js';

const EVIL = '<img src=x onerror="globalThis.pwned=1">';
const T0 = Date.parse('2026-11-20T10:00:00.000Z');

/** Loads a page's server-made body and its body attributes (its scripts are imported by each test). */
function loadPage(html: string, url: string): void {
  const body = /<body ([^>]*)>([\s\S]*?)<script/.exec(html);
  document.body.innerHTML = body?.[2] ?? '';
  for (const [, name, value] of (body?.[1] ?? '').matchAll(/([a-z-]+)="([^"]*)"/g))
    document.body.setAttribute(name as string, value as string);
  history.replaceState(null, '', url);
}

/** The page's event stream: the test sends it events. */
class FakeEventSource {
  static readonly CLOSED = 2;
  static last: FakeEventSource | undefined;
  readyState = 1;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  private readonly listeners = new Map<string, (event: { data: string }) => void>();
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  addEventListener(type: string, listener: (event: { data: string }) => void): void {
    this.listeners.set(type, listener);
  }
  send(type: string, data: unknown): void {
    this.listeners.get(type)?.({ data: JSON.stringify(data) });
  }
}

function stubApi(answers: Record<string, unknown>): void {
  vi.stubGlobal('EventSource', FakeEventSource);
  vi.stubGlobal('fetch', async (input: string) => {
    const path = new URL(input, 'http://127.0.0.1/').pathname;
    return new Response(
      JSON.stringify(answers[path] ?? { error: { code: 'NOT_FOUND', message: path } }),
      {
        status: path in answers ? 200 : 404,
        headers: { 'Content-Type': 'application/json' },
      },
    );
  });
}

function run(
  name: string,
  planName: string,
  state: UiPlanRow['state'],
  createdAt: number,
): UiPlanRow {
  return {
    plan: `/plans/${name}`,
    name,
    planName,
    state,
    priority: 0,
    done: 2,
    total: 2,
    historyKept: true,
    running: 0,
    failed: state === 'failed' ? 1 : 0,
    blocked: 0,
    waiting: 0,
    createdAt,
    ...(state === 'running' ? {} : { finishedAt: createdAt + 2_400 }),
  };
}

const PLANS: UiPlanRow[] = [
  run('nightly@20261101T013000.000Z', 'nightly', 'completed', T0),
  run('nightly@20261102T013000.000Z', 'nightly', 'failed', T0 + 60_000),
  run('nightly@20261125T013000.000Z', 'nightly', 'completed', T0 + 120_000),
  run('plan-0000000007', EVIL, 'running', T0 + 30_000),
];

const NIGHTLY: UiSchedule = {
  name: 'nightly',
  cron: '0 30 1 * * *',
  timezone: 'UTC',
  paused: false,
  planParent: '/plans',
  nextFireTimes: ['2026-11-26T01:30:00.000Z'],
  runs: [],
  backfills: [
    {
      id: 'backfill-001764036000000-1a2b3c4d',
      from: '2026-11-01T01:30:00.000Z',
      to: '2026-11-02T01:30:00.000Z',
      mode: 'serial',
      state: 'completed',
      total: 2,
      started: 2,
      completed: 1,
      failed: 1,
      notRun: 0,
      createdAt: '2026-11-20T10:00:00.000Z',
    },
  ],
};

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
const rowsOf = (id: string, key: string): string[] =>
  [...document.querySelectorAll<HTMLElement>(`#${id} tr`)].map((row) => row.dataset[key] ?? '');

beforeEach(() => {
  vi.resetModules();
  vi.useFakeTimers({ shouldAdvanceTime: true, now: T0 + 3_600_000 });
  localStorage.clear();
});

afterEach(() => {
  vi.clearAllTimers();
  vi.useRealTimers();
  vi.unstubAllGlobals();
  document.body.innerHTML = '';
});

describe('the workflows page', () => {
  it('lists plans grouped by name with a summary, and a workflow’s runs newest first, filtered by state in the address', async () => {
    loadPage(workflowsPageHtml('/plans'), '/workflows?name=nightly');
    stubApi({
      '/api/schedules': {
        schedulesParent: '/schedules',
        schedules: [NIGHTLY],
      } satisfies UiSchedules,
    });
    await import('../../src/ui/browser/workflows-page.js');
    FakeEventSource.last?.send('plans', PLANS);
    await vi.waitFor(() => expect(rowsOf('workflows', 'workflow')).toEqual(['nightly', EVIL]));
    expect(document.querySelector('main img')).toBeNull(); // a name is text, never markup
    const nightly = document.querySelector<HTMLTableRowElement>(
      '#workflows tr[data-workflow="nightly"]',
    );
    expect(nightly?.dataset['linked']).toBe('true');
    expect(nightly?.cells[2]?.textContent).toBe('completed');
    expect(nightly?.cells[3]?.textContent).toBe('3');
    expect(nightly?.cells[4]?.textContent).toBe('67 %');
    await vi.waitFor(() =>
      expect(nightly?.cells[7]?.querySelector('a')?.getAttribute('href')).toBe(
        '/schedules?name=nightly',
      ),
    );

    expect(document.getElementById('workflow')?.hidden).toBe(false);
    expect(rowsOf('runs', 'plan')).toEqual([
      '/plans/nightly@20261125T013000.000Z',
      '/plans/nightly@20261102T013000.000Z',
      '/plans/nightly@20261101T013000.000Z',
    ]);
    const first = document.querySelector<HTMLTableRowElement>('#runs tr');
    expect(first?.cells[4]?.textContent).toBe('took 2.4 s');
    expect(first?.querySelector('a')?.getAttribute('href')).toBe(
      `/plan?path=${encodeURIComponent('/plans/nightly@20261125T013000.000Z')}`,
    );
    // The schedule above its runs, with its backfill linked to the runs of its ticks.
    expect(document.getElementById('workflow-schedule')?.hidden).toBe(false);
    expect(document.querySelector('#workflow-schedule .backfill a')?.getAttribute('href')).toBe(
      '/workflows?name=nightly&backfill=backfill-001764036000000-1a2b3c4d',
    );

    const state = document.getElementById('filter-state') as HTMLSelectElement;
    state.value = 'failed';
    state.dispatchEvent(new Event('change'));
    expect(rowsOf('runs', 'plan')).toEqual(['/plans/nightly@20261102T013000.000Z']);
    expect(location.search).toBe('?name=nightly&state=failed');
    expect(document.getElementById('filter-note')?.textContent).toBe('1 of 3 run(s)');
    state.value = 'cancelled';
    state.dispatchEvent(new Event('change'));
    expect(rowsOf('runs', 'plan')).toEqual([]);
    expect(document.getElementById('runs-empty')?.textContent).toBe('No run matches the filter.');
    (document.getElementById('filter-clear') as HTMLButtonElement).click();
    expect(rowsOf('runs', 'plan')).toHaveLength(3);
    expect(location.search).toBe('?name=nightly');
  });

  it('opens a backfill’s runs and a date range from the address', async () => {
    loadPage(
      workflowsPageHtml('/plans'),
      '/workflows?name=nightly&backfill=backfill-001764036000000-1a2b3c4d',
    );
    stubApi({ '/api/schedules': { schedules: [NIGHTLY] } });
    await import('../../src/ui/browser/workflows-page.js');
    FakeEventSource.last?.send('plans', PLANS);
    await vi.waitFor(() =>
      expect(rowsOf('runs', 'plan')).toEqual([
        '/plans/nightly@20261102T013000.000Z',
        '/plans/nightly@20261101T013000.000Z',
      ]),
    );
    expect(document.getElementById('filter-note')?.textContent).toContain(
      'backfill backfill-001764036000000-1a2b3c4d',
    );
  });
});

describe('deep links and the time zone', () => {
  it('the schedules page marks the schedule ?name= names, and says so when there is none', async () => {
    loadPage(schedulesPageHtml('/plans'), '/schedules?name=nightly');
    stubApi({
      '/api/schedules': {
        schedulesParent: '/schedules',
        schedules: [{ ...NIGHTLY, name: 'hourly' }, NIGHTLY],
      },
    });
    await import('../../src/ui/browser/schedules-page.js');
    await vi.waitFor(() => expect(rowsOf('schedules', 'schedule')).toEqual(['hourly', 'nightly']));
    expect(
      [...document.querySelectorAll<HTMLElement>('#schedules tr')].map(
        (row) => row.dataset['linked'] ?? '',
      ),
    ).toEqual(['', 'true']);
  });

  it('the jobs page marks the job ?name= names', async () => {
    loadPage(jobsPageHtml('/plans'), '/jobs?name=missing');
    const cluster: UiCluster = {
      actions: false,
      workers: [],
      limits: [],
      schedules: [],
      jobsParent: '/jobs',
      jobs: [],
      jobWorkers: [],
    };
    stubApi({ '/api/cluster': cluster });
    await import('../../src/ui/browser/jobs-page.js');
    await vi.waitFor(() =>
      expect(document.getElementById('jobs-empty')?.textContent).toBe(
        'No job named missing is listed.',
      ),
    );
  });

  it('the navigation bar offers local, UTC and IANA zones; a pick is remembered and the page writes its times in it at once', async () => {
    localStorage.setItem('zk-plan-ui-time-zone', 'Mars/Olympus'); // no zone: the browser's own is used
    loadPage(plansPageHtml('/plans'), '/');
    stubApi({});
    await import('../../src/ui/browser/nav-bar.js');
    await import('../../src/ui/browser/plans-page.js');
    const select = document.getElementById('time-zone') as HTMLSelectElement;
    expect(select.value).toBe('local');
    const zones = [...select.options].map((option) => option.value);
    expect(zones.slice(0, 2)).toEqual(['local', 'UTC']);
    expect(zones).toContain('Asia/Tokyo');
    expect(document.querySelector('#app-nav a[aria-current="page"]')?.getAttribute('href')).toBe(
      '/',
    );
    FakeEventSource.last?.send('plans', [run('plan-0000000001', 'etl', 'completed', T0)]);
    select.value = 'Asia/Tokyo';
    select.dispatchEvent(new Event('change'));
    expect(localStorage.getItem('zk-plan-ui-time-zone')).toBe('Asia/Tokyo');
    const started = document.querySelector('#plans tr td.started');
    expect(started?.querySelector('.rel')?.textContent).toBe('1 h ago');
    expect(started?.querySelector('.abs')?.textContent).toBe('2026-11-20 19:00:00 GMT+9');
    expect(document.querySelector('#plans tr td.duration')?.textContent).toBe('took 2.4 s');
    expect(document.querySelector('#plans tr td.plan-name a')?.getAttribute('href')).toBe(
      '/workflows?name=etl',
    );
  });
});
