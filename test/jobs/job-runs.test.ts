/**
 * A job's runs over the in-memory ZooKeeper, on real timers: the run history (`jobs.runs`), misfire
 * (a run longer than its period: one catch-up, never two at once; `misfire: 'skip'`), retries of a
 * run that threw with a doubling pause, failover of a run whose holder died in it (and
 * `failover: false`), and the history's bound. The pure parts (names, parsing, due times, pauses)
 * are at the end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  type JobContext,
  type JobDefinition,
  type ZkPlanEvents,
} from '../../src/index.js';
import { resolveJob } from '../../src/jobs/job-definition.js';
import {
  MAX_RUN_LOG_BYTES,
  MAX_RUN_LOG_LINES,
  keptLogLines,
  parseRunRecord,
  runError,
  runNodeName,
  runWorkerOf,
  runsBeyond,
  type JobRunRecord,
} from '../../src/jobs/job-run-record.js';
import { latestTickUpTo, nextDueTime, retryDelayMs } from '../../src/jobs/job-run-policy.js';
import { JobRunStore } from '../../src/jobs/job-run-store.js';
import { JobRunner } from '../../src/jobs/job-runner.js';
import { runnerHost } from './support/runner-host.js';
import { RunJournal } from '../../src/jobs/run-journal.js';
import { MalformedNodeError } from '../../src/errors/task-errors.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { jobNodes } from '../../src/zk/layout.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const JOBS = '/jobs';
const LEASE = { leaseMs: 600, pollMs: 100 } as const;
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function proc(server: MemoryZooKeeper, name: string, functions = new FunctionRegistry()) {
  const made = memoryProcess(server, name, functions);
  open.push(made);
  return made;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts the runs of a job function at once, and the most seen together. */
function overlapMeter(): { enter(): void; leave(): void; readonly most: number } {
  let now = 0;
  let most = 0;
  return {
    enter: () => {
      now += 1;
      most = Math.max(most, now);
    },
    leave: () => {
      now -= 1;
    },
    get most() {
      return most;
    },
  };
}

const JOB: JobDefinition = {
  name: 'mail',
  fn: 'poll',
  workPool: { items: ['a', 'b'] },
  mode: { everyMs: 60_000 },
};

describe('misfire: a tick that comes while the previous run of the share still runs', () => {
  it.each(['runOnce', 'skip'] as const)(
    "misfire '%s': a run longer than its period is followed by one catch-up run (runOnce) or none (skip), never two at once",
    async (misfire) => {
      const server = new MemoryZooKeeper();
      const meter = overlapMeter();
      let calls = 0;
      const functions = new FunctionRegistry().registerJob('poll', async () => {
        meter.enter();
        calls += 1;
        // The first run spans three ticks of its 200 ms period; the others are short.
        await pause(calls === 1 ? 700 : 10);
        meter.leave();
      });
      proc(server, 'worker', functions).zkPlan.startJobWorker(JOBS, LEASE);
      const jobs = proc(server, 'admin').zkPlan.jobs(JOBS);
      await jobs.define({ ...JOB, mode: { everyMs: 200 }, misfire });
      await expect
        .poll(async () => (await jobs.runs('mail')).runs.length, { timeout: 5_000 })
        .toBeGreaterThanOrEqual(4);
      const oldestFirst = [...(await jobs.runs('mail')).runs].reverse();
      const [long, next] = oldestFirst as [(typeof oldestFirst)[0], (typeof oldestFirst)[0]];
      expect(long.cause).toBe('tick');
      expect(long.misfire?.handling).toBe(misfire === 'skip' ? 'skipped' : 'caught-up');
      // The latest tick that came while it ran, however many did.
      const finished = Date.parse(long.finishedAt ?? '');
      const tick = Date.parse(long.misfire?.tick ?? '');
      expect(tick).toBeLessThanOrEqual(finished);
      expect(finished - tick).toBeLessThan(200);
      expect(Date.parse(long.firedAt ?? '') + 400).toBeLessThanOrEqual(tick);
      if (misfire === 'runOnce') {
        expect(next.cause).toBe('misfire');
        expect(next.firedAt).toBe(long.misfire?.tick);
        expect(Date.parse(next.startedAt) - finished).toBeLessThan(100); // at once, not at the next tick
        expect(oldestFirst.filter((run) => run.cause === 'misfire')).toHaveLength(1);
      } else {
        expect(next.cause).toBe('tick');
        expect(oldestFirst.some((run) => run.cause === 'misfire')).toBe(false);
      }
      expect(meter.most).toBe(1);
      const { counts } = await jobs.runs('mail');
      expect(counts.misfires).toBe(1);
      expect(counts.caughtUp).toBe(misfire === 'runOnce' ? 1 : 0);
    },
  );
});

