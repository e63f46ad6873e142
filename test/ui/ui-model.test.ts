import { describe, expect, it } from 'vitest';
import type { PlanStatus } from '../../src/plan/plan-status.js';
import type { PlanSummary, PlanView, TaskView } from '../../src/plan/plan-view.js';
import type { TaskViewState } from '../../src/plan/plan-progress.js';
import {
  buildModel,
  diffModels,
  escapeHtml,
  formatValue,
  goneTaskDetail,
  isEmptyDiff,
  isPlanUnder,
  isTaskUnder,
  planRow,
  stackExcerpt,
  stringifySafe,
  taskDetail,
  toJsonSafe,
} from '../../src/ui/ui-model.js';
import { countPlanTasks } from '../../src/plan/plan-progress.js';
import { applyChange } from '../../src/ui/ui-wire.js';

const PLAN = '/plans/plan-0000000001';

function status(
  overrides: Partial<PlanStatus['counts']> = {},
  state: PlanStatus['state'] = 'running',
): PlanStatus {
  const counts = {
    total: 0,
    done: 0,
    remaining: 0,
    runnable: 0,
    running: 0,
    waiting: 0,
    blocked: 0,
    failed: 0,
    finishing: 0,
    building: 0,
    cancelled: 0,
    unstarted: 0,
    ...overrides,
  };
  return {
    plan: PLAN,
    state,
    failurePolicy: 'continue',
    priority: 0,
    counts,
    failed: [],
    blocked: [],
    retrying: [],
  };
}

function task(
  serial: number,
  state: TaskViewState,
  inputs: number[] = [],
  extra: Partial<TaskView> = {},
): TaskView {
  const name = `task-${String(serial).padStart(10, '0')}`;
  return {
    task: `${PLAN}/${name}`,
    name,
    state,
    fn: 'f',
    params: [serial],
    inputs: inputs.map((input) => `${PLAN}/task-${String(input).padStart(10, '0')}`),
    pendingInputs: 0,
    keepResult: false,
    ...extra,
  };
}

function view(
  tasks: TaskView[],
  options: { historyKept?: boolean; done?: number; state?: PlanStatus['state'] } = {},
): PlanView {
  const live = tasks.filter((entry) => entry.state !== 'done').length;
  return {
    plan: PLAN,
    status: status(countPlanTasks(tasks), options.state),
    tasks,
    done: options.done ?? tasks.length - live,
    historyKept: options.historyKept ?? true,
  };
}

const n = (serial: number): string => `task-${String(serial).padStart(10, '0')}`;

describe('escapeHtml', () => {
  it('escapes the five characters that matter in content and quoted attributes', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y'`)).toBe(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;',
    );
  });

  it('leaves other text alone, including non-ASCII', () => {
    expect(escapeHtml('/plans/plan-0000000001 · é')).toBe('/plans/plan-0000000001 · é');
  });
});

describe('toJsonSafe', () => {
  it('renders superjson values JSON cannot hold', () => {
    const value = {
      when: new Date('2024-01-02T03:04:05.000Z'),
      big: 12345678901234567890n,
      nothing: undefined,
      map: new Map([['a', 1]]),
      set: new Set([1, 2]),
      pattern: /a+/g,
      url: new URL('https://example.com/x'),
      nan: Number.NaN,
      error: new TypeError('bad'),
    };
    expect(toJsonSafe(value)).toEqual({
      when: '2024-01-02T03:04:05.000Z',
      big: '12345678901234567890n',
      nothing: null,
      map: { $map: [['a', 1]] },
      set: { $set: [1, 2] },
      pattern: '/a+/g',
      url: 'https://example.com/x',
      nan: 'NaN',
      error: { name: 'TypeError', message: 'bad' },
    });
  });

  it('marks cycles and bounds the depth instead of throwing', () => {
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle['self'] = cycle;
    expect(toJsonSafe(cycle)).toEqual({ name: 'loop', self: '[circular]' });
    expect(toJsonSafe({ a: { b: { c: 1 } } }, 2)).toEqual({ a: { b: '[…]' } });
    const shared = { x: 1 };
    expect(toJsonSafe([shared, shared])).toEqual([{ x: 1 }, { x: 1 }]); // shared, not circular
  });

  it('gives JSON text that parses back', () => {
    expect(JSON.parse(stringifySafe({ at: new Date(0), n: 1n }))).toEqual({
      at: '1970-01-01T00:00:00.000Z',
      n: '1n',
    });
  });
});

