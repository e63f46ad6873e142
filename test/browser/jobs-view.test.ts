// @vitest-environment happy-dom
/** The jobs page (`zk-plan ui --jobs`): the jobs table, each worker's share with its fencing tokens, the runs, the 5 s refresh and the deep link `?name=`. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderJobs } from '../../src/ui/browser/jobs-view.js';
import { jobsPageHtml } from '../../src/ui/page-html.js';
import type { UiCluster, UiJob } from '../../src/ui/ui-wire.js';

const EVIL = '<img src=x onerror="globalThis.pwned=1">';

/** Loads the jobs page's server-made body (its script is what these tests drive). */
function loadPage(): void {
  const html = jobsPageHtml('/plans');
  document.body.innerHTML = /<body [^>]*>([\s\S]*?)<script/.exec(html)?.[1] ?? '';
  document.body.dataset['parent'] = '/plans';
}

const byId = (id: string): HTMLElement => document.getElementById(id) as HTMLElement;

function tables(): Parameters<typeof renderJobs>[2] {
  return {
    jobs: byId('jobs'),
    jobAssignment: byId('job-assignment'),
    jobRuns: byId('job-runs'),
    jobsEmpty: byId('jobs-empty'),
    jobRunsEmpty: byId('job-runs-empty'),
  };
}

/** Renders the jobs of a `/api/cluster` answer as the jobs page does. */
function renderCluster(answer: UiCluster, into: Parameters<typeof renderJobs>[2]): void {
  renderJobs(answer.jobs, answer.jobsParent, into);
}

/** `jobsParent` null: a view started without --jobs. */
const cluster = (jobs: readonly UiJob[], jobsParent: string | null = '/jobs'): UiCluster => ({
  actions: false,
  workers: [],
  limits: [],
  schedules: [],
  ...(jobsParent === null ? {} : { jobsParent }),
  jobs,
  jobWorkers: [],
});

const NO_RUNS: UiJob['runCounts'] = {
  runs: 0,
  failed: 0,
  interrupted: 0,
  misfires: 0,
  caughtUp: 0,
  failovers: 0,
  retries: 0,
};

const mail: UiJob = {
  name: 'mail',
  fn: 'hold',
  mode: 'continuous',
  strategy: 'evenly',
  disabled: false,
  items: 4,
  unassigned: ['d'],
  assignment: [
    {
      workerId: 'jw-1',
      live: true,
      manager: true,
      items: [
        { id: 'a', token: 12 },
        { id: 'b', heldBy: 'jw-old' },
      ],
    },
    { workerId: 'jw-2', live: false, manager: false, items: [{ id: 'c' }] },
  ],
  runs: [],
  runCounts: NO_RUNS,
  failedItems: 0,
};

const assignmentRows = (): HTMLTableRowElement[] => [
  ...document.querySelectorAll<HTMLTableRowElement>('#job-assignment tr'),
];
const items = (row: HTMLTableRowElement | undefined): string[] =>
  [...(row?.querySelectorAll<HTMLElement>('.job-item') ?? [])].map(
    (item) => item.textContent ?? '',
  );

afterEach(() => {
  vi.unstubAllGlobals();
  document.body.innerHTML = '';
});