describe('retries of a run that threw', () => {
  it('tries again up to `retries` times after a pause that doubles, then waits for the next tick; each failure is recorded and reported', async () => {
    const server = new MemoryZooKeeper();
    let calls = 0;
    const functions = new FunctionRegistry().registerJob('poll', () => {
      calls += 1;
      throw Object.assign(new Error(`mailbox down (${calls})`), { code: 'MAILBOX_DOWN' });
    });
    const worker = proc(server, 'worker', functions);
    const ended: ZkPlanEvents['job:run'][0][] = [];
    worker.zkPlan.on('job:run', (event) => {
      if (event.state === 'ended') ended.push(event);
    });
    const handle = worker.zkPlan.startJobWorker(JOBS, { ...LEASE, restartDelayMs: 50 });
    const jobs = proc(server, 'admin').zkPlan.jobs(JOBS);
    await jobs.define({ ...JOB, retries: 2 });
    await expect.poll(() => handle.held()['mail']?.length ?? 0).toBe(2);
    await jobs.trigger('mail');
    await expect.poll(() => ended.length, { timeout: 5_000 }).toBe(3);
    await pause(400); // no fourth try: the retries are used up, the next tick is a minute away
    expect(calls).toBe(3);
    const runs = [...(await jobs.runs('mail')).runs].reverse();
    expect(runs.map((run) => [run.cause, run.attempt, run.state])).toEqual([
      ['trigger', 1, 'failed'],
      ['retry', 2, 'failed'],
      ['retry', 3, 'failed'],
    ]);
    const gaps = runs
      .slice(1)
      .map((run, index) => Date.parse(run.startedAt) - Date.parse(runs[index]?.finishedAt ?? ''));
    expect(gaps[0]).toBeGreaterThanOrEqual(50);
    expect(gaps[1]).toBeGreaterThanOrEqual(100);
    expect(runs[2]?.error).toEqual({
      type: 'Error',
      message: 'mailbox down (3)',
      code: 'MAILBOX_DOWN',
    });
    expect(ended.map((event) => event.final)).toEqual([false, false, true]);
    expect(ended.every((event) => event.outcome === 'failed' && event.error instanceof Error)).toBe(
      true,
    );
    const { lastFailures } = await jobs.runs('mail');
    expect(Object.keys(lastFailures)).toEqual(['a', 'b']);
    expect(lastFailures['a']).toMatchObject({ run: runs[2]?.run, attempt: 3, worker: handle.id });
  });
});

