import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { terminalLog } from '../../src/cli/worker-log.js';
import { PermanentError, TaskExecutionError } from '../../src/errors/task-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { createLogger, logWorkerEvents } from '../../src/observability/logger.js';
import { stackLines } from '../../src/observability/task-log-lines.js';
import type { ZkPlan } from '../../src/zk-plan.js';
import { decodeValue, encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';
import type { ZkPlanEvents } from '../../src/worker/worker-events.js';
import { refusedSchedule } from '../../src/schedule/schedule-definition.js';
import { API_CALL } from '../support/api-call-names.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';

const PLAN = '/etl/plan-0000000001';
const TASK = `${PLAN}/task-0000000003`;
const NOW = new Date(2030, 0, 2, 3, 4, 5, 6);
const LABELS = { key: 'load-eu', fn: 'load', planName: 'nightly' } as const;
const NAMED = `${TASK} (key load-eu, fn load, plan nightly)`;
/** Where this package lies: the frames of zk-plan itself are under it. */
const ROOT = process.cwd();

/** A worker log (plain unless told) writing into `lines`, following a stand-in ZkPlan. */
function follow(
  level: string,
  format: 'plain' | 'pretty' = 'plain',
): { plan: EventEmitter<ZkPlanEvents>; lines: string[] } {
  const lines: string[] = [];
  const plan = Object.assign(new EventEmitter<ZkPlanEvents>(), { zk: new EventEmitter() });
  terminalLog(level, { format, writeLine: (line) => lines.push(line), now: () => NOW }).follow(
    plan as unknown as ZkPlan,
  );
  return { plan, lines };
}

/** An error as a task function throws it, wrapped as the worker sees it, with a stack of our choosing. */
function thrown(message: string, stack: string): TaskExecutionError {
  const error = new Error(message);
  error.stack = stack;
  return new TaskExecutionError(TASK, message, error);
}

/** The stack of an error thrown by a task function run by zk-plan: frames of the task's code, of zk-plan, of its dependencies and of Node. */
const MIXED_STACK = [
  'Error: the disk is full',
  '    at broken (file:///app/tasks.mjs:4:25)',
  `    at <anonymous> (${ROOT}/src/exec/execute-function.ts:35:67)`,
  `    at guard (file://${ROOT}/dist/exec/execute-function.js:87:18)`,
  `    at Command.parseAsync (${ROOT}/node_modules/commander/lib/command.js:1104:5)`,
  '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
  '    at async Promise.all (index 0)',
  '    at load (/app/lib/load.js:10:3)',
].join('\n');

describe('the worker log for a person (plain and pretty)', () => {
  it('prints one line per task event, each worded apart, with the key, function, plan name and attempt n/max', () => {
    const { plan, lines } = follow('debug');
    const base = { task: TASK, plan: PLAN, workerId: 'host:1/1', ...LABELS };
    const failure = {
      ...base,
      error: thrown('the disk is full', 'Error: the disk is full'),
      attempt: 1,
      maxAttempts: 3,
    };
    plan.emit('task:claimed', { task: TASK, plan: PLAN, workerId: 'host:1/1' });
    plan.emit('task:started', { ...base, attempt: 1, maxAttempts: 3 });
    plan.emit('task:completed', {
      ...base,
      attempt: 1,
      maxAttempts: 3,
      durationMs: 1_234,
      reusedResult: false,
    });
    plan.emit('task:failed', {
      ...failure,
      charged: true,
      final: false,
      attempts: 1,
      nextTryAt: new Date(NOW.getTime() + 2_000),
    });
    plan.emit('task:failed', { ...failure, attempt: 3, charged: true, final: true, attempts: 3 });
    plan.emit('task:failed', { ...failure, charged: true, final: true, attempts: 1 });
    for (const givenBack of [
      'drain',
      'paused',
      'cancelled',
      'plan-failed',
      'session-expired',
      'given-back',
    ] as const) {
      plan.emit('task:failed', { ...failure, charged: false, final: false, givenBack });
    }
    const heads = lines.map((line) => line.split('\n')[0]);
    expect(heads).toEqual([
      `zk-plan worker: task claimed: ${TASK}`,
      `zk-plan worker: task started: ${NAMED}, attempt 1/3`,
      `zk-plan worker: task completed: ${NAMED} in 1.2 s`,
      `zk-plan worker: task failed: ${NAMED}, attempt 1/3, retrying at 03:04:07 (in 2.0 s): the disk is full`,
      `zk-plan worker: task failed for good: ${NAMED}, attempt 3/3: the disk is full`,
      `zk-plan worker: task failed for good: ${NAMED}, attempt 1/3, not retried (a permanent error): the disk is full`,
      `zk-plan worker: task released on drain: ${NAMED}, attempt 1/3, not charged: the worker stopped and its drain timeout passed before the task finished; another worker takes it`,
      `zk-plan worker: task aborted, plan paused: ${NAMED}, attempt 1/3, not charged: it runs again once the plan is resumed`,
      `zk-plan worker: task aborted, plan cancelled: ${NAMED}, attempt 1/3, not charged: the plan does not run again`,
      `zk-plan worker: task aborted, plan failed: ${NAMED}, attempt 1/3, not charged: another task of its failFast plan failed for good`,
      `zk-plan worker: task given up, session expired: ${NAMED}, attempt 1/3, not charged: another worker runs it`,
      `zk-plan worker: task given back, not charged: ${NAMED}, attempt 1/3: the disk is full`,
    ]);
    // Each kind of event says so in its own words, before the task (the two failures for good share theirs).
    const kinds = heads.map((head) => head?.slice(0, head.indexOf(`: ${TASK}`)));
    expect(new Set(kinds).size).toBe(kinds.length - 1);
    // The message the function threw is said once: not the TaskExecutionError's `Task <path> failed: …` around it.
    for (const head of heads) expect(head).not.toContain(`Task ${TASK} failed`);
  });

  it('leaves out claims at level info, and says "attempt n" when the policy is unknown', () => {
    const { plan, lines } = follow('info');
    plan.emit('task:claimed', { task: TASK, plan: PLAN, workerId: 'w' });
    plan.emit('task:started', { task: TASK, plan: PLAN, workerId: 'w', fn: 'load', attempt: 2 });
    expect(lines).toEqual([`zk-plan worker: task started: ${TASK} (fn load), attempt 2`]);
  });

  it('puts the stack below a task failed for good only, or below every failure at debug level', () => {
    const error = thrown('the disk is full', MIXED_STACK);
    const retried = {
      task: TASK,
      plan: PLAN,
      workerId: 'w',
      error,
      charged: true,
      final: false,
      attempt: 1,
      maxAttempts: 3,
      nextTryAt: NOW,
    };
    const info = follow('info');
    info.plan.emit('task:failed', retried);
    info.plan.emit('task:failed', { ...retried, attempt: 3, final: true });
    info.plan.emit('task:failed', { ...retried, charged: false, givenBack: 'drain' });
    expect(info.lines.map((entry) => entry.split('\n').length)).toEqual([1, 3, 1]);
    const debug = follow('debug');
    debug.plan.emit('task:failed', retried);
    debug.plan.emit('task:failed', { ...retried, charged: false, givenBack: 'drain' });
    expect(debug.lines.map((entry) => entry.split('\n').length)).toEqual([3, 3]);
  });

  it('the stack holds the frames of the task code only: none of zk-plan (src/, dist/, its node_modules) or of Node', () => {
    const cause = new Error('permission denied');
    cause.stack = `Error: permission denied\n    at open (/app/lib/fs.js:1:1)\n    at <anonymous> (${ROOT}/src/worker/perform-task.ts:1:1)`;
    const error = new Error('the disk is full', { cause });
    error.stack = MIXED_STACK;
    expect(stackLines(new TaskExecutionError(TASK, error.message, error))).toEqual([
      '    at broken (file:///app/tasks.mjs:4:25)',
      '    at load (/app/lib/load.js:10:3)',
      'caused by Error: permission denied',
      '    at open (/app/lib/fs.js:1:1)',
    ]);
    // An error of zk-plan itself has nothing of the task's code: no stack at all rather than zk-plan's frames.
    const own = new Error('malformed');
    own.stack = `Error: malformed\n    at parse (${ROOT}/src/exec/task-spec.ts:1:1)`;
    expect(stackLines(own)).toEqual([]);
  });

  it('says worker, scheduler and job errors in the words of the command (zk-plan schedule put, not schedules(parent).put)', () => {
    const { plan, lines } = follow('info');
    const refused = refusedSchedule('/schedules/nightly', 'its cron is not one');
    plan.emit('schedule:error', { schedules: '/schedules', error: refused });
    plan.emit('worker:error', { workerId: 'w', error: refused });
    plan.emit('job:error', { jobs: '/jobs', job: 'mail', workerId: 'w', error: refused });
    expect(refused.message).toMatch(API_CALL);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).not.toMatch(API_CALL);
      expect(line).toContain(
        '(zk-plan schedule put <file> --schedules /schedules) or remove it (zk-plan schedule rm nightly --schedules /schedules)',
      );
    }
  });

  it('a job run that failed is a warning saying what comes next; one that succeeded is no line; ctx.log lines name the run and the share', () => {
    const { plan, lines } = follow('info');
    const run = {
      jobs: '/jobs',
      job: 'mail',
      workerId: 'w',
      run: 'run-1795737600000-w-1',
      cause: 'tick' as const,
      attempt: 4,
      items: [{ id: 'a', token: 3 }],
      state: 'ended' as const,
    };
    plan.emit('job:run', { ...run, outcome: 'succeeded', durationMs: 5 });
    plan.emit('job:run', { ...run, outcome: 'failed', error: new Error('down'), final: true });
    plan.emit('job:log', { ...run, level: 'info', msg: 'polled 3 mails' });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(
      'job mail tick run run-1795737600000-w-1 (try 4) failed: down; no retry left before the next tick',
    );
    expect(lines[1]).toContain('job mail run run-1795737600000-w-1 [a#3]: polled 3 mails');
  });

  it('pretty lines start with the time and the level, coloured only when asked', () => {
    const { plan, lines } = follow('info', 'pretty');
    plan.emit('task:started', {
      task: TASK,
      plan: PLAN,
      workerId: 'w',
      fn: 'load',
      attempt: 1,
      maxAttempts: 2,
    });
    plan.emit('task:failed', {
      task: TASK,
      plan: PLAN,
      workerId: 'w',
      fn: 'load',
      error: new Error('x'),
      charged: true,
      final: true,
      attempt: 2,
      maxAttempts: 2,
    });
    expect(lines[0]).toBe(`[03:04:05.006] INFO  task started: ${TASK} (fn load), attempt 1/2`);
    expect(lines[1]?.split('\n')[0]).toBe(
      `[03:04:05.006] ERROR task failed for good: ${TASK} (fn load), attempt 2/2: x`,
    );
    const colored: string[] = [];
    const emitter = Object.assign(new EventEmitter(), { zk: new EventEmitter() });
    terminalLog('info', {
      format: 'pretty',
      colors: true,
      now: () => NOW,
      writeLine: (line) => colored.push(line),
    }).follow(emitter as unknown as ZkPlan);
    emitter.emit('task:started', { task: TASK, plan: PLAN, workerId: 'w', fn: 'load', attempt: 1 });
    expect(colored).toEqual([
      `[03:04:05.006] \x1b[32mINFO \x1b[39m task started: ${TASK} (fn load), attempt 1`,
    ]);
  });
});