describe('formatValue and stackExcerpt', () => {
  it('formats values as Node inspects them', () => {
    expect(formatValue([1, 'a', new Map([['k', 2n]])])).toBe("[ 1, 'a', Map(1) { 'k' => 2n } ]");
  });

  it('bounds huge values', () => {
    const text = formatValue('x'.repeat(50_000), 1_000);
    expect(text.length).toBeLessThan(1_100);
    expect(text).toMatch(/more characters\)$/);
  });

  it('keeps the first lines of a stack', () => {
    const stack = [
      'Error: boom',
      ...Array.from({ length: 20 }, (_, i) => `    at f${i} (file.js:${i}:1)`),
    ].join('\n');
    const excerpt = stackExcerpt(stack, 3) ?? '';
    expect(excerpt.split('\n')).toEqual([
      'Error: boom',
      '    at f0 (file.js:0:1)',
      '    at f1 (file.js:1:1)',
      '    … 18 more lines',
    ]);
    expect(stackExcerpt('Error: short')).toBe('Error: short');
    expect(stackExcerpt(undefined)).toBeUndefined();
  });
});

describe('isPlanUnder and isTaskUnder', () => {
  it('accepts plans and tasks directly under the parent', () => {
    expect(isPlanUnder('/plans', PLAN)).toBe(true);
    expect(isPlanUnder('/plans', '/plans/nightly@20261125T013000.000Z')).toBe(true); // a schedule's named plan
    expect(isTaskUnder('/plans', `${PLAN}/task-0000000003`)).toBe(true);
    expect(isPlanUnder('/', '/plan-0000000001')).toBe(true);
    expect(isTaskUnder('/', '/plan-0000000001/task-0000000001')).toBe(true);
  });

  it('refuses anything else', () => {
    for (const path of [
      '/other/plan-0000000001',
      '/plans/sub/plan-0000000001',
      '/plans/plan-x',
      '/plans/zk-plan-workers',
      '/plans/task-0000000001',
      '/plans/nightly@2026',
      '/plans',
      '/plans/plan-0000000001/',
      'plans/plan-0000000001',
      '/plans/../plan-0000000001',
    ]) {
      expect(isPlanUnder('/plans', path), path).toBe(false);
    }
    for (const path of [
      `${PLAN}`,
      `${PLAN}/ready`,
      `${PLAN}/task-0000000001/owner`,
      '/other/plan-0000000001/task-0000000001',
      `${PLAN}/history/task-0000000001`,
    ]) {
      expect(isTaskUnder('/plans', path), path).toBe(false);
    }
  });
});