describe('failover of a run whose holder died in it', () => {
  async function holderDiesMidRun(failover: boolean): Promise<{
    jobs: ReturnType<MemoryProcess['zkPlan']['jobs']>;
    runsOn: Map<string, JobContext[]>;
    takenAt: number;
  }> {
    const server = new MemoryZooKeeper();
    const runsOn = new Map<string, JobContext[]>();
    const functions = (name: string) =>
      new FunctionRegistry().registerJob('poll', async (ctx: JobContext) => {
        runsOn.set(name, [...(runsOn.get(name) ?? []), ctx]);
        await new Promise((resolve) =>
          ctx.signal.addEventListener('abort', resolve, { once: true }),
        );
      });
    // The first holder is not closed after the test: its client is crashed, so a close would wait on it forever.
    const first = memoryProcess(server, 'first', functions('first'));
    const firstHandle = first.zkPlan.startJobWorker(JOBS, LEASE);
    const jobs = proc(server, 'admin').zkPlan.jobs(JOBS);
    await jobs.define({ ...JOB, failover });
    await expect.poll(() => firstHandle.held()['mail']?.length ?? 0).toBe(2);
    await jobs.trigger('mail');
    await expect.poll(async () => (await jobs.runs('mail')).runs.length).toBe(1);
    first.zk.crash(); // kill -9: nothing more it sends lands, and it writes no end of its run
    first.zk.expireSessionOnServer();
    const second = proc(server, 'second', functions('second'));
    const secondHandle = second.zkPlan.startJobWorker(JOBS, LEASE);
    await expect.poll(() => secondHandle.held()['mail']?.length ?? 0, { timeout: 5_000 }).toBe(2);
    return { jobs, runsOn, takenAt: Date.now() };
  }

  it('the new holder runs the items again at once, not at the next tick; the history shows the run interrupted and failed over', async () => {
    const { jobs, runsOn } = await holderDiesMidRun(true);
    // Its run of both items; an earlier one of `a` alone, cut short when `b` was taken a pass
    // later, may come first (a failover run cut short by a change of share is run again).
    const running = (): JobContext[] =>
      (runsOn.get('second') ?? []).filter((ctx) => !ctx.signal.aborted);
    await expect.poll(() => running().length, { timeout: 2_000 }).toBe(1);
    const failedOver = running()[0];
    expect(runsOn.get('second')?.every((ctx) => ctx.cause === 'failover')).toBe(true);
    expect(failedOver?.items.map((item) => item.id)).toEqual(['a', 'b']);
    const firstItems = runsOn.get('first')?.[0]?.items ?? [];
    for (const [index, item] of (failedOver?.items ?? []).entries())
      expect(item.token).toBeGreaterThan(firstItems[index]?.token ?? Infinity);
    const { runs, counts } = await jobs.runs('mail');
    const interrupted = runs.filter((run) => run.cause === 'trigger');
    expect(interrupted).toEqual([expect.objectContaining({ state: 'interrupted' })]);
    const failovers = runs.filter((run) => run.cause === 'failover');
    expect(failovers.every((run) => run.failoverOf === interrupted[0]?.run)).toBe(true);
    expect(failovers[0]).toMatchObject({ state: 'running', items: [{ id: 'a' }, { id: 'b' }] });
    expect(counts.interrupted).toBe(1);
    expect(counts.failovers).toBe(failovers.length);
  });

  it('failover: false: the new holder waits for the next tick', async () => {
    const { runsOn, takenAt } = await holderDiesMidRun(false);
    await pause(Math.max(0, takenAt + 800 - Date.now()));
    expect(runsOn.get('second')).toBeUndefined();
  });
});

