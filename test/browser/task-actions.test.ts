// @vitest-environment happy-dom
/** The task panel's "Rerun from here" and its words for a failed task: over for good (why) or tried again (when). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskPanel } from '../../src/ui/browser/task-panel.js';
import { failedForGoodText, willRetryText } from '../../src/ui/browser/task-actions.js';
import type { UiActionsInfo, UiTaskDetail } from '../../src/ui/ui-wire.js';
import { formatAbsolute } from '../../src/ui/browser/time-format.js';
import { preferredZone, setPreferredZone } from '../../src/ui/browser/time-zone.js';

const PLAN = '/plans/plan-0000000001';
const TASK = `${PLAN}/task-0000000002`;

const failure = (attempts: number, type = 'Error'): NonNullable<UiTaskDetail['failure']> => ({
  type,
  message: 'boom',
  code: 'ERROR',
  retryable: false,
  attempts,
  workerId: 'w1',
  at: '2026-11-27T10:00:00.000Z',
});

const failed: UiTaskDetail = {
  task: TASK,
  name: 'task-0000000002',
  key: 'load',
  plan: PLAN,
  state: 'failed',
  gone: false,
  fn: 'load',
  params: '[]',
  inputs: [],
  pendingInputs: 0,
  keepResult: false,
  maxAttempts: 3,
  failure: { ...failure(3), retryable: true }, // an older record's flag: the task is over all the same
};

const sameOrigin: UiActionsInfo = {
  mode: 'same-origin',
  origins: [location.origin],
  enable: 'zk-plan ui /plans --port 8080 --allow-actions',
};

/** Stubs fetch with answers by path; records each call's path and method. */
function stubFetch(answers: Record<string, () => unknown>): { path: string; method: string }[] {
  const calls: { path: string; method: string }[] = [];
  vi.stubGlobal('fetch', async (input: string, init?: RequestInit) => {
    const url = new URL(input, 'http://127.0.0.1/');
    calls.push({ path: `${url.pathname}${url.search}`, method: init?.method ?? 'GET' });
    const answer = answers[url.pathname];
    return answer === undefined
      ? new Response(JSON.stringify({ error: { code: 'NOT_FOUND', message: url.pathname } }), {
          status: 404,
        })
      : new Response(JSON.stringify(answer()), { status: 200 });
  });
  return calls;
}

const panels: TaskPanel[] = [];
afterEach(() => {
  for (const panel of panels.splice(0)) panel.close();
  vi.unstubAllGlobals();
  document.body.innerHTML = '';
});

function openPanel(): TaskPanel {
  document.body.innerHTML = '<aside id="panel"></aside>';
  const panel = new TaskPanel(
    document.getElementById('panel') as HTMLElement,
    PLAN,
    () => undefined,
  );
  panels.push(panel);
  return panel;
}

describe('the words for a failed task', () => {
  it('says a task failed for good, and why: a permanent error, or no tries left', () => {
    expect(failedForGoodText(failure(3), 3)).toBe(
      'Failed for good after 3 tries (no tries left: its retry policy allows 3)',
    );
    expect(failedForGoodText(failure(1), 3)).toBe(
      'Failed for good after 1 try (permanent error: another try cannot help)',
    );
    expect(failedForGoodText(failure(3, 'PermanentError'), 3)).toContain('permanent error');
    expect(failedForGoodText(failure(2), undefined)).toBe('Failed for good after 2 tries');
  });

  it('says when a task that failed a try is tried again', () => {
    const at = '2026-11-27T10:00:00.000Z';
    // Written in the zone the reader picked in the navigation bar (time-zone.ts).
    expect(willRetryText({ failures: 1, nextTryAt: at, lastError: 'x' }, 3)).toBe(
      `Will retry at ${formatAbsolute(Date.parse(at), preferredZone())} (1 failed try of 3 allowed)`,
    );
    setPreferredZone('UTC');
    expect(willRetryText({ failures: 1, nextTryAt: at, lastError: 'x' }, 3)).toBe(
      'Will retry at 2026-11-27 10:00:00 UTC (1 failed try of 3 allowed)',
    );
  });
});