/** Adds `fields` to the value of a node (a task's definition, a plan's settings), as the writers of keys and names do. */
async function addToValue(
  zk: MemoryZkClient,
  path: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const { data } = await zk.getData(path);
  await zk.setData(
    path,
    encodeValue(
      { ...(decodeValue(path, data) as Record<string, unknown>), ...fields },
      'test value',
      path,
    ),
  );
}

describe('a worker run, logged', () => {
  it('each try is a started line and one ending line naming the key and plan name; the stack of a failure for good has no zk-plan frame', async () => {
    const server = new MemoryZooKeeper();
    let flakyTries = 0;
    const functions = new FunctionRegistry()
      .register('flaky', () => {
        flakyTries += 1;
        if (flakyTries === 1) throw new Error('the disk is busy');
        return flakyTries;
      })
      .register('broken', () => {
        throw new PermanentError('no such customer');
      });
    const { zk, zkPlan } = memoryProcess(server, 'worker', functions);
    const plan = await zkPlan.createPlan('/etl', { maxAttempts: 2, initialDelayMs: 1 });
    const flaky = await zkPlan.addTask(plan, call('flaky'));
    const broken = await zkPlan.addTask(plan, call('broken'));
    await addToValue(zk, plan, { name: 'nightly' });
    await addToValue(zk, flaky, { key: 'eu' });
    await addToValue(zk, broken, { key: 'audit' });
    await zkPlan.markAsReady(plan);
    const lines: string[] = [];
    const stopPlain = terminalLog('info', { writeLine: (line) => lines.push(line) }).follow(
      zkPlan as unknown as ZkPlan,
    );
    const json: Record<string, unknown>[] = [];
    const destination = {
      write: (chunk: string): void => void json.push(JSON.parse(chunk) as Record<string, unknown>),
    };
    const stopJson = logWorkerEvents(zkPlan, createLogger({ pretty: false, destination }));
    const pool = zkPlan.startWorkers('/etl', { backoff: FAST_BACKOFF });
    await expect(zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 })).rejects.toThrow();
    await pool.stop();
    stopPlain();
    stopJson();
    await zkPlan.close();

    const of = (task: string): string[] => lines.filter((line) => line.includes(task));
    expect(of(flaky).map((line) => line.split(': ')[1])).toEqual([
      'task started',
      'task failed',
      'task started',
      'task completed',
    ]);
    expect(of(flaky)[1]).toContain(
      `${flaky} (key eu, fn flaky, plan nightly), attempt 1/2, retrying at`,
    );
    expect(of(flaky)[2]).toContain('attempt 2/2');
    const [brokenStart, brokenEnd] = of(broken);
    expect(brokenStart).toBe(
      `zk-plan worker: task started: ${broken} (key audit, fn broken, plan nightly), attempt 1/2`,
    );
    const [head, ...stack] = (brokenEnd ?? '').split('\n');
    expect(head).toBe(
      `zk-plan worker: task failed for good: ${broken} (key audit, fn broken, plan nightly), attempt 1/2, not retried (a permanent error): no such customer`,
    );
    expect(stack.length).toBeGreaterThan(0);
    expect(stack.every((frame) => frame.startsWith('    at '))).toBe(true);
    expect(stack.join('\n')).toContain('worker-log.test.ts'); // this file holds the task's code
    expect(stack.join('\n')).not.toMatch(/[/\\]src[/\\]|node:internal/);

    // JSON lines: every task line carries plan, plan name, task, key, fn, attempt and worker; completions and failures a duration.
    const taskLines = json.filter((line) =>
      ['task:started', 'task:completed', 'task:failed'].includes(line['event'] as string),
    );
    expect(taskLines).toHaveLength(6);
    for (const line of taskLines) {
      expect(line).toMatchObject({
        plan,
        planName: 'nightly',
        key: expect.any(String),
        fn: expect.any(String),
        attempt: expect.any(Number),
        maxAttempts: 2,
      });
      expect(line['workerId']).toEqual(expect.any(String));
      if (line['event'] !== 'task:started') expect(line['durationMs']).toEqual(expect.any(Number));
    }
  });
});