describe('a run owed for a reason, cut short by a change of share', () => {
  it('is owed again with the new share: a failover whose second item was taken a pass later runs both, a trigger whose item was taken away runs with the rest', async () => {
    const starts: { cause: string; items: string[] }[] = [];
    let finish = (): void => undefined;
    const runner = new JobRunner(
      resolveJob({ ...JOB, mode: { everyMs: 60_000 } }, new Date(0)),
      async (ctx: JobContext) => {
        starts.push({ cause: ctx.cause, items: ctx.items.map((item) => item.id) });
        await new Promise<void>((resolve) => {
          finish = resolve;
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      },
      runnerHost(),
    );
    try {
      runner.setShare([{ id: 'a', token: 5 }]);
      runner.failover('run-1', ['a']);
      await expect.poll(() => starts.length).toBe(1);
      runner.setShare([
        { id: 'a', token: 5 },
        { id: 'b', token: 6 },
      ]); // b taken a pass later
      runner.failover('run-1', ['b']); // b of the same interrupted run, taken a pass later
      await expect.poll(() => starts.length).toBe(2);
      await pause(100);
      expect(starts).toEqual([
        { cause: 'failover', items: ['a'] },
        { cause: 'failover', items: ['a', 'b'] },
      ]);
      runner.failover('run-1', ['a', 'b']); // both failed over already: nothing more is owed
      finish(); // the failover run returns
      runner.trigger();
      await expect.poll(() => starts.length).toBe(3);
      expect(starts[2]?.cause).toBe('trigger');
      runner.setShare([{ id: 'b', token: 6 }]); // a taken away: the trigger's run is owed again, with b
      await expect.poll(() => starts.length).toBe(4);
      expect(starts.at(-1)).toEqual({ cause: 'trigger', items: ['b'] });
    } finally {
      await runner.stop();
    }
  });
});

describe('the history is bounded', () => {
  it('10 000 runs keep the newest keepRuns, and each item its last failure however old', async () => {
    const server = new MemoryZooKeeper();
    const zk = server.connect({ name: 'worker' });
    const store = new JobRunStore(zk, JOBS);
    let wall = Date.UTC(2026, 10, 27);
    const journal = new RunJournal(
      store,
      'worker-1',
      { wall: () => (wall += 1), mono: () => wall },
      {
        runStarted: () => undefined,
        runEnded: () => undefined,
        log: () => undefined,
        error: (error) => {
          throw error;
        },
      },
    );
    const job = resolveJob({ ...JOB, keepRuns: 50 }, new Date(wall));
    const items = [{ id: 'a', token: 7 }];
    const failedRuns: string[] = [];
    for (let run = 1; run <= 10_000; run++) {
      const recorder = await journal.start(job, { items, cause: 'tick', attempt: 1 });
      const failed = run === 3;
      await recorder.ended(
        failed ? 'failed' : 'succeeded',
        failed ? new Error('once') : undefined,
        undefined,
        false,
        wall,
      );
      if (failed) failedRuns.push((await store.names('mail')).at(-1) as string);
    }
    const names = await store.names('mail');
    expect(names).toHaveLength(50);
    expect(names.at(-1)).toBe(runNodeName(wall, 'worker-1', 10_000));
    expect(await store.lastFailures('mail')).toEqual({
      a: expect.objectContaining({
        run: failedRuns[0],
        token: 7,
        error: { type: 'Error', message: 'once' },
      }),
    });
    expect(server.children(jobNodes(JOBS, 'mail').runs)).toHaveLength(50);
  });
});

describe("a run's log", () => {
  it('goes to the worker line by line (job:log), and its last lines, bounded, are kept with the run', async () => {
    const server = new MemoryZooKeeper();
    const store = new JobRunStore(server.connect({ name: 'worker' }), JOBS);
    const heard: string[] = [];
    const journal = new RunJournal(
      store,
      'worker-1',
      { wall: () => Date.UTC(2026, 10, 27), mono: () => 0 },
      {
        runStarted: () => undefined,
        runEnded: () => undefined,
        log: (_job, _run, items, level, msg) =>
          heard.push(`${level} ${msg} ${items.map((item) => `${item.id}#${item.token}`).join()}`),
        error: (error) => {
          throw error;
        },
      },
    );
    const job = resolveJob(JOB, new Date(0));
    const recorder = await journal.start(job, {
      items: [{ id: 'a', token: 3 }],
      cause: 'tick',
      attempt: 1,
    });
    for (let line = 1; line <= 30; line++) recorder.log.info(`line ${line}`);
    recorder.log.warn('x'.repeat(1_000));
    await recorder.ended('succeeded', undefined, undefined, false, Date.UTC(2026, 10, 27));
    expect(heard).toHaveLength(31);
    expect(heard[0]).toBe('info line 1 a#3');
    const [name] = await store.names('mail');
    const kept = (await store.read('mail', name as string))?.log ?? [];
    expect(kept).toHaveLength(MAX_RUN_LOG_LINES);
    expect(kept[0]?.msg).toBe('line 12');
    expect(kept.at(-1)).toEqual({
      at: '2026-11-27T00:00:00.000Z',
      level: 'warn',
      msg: `${'x'.repeat(300)}…`,
    });
    // However many short lines, the kept ones stay within MAX_RUN_LOG_BYTES.
    expect(
      keptLogLines(
        Array.from({ length: 500 }, () => ({
          at: 'now',
          level: 'info' as const,
          msg: 'y'.repeat(299),
        })),
      ),
    ).toHaveLength(Math.min(MAX_RUN_LOG_LINES, Math.floor(MAX_RUN_LOG_BYTES / (299 + 3 + 4))));
  });
});

describe("a run's log in the task log store", () => {
  it('is flushed under the run while it runs: the lines of a run whose worker died are kept', async () => {
    const server = new MemoryZooKeeper();
    let logged = 0;
    const functions = new FunctionRegistry().registerJob('poll', async (ctx: JobContext) => {
      for (const item of ctx.items) ctx.log.info(`polling ${item.id}`, { token: item.token });
      logged += 1;
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
    });
    const worker = memoryProcess(server, 'worker', functions); // crashed below: not closed
    const handle = worker.zkPlan.startJobWorker(JOBS, LEASE);
    const jobs = proc(server, 'admin').zkPlan.jobs(JOBS);
    await jobs.define(JOB);
    await expect.poll(() => handle.held()['mail']?.length ?? 0).toBe(2);
    await jobs.trigger('mail');
    await expect.poll(() => logged).toBe(1);
    const [run] = (await jobs.runs('mail')).runs;
    // Flushed while the run runs (every flushIntervalMs), not only at its end.
    await expect
      .poll(async () => (await jobs.runLog('mail', run?.run ?? '')).map((line) => line.msg), {
        timeout: 3_000,
      })
      .toEqual(['polling a', 'polling b']);
    worker.zk.crash();
    worker.zk.expireSessionOnServer();
    await expect
      .poll(async () => (await jobs.runs('mail')).runs[0]?.state, { timeout: 3_000 })
      .toBe('interrupted');
    expect((await jobs.runLog('mail', run?.run ?? '')).map((line) => line.fields)).toEqual([
      { token: expect.any(Number) as number },
      { token: expect.any(Number) as number },
    ]);
    await expect(jobs.runLog('mail', 'task-0000000001')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('run records and due times (pure)', () => {
  it('names runs so that they sort by start, and reads the worker back', () => {
    const name = runNodeName(Date.UTC(2026, 10, 27), 'host-12-ab12cd34', 7);
    expect(name).toBe('run-1795737600000-host-12-ab12cd34-7');
    expect(runWorkerOf(name)).toBe('host-12-ab12cd34');
    expect(runWorkerOf('task-0000000001')).toBeUndefined();
    const names = [
      runNodeName(30, 'w', 3),
      runNodeName(10, 'w', 1),
      runNodeName(20, 'v', 2),
      'junk',
    ];
    expect(runsBeyond(names, 1)).toEqual([runNodeName(10, 'w', 1), runNodeName(20, 'v', 2)]);
    expect(runsBeyond(names, 5)).toEqual([]);
  });

  it('refuses a record zk-plan does not write, and cuts a long error message', () => {
    const good: JobRunRecord = {
      job: 'mail',
      worker: 'w',
      items: [{ id: 'a', token: 1 }],
      cause: 'tick',
      attempt: 1,
      startedAt: '2026-11-27T00:00:00.000Z',
    };
    expect(parseRunRecord('/p', good)).toEqual(good);
    for (const bad of [
      null,
      { ...good, cause: 'whim' },
      { ...good, attempt: 0 },
      { ...good, items: [{ id: 'a' }] },
      { ...good, outcome: 'maybe' },
      { ...good, misfire: { tick: 1, handling: 'caught-up' } },
    ])
      expect(() => parseRunRecord('/p', bad)).toThrow(MalformedNodeError);
    const cut = runError(new Error('x'.repeat(10_000)));
    expect(cut.message.length).toBeLessThanOrEqual(501);
  });

  it('finds the latest tick a run overran, and doubles the pause after each failure up to its cap', () => {
    expect(latestTickUpTo({ everyMs: 200 }, 1_200, 1_750)).toBe(1_600);
    expect(latestTickUpTo({ everyMs: 200 }, 1_200, 1_200)).toBe(1_200);
    const minute = { cron: '* * * * *' };
    const t = Date.UTC(2026, 10, 27, 10, 0, 0);
    expect(nextDueTime(minute, t)).toBe(t + 60_000);
    expect(latestTickUpTo(minute, t + 60_000, t + 200_000)).toBe(t + 180_000);
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, 100, 1_000))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    expect(retryDelayMs(0, 100, 1_000)).toBe(0);
  });

  it('refuses bad misfire, failover, retries and keepRuns, naming the field', () => {
    for (const [field, value] of [
      ['misfire', 'twice'],
      ['failover', 'yes'],
      ['retries', -1],
      ['retries', 1.5],
      ['keepRuns', 0],
      ['keepRuns', 10_001],
    ] as const)
      expect(() => resolveJob({ ...JOB, [field]: value } as JobDefinition, new Date(0))).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', argument: field }) as Error,
      );
    expect(resolveJob(JOB, new Date(0))).toMatchObject({
      misfire: 'runOnce',
      failover: true,
      retries: 3,
      keepRuns: 100,
    });
  });
});