describe('the jobs page', () => {
  it('lists each job (function, mode, strategy, state, problem, unassigned) and each worker’s items with their fencing tokens', () => {
    loadPage();
    const stuck: UiJob = {
      name: EVIL,
      fn: 'report',
      mode: 'cron 0 0 3 * * * (Europe/Berlin)',
      strategy: 'mine',
      disabled: true,
      items: 2,
      problem: `strategy "mine" is not registered ${EVIL}`,
      unassigned: [],
      assignment: [],
      runs: [],
      runCounts: NO_RUNS,
      failedItems: 0,
    };
    renderCluster(cluster([mail, stuck]), tables());
    const rows = [...document.querySelectorAll<HTMLTableRowElement>('#jobs tr')];
    expect(rows.map((row) => [row.dataset['job'], row.dataset['disabled']])).toEqual([
      ['mail', 'false'],
      [EVIL, 'true'],
    ]);
    expect([...(rows[0]?.cells ?? [])].map((cell) => cell.textContent)).toEqual([
      'mail',
      'hold',
      'continuous',
      'evenly',
      'enabled',
      '3/4',
      'd',
      '0 failed, 0 interrupted, 0 misfire(s) (0 caught up), 0 failover(s), 0 retry(ies)',
    ]);
    expect(rows[1]?.cells[2]?.textContent).toBe('cron 0 0 3 * * * (Europe/Berlin)');
    expect(rows[1]?.cells[4]?.querySelector('.problem')?.textContent).toBe(
      `strategy "mine" is not registered ${EVIL}`,
    );
    expect(rows[1]?.cells[6]?.textContent).toBe('—');
    expect(document.querySelector('main img')).toBeNull(); // names and problems are text, never markup

    const shares = assignmentRows();
    expect(
      shares.map((row) => [
        row.dataset['job'],
        row.dataset['worker'],
        row.dataset['live'],
        row.dataset['manager'],
      ]),
    ).toEqual([
      ['mail', 'jw-1', 'true', 'true'],
      ['mail', 'jw-2', 'false', 'false'],
    ]);
    expect(items(shares[0])).toEqual(['a #12', 'b (waits for jw-old)']);
    expect(shares[0]?.querySelector<HTMLElement>('[data-item="a"]')?.dataset['token']).toBe('12');
    expect(shares[0]?.cells[1]?.textContent).toBe('jw-1manager');
    expect(items(shares[1])).toEqual(['c (not taken yet)']);
    expect(shares[1]?.cells[1]?.textContent).toBe('jw-2gone');
    expect(byId('jobs-empty').textContent).toBe('');
  });

  it("lists each job's newest runs: state, cause, try, duration, worker, items with tokens, and an error, a misfire or a failover beneath, as text", () => {
    loadPage();
    const runs: UiJob['runs'] = [
      {
        run: 'run-1795737660000-jw-2-1',
        worker: 'jw-2',
        state: 'running',
        cause: 'failover',
        attempt: 1,
        startedAt: '2026-11-27T00:01:00.000Z',
        items: ['a#13', 'b#14'],
        itemCount: 11,
        failoverOf: 'run-1795737600000-jw-1-4',
      },
      {
        run: 'run-1795737600000-jw-1-4',
        worker: 'jw-1',
        state: 'failed',
        cause: 'tick',
        attempt: 1,
        startedAt: '2026-11-27T00:00:00.000Z',
        finishedAt: '2026-11-27T00:00:01.250Z',
        items: ['a#12'],
        itemCount: 1,
        error: `Error: <img src=x onerror=alert(1)> ${EVIL}`,
        misfire: 'a tick came while it ran (2026-11-27T00:00:01.000Z): caught-up',
      },
    ];
    renderCluster(
      cluster([
        {
          ...mail,
          runs,
          runCounts: { ...NO_RUNS, runs: 2, failed: 1, misfires: 1, failovers: 1 },
          failedItems: 1,
        },
      ]),
      tables(),
    );
    const rows = [...document.querySelectorAll<HTMLTableRowElement>('#job-runs tr')];
    expect(
      rows.map((row) => [row.dataset['run'], row.dataset['state'], row.dataset['cause']]),
    ).toEqual([
      ['run-1795737660000-jw-2-1', 'running', 'failover'],
      ['run-1795737600000-jw-1-4', 'failed', 'tick'],
    ]);
    const cells = (row: HTMLTableRowElement | undefined): (string | null)[] =>
      [...(row?.cells ?? [])].map((cell) => cell.textContent);
    expect(cells(rows[0]).slice(2)).toEqual([
      'running',
      'failover',
      '1',
      '—',
      'jw-2',
      'a#13 b#14 +9 moreruns again run-1795737600000-jw-1-4',
    ]);
    expect(cells(rows[1]).slice(4, 6)).toEqual(['1', '1.2 s']);
    expect(rows[1]?.querySelector('.problem')?.textContent).toBe(
      `Error: <img src=x onerror=alert(1)> ${EVIL}`,
    );
    expect(rows[1]?.querySelector('.note')?.textContent).toContain('caught-up');
    expect(document.querySelector('#job-runs img')).toBeNull();
    expect(byId('job-runs-empty').textContent).toBe('');
    expect(document.querySelector<HTMLTableRowElement>('#jobs tr')?.cells[7]?.textContent).toBe(
      '1 failed, 0 interrupted, 1 misfire(s) (0 caught up), 1 failover(s), 0 retry(ies)',
    );
    renderCluster(cluster([mail]), tables());
    expect(byId('job-runs-empty').textContent).toBe('No job has run yet.');
  });

  it('says why no job is shown: no --jobs, or no job under it', () => {
    loadPage();
    renderCluster(cluster([], null), tables());
    expect(byId('jobs-empty').textContent).toContain('zk-plan ui --jobs <path>');
    renderCluster(cluster([mail]), tables());
    renderCluster(cluster([]), tables());
    expect(document.querySelectorAll('#jobs tr, #job-assignment tr')).toHaveLength(0);
    expect(byId('jobs-empty').textContent).toBe('No job is defined under /jobs.');
  });

  it('is read again every 5 s by the jobs page: a new assignment shows without a reload', async () => {
    vi.useFakeTimers();
    try {
      loadPage();
      let answer = cluster([mail]);
      const reads: string[] = [];
      vi.stubGlobal('fetch', async (url: string) => {
        reads.push(url);
        return new Response(JSON.stringify(answer), {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
        });
      });
      vi.stubGlobal(
        'EventSource',
        class {
          static readonly CLOSED = 2;
          readyState = 0;
          onopen: (() => void) | null = null;
          onerror: (() => void) | null = null;
          addEventListener(): void {}
        },
      );
      await import('../../src/ui/browser/jobs-page.js');
      await vi.advanceTimersByTimeAsync(0);
      expect(reads).toEqual(['/api/cluster']);
      expect(assignmentRows().map((row) => row.dataset['worker'])).toEqual(['jw-1', 'jw-2']);

      answer = cluster([
        {
          ...mail,
          unassigned: [],
          assignment: [
            { workerId: 'jw-3', live: true, manager: true, items: [{ id: 'a', token: 40 }] },
          ],
        },
      ]);
      await vi.advanceTimersByTimeAsync(4_000);
      expect(reads).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(reads).toEqual(['/api/cluster', '/api/cluster']);
      expect(assignmentRows().map((row) => row.dataset['worker'])).toEqual(['jw-3']);
      expect(items(assignmentRows()[0])).toEqual(['a #40']);
    } finally {
      vi.clearAllTimers();
      vi.useRealTimers();
    }
  });
});