describe('the task panel of a failed task', () => {
  it('never calls a task that failed for good retryable, and reruns the plan from it', async () => {
    const calls = stubFetch({
      '/api/task': () => failed,
      '/api/actions': () => sameOrigin,
      '/api/actions/rerun': () => ({ plan: '/plans/plan-0000000009', rerunOf: PLAN, from: 'load' }),
    });
    openPanel().show('task-0000000002');
    await vi.waitFor(() =>
      expect(document.getElementById('detail-outcome')?.textContent).toBe(
        'Failed for good after 3 tries (no tries left: its retry policy allows 3)',
      ),
    );
    expect(document.getElementById('panel')?.textContent).not.toContain('Retryable');
    const rerun = document.getElementById('action-rerun') as HTMLButtonElement;
    await vi.waitFor(() => expect(rerun.disabled).toBe(false));
    rerun.click();
    await vi.waitFor(() =>
      expect(document.getElementById('rerun-plan')?.getAttribute('href')).toBe(
        `/plan?path=${encodeURIComponent('/plans/plan-0000000009')}`,
      ),
    );
    expect(document.getElementById('rerun-note')?.textContent).toBe(
      'Rerun from load: plan-0000000009',
    );
    expect(calls.filter((call) => call.method === 'POST')).toEqual([
      { path: `/api/actions/rerun?path=${encodeURIComponent(TASK)}`, method: 'POST' },
    ]);
  });

  it('offers no rerun for a task without a key, and shows a refused rerun’s error', async () => {
    stubFetch({
      '/api/task': () => ({ ...failed, key: undefined }),
      '/api/actions': () => sameOrigin,
    });
    openPanel().show('task-0000000002');
    await vi.waitFor(() =>
      expect(document.getElementById('rerun-note')?.textContent).toContain('needs a task key'),
    );
    expect((document.getElementById('action-rerun') as HTMLButtonElement).disabled).toBe(true);

    panels.splice(0).forEach((panel) => panel.close());
    vi.stubGlobal('fetch', async (input: string) => {
      const path = new URL(input, 'http://127.0.0.1/').pathname;
      if (path === '/api/task') return new Response(JSON.stringify(failed));
      if (path === '/api/actions') return new Response(JSON.stringify(sameOrigin));
      return new Response(
        JSON.stringify({ error: { code: 'RERUN_NO_SPEC', message: 'no spec record' } }),
        { status: 409 },
      );
    });
    openPanel().show('task-0000000002');
    const rerun = (): HTMLButtonElement =>
      document.getElementById('action-rerun') as HTMLButtonElement;
    await vi.waitFor(() => expect(rerun().disabled).toBe(false));
    rerun().click();
    await vi.waitFor(() =>
      expect(document.getElementById('rerun-note')?.textContent).toBe(
        'Rerun failed: RERUN_NO_SPEC: no spec record',
      ),
    );
  });

  it('says a retrying task will be tried again, and when', async () => {
    stubFetch({
      '/api/task': () => ({
        ...failed,
        state: 'retrying',
        failure: undefined,
        attempts: { failures: 1, nextTryAt: '2026-11-27T10:00:05.000Z', lastError: 'boom' },
      }),
      '/api/why': () => ({ task: TASK, code: 'RETRY_DELAY', message: 'waits', details: {} }),
      '/api/actions': () => sameOrigin,
    });
    openPanel().show('task-0000000002');
    await vi.waitFor(() =>
      expect(document.getElementById('panel')?.textContent).toContain(
        '(1 failed try of 3 allowed)',
      ),
    );
    expect(document.getElementById('detail-outcome')).toBeNull();
  });
});
