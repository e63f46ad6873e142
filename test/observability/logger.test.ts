import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ZkError } from '../../src/errors/zk-error.js';
import { PermanentError, TaskExecutionError } from '../../src/errors/task-errors.js';
import { plainLog } from '../../src/cli/worker-log.js';
import { createLogger, logWorkerEvents, serializeError } from '../../src/observability/logger.js';
import type { ZkPlan } from '../../src/zk-plan.js';
import type {
  ObservedZkClient,
  ObservedZkPlan,
  ZkOperationListener,
} from '../../src/observability/observed.js';
import type { ZkPlanEvents } from '../../src/worker/worker-events.js';
import type {
  SessionState,
  ZkClientEvents,
  ZkOperationCounts,
} from '../../src/zk/zk-client-types.js';

class FakeZk extends EventEmitter<ZkClientEvents> implements ObservedZkClient {
  state: SessionState = 'connected';
  readonly counts: ZkOperationCounts = { reads: 0, writes: 0 };
  onOperation: ZkOperationListener | undefined;

  setState(state: SessionState): void {
    this.state = state;
    this.emit('state', state);
  }
}

class FakeZkPlan extends EventEmitter<ZkPlanEvents> implements ObservedZkPlan {
  readonly zk = new FakeZk();
}

/** A pino destination that keeps each JSON line, parsed. */
function jsonLines(): { write(line: string): void; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    write(chunk: string) {
      for (const line of chunk.split('\n'))
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  };
}

const PLAN = '/plans/plan-0000000001';
const TASK = `${PLAN}/task-0000000007`;
const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

describe('createLogger', () => {
  it('writes JSON lines with level, time, msg and the fields given to the destination', () => {
    const destination = jsonLines();
    const logger = createLogger({ pretty: false, destination, base: { service: 'etl' } });
    logger.info({ task: TASK }, 'hello');
    logger.debug('not shown at the default level');
    expect(destination.lines).toHaveLength(1);
    expect(destination.lines[0]).toMatchObject({
      level: LEVEL.info,
      msg: 'hello',
      task: TASK,
      service: 'etl',
      pid: process.pid,
    });
    expect(typeof destination.lines[0]?.['time']).toBe('number');
  });

  it('honours the level, and refuses an unknown one', () => {
    const destination = jsonLines();
    createLogger({ pretty: false, destination, level: 'debug' }).debug('shown');
    expect(destination.lines.map((line) => line['msg'])).toEqual(['shown']);
    expect(() => createLogger({ level: 'loud' })).toThrow(RangeError);
    expect(
      createLogger({ level: 'silent', pretty: false, destination }).isLevelEnabled('error'),
    ).toBe(false);
  });

  it('pretty: human-readable text through pino-pretty, not JSON', () => {
    let text = '';
    const logger = createLogger({
      pretty: true,
      destination: { write: (chunk: string) => void (text += chunk) },
    });
    logger.warn({ task: TASK }, 'pretty line');
    // pino-pretty writes asynchronously through a stream: flush it.
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        expect(text).toMatch(/WARN.*pretty line/);
        expect(text).toContain(`task: "${TASK}"`);
        expect(() => JSON.parse(text)).toThrow();
        resolve();
      }, 50),
    );
  });
});

describe('serializeError', () => {
  it('keeps type, message, code, path, stack and the cause', () => {
    const cause = new ZkError('create', -110, '/x/owner');
    const error = new PermanentError('no such customer', { code: 'NO_SUCH_CUSTOMER', cause });
    const serialized = serializeError(error);
    expect(serialized).toMatchObject({
      type: 'PermanentError',
      message: 'no such customer',
      code: 'NO_SUCH_CUSTOMER',
    });
    expect(typeof serialized === 'object' && serialized.stack).toMatch(/no such customer/);
    expect(typeof serialized === 'object' && serialized.cause).toMatchObject({
      type: 'ZkError',
      code: 'NODE_EXISTS',
      path: '/x/owner',
    });
    expect(serializeError('a string')).toBe('a string');
  });
});

