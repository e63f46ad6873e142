import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobSummary } from '../../src/index.js';
import { JOB_LOG_ENV, type JobLogLine } from '../support/job-functions.js';
import { pauseUntil, useFaultEnv, type FaultEnv } from '../support/fault-env.js';
import type { WorkerProcess } from '../support/worker-process.js';
import { TIMING } from '../support/zk-test-env.js';

/**
 * Sharded jobs run by real `zk-plan worker --jobs` processes on a real server, under faults. The
 * job function (job-functions.ts) logs, per item, when a run starts, each bit of work it does
 * while `ctx.holding()`, and when it stops, with the item's fencing token: one clock (this
 * machine's) for every process, so overlaps are read off the log.
 */
const JOBS = '/faults/jobs';
const SESSION_TIMEOUT_MS = 2_000;
const LEASE_MS = 3_000;
const DRIFT_MS = 300; // the default for a 3 s lease: a tenth of it
const JOB_FUNCTIONS = join(import.meta.dirname, '..', 'support', 'job-functions.ts');
const ITEMS = Array.from({ length: 12 }, (_, index) => `box${String(index).padStart(2, '0')}`);

const faults = useFaultEnv();

async function startEnv(
  name: string,
  workers: number,
): Promise<{ env: FaultEnv; slots: WorkerProcess[]; logFile: string }> {
  const env = await faults.start({
    name,
    tickTimeMs: 500,
    workers: {
      loops: 1,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      functionsModule: JOB_FUNCTIONS,
      extraArgs: ['--jobs', JOBS, '--lease-ms', String(LEASE_MS)],
    },
  });
  const logFile = join(env.dir, 'jobs.jsonl');
  process.env[JOB_LOG_ENV] = logFile; // inherited by the workers
  const slots = await env.startWorkers(workers);
  return { env, slots, logFile };
}

/** `startEnv`, then the continuous job `even` over ITEMS, settled over every worker. */
async function startWithJob(
  name: string,
  workers: number,
): Promise<{ env: FaultEnv; slots: WorkerProcess[]; logFile: string }> {
  const started = await startEnv(name, workers);
  await started.env.zkPlan
    .jobs(JOBS)
    .define({ name: 'even', fn: 'hold', workPool: { items: ITEMS }, mode: 'continuous' });
  await settled(
    started.env,
    'even',
    started.slots.map((worker) => worker.pid),
    20_000 * TIMING,
  );
  return started;
}

function readLog(file: string): JobLogLine[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  // The text after the last newline is an append still being written (the reader raced a writer): not a line yet.
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as JobLogLine);
}

async function summary(env: FaultEnv, job: string): Promise<JobSummary> {
  const found = (await env.zkPlan.jobs(JOBS).list()).find((entry) => entry.name === job);
  if (found === undefined) throw new Error(`no job ${job}`);
  return found;
}

