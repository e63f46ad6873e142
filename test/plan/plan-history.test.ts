/**
 * Plans keep their history by default (issue 21): a completed and a failed plan still show every
 * task with its state, call, attempts, worker and times; a task finished by a second worker after
 * the first died has its record whatever write the first died before; records are bounded when
 * written and checked when read back (a forged node costs a reader nothing and breaks no view).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PermanentError } from '../../src/errors/task-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { MAX_VALUE_BYTES, encodeValue } from '../../src/serialization/codec.js';
import {
  MAX_HISTORY_RECORD_BYTES,
  encodeHistoryRecord,
  parseHistoryRecord,
  type TaskHistoryRecord,
} from '../../src/store/task-history.js';
import {
  MemoryZooKeeper,
  type OperationScheduler,
  type ScheduledOperation,
} from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const PATH = '/plans/plan-0000000001/history/task-0000000001';
const WRITES: ReadonlySet<string> = new Set(['create', 'setData', 'delete']);

const functions = (): FunctionRegistry =>
  new FunctionRegistry()
    .register('value', (ctx) => ctx.params[0] as number)
    .register('sum', (_ctx, ...inputs: number[]) => inputs.reduce((a, b) => a + b, 0))
    .register('boom', () => {
      throw new PermanentError('the disk is full', { code: 'DISK_FULL' });
    });

describe('the history of a finished plan', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  function open(server: MemoryZooKeeper, name: string): MemoryProcess {
    const proc = memoryProcess(server, name, functions());
    processes.push(proc);
    return proc;
  }

  it('a completed plan shows every task done, with its call, inputs, worker, start, end and duration; the counts agree everywhere', async () => {
    const proc = open(new MemoryZooKeeper(), 'p');
    const plan = await proc.zkPlan.createPlan(PARENT); // no option: history is kept
    const [a, b, total] = (await proc.zkPlan.addTasks(plan, [
      { task: call('value', 1) },
      { task: call('value', 2) },
      { task: call('sum'), args: [0, 1] },
    ])) as [string, string, string];
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });

    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.historyKept).toBe(true);
    expect(
      view.tasks.map(({ task, state, fn, params, inputs }) => [task, state, fn, params, inputs]),
    ).toEqual([
      [a, 'done', 'value', [1], []],
      [b, 'done', 'value', [2], []],
      [total, 'done', 'sum', [], [a, b]],
    ]);
    for (const task of view.tasks) {
      expect(task.workerId).toMatch(/\/\d+$/);
      expect(task.finishedAt?.getTime()).toBeGreaterThanOrEqual(
        task.startedAt?.getTime() ?? Number.NaN,
      );
      expect(task.durationMs).toBe(
        (task.finishedAt?.getTime() ?? 0) - (task.startedAt?.getTime() ?? 0),
      );
    }
    expect(view.status.counts).toMatchObject({ total: 3, done: 3, remaining: 0 });
    expect((await proc.zkPlan.plans.status(plan)).counts).toEqual(view.status.counts);
    expect((await proc.zkPlan.plans.list(PARENT))[0]).toMatchObject({
      done: 3,
      historyKept: true,
      status: { counts: view.status.counts },
    });
  });

  it('a failed plan shows its failed task with its error and attempts, the blocked one, and the done ones', async () => {
    const proc = open(new MemoryZooKeeper(), 'p');
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 2, initialDelayMs: 0 });
    const [ok, failing, blocked] = (await proc.zkPlan.addTasks(plan, [
      { task: call('value', 1) },
      { task: call('boom') },
      { task: call('sum'), args: [1] },
    ])) as [string, string, string];
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await expect(proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow(
      /failed/,
    );
    const view = await proc.zkPlan.plans.describe(plan);
    const byTask = new Map(view.tasks.map((task) => [task.task, task]));
    expect(byTask.get(ok)).toMatchObject({ state: 'done', workerId: expect.any(String) });
    expect(byTask.get(failing)).toMatchObject({
      state: 'failed',
      failedTries: 1,
      failure: { code: 'DISK_FULL', attempts: 1 },
      workerId: expect.any(String),
      finishedAt: expect.any(Date),
    });
    expect(byTask.get(blocked)).toMatchObject({ state: 'blocked', inputs: [failing] });
    expect(view.status).toMatchObject({
      state: 'failed',
      counts: { total: 3, done: 1, failed: 1, blocked: 1 },
    });
    expect((await proc.zkPlan.plans.status(plan)).counts).toEqual(view.status.counts);
  });

  it('a task whose worker died right before any one of its writes, finished by another worker, has its done record', async () => {
    let completed = false;
    for (let crashAt = 1; !completed; crashAt++) {
      expect(crashAt, 'the worker never finished').toBeLessThan(100);
      let victim: MemoryProcess | undefined;
      let writes = 0;
      let crashed = false;
      const scheduler: OperationScheduler = {
        enqueue(operation: ScheduledOperation) {
          queueMicrotask(() => {
            if (
              victim !== undefined &&
              operation.live &&
              operation.clientName === victim.name &&
              WRITES.has(operation.op) &&
              ++writes === crashAt
            ) {
              crashed = true;
              const session = victim.zk.sessionId;
              victim.zk.crash();
              if (session !== undefined) server.expireSession(session);
              return;
            }
            operation.apply();
          });
        },
      };
      const server = new MemoryZooKeeper({ scheduler });
      const builder = open(server, 'builder');
      const plan = await builder.zkPlan.createPlan(PARENT);
      const [first, second] = (await builder.zkPlan.addTasks(plan, [
        { task: call('value', 5), options: { keepResult: true } },
        { task: call('sum'), args: [0] },
      ])) as [string, string];
      await builder.zkPlan.markAsReady(plan);
      victim = memoryProcess(server, 'victim', functions());
      victim.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
      const finished = builder.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
      const crashSeen = async (): Promise<void> => {
        while (!crashed) await pause(1);
      };
      await Promise.race([finished, crashSeen()]);
      if (crashed)
        builder.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
      else completed = true;
      const survivor = crashed ? undefined : victim;
      victim = undefined; // no crash from here on: a survivor's later writes (its registry, its stop) go through
      await finished;
      const view = await builder.zkPlan.plans.describe(plan);
      expect(
        view.tasks.map(({ task, state }) => [task, state]),
        `crash before write ${crashAt}`,
      ).toEqual([
        [first, 'done'],
        [second, 'done'],
      ]);
      await survivor?.zkPlan.close();
      await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
    }
  });

  it('a plan created with { history: false } keeps none: its finished tasks are not listed, and `done` is not counted', async () => {
    const proc = open(new MemoryZooKeeper(), 'p');
    const plan = await proc.zkPlan.createPlan(PARENT, { history: false });
    await proc.zkPlan.addTask(plan, call('value', 1));
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view).toMatchObject({
      historyKept: false,
      tasks: [],
      status: { state: 'completed', counts: { total: 0, done: 0 } },
    });
    expect(await proc.zk.exists(`${plan}/history`)).toBeUndefined();
  });

  it('a forged node under the history is left out: the view of the plan is whole', async () => {
    const server = new MemoryZooKeeper();
    const proc = open(server, 'p');
    const plan = await proc.zkPlan.createPlan(PARENT);
    const task = await proc.zkPlan.addTask(plan, call('value', 1));
    await proc.zkPlan.markAsReady(plan);
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await proc.zk.create(
      `${plan}/history/task-0000000099`,
      encodeValue(
        { state: 'done', fn: 'x', outputs: 'not a list', finishedAt: 'yesterday' },
        'forged',
      ),
    );
    await proc.zk.create(`${plan}/history/task-0000000098`, Buffer.from('{not json'));
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.tasks.map(({ task: path, state }) => [path, state])).toEqual([[task, 'done']]);
    expect(view.status.counts).toMatchObject({ total: 1, done: 1 });
  });
});

describe('history records: bounded when written, checked when read', () => {
  const at = new Date('2026-11-26T10:00:00Z');
  const records: TaskHistoryRecord[] = [
    {
      state: 'done',
      fn: 'f',
      params: [1, 'a'],
      outputs: ['/p/plan-1/task-2/dep-3'],
      keepResult: true,
      failedTries: 1,
      startedAt: at,
      finishedAt: at,
      workerId: 'w/1',
    },
    {
      state: 'done',
      fn: 'f',
      params: [],
      outputs: [],
      keepResult: false,
      failedTries: 0,
      finishedAt: at,
    },
    {
      state: 'failed',
      fn: 'f',
      params: [],
      outputs: [],
      keepResult: false,
      failedTries: 3,
      key: 'load',
      failure: {
        type: 'Error',
        message: 'm',
        code: 'C',
        stack: 's',
        retryable: false,
        attempts: 3,
        workerId: 'w/1',
        at,
      },
    },
    {
      state: 'cancelled',
      fn: 'f',
      params: [],
      outputs: [],
      keepResult: false,
      failedTries: 0,
      was: 'running',
      cancelledAt: at,
      workerId: 'w/2',
      startedAt: at,
    },
    {
      state: 'unstarted',
      fn: 'f',
      params: [],
      outputs: [],
      keepResult: false,
      failedTries: 0,
      was: 'blocked',
      cancelledAt: at,
    },
  ];

  it('reads back every kind of record as written', () => {
    for (const record of records)
      expect(parseHistoryRecord(PATH, encodeHistoryRecord(record, PATH))).toEqual(record);
  });

  it('keeps a record over one znode without its params and outputs, marked, and within one znode', () => {
    const huge: TaskHistoryRecord = {
      ...(records[2] as TaskHistoryRecord),
      params: ['x'.repeat(MAX_VALUE_BYTES)],
      outputs: ['/dep'],
    };
    const encoded = encodeHistoryRecord(huge, PATH);
    expect(encoded.length).toBeLessThanOrEqual(MAX_HISTORY_RECORD_BYTES);
    const read = parseHistoryRecord(PATH, encoded);
    expect(read).toMatchObject({
      state: 'failed',
      fn: 'f',
      key: 'load',
      outputs: [],
      omitted: true,
      failure: { code: 'C', attempts: 3 },
    });
    expect(read).not.toHaveProperty('params');
    const manyOutputs: TaskHistoryRecord = {
      ...(records[0] as TaskHistoryRecord),
      outputs: Array.from({ length: 50_000 }, (_, index) => `/plans/plan-1/task-${index}/dep-1`),
    };
    expect(parseHistoryRecord(PATH, encodeHistoryRecord(manyOutputs, PATH))).toMatchObject({
      state: 'done',
      outputs: [],
      omitted: true,
    });
  });

  it('refuses a node over one znode before decoding it, and any field of the wrong type', () => {
    const oversized = encodeValue(
      { ...records[0], params: ['x'.repeat(MAX_VALUE_BYTES)] },
      'forged',
      PATH,
      Number.POSITIVE_INFINITY,
    );
    expect(oversized.length).toBeGreaterThan(MAX_HISTORY_RECORD_BYTES);
    expect(parseHistoryRecord(PATH, oversized)).toBeUndefined();
    const forged: unknown[] = [
      null,
      'done',
      { ...records[0], state: 'exploded' },
      { ...records[0], fn: 7 },
      { ...records[0], outputs: [1] },
      { ...records[0], params: 'a' },
      { ...records[0], failedTries: -1 },
      { ...records[0], finishedAt: 'today' },
      { ...records[0], workerId: 1 },
      {
        ...records[2],
        failure: { ...(records[2] as { failure: object }).failure, attempts: 'three' },
      },
      { ...records[3], was: 'sleeping' },
      { ...records[4], cancelledAt: 'now' },
    ];
    for (const value of forged)
      expect(parseHistoryRecord(PATH, encodeValue(value, 'forged'))).toBeUndefined();
    expect(parseHistoryRecord(PATH, Buffer.from('{not json'))).toBeUndefined();
    expect(parseHistoryRecord(PATH, null)).toBeUndefined();
  });
});