describe('logWorkerEvents', () => {
  function setUp(level = 'debug'): {
    plan: FakeZkPlan;
    lines: Record<string, unknown>[];
    stop: () => void;
  } {
    const plan = new FakeZkPlan();
    const destination = jsonLines();
    const stop = logWorkerEvents(plan, createLogger({ pretty: false, destination, level }));
    return { plan, lines: destination.lines, stop };
  }

  it('logs a claim at debug, a start and a completion at info, each with plan, plan name, task, key, fn, attempt, workerId (and durationMs)', () => {
    const { plan, lines } = setUp();
    const labels = { planName: 'nightly', key: 'eu', fn: 'load', attempt: 2, maxAttempts: 3 };
    plan.emit('task:claimed', { task: TASK, plan: PLAN, workerId: 'host:1/1' });
    plan.emit('task:started', { task: TASK, plan: PLAN, workerId: 'host:1/1', ...labels });
    plan.emit('task:completed', {
      task: TASK,
      plan: PLAN,
      workerId: 'host:1/1',
      durationMs: 12.34567,
      reusedResult: false,
      ...labels,
    });
    const named = `${TASK} (key eu, fn load, plan nightly)`;
    expect(lines).toEqual([
      expect.objectContaining({
        level: LEVEL.debug,
        event: 'task:claimed',
        plan: PLAN,
        task: TASK,
        workerId: 'host:1/1',
        msg: `task claimed: ${TASK}`,
      }),
      expect.objectContaining({
        level: LEVEL.info,
        event: 'task:started',
        plan: PLAN,
        task: TASK,
        workerId: 'host:1/1',
        ...labels,
        msg: `task started: ${named}, attempt 2/3`,
      }),
      expect.objectContaining({
        level: LEVEL.info,
        event: 'task:completed',
        plan: PLAN,
        task: TASK,
        workerId: 'host:1/1',
        ...labels,
        durationMs: 12.346,
        reusedResult: false,
        msg: `task completed: ${named} in 12 ms`,
      }),
    ]);
  });

  it('logs a failure that will be retried at warn, with attempt n/max, nextTryAt and the error, its stack left out above debug level', () => {
    const nextTryAt = new Date(Date.now() + 2_000);
    const error = Object.assign(new Error('flaky'), { code: 'E_FLAKY' });
    const failure = {
      task: TASK,
      plan: PLAN,
      workerId: 'w/1',
      fn: 'load',
      error,
      charged: true,
      final: false,
      attempts: 1,
      attempt: 1,
      maxAttempts: 3,
      nextTryAt,
    };
    for (const level of ['info', 'debug']) {
      const { plan, lines } = setUp(level);
      plan.emit('task:failed', failure);
      expect(lines).toHaveLength(1);
      const line = lines[0] as Record<string, unknown>;
      expect(line).toMatchObject({
        level: LEVEL.warn,
        event: 'task:failed',
        plan: PLAN,
        task: TASK,
        fn: 'load',
        workerId: 'w/1',
        attempt: 1,
        maxAttempts: 3,
        charged: true,
        final: false,
        nextTryAt: nextTryAt.toISOString(),
        error: { type: 'Error', message: 'flaky', code: 'E_FLAKY' },
        msg: expect.stringMatching(
          new RegExp(
            `^task failed: ${TASK} \\(fn load\\), attempt 1/3, retrying at \\d\\d:\\d\\d:\\d\\d \\(in [12]\\.\\d s\\): flaky$`,
          ),
        ),
      });
      const stack = (line['error'] as { stack?: string }).stack;
      if (level === 'info') expect(stack).toBeUndefined();
      else expect(stack).toMatch(/^Error: flaky\n {4}at .*logger\.test\.ts/);
    }
  });

  it('logs a final failure at error with the stack of the task code only; the message of a TaskExecutionError once, without the task path again', () => {
    const { plan, lines } = setUp('info');
    const thrown = new PermanentError('bad input');
    const error = new TaskExecutionError(TASK, 'bad input', thrown);
    plan.emit('task:failed', {
      task: TASK,
      plan: PLAN,
      workerId: 'w/1',
      error,
      charged: true,
      final: true,
      attempts: 1,
      attempt: 1,
      maxAttempts: 3,
    });
    expect(lines[0]).toMatchObject({
      level: LEVEL.error,
      final: true,
      attempt: 1,
      error: { type: 'PermanentError', message: 'bad input', code: 'PERMANENT' },
      msg: `task failed for good: ${TASK}, attempt 1/3, not retried (a permanent error): bad input`,
    });
    expect(lines[0]).not.toHaveProperty('nextTryAt');
    const stack = (lines[0]?.['error'] as { stack: string }).stack;
    expect(stack).toMatch(/logger\.test\.ts/); // the test is the task's code here
    expect(stack).not.toMatch(/[/\\]src[/\\]|node:internal/); // no frame of zk-plan itself, none of Node's
  });

  it('logs a try given back uncharged at warn, saying why, and one aborted by a pause or cancel at info', () => {
    const { plan, lines } = setUp();
    const base = {
      task: TASK,
      plan: PLAN,
      workerId: 'w/1',
      charged: false,
      final: false,
      attempt: 1,
      maxAttempts: 3,
    };
    plan.emit('task:failed', { ...base, error: new Error('aborted'), givenBack: 'drain' });
    plan.emit('task:failed', { ...base, error: new Error('aborted'), givenBack: 'paused' });
    plan.emit('task:failed', {
      ...base,
      error: new ZkError('getData', -4, TASK),
      givenBack: 'given-back',
    });
    expect(lines.map((line) => [line['level'], line['givenBack'], line['attempt']])).toEqual([
      [LEVEL.warn, 'drain', 1],
      [LEVEL.info, 'paused', 1],
      [LEVEL.warn, 'given-back', 1],
    ]);
    expect(lines[0]?.['msg']).toMatch(/^task released on drain: /);
    expect(lines[1]?.['msg']).toMatch(/^task aborted, plan paused: /);
    expect(lines[2]?.['msg']).toMatch(/^task given back, not charged: .*: ZooKeeper/);
  });

  it('logs idle rounds at debug and worker errors at error', () => {
    const { plan, lines } = setUp();
    plan.emit('worker:idle', { workerId: 'w/2', round: 3, sleepMs: 337.5 });
    plan.emit('worker:error', { workerId: 'w/2', error: new ZkError('getChildren', -4, '/plans') });
    expect(lines[0]).toMatchObject({
      level: LEVEL.debug,
      event: 'worker:idle',
      workerId: 'w/2',
      round: 3,
      sleepMs: 337.5,
    });
    expect(lines[1]).toMatchObject({
      level: LEVEL.error,
      event: 'worker:error',
      workerId: 'w/2',
      error: { type: 'ZkError', code: 'CONNECTION_LOSS', path: '/plans' },
    });
  });

  it('logs session state changes, starts and expiries', () => {
    const { plan, lines } = setUp();
    plan.zk.setState('suspended');
    plan.zk.setState('expired');
    plan.zk.emit('session:expired', { generation: 1, id: '1a' });
    plan.zk.emit('session:started', { generation: 2, id: '2b' });
    plan.zk.setState('connected');
    expect(lines).toEqual([
      expect.objectContaining({
        level: LEVEL.warn,
        event: 'session:state',
        state: 'suspended',
        previous: 'connected',
      }),
      expect.objectContaining({
        level: LEVEL.warn,
        event: 'session:state',
        state: 'expired',
        previous: 'suspended',
      }),
      expect.objectContaining({
        level: LEVEL.warn,
        event: 'session:expired',
        sessionId: '1a',
        generation: 1,
      }),
      expect.objectContaining({
        level: LEVEL.info,
        event: 'session:started',
        sessionId: '2b',
        generation: 2,
      }),
      expect.objectContaining({
        level: LEVEL.info,
        event: 'session:state',
        state: 'connected',
        previous: 'expired',
      }),
    ]);
  });

  it('a job worker logs one line per item taken (a failover said so), given up or lost, per new assignment, and per job error', () => {
    const { plan, lines } = setUp();
    const item = { jobs: '/jobs', job: 'mail', workerId: 'jw-1' };
    plan.emit('job:rebalance', { jobs: '/jobs', epoch: 4, moved: 2 });
    plan.emit('job:item', { ...item, item: 'a', state: 'started', token: 7, failover: false });
    plan.emit('job:item', { ...item, item: 'b', state: 'started', token: 9, failover: true });
    plan.emit('job:item', { ...item, item: 'a', state: 'stopped', reason: 'released' });
    plan.emit('job:item', { ...item, item: 'b', state: 'stopped', reason: 'lease-lost' });
    plan.emit('job:error', { ...item, error: new Error('poll failed') });
    expect(lines.map((line) => [line['level'], line['event'], line['msg']])).toEqual([
      [
        LEVEL.info,
        'job:rebalance',
        'job manager: new assignment under /jobs (epoch 4, 2 item(s) moved)',
      ],
      [LEVEL.info, 'job:item', 'job mail item a taken (token 7)'],
      [
        LEVEL.info,
        'job:item',
        "job mail item b taken (token 9): failover, the previous holder's lease ran out",
      ],
      [LEVEL.info, 'job:item', 'job mail item a given up (released)'],
      [LEVEL.warn, 'job:item', 'job mail item b lost: lease-lost; its run was aborted'],
      [LEVEL.error, 'job:error', 'job mail: poll failed'],
    ]);
    expect(lines[2]).toMatchObject({
      jobs: '/jobs',
      job: 'mail',
      item: 'b',
      workerId: 'jw-1',
      token: 9,
      failover: true,
    });
  });

  it('a job run: one line when it ends (a failure as a warning, saying what comes next), per misfire, and per ctx.log line with the share', () => {
    const { plan, lines } = setUp();
    const run = {
      jobs: '/jobs',
      job: 'mail',
      workerId: 'jw-1',
      run: 'run-1795737600000-jw-1-3',
      items: [{ id: 'a', token: 7 }],
      attempt: 2,
    };
    plan.emit('job:run', { ...run, cause: 'tick', state: 'started' });
    plan.emit('job:run', {
      ...run,
      cause: 'retry',
      state: 'ended',
      outcome: 'failed',
      durationMs: 12,
      error: new Error('mailbox down'),
      final: false,
    });
    plan.emit('job:misfire', {
      jobs: '/jobs',
      job: 'mail',
      workerId: 'jw-1',
      tick: new Date(Date.UTC(2026, 10, 27)),
      handling: 'skipped',
    });
    plan.emit('job:log', { ...run, level: 'warn', msg: 'slow mailbox', fields: { ms: 900 } });
    expect(lines.map((line) => [line['level'], line['event'], line['msg']])).toEqual([
      [
        LEVEL.warn,
        'job:run',
        'job mail retry run run-1795737600000-jw-1-3 (try 2) failed after 12 ms: mailbox down; it is retried',
      ],
      [
        LEVEL.info,
        'job:misfire',
        "job mail: the tick of 2026-11-27T00:00:00.000Z came while the previous run still ran: skipped (misfire: 'skip')",
      ],
      [LEVEL.warn, 'job:log', 'job mail run run-1795737600000-jw-1-3 [a#7]: slow mailbox'],
    ]);
    expect(lines[0]).toMatchObject({ items: ['a#7'], final: false, outcome: 'failed' });
    expect(lines[2]).toMatchObject({ ms: 900, items: ['a#7'] });
  });

  it('the plain worker log has the same job lines', () => {
    const plain: string[] = [];
    const plan = new FakeZkPlan();
    plainLog('info', (line) => plain.push(line)).follow(plan as unknown as ZkPlan);
    plan.emit('job:item', {
      jobs: '/jobs',
      job: 'mail',
      workerId: 'jw-1',
      item: 'b',
      state: 'started',
      token: 9,
      failover: true,
    });
    plan.emit('job:item', {
      jobs: '/jobs',
      job: 'mail',
      workerId: 'jw-1',
      item: 'b',
      state: 'stopped',
      reason: 'session-expired',
    });
    plan.emit('job:rebalance', { jobs: '/jobs', epoch: 5, moved: 1 });
    expect(plain).toEqual([
      "zk-plan worker: job mail item b taken (token 9): failover, the previous holder's lease ran out",
      'zk-plan worker: job mail item b lost: session-expired; its run was aborted',
      'zk-plan worker: job manager: new assignment under /jobs (epoch 5, 1 item(s) moved)',
    ]);
  });

  it('at level info, leaves out claims and idle rounds', () => {
    const { plan, lines } = setUp('info');
    plan.emit('task:claimed', { task: TASK, plan: PLAN, workerId: 'w/1' });
    plan.emit('worker:idle', { workerId: 'w/1', round: 0, sleepMs: 100 });
    plan.emit('task:completed', {
      task: TASK,
      plan: PLAN,
      workerId: 'w/1',
      durationMs: 1,
      reusedResult: true,
    });
    expect(lines.map((line) => line['event'])).toEqual(['task:completed']);
    expect(lines[0]).toMatchObject({ reusedResult: true });
  });

  it('the function returned unsubscribes every listener', () => {
    const { plan, lines, stop } = setUp();
    stop();
    stop();
    plan.emit('task:claimed', { task: TASK, plan: PLAN, workerId: 'w/1' });
    plan.zk.setState('closed');
    expect(lines).toEqual([]);
    for (const event of [
      'task:claimed',
      'task:completed',
      'task:failed',
      'worker:idle',
      'worker:error',
      'job:item',
      'job:rebalance',
      'job:error',
    ] as const)
      expect(plan.listenerCount(event)).toBe(0);
    for (const event of ['state', 'session:started', 'session:expired', 'auth:failed'] as const)
      expect(plan.zk.listenerCount(event)).toBe(0);
  });
});