describe('buildModel', () => {
  it('keeps one node per task with its state, function and inputs by name', () => {
    const model = buildModel(
      view([task(1, 'done'), task(2, 'running', [1]), task(3, 'waiting', [1, 2])], { done: 1 }),
    );
    expect(model.nodes).toEqual([
      { name: n(1), state: 'done', fn: 'f', inputs: [] },
      { name: n(2), state: 'running', fn: 'f', inputs: [n(1)] },
      { name: n(3), state: 'waiting', fn: 'f', inputs: [n(1), n(2)] },
    ]);
    expect(model.status).toMatchObject({ state: 'running', done: 1, total: 3, historyKept: true });
    expect(model.status.counts).toMatchObject({ done: 1, running: 1, waiting: 1, failed: 0 });
  });

  it('lists an input used twice once', () => {
    expect(
      buildModel(view([task(1, 'done'), task(2, 'waiting', [1, 1])])).nodes[1]?.inputs,
    ).toEqual([n(1)]);
  });

  it('draws inputs from finished tasks of a plan without history as gone, done nodes', () => {
    const model = buildModel(view([task(5, 'runnable', [3, 4])], { historyKept: false, done: 0 }));
    expect(model.nodes.map(({ name, state, gone }) => [name, state, gone])).toEqual([
      [n(3), 'done', true],
      [n(4), 'done', true],
      [n(5), 'runnable', undefined],
    ]);
    expect(model.status).toMatchObject({ done: 2, total: 3, historyKept: false });
  });

  it('keeps tasks that vanished since the last model as gone, done nodes', () => {
    const first = buildModel(
      view([task(1, 'running'), task(2, 'waiting', [1])], { historyKept: false }),
    );
    const second = buildModel(view([task(2, 'runnable', [])], { historyKept: false }), first);
    expect(second.nodes).toEqual([
      { name: n(1), state: 'done', fn: 'f', inputs: [], gone: true },
      { name: n(2), state: 'runnable', fn: 'f', inputs: [n(1)] },
    ]);
    expect(second.status).toMatchObject({ done: 1, total: 2 });
  });

  it('does not let a read that caught a task half-deleted change what is fixed once it is built', () => {
    const first = buildModel(view([task(1, 'running'), task(2, 'waiting', [1])]));
    // Task 1 is being deleted (no definition, no children) and is not in the history yet.
    const second = buildModel(
      view([task(1, 'building', [], { fn: '?' }), task(2, 'waiting', [])]),
      first,
    );
    expect(second.nodes).toEqual([
      { name: n(1), state: 'running', fn: 'f', inputs: [] },
      { name: n(2), state: 'waiting', fn: 'f', inputs: [n(1)] },
    ]);
    expect(diffModels(first, second)).toMatchObject({
      changed: [],
      added: [],
      updated: [],
      removed: [],
    });
  });

  it('takes inputs that grow while a task is built', () => {
    const first = buildModel(view([task(1, 'done'), task(2, 'done'), task(3, 'building', [1])]));
    const second = buildModel(
      view([task(1, 'done'), task(2, 'done'), task(3, 'waiting', [1, 2])]),
      first,
    );
    expect(second.nodes[2]).toEqual({
      name: n(3),
      state: 'waiting',
      fn: 'f',
      inputs: [n(1), n(2)],
    });
    expect(diffModels(first, second).updated).toEqual([second.nodes[2]]);
  });
});

describe('task keys and the plan name in the web view', () => {
  it('labels nodes by key, keeps a key a later read misses, and sends a key that arrives as a change', () => {
    const first = buildModel(view([task(1, 'running'), task(2, 'building', [1])]));
    expect(first.nodes.map((node) => node.key)).toEqual([undefined, undefined]);
    // The spec record (with the keys) is written after the tasks: the next read knows them.
    const second = buildModel(
      view([
        task(1, 'running', [], { key: 'load-eu' }),
        task(2, 'waiting', [1], { key: 'report' }),
      ]),
      first,
    );
    expect(second.nodes.map((node) => node.key)).toEqual(['load-eu', 'report']);
    expect(diffModels(first, second).changed).toEqual([
      [n(1), 'running', false, 'f', false, 'load-eu', '', 0, 0, 0, ''],
      [n(2), 'waiting', false, 'f', false, 'report', '', 0, 0, 0, ''],
    ]);
    // Task 1 caught half-deleted (no definition): its key stays, as do its function and state.
    const third = buildModel(
      view([task(1, 'building', [], { fn: '?' }), task(2, 'waiting', [1], { key: 'report' })]),
      second,
    );
    expect(third.nodes[0]).toEqual({
      name: n(1),
      key: 'load-eu',
      state: 'running',
      fn: 'f',
      inputs: [],
    });
    // Gone (finished without history): still labelled by its key.
    const fourth = buildModel(
      view([task(2, 'runnable', [1], { key: 'report' })], { historyKept: false }),
      third,
    );
    expect(fourth.nodes[0]).toEqual({
      name: n(1),
      key: 'load-eu',
      state: 'done',
      fn: 'f',
      inputs: [],
      gone: true,
    });
  });

  it('carries the plan name in the headline and the plans row, and the key in the panel', () => {
    const named: PlanView = {
      ...view([task(1, 'running', [], { key: 'load-eu' })]),
      status: { ...status(), name: 'nightly' },
    };
    const model = buildModel(named);
    expect(model.status.name).toBe('nightly');
    expect(
      isEmptyDiff(
        diffModels(model, buildModel(view([task(1, 'running', [], { key: 'load-eu' })]), model)),
        model.status,
      ),
    ).toBe(false);
    expect(planRow({ plan: PLAN, status: named.status, done: 0, historyKept: true }).planName).toBe(
      'nightly',
    );
    expect(
      planRow({ plan: PLAN, status: status(), done: 0, historyKept: true }),
    ).not.toHaveProperty('planName');
    expect(taskDetail(task(1, 'running', [], { key: 'load-eu' })).key).toBe('load-eu');
    expect(goneTaskDetail(`${PLAN}/${n(1)}`, 'finished', 'load-eu').key).toBe('load-eu');
  });
});

