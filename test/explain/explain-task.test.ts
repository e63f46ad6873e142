/** The pure "why isn't this task running?" decision, on facts built by hand. */
import { describe, expect, it } from 'vitest';
import { explainPlanFrom, explainTask, type TaskFacts } from '../../src/explain/explain-task.js';
import type { PlanView, TaskView } from '../../src/plan/plan-view.js';
import type { PlanStatus } from '../../src/plan/plan-status.js';
import type { WorkerInfo } from '../../src/registry/worker-info.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const PLAN = '/plans/plan-0000000001';
const TASK = `${PLAN}/task-0000000001`;

function status(state: PlanStatus['state'], extra: Partial<PlanStatus> = {}): PlanStatus {
  const counts = {
    building: 0,
    waiting: 0,
    runnable: 1,
    retrying: 0,
    running: 0,
    finishing: 0,
    failed: 0,
    blocked: 0,
    done: 0,
    remaining: 1,
    total: 1,
  };
  return {
    plan: PLAN,
    state,
    failurePolicy: 'continue',
    counts,
    failed: [],
    blocked: [],
    retrying: [],
    ...extra,
  } as PlanStatus;
}

function taskView(extra: Partial<TaskView> = {}): TaskView {
  return {
    task: TASK,
    name: 'task-0000000001',
    state: 'runnable',
    fn: 'load',
    params: [],
    inputs: [],
    pendingInputs: 0,
    keepResult: false,
    ...extra,
  };
}

function worker(extra: Partial<WorkerInfo> = {}): WorkerInfo {
  return {
    id: 'w1',
    host: 'h',
    pid: 1,
    version: '0.1.0',
    functions: ['load'],
    loops: 2,
    running: [],
    startedAt: new Date(NOW - 60_000),
    updatedAt: new Date(NOW - 1_000),
    allowInline: false,
    allowShell: false,
    sessionId: 's1',
    sessionTimeoutMs: 10_000,
    ...extra,
  };
}

function facts(
  extra: Partial<TaskFacts> = {},
  view: Partial<PlanView> = {},
  subject: Partial<TaskView> = {},
): TaskFacts {
  return {
    task: TASK,
    view: {
      plan: PLAN,
      status: status('running'),
      tasks: [taskView(subject)],
      done: 0,
      historyKept: false,
      ...view,
    },
    control: undefined,
    owner: undefined,
    concurrencyKey: undefined,
    limit: undefined,
    workers: [worker()],
    now: NOW,
    ...extra,
  };
}

