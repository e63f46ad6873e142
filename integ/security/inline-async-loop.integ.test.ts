import { describe, expect, it } from 'vitest';
import { PlanFailedError, inline, type TaskFailure } from '../../src/index.js';
import { decodeValue } from '../../src/testing/index.js';
import { useFaultEnv } from '../support/fault-env.js';
import { describeExit } from '../support/worker-process.js';
import { TIMING, waitFor } from '../support/zk-test-env.js';

/**
 * Finding 6 on a real `zk-plan worker` process (one loop, `--allow-inline`) and a real ZooKeeper:
 * an inline task that loops after an `await` used to freeze the process for good, its session
 * heartbeat (the native client runs on the event loop), its task timeout and its SIGTERM handler
 * included. The session timeout (2 s) is shorter than the task timeout (4 s): a frozen event loop
 * would lose the session, and the registry node would come back under another one.
 */
const SESSION_TIMEOUT_MS = 2_000;
const TASK_TIMEOUT_MS = 4_000;
const DRAIN_TIMEOUT_MS = 500;

const faults = useFaultEnv();

describe('an inline task that loops after an await, on a real worker process', () => {
  it(
    'keeps the session, fails the task by its timeout, runs the next task, and stops on SIGTERM mid-loop',
    { timeout: 120_000 * TIMING },
    async () => {
      const env = await faults.start({
        name: 'inline-async-loop',
        tickTimeMs: 500,
        workers: {
          loops: 1,
          sessionTimeoutMs: SESSION_TIMEOUT_MS,
          drainTimeoutMs: DRAIN_TIMEOUT_MS,
          extraArgs: ['--allow-inline'],
        },
      });
      const { zkPlan, parent } = env;
      const worker = env.fleet.spawn();
      await worker.ready();
      const [registered] = await waitFor('the worker to register', async () => {
        const workers = await zkPlan.listWorkers(parent);
        return workers.length === 1 && workers;
      });
      const sessionId = registered!.sessionId;

      // 1. A loop after an await, with a task timeout longer than the session timeout.
      const first = await zkPlan.createPlan(parent, { maxAttempts: 1 });
      const spin = await zkPlan.addTask(
        first,
        inline(async () => {
          await null;
          for (;;);
        }),
        [],
        { timeoutMs: TASK_TIMEOUT_MS },
      );
      const readyAt = performance.now();
      await zkPlan.markAsReady(first);
      await expect(
        zkPlan.waitForCompletion(first, { timeoutMs: 30_000 * TIMING }),
      ).rejects.toBeInstanceOf(PlanFailedError);
      const failedAfterMs = performance.now() - readyAt;
      const failure = decodeValue(
        `${spin}/failed`,
        (await zkPlan.zk.getData(`${spin}/failed`)).data,
      ) as TaskFailure;
      expect(failure).toMatchObject({
        code: 'TASK_TIMEOUT',
        type: 'TaskTimeoutError',
        attempts: 1,
      });
      expect(failure.message).toContain(`did not finish within ${TASK_TIMEOUT_MS} ms`);
      expect(failedAfterMs).toBeGreaterThanOrEqual(TASK_TIMEOUT_MS);
      expect(failedAfterMs).toBeLessThan(TASK_TIMEOUT_MS + 5_000 * TIMING);

      // The session outlived the loop: the registry node is still held by the session it started with.
      const [after] = await zkPlan.listWorkers(parent);
      expect(after?.sessionId).toBe(sessionId);
      expect(worker.output).not.toContain('session expired');

      // 2. The same loop takes the next task.
      const second = await zkPlan.createPlan(parent);
      const healthy = await zkPlan.addTask(
        second,
        inline(() => 'after the loop'),
        [],
        { keepResult: true },
      );
      await zkPlan.markAsReady(second);
      await zkPlan.waitForCompletion(second, { timeoutMs: 30_000 * TIMING });
      expect(await zkPlan.getResult(healthy)).toBe('after the loop');

      // 3. SIGTERM while a loop in a then callback spins (no task timeout; the inline limit is the CLI's 5 s).
      const third = await zkPlan.createPlan(parent);
      const spinAgain = await zkPlan.addTask(
        third,
        inline(() =>
          Promise.resolve().then(() => {
            for (;;);
          }),
        ),
      );
      await zkPlan.markAsReady(third);
      await waitFor('the worker to run the second loop', async () =>
        (await zkPlan.listWorkers(parent))[0]?.running.includes(spinAgain),
      );
      const terminatedAt = Date.now();
      const exit = await worker.terminate(10_000);
      expect(describeExit(exit)).toBe('exit code 0');
      expect(worker.output).toContain('SIGTERM: stopping');
      expect(exit.at - terminatedAt).toBeLessThan(DRAIN_TIMEOUT_MS + 3_000 * TIMING);
      expect(worker.output).not.toContain('session expired');
      // Given back uncharged (a stop is not the task's fault), for the next worker.
      expect(await zkPlan.zk.exists(`${spinAgain}/attempts`)).toBeUndefined();
      expect(await zkPlan.zk.exists(`${spinAgain}/failed`)).toBeUndefined();
    },
  );
});