describe('diffModels', () => {
  it("carries each task's worker, start, end, failed tries and error, and sends a change of them compactly", () => {
    const claimedAt = new Date('2026-11-27T10:00:00Z');
    const started = new Date('2026-11-27T09:00:00Z');
    const finished = new Date('2026-11-27T09:00:02Z');
    const first = buildModel(
      view([
        task(1, 'done', [], { workerId: 'w/1', startedAt: started, finishedAt: finished }),
        task(2, 'running', [1], {
          owner: { workerId: 'w/2', claimedAt },
          attempts: { failures: 1, nextTryAt: claimedAt, lastError: 'timeout'.repeat(100) },
        }),
        task(3, 'waiting', [2]),
      ]),
    );
    expect(first.nodes[0]).toMatchObject({
      worker: 'w/1',
      startedAt: started.getTime(),
      finishedAt: finished.getTime(),
    });
    expect(first.nodes[1]).toMatchObject({
      worker: 'w/2',
      startedAt: claimedAt.getTime(),
      failedTries: 1,
    });
    expect(first.nodes[1]?.error).toHaveLength(300);
    expect(first.nodes[2]).not.toHaveProperty('worker');
    const failure = {
      type: 'Error',
      message: 'disk full',
      code: 'X',
      stack: undefined,
      retryable: false,
      attempts: 2,
      workerId: 'w/2',
      at: finished,
    };
    const second = buildModel(
      view([
        task(1, 'done', [], { workerId: 'w/1', startedAt: started, finishedAt: finished }),
        task(2, 'failed', [1], { failure, failedTries: 2, workerId: 'w/2', finishedAt: finished }),
        task(3, 'blocked', [2]),
      ]),
      first,
    );
    const diff = diffModels(first, second);
    expect(diff.changed).toEqual([
      [
        n(2),
        'failed',
        false,
        'f',
        false,
        '',
        'w/2',
        0, // a failed task's view tells when it ended, not when its last try started
        finished.getTime(),
        2,
        'disk full',
      ],
      [n(3), 'blocked', false, 'f', false, '', '', 0, 0, 0, ''],
    ]);
    // The page rebuilds the node from the change and its inputs: the node the server holds.
    const [, failedNow] = second.nodes;
    const [, failedBefore] = first.nodes;
    expect(failedBefore && diff.changed[0] && applyChange(failedBefore, diff.changed[0])).toEqual(
      failedNow,
    );
  });

  it('reports state changes compactly and structure changes in full', () => {
    const before = buildModel(view([task(1, 'running'), task(2, 'waiting', [1])]));
    const after = buildModel(
      view([task(1, 'done'), task(2, 'runnable', [1]), task(3, 'building', [2])], { done: 1 }),
      before,
    );
    const diff = diffModels(before, after);
    expect(diff.changed).toEqual([
      [n(1), 'done', false, 'f', false, '', '', 0, 0, 0, ''],
      [n(2), 'runnable', false, 'f', false, '', '', 0, 0, 0, ''],
    ]);
    expect(diff.added).toEqual([{ name: n(3), state: 'building', fn: 'f', inputs: [n(2)] }]);
    expect(diff.updated).toEqual([]);
    expect(diff.removed).toEqual([]);
    expect(diff.status).toBe(after.status);
  });

  it('is empty when nothing shown changed', () => {
    const before = buildModel(view([task(1, 'running')]));
    const same = buildModel(view([task(1, 'running')]), before);
    expect(isEmptyDiff(diffModels(before, same), before.status)).toBe(true);
    const finished = buildModel(view([task(1, 'running')], { state: 'failed' }), before);
    expect(isEmptyDiff(diffModels(before, finished), before.status)).toBe(false);
  });

  it('carries the plan’s priority and control record, and a changed reason or priority is not an empty diff', () => {
    const at = new Date('2026-11-24T10:00:00Z');
    const plain = view([task(1, 'running')]);
    const paused = (reason: string, priority = 0): PlanView => ({
      ...plain,
      status: {
        ...plain.status,
        state: 'paused',
        priority,
        control: { state: 'paused', reason, at, abortRunning: false },
      },
    });
    const before = buildModel(paused('warehouse down'));
    expect(before.status).toMatchObject({
      state: 'paused',
      priority: 0,
      control: { state: 'paused', reason: 'warehouse down', at: '2026-11-24T10:00:00.000Z' },
    });
    expect(buildModel(plain).status.control).toBeUndefined();
    expect(
      isEmptyDiff(diffModels(before, buildModel(paused('warehouse down'), before)), before.status),
    ).toBe(true);
    expect(
      isEmptyDiff(
        diffModels(before, buildModel(paused('warehouse still down'), before)),
        before.status,
      ),
    ).toBe(false);
    expect(
      isEmptyDiff(
        diffModels(before, buildModel(paused('warehouse down', 3), before)),
        before.status,
      ),
    ).toBe(false);
  });

  it('keeps a cancelled plan’s deleted tasks in their last state, marked cancelled and not counted done', () => {
    const before = buildModel(
      view([task(1, 'done'), task(2, 'running', [1]), task(3, 'runnable')], { historyKept: false }),
    );
    const after = buildModel(view([], { historyKept: false, state: 'cancelled' }), before);
    expect(
      after.nodes.map(({ name, state, gone, cancelled }) => ({ name, state, gone, cancelled })),
    ).toEqual([
      { name: n(1), state: 'done', gone: true, cancelled: undefined }, // finished, then deleted: no history
      { name: n(2), state: 'running', gone: undefined, cancelled: true },
      { name: n(3), state: 'runnable', gone: undefined, cancelled: true },
    ]);
    expect(after.status).toMatchObject({ state: 'cancelled', done: 1, total: 3 });
    expect(diffModels(before, after).changed).toEqual([
      [n(1), 'done', true, 'f', false, '', '', 0, 0, 0, ''],
      [n(2), 'running', false, 'f', true, '', '', 0, 0, 0, ''],
      [n(3), 'runnable', false, 'f', true, '', '', 0, 0, 0, ''],
    ]);
    // Once marked, they stay so (the next read holds no more of them).
    expect(
      buildModel(view([], { historyKept: false, state: 'cancelled' }), after).nodes.filter(
        (node) => node.cancelled,
      ),
    ).toHaveLength(2);
  });

  it('reports removed nodes', () => {
    const before = buildModel(view([task(1, 'running'), task(2, 'running')]));
    const after = buildModel(view([task(2, 'running')]));
    expect(diffModels(before, after).removed).toEqual([n(1)]);
  });
});