describe('explainTask', () => {
  it('RUNNABLE when a live worker with the function has a free loop, WORKERS_BUSY when none has', () => {
    expect(explainTask(facts())).toMatchObject({
      code: 'RUNNABLE',
      details: { loops: 2, busy: 0 },
    });
    expect(explainTask(facts({ workers: [worker({ running: ['a', 'b'] })] }))).toMatchObject({
      code: 'WORKERS_BUSY',
      details: { loops: 2, busy: 2 },
    });
  });

  it('NO_WORKER_FOR_FUNCTION when no live worker registers the function (a stale one does not count), even during a retry delay', () => {
    expect(explainTask(facts({ workers: [worker({ functions: ['other'] })] })).code).toBe(
      'NO_WORKER_FOR_FUNCTION',
    );
    expect(
      explainTask(facts({ workers: [worker({ updatedAt: new Date(NOW - 60_000) })] })).code,
    ).toBe('NO_WORKER_FOR_FUNCTION');
    expect(explainTask(facts({ workers: [worker({ functions: [] })] })).code).toBe('RUNNABLE'); // an empty list runs anything
    const attempts = { failures: 1, nextTryAt: new Date(NOW + 5_000), lastError: 'x' };
    expect(explainTask(facts({ workers: [] }, {}, { state: 'retrying', attempts })).code).toBe(
      'NO_WORKER_FOR_FUNCTION',
    );
    expect(explainTask(facts({}, {}, { state: 'retrying', attempts }))).toMatchObject({
      code: 'RETRY_BACKOFF',
      details: { nextTryAt: attempts.nextTryAt },
    });
  });

  it('NO_WORKER_FOR_FUNCTION for a shell task while no live worker allows shell tasks, with how to start one; a worker that allows them runs it', () => {
    const shellTask = { fn: 'shell', params: [{ command: 'true' }] };
    const anyFunction = worker({ functions: [] }); // runs any registered function, but no shell task without allowShell
    const explanation = explainTask(facts({ workers: [anyFunction] }, {}, shellTask));
    expect(explanation).toMatchObject({
      code: 'NO_WORKER_FOR_FUNCTION',
      details: { fn: 'shell', workers: [{ id: 'w1', allowShell: false }] },
      remedy: {
        cli: expect.stringContaining(
          'zk-plan worker --parent /plans --functions <module> --allow-shell',
        ) as string,
      },
    });
    expect(explanation.message).toContain('no live worker allows shell tasks');
    expect(explanation.remedy?.api).toContain('allowShell: true');
    expect(
      explainTask(
        facts({ workers: [worker({ functions: ['load'], allowShell: true })] }, {}, shellTask),
      ).code,
    ).toBe('RUNNABLE');
    expect(explainTask(facts({ workers: [] }, {}, shellTask))).toMatchObject({
      code: 'NO_WORKER_FOR_FUNCTION',
      message: 'no live worker follows /plans',
    });
  });

  it('CONCURRENCY_LIMIT when every slot of its key is held', () => {
    const holders = [{ task: 'other', workerId: 'w1/1', at: new Date(NOW) }];
    expect(
      explainTask(facts({ concurrencyKey: 'api', limit: { limit: 1, holders } })),
    ).toMatchObject({
      code: 'CONCURRENCY_LIMIT',
      details: { key: 'api', limit: 1, holders },
    });
    expect(explainTask(facts({ concurrencyKey: 'api', limit: { limit: 2, holders } })).code).toBe(
      'RUNNABLE',
    );
  });

  it('OWNED by a live worker; OWNER_GONE when its session is no fresh worker’s, with when that session expires at the latest', () => {
    const owner = { workerId: 'w1/1', claimedAt: new Date(NOW - 5_000) };
    expect(
      explainTask(
        facts({ owner: { workerId: 'w1/1', session: 's1' } }, {}, { state: 'running', owner }),
      ).code,
    ).toBe('OWNED');
    const frozen = worker({ updatedAt: new Date(NOW - 20_000) });
    expect(
      explainTask(
        facts(
          { owner: { workerId: 'w1/1', session: 's1' }, workers: [frozen] },
          {},
          { state: 'running', owner },
        ),
      ),
    ).toMatchObject({
      code: 'OWNER_GONE',
      details: { expiresBy: new Date(NOW - 20_000 + 10_000) },
    });
    expect(
      explainTask(
        facts({ owner: { workerId: 'x/1', session: 's9' } }, {}, { state: 'running', owner }),
      ),
    ).toMatchObject({
      code: 'OWNER_GONE',
      details: { registered: false, session: 's9' },
    });
  });

  it('never calls an owner gone without an owner node: a finishing task nobody holds, or an owner that let go while it was read', () => {
    const owner = { workerId: 'w1/1', claimedAt: new Date(NOW - 5_000) };
    // The view said running, the owner node read after it was gone (the task finished meanwhile): the pool is live in the registry.
    const movedOn = explainTask(facts({ owner: undefined }, {}, { state: 'running', owner }));
    expect(movedOn.code).not.toBe('OWNER_GONE');
    expect(movedOn.message).toContain('let go of it while it was being read');
    const finishing = explainTask(facts({ owner: undefined }, {}, { state: 'finishing' }));
    expect(finishing).toMatchObject({ code: 'RUNNABLE', details: { finishing: true } });
  });

  it('the plan comes first: cancelled, failFast failed, paused, not ready', () => {
    const at = new Date(NOW);
    expect(
      explainTask(facts({ control: { state: 'cancelled', reason: 'r', at, abortRunning: true } }))
        .code,
    ).toBe('PLAN_CANCELLED');
    expect(explainTask(facts({ control: { state: 'paused', at, abortRunning: false } })).code).toBe(
      'PLAN_PAUSED',
    );
    expect(
      explainTask(facts({}, { status: status('failed', { failurePolicy: 'failFast' }) })).code,
    ).toBe('PLAN_FAILED');
    expect(explainTask(facts({}, { status: status('building') })).code).toBe('PLAN_NOT_READY');
  });

  it('names the task by the key its spec gave it, when it has one', () => {
    expect(explainTask(facts({}, {}, { state: 'blocked', key: 'report' }))).toMatchObject({
      key: 'report',
      code: 'BLOCKED',
    });
    expect(explainTask(facts({}, {}, { state: 'blocked' }))).not.toHaveProperty('key');
    // Its inputs too.
    const producer = taskView({
      task: `${PLAN}/task-0000000000`,
      name: 'task-0000000000',
      state: 'running',
      key: 'load-eu',
    });
    const waiting = facts(
      {},
      {
        tasks: [
          producer,
          taskView({ state: 'waiting', inputs: [producer.task], pendingInputs: 1 }),
        ],
      },
    );
    expect(explainTask(waiting)).toMatchObject({
      message: 'it waits for 1 input(s): load-eu (running)',
      details: { inputs: [{ task: producer.task, key: 'load-eu', state: 'running' }] },
    });
  });

  it('says what lets the task go on both as a call and as a zk-plan command, and keeps calls out of the message', () => {
    const paused = explainTask(
      facts({ control: { state: 'paused', at: new Date(NOW), abortRunning: false } }),
    );
    expect(paused.remedy).toEqual({
      api: `control.resume(${PLAN}) lets it run`,
      cli: `zk-plan resume ${PLAN} lets it run`,
    });
    const failed = explainTask(facts({}, {}, { state: 'failed' }));
    expect(failed.remedy).toEqual({
      api: `retryFailed(${PLAN}) runs it again`,
      cli: `zk-plan retry ${PLAN} runs it again`,
    });
    const notReady = explainTask(facts({}, { status: status('building') }));
    expect(notReady.remedy?.api).toBe(`markAsReady(${PLAN}) lets workers take its tasks`);
    expect(notReady.remedy?.cli).toContain(`zk-plan rm ${PLAN}`);
    for (const explanation of [paused, failed, notReady])
      expect(explanation.message).not.toMatch(/[a-z][A-Za-z]*\(/);
    expect(explainTask(facts({}, {}, { state: 'blocked' })).remedy).toBeUndefined();
  });

  it('WAITING_FOR_INPUTS names its unfinished inputs; BLOCKED, FAILED, and DONE for a task no longer in the plan', () => {
    const producer = taskView({
      task: `${PLAN}/task-0000000000`,
      name: 'task-0000000000',
      state: 'running',
    });
    const waiting = facts(
      {},
      {
        tasks: [
          producer,
          taskView({ state: 'waiting', inputs: [producer.task], pendingInputs: 1 }),
        ],
      },
    );
    expect(explainTask(waiting)).toMatchObject({
      code: 'WAITING_FOR_INPUTS',
      details: { pendingInputs: 1, inputs: [{ task: producer.task, state: 'running' }] },
    });
    expect(
      explainTask(facts({}, {}, { state: 'blocked', blockedReason: 'input from failed task-0' }))
        .code,
    ).toBe('BLOCKED');
    expect(explainTask(facts({}, {}, { state: 'failed' })).code).toBe('FAILED');
    expect(explainTask(facts({}, { tasks: [] })).code).toBe('DONE');
  });
});

describe('explainPlanFrom', () => {
  it('groups the unfinished tasks by code, most tasks first', () => {
    const view: PlanView = {
      plan: PLAN,
      status: status('running'),
      tasks: [],
      done: 0,
      historyKept: false,
    };
    const make = (task: string, code: 'RUNNABLE' | 'WORKERS_BUSY' | 'DONE') => ({
      task,
      code,
      message: code,
      details: {},
    });
    const summary = explainPlanFrom(view, [
      make('a', 'WORKERS_BUSY'),
      make('b', 'WORKERS_BUSY'),
      make('c', 'RUNNABLE'),
      make('d', 'DONE'),
    ]);
    expect(summary.reasons).toEqual([
      { code: 'WORKERS_BUSY', message: 'WORKERS_BUSY', tasks: ['a', 'b'] },
      { code: 'RUNNABLE', message: 'RUNNABLE', tasks: ['c'] },
    ]);
    expect(summary.message).toBe('it is running: 2 task(s) WORKERS_BUSY, 1 task(s) RUNNABLE');
  });
});
