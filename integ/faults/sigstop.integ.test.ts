import { describe, expect, it } from 'vitest';
import { call } from '../../src/index.js';
import type { LogEntry } from '../support/execution-log.js';
import { pauseUntil, useFaultEnv } from '../support/fault-env.js';
import { printFigures } from '../support/fault-plan.js';
import { TIMING, waitFor } from '../support/zk-test-env.js';

/**
 * A worker process frozen (SIGSTOP) in the middle of a long task for longer than its session
 * timeout: its session expires, a second process runs the task again; when the first one is
 * continued (SIGCONT) while the re-run is still going, its task's signal aborts, its late result
 * is not written, and it goes on working on a new session.
 */
const SESSION_TIMEOUT_MS = 3_000;
const TICK_MS = 500;
const RERUN_MS = 6_000; // long enough for the frozen process to wake up and return while the re-run still runs
/** The frozen run returns this long after its signal aborted, when its client already has a new session: the fence must refuse its write. */
const LINGER_AFTER_ABORT_MS = 1_000;

const faults = useFaultEnv();

const find =
  (entries: () => LogEntry[], match: (entry: LogEntry) => boolean) => (): LogEntry | undefined =>
    entries().find(match);

describe('a worker process frozen past its session timeout (SIGSTOP, then SIGCONT)', () => {
  it(
    'loses its task to another process, is fenced when it wakes, and goes on on a new session',
    { timeout: 90_000 * TIMING },
    async () => {
      const env = await faults.start({
        name: 'sigstop',
        tickTimeMs: TICK_MS,
        workers: { loops: 1, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      const { zkPlan, fleet } = env;
      const plan = await zkPlan.createPlan(env.parent, { maxAttempts: 1 }); // losing a session must not use up the only attempt
      const long = await zkPlan.addTask(
        plan,
        call('marked', {
          label: 'long',
          firstRunMs: 120_000,
          rerunMs: RERUN_MS,
          lingerAfterAbortMs: LINGER_AFTER_ABORT_MS,
        }),
        [],
        { keepResult: true },
      );
      const after = await zkPlan.addTask(plan, call('marked', { label: 'after' }), [long], {
        keepResult: true,
      });

      const log = (): LogEntry[] => env.log();
      const frozen = fleet.spawn('frozen');
      await frozen.ready();
      await zkPlan.markAsReady(plan);
      await waitFor(
        'the first run of the long task',
        find(log, (e) => e.task === long && e.event === 'start' && e.pid === frozen.pid),
        { timeoutMs: 20_000 },
      );

      const other = fleet.spawn('other');
      await other.ready();
      const stoppedAt = frozen.suspend();

      // The frozen process's session expires (the server deletes its owner node); the other process takes the task and starts it again.
      const rerun = await waitFor(
        'the re-run by the other process',
        find(log, (e) => e.task === long && e.event === 'start' && e.pid === other.pid),
        {
          timeoutMs: SESSION_TIMEOUT_MS + 15_000,
        },
      );
      // The fault itself: the process stays frozen for longer than its session timeout, measured from
      // the stop (the server may expire the session sooner: it was last touched by a ping up to a third
      // of the timeout before the stop). Then continue it while the re-run still runs (it takes RERUN_MS).
      await pauseUntil(stoppedAt + SESSION_TIMEOUT_MS + 250);
      const continuedAt = frozen.resume();
      const aborted = await waitFor(
        'the frozen run to see its signal abort',
        find(log, (e) => e.task === long && e.event === 'aborted' && e.pid === frozen.pid),
        {
          timeoutMs: 15_000,
        },
      );
      const staleEnd = await waitFor(
        'the frozen run to return',
        find(log, (e) => e.task === long && e.event === 'end' && e.pid === frozen.pid),
        { timeoutMs: 15_000 },
      );
      await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
      const rerunEnd = log().find(
        (e) => e.task === long && e.event === 'end' && e.pid === other.pid,
      );

      // The stored result is the re-run's, and the dependent received it, not the frozen run's late value.
      expect(
        await zkPlan.getResult(long),
        'the kept result (the frozen run returned { run: 1 } first)',
      ).toEqual({ by: other.pid, run: 2 });
      expect(staleEnd.result).toEqual({ by: frozen.pid, run: 1 });
      expect(rerunEnd?.result).toEqual({ by: other.pid, run: 2 });
      expect(rerunEnd!.at).toBeGreaterThan(staleEnd.at); // the frozen run returned first, and still did not win
      const afterStart = log().find((e) => e.task === after && e.event === 'start');
      expect(afterStart?.args).toEqual([{ by: other.pid, run: 2 }]);
      expect(rerun.at - stoppedAt).toBeGreaterThanOrEqual(SESSION_TIMEOUT_MS / 2); // not before the session could expire
      expect(continuedAt - stoppedAt).toBeGreaterThan(SESSION_TIMEOUT_MS);
      expect(aborted.reason).toMatch(/session expired/); // its signal aborted because its session was gone

      // The woken process goes on, on a new session: with the other one gone, it runs a new task.
      const otherExit = await other.terminate();
      expect(otherExit.code).toBe(0);
      const healthy = await zkPlan.addTask(plan, call('marked', { label: 'healthy' }), [], {
        keepResult: true,
      });
      await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
      expect(await zkPlan.getResult(healthy)).toEqual({ by: frozen.pid, run: 1 });
      expect(frozen.alive).toBe(true);
      expect(frozen.output).toMatch(new RegExp(`task given up, session expired: ${long}`)); // its late write was refused (OwnershipLostError)

      const runsOfLong = log().filter((e) => e.task === long && e.event === 'start').length;
      const stored = (await zkPlan.getResult(long)) as { by: number };
      printFigures('sigstop', {
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        frozenForMs: continuedAt - stoppedAt,
        stopToRerunMs: rerun.at - stoppedAt,
        continueToAbortMs: aborted.at - continuedAt,
        staleReturnBeforeRerunEndMs: rerunEnd!.at - staleEnd.at,
        runsOfLong,
        storedResultBy: stored.by === other.pid ? 'rerun' : 'frozen',
        healthyTaskBy: frozen.pid,
      });
    },
  );
});