describe('planRow', () => {
  it('summarises a plan for the plans page', () => {
    const summary: PlanSummary = {
      plan: PLAN,
      status: status({
        total: 10,
        done: 4,
        remaining: 6,
        running: 1,
        finishing: 1,
        waiting: 2,
        runnable: 1,
        failed: 1,
      }),
      done: 4,
    };
    expect(planRow({ ...summary, historyKept: false }).historyKept).toBe(false);
    expect(planRow({ ...summary, historyKept: true }, false).historyKept).toBe(false);
    expect(planRow(summary, true)).toEqual({
      plan: PLAN,
      name: 'plan-0000000001',
      state: 'running',
      priority: 0,
      done: 4,
      total: 10,
      historyKept: true,
      running: 2,
      failed: 1,
      blocked: 0,
      waiting: 3,
    });
  });
});

describe('taskDetail', () => {
  it('gives the panel plain JSON: dates as ISO text, params formatted, a stack excerpt', () => {
    const at = new Date('2024-05-06T07:08:09.000Z');
    const stack = [
      'PermanentError: no such customer',
      ...Array.from({ length: 30 }, (_, i) => `    at f${i} (x.js:1:1)`),
    ].join('\n');
    const detail = taskDetail(
      task(7, 'failed', [3], {
        params: [{ id: 42n, when: at }],
        owner: { workerId: 'w/1', claimedAt: at },
        failure: {
          type: 'PermanentError',
          message: 'no such customer',
          code: 'NO_SUCH_CUSTOMER',
          stack,
          retryable: false,
          attempts: 1,
          workerId: 'w/1',
          at,
        },
      }),
    );
    expect(detail).toMatchObject({
      task: `${PLAN}/${n(7)}`,
      name: n(7),
      plan: PLAN,
      state: 'failed',
      gone: false,
      fn: 'f',
      params: '[ { id: 42n, when: 2024-05-06T07:08:09.000Z } ]',
      inputs: [`${PLAN}/${n(3)}`],
      owner: { workerId: 'w/1', claimedAt: '2024-05-06T07:08:09.000Z' },
      failure: {
        type: 'PermanentError',
        message: 'no such customer',
        code: 'NO_SUCH_CUSTOMER',
        retryable: false,
        attempts: 1,
        workerId: 'w/1',
        at: '2024-05-06T07:08:09.000Z',
      },
    });
    expect(detail.failure?.stack?.split('\n')).toHaveLength(11);
    expect(JSON.parse(JSON.stringify(detail))).toEqual(detail);
  });

  it('says little about a task gone from a plan without history', () => {
    expect(goneTaskDetail(`${PLAN}/${n(2)}`, 'cancelled')).toMatchObject({
      state: 'cancelled',
      gone: true,
      goneReason: 'cancelled',
    });
    expect(goneTaskDetail(`${PLAN}/${n(2)}`)).toEqual({
      goneReason: 'finished',
      task: `${PLAN}/${n(2)}`,
      name: n(2),
      plan: PLAN,
      state: 'done',
      gone: true,
      fn: '',
      params: '',
      inputs: [],
      pendingInputs: 0,
      keepResult: false,
    });
  });
});

describe('progress numbers agree with the API (one count)', () => {
  it('a 21-task plan with 13 done shows 13/21, on the plan page and the plans page', () => {
    const tasks = [
      ...Array.from({ length: 13 }, (_, index) => task(index + 1, 'done')),
      ...Array.from({ length: 8 }, (_, index) => task(index + 14, 'waiting')),
    ];
    const planView = view(tasks);
    expect(planView.status.counts).toMatchObject({ total: 21, done: 13, remaining: 8 });
    expect(buildModel(planView).status).toMatchObject({ done: 13, total: 21 });
    expect(
      planRow({ plan: PLAN, status: planView.status, done: planView.done, historyKept: true }),
    ).toMatchObject({ done: 13, total: 21 });
  });
});