/** Item counts per worker pid once the assignment covers the pool over exactly `pids` and every item's lease is held by its assigned worker. */
async function settled(
  env: FaultEnv,
  job: string,
  pids: readonly number[],
  timeoutMs: number,
): Promise<{ byPid: Map<number, string[]>; at: number }> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const [current, workers] = await Promise.all([
      summary(env, job),
      env.zkPlan.jobs(JOBS).workers(),
    ]);
    const pidOf = new Map(workers.map((worker) => [worker.id, worker.pid]));
    const byPid = new Map<number, string[]>();
    let whole = current.unassigned.length === 0;
    for (const [worker, items] of Object.entries(current.assignment)) {
      const pid = pidOf.get(worker);
      if (pid === undefined || !pids.includes(pid)) {
        whole &&= items.length === 0;
        continue;
      }
      byPid.set(pid, [...items]);
      for (const item of items) {
        const lease = current.leases[item];
        whole &&=
          lease !== undefined &&
          lease.holder === worker &&
          !lease.released &&
          lease.expiresAt.getTime() > Date.now();
      }
    }
    whole &&=
      pids.every((pid) => byPid.has(pid)) &&
      [...byPid.values()].flat().sort().join() === ITEMS.join();
    if (whole) return { byPid, at: Date.now() };
    last = JSON.stringify({
      assignment: current.assignment,
      unassigned: current.unassigned,
      problem: current.problem,
    });
    if (Date.now() > deadline)
      throw new Error(
        `job ${job} not settled over pids ${pids.join(',')} in ${timeoutMs} ms: ${last}\n${env.fleet.outputs()}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Resolves once `pid` works on every one of `items`: a `tick` after its latest `start` of the item.
 * A settled assignment says who holds the leases; the holder's run logs its start and first tick a
 * moment later (later still on a loaded machine), and a test that freezes the holder wants it
 * frozen in the middle of that run.
 */
async function workingOn(
  logFile: string,
  pid: number,
  items: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = readLog(logFile).filter((line) => line.pid === pid);
    const working = items.every((item) => {
      const own = lines.filter((line) => line.item === item);
      const lastStart = own.map((line) => line.event).lastIndexOf('start');
      return lastStart >= 0 && own.slice(lastStart + 1).some((line) => line.event === 'tick');
    });
    if (working) return;
    if (Date.now() > deadline)
      throw new Error(`pid ${pid} did not work on ${items.join(',')} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Per item, each holder's work (its start and ticks, by run) must not overlap another holder's, and a later holder's token is greater. */
function assertNoOverlap(lines: readonly JobLogLine[]): { runs: number } {
  const runs = new Map<string, { worker: string; token: number; first: number; last: number }>();
  for (const line of lines) {
    if (line.event === 'stop') continue;
    const id = `${line.job}/${line.item}/${line.worker}/${line.token}`;
    const run = runs.get(id) ?? {
      worker: line.worker,
      token: line.token,
      first: line.at,
      last: line.at,
    };
    run.first = Math.min(run.first, line.at);
    run.last = Math.max(run.last, line.at);
    runs.set(id, run);
  }
  const byItem = new Map<
    string,
    { worker: string; token: number; first: number; last: number }[]
  >();
  for (const [id, run] of runs) {
    const item = id.split('/').slice(0, 2).join('/');
    byItem.set(item, [...(byItem.get(item) ?? []), run]);
  }
  for (const [item, list] of byItem) {
    const sorted = [...list].sort((a, b) => a.token - b.token);
    for (let index = 1; index < sorted.length; index++) {
      const before = sorted[index - 1]!;
      const after = sorted[index]!;
      // Same worker, new token: it took its own item again. Another worker: it must start after the earlier holder's last work.
      if (before.worker === after.worker) continue;
      expect(
        after.first,
        `${item}: ${after.worker} (token ${after.token}) started at ${after.first}, ${before.worker} (token ${before.token}) worked until ${before.last}`,
      ).toBeGreaterThan(before.last);
    }
  }
  return { runs: runs.size };
}

describe('sharded jobs under faults (real job worker processes)', () => {
  it(
    'spreads 12 items evenly over 3 workers, then 4; rendezvous moves only what must move; a clean stop hands items on at once',
    { timeout: 120_000 * TIMING },
    async () => {
      const { env, slots, logFile } = await startEnv('jobs-spread', 3);
      const jobs = env.zkPlan.jobs(JOBS);
      await jobs.define({
        name: 'even',
        fn: 'hold',
        workPool: { items: ITEMS },
        mode: 'continuous',
        strategy: 'evenly',
      });
      await jobs.define({
        name: 'hash',
        fn: 'hold',
        workPool: { items: ITEMS },
        mode: 'continuous',
        strategy: 'rendezvous',
      });
      const three = slots.map((worker) => worker.pid);
      const even3 = await settled(env, 'even', three, 20_000 * TIMING);
      expect([...even3.byPid.values()].map((items) => items.length)).toEqual([4, 4, 4]);
      const hash3 = await settled(env, 'hash', three, 20_000 * TIMING);

      const [fourth] = await env.startWorkers(1);
      const four = [...three, fourth!.pid];
      const even4 = await settled(env, 'even', four, 20_000 * TIMING);
      expect([...even4.byPid.values()].map((items) => items.length)).toEqual([3, 3, 3, 3]);
      const hash4 = await settled(env, 'hash', four, 20_000 * TIMING);
      const holderBefore = new Map(
        [...hash3.byPid].flatMap(([pid, items]) => items.map((item) => [item, pid] as const)),
      );
      const moved = [...hash4.byPid].flatMap(([pid, items]) =>
        items.filter((item) => holderBefore.get(item) !== pid),
      );
      console.log(
        `rendezvous, 3 → 4 workers: ${moved.length} of 12 items moved (${moved.join(', ')}), all to the new worker`,
      );
      expect(moved.sort()).toEqual([...(hash4.byPid.get(fourth!.pid) ?? [])].sort()); // only the new worker's items moved
      expect(moved.length).toBeLessThan(12);

      const leaving = slots[0]!;
      const stoppedAt = Date.now();
      const exit = await leaving.terminate();
      expect(exit.code).toBe(0);
      const rest = four.filter((pid) => pid !== leaving.pid);
      const after = await settled(env, 'even', rest, 20_000 * TIMING);
      console.log(
        `clean stop (SIGTERM) → its items held elsewhere after ${after.at - stoppedAt} ms (lease ${LEASE_MS} ms)`,
      );
      expect(after.at - stoppedAt).toBeLessThan(LEASE_MS); // given back, not waited out
      expect([...after.byPid.values()].map((items) => items.length)).toEqual([4, 4, 4]);
      const { runs } = assertNoOverlap(readLog(logFile));
      expect(runs).toBeGreaterThan(24);
    },
  );

  it(
    'kill -9 of a worker: its items are held elsewhere within session timeout + lease',
    { timeout: 120_000 * TIMING },
    async () => {
      const { env, slots, logFile } = await startWithJob('jobs-kill-9', 3);
      const victim = slots[1]!;
      const killedAt = await victim.kill9();
      const rest = slots.filter((worker) => worker !== victim).map((worker) => worker.pid);
      const after = await settled(env, 'even', rest, 30_000 * TIMING);
      const took = after.at - killedAt;
      console.log(
        `kill -9 → items held elsewhere after ${took} ms (session timeout ${SESSION_TIMEOUT_MS} ms + lease ${LEASE_MS} ms + drift ${DRIFT_MS} ms)`,
      );
      expect(took).toBeLessThan(SESSION_TIMEOUT_MS + LEASE_MS + DRIFT_MS + 1_500 * TIMING);
      assertNoOverlap(readLog(logFile));
    },
  );

  it(
    'SIGSTOP past the lease, then SIGCONT: no item worked on by two holders at once, the frozen one stops on waking without working, its tokens are lower',
    { timeout: 120_000 * TIMING },
    async () => {
      const { env, slots, logFile } = await startWithJob('jobs-sigstop', 3);
      const frozen = slots[2]!;
      // Frozen in the middle of its run: every item of its share started and ticking.
      const share = (
        await settled(
          env,
          'even',
          slots.map((worker) => worker.pid),
          20_000 * TIMING,
        )
      ).byPid.get(frozen.pid);
      expect(share?.length, 'the frozen worker holds a share').toBeGreaterThan(0);
      await workingOn(logFile, frozen.pid, share ?? [], 10_000 * TIMING);
      const frozenItems = new Set(
        readLog(logFile)
          .filter((line) => line.pid === frozen.pid && line.event === 'start')
          .map((line) => line.item),
      );
      const stoppedAt = frozen.suspend();
      const rest = slots.filter((worker) => worker !== frozen).map((worker) => worker.pid);
      await settled(env, 'even', rest, 30_000 * TIMING);
      await pauseUntil(
        Math.max(Date.now() + 500, stoppedAt + SESSION_TIMEOUT_MS + LEASE_MS + 1_000),
      ); // well past the lease and the session
      const continuedAt = frozen.resume();
      await settled(
        env,
        'even',
        slots.map((worker) => worker.pid),
        30_000 * TIMING,
      ); // it comes back and gets a share again
      await new Promise((resolve) => setTimeout(resolve, 500));
      const lines = readLog(logFile);
      assertNoOverlap(lines);
      const frozenId = lines.find((line) => line.pid === frozen.pid)?.worker;
      const wokeUp = lines.filter(
        (line) => line.pid === frozen.pid && line.at >= continuedAt && frozenItems.has(line.item),
      );
      const workedAfterWaking = wokeUp.filter(
        (line) => line.event === 'tick' && line.worker === frozenId,
      );
      const firstStartAfter = Math.min(
        ...wokeUp.filter((line) => line.event === 'start').map((line) => line.at),
      );
      // Any work on waking belongs to a run it started afresh (a new lease), never to the run that was frozen.
      for (const line of workedAfterWaking)
        expect(line.at, `tick of ${line.item} at ${line.at}`).toBeGreaterThanOrEqual(
          firstStartAfter,
        );
      const stops = wokeUp.filter((line) => line.event === 'stop');
      expect(stops.length, 'the frozen run logged its stop on waking').toBeGreaterThan(0);
      console.log(
        `SIGSTOP for ${continuedAt - stoppedAt} ms: the frozen run stopped ${Math.min(...stops.map((line) => line.at)) - continuedAt} ms after SIGCONT`,
      );
      expect(Math.min(...stops.map((line) => line.at)) - continuedAt).toBeLessThan(1_000 * TIMING);
      for (const item of frozenItems) {
        const tokens = lines.filter(
          (line) => line.item === item && line.event === 'start' && line.job === 'even',
        );
        const frozenToken = Math.max(
          ...tokens
            .filter((line) => line.pid === frozen.pid && line.at < stoppedAt)
            .map((line) => line.token),
        );
        const next = tokens.filter((line) => line.at > stoppedAt && line.pid !== frozen.pid);
        expect(next.length, `${item} was taken over`).toBeGreaterThan(0);
        for (const line of next)
          expect(line.token, `${item}: the new holder's token`).toBeGreaterThan(frozenToken);
      }
    },
  );

  it(
    'kill -9 of the manager during a rebalance: a new manager finishes it, no item unassigned or assigned twice',
    { timeout: 120_000 * TIMING },
    async () => {
      const { env, slots, logFile } = await startWithJob('jobs-manager', 3);
      const jobs = env.zkPlan.jobs(JOBS);
      const managerPid = (await jobs.workers()).find((worker) => worker.manager)?.pid;
      const manager = slots.find((worker) => worker.pid === managerPid);
      expect(manager, 'a manager among the workers').toBeDefined();
      const [fourth] = await env.startWorkers(1); // membership changes: the manager starts a rebalance…
      await manager!.kill9(); // …and dies in it
      const live = [...slots.filter((worker) => worker !== manager), fourth!].map(
        (worker) => worker.pid,
      );
      const after = await settled(env, 'even', live, 30_000 * TIMING);
      expect([...after.byPid.values()].map((items) => items.length)).toEqual([4, 4, 4]);
      const newManager = (await jobs.workers()).find((worker) => worker.manager);
      expect(live).toContain(newManager?.pid);
      assertNoOverlap(readLog(logFile));
    },
  );

  it(
    'a work pool that changes while running: removed items stop, added ones start, the assignment covers exactly the new pool',
    { timeout: 120_000 * TIMING },
    async () => {
      const { env, logFile } = await startWithJob('jobs-pool', 2);
      const jobs = env.zkPlan.jobs(JOBS);
      const next = [...ITEMS.slice(4), 'new1', 'new2', 'new3'];
      const changedAt = Date.now();
      await jobs.setWorkPool('even', next);
      for (const deadline = Date.now() + 20_000 * TIMING; ;) {
        const current = await summary(env, 'even');
        const assigned = Object.values(current.assignment).flat().sort();
        const held = Object.entries(current.leases)
          .filter(([, lease]) => !lease.released && lease.expiresAt.getTime() > Date.now())
          .map(([item]) => item);
        if (
          assigned.join() === [...next].sort().join() &&
          held.sort().join() === [...next].sort().join()
        )
          break;
        if (Date.now() > deadline)
          throw new Error(`pool change not applied: ${JSON.stringify({ assigned, held })}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const lines = readLog(logFile);
      for (const removed of ITEMS.slice(0, 4)) {
        const after = lines.filter(
          (line) => line.item === removed && line.at > changedAt + 1_000 && line.event === 'tick',
        );
        expect(after, `${removed} left the pool but is still worked on`).toEqual([]);
      }
      for (const added of ['new1', 'new2', 'new3'])
        expect(
          lines.some((line) => line.item === added && line.event === 'tick'),
          `${added} runs`,
        ).toBe(true);
      assertNoOverlap(lines);
    },
  );

  it(
    'run history of a cron job across kill -9 of its holder: the interrupted run is there once as interrupted, and its failover run on the other worker starts before the next tick',
    { timeout: 120_000 * TIMING },
    async () => {
      const { env, slots, logFile } = await startEnv('jobs-run-history', 2);
      const jobs = env.zkPlan.jobs(JOBS);
      const TICK_EVERY_MS = 20_000;
      // One item: one worker runs each tick (the hold function runs until aborted), the other waits.
      await jobs.define({
        name: 'nightly',
        fn: 'hold',
        workPool: { items: ['box'] },
        mode: { cron: '*/20 * * * * *' },
      });
      const running = async () =>
        (await jobs.runs('nightly')).runs.find((run) => run.state === 'running');
      await expect.poll(running, { timeout: 40_000 * TIMING, interval: 100 }).toBeDefined();
      const interrupted = (await running())!;
      const pidOf = new Map((await jobs.workers()).map((worker) => [worker.id, worker.pid]));
      const holder = slots.find((worker) => worker.pid === pidOf.get(interrupted.worker));
      const survivor = slots.find((worker) => worker !== holder)!;
      expect(holder, 'the run is on one of the workers').toBeDefined();
      // Its ctx.log line flushed to the task log store (every 500 ms while it runs) before the kill.
      await expect
        .poll(async () => (await jobs.runLog('nightly', interrupted.run)).length, {
          timeout: 5_000 * TIMING,
        })
        .toBe(1);
      const killedAt = await holder!.kill9();
      const nextTick = Date.parse(interrupted.firedAt ?? '') + TICK_EVERY_MS;

      const failedOver = async () =>
        (await jobs.runs('nightly')).runs.find((run) => run.failoverOf === interrupted.run);
      await expect.poll(failedOver, { timeout: 30_000 * TIMING, interval: 100 }).toBeDefined();
      const failover = (await failedOver())!;
      const { runs, counts } = await jobs.runs('nightly');
      console.log(
        `kill -9 → failover run started after ${Date.parse(failover.startedAt) - killedAt} ms; the next tick was ${nextTick - killedAt} ms after the kill`,
      );
      expect(runs.filter((run) => run.run === interrupted.run)).toEqual([
        expect.objectContaining({
          state: 'interrupted',
          cause: 'tick',
          worker: interrupted.worker,
        }),
      ]);
      expect(failover).toMatchObject({ cause: 'failover', state: 'running' });
      expect(pidOf.get(failover.worker)).toBe(survivor.pid);
      expect(failover.worker).not.toBe(interrupted.worker);
      expect(failover.items[0]?.token).toBeGreaterThan(interrupted.items[0]?.token ?? Infinity);
      expect(Date.parse(failover.startedAt)).toBeLessThan(nextTick);
      expect(counts.interrupted).toBe(1);
      expect(counts.failovers).toBe(1);
      // That line is kept, though its worker died.
      expect((await jobs.runLog('nightly', interrupted.run)).map((line) => line.msg)).toEqual([
        `holding box#${interrupted.items[0]?.token}`,
      ]);
      assertNoOverlap(readLog(logFile));
    },
  );
});
