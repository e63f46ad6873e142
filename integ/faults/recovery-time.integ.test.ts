import { describe, expect, it } from 'vitest';
import { call } from '../../src/index.js';
import { useFaultEnv } from '../support/fault-env.js';
import { printFigures } from '../support/fault-plan.js';
import { TIMING, waitFor, withDeadline } from '../support/zk-test-env.js';

/**
 * How long a task waits after its worker process is killed with -9 before another process starts
 * it again: the session timeout (the server removes the dead session's `owner` node) plus the time
 * the surviving worker takes to notice (its idle back-off). Measured from the kill to the owner
 * node's deletion (seen by a watch) and to the re-run's `start` in the log.
 *
 * The survivor is started just before the kill, so its idle back-off is still short when the
 * session expires (its polls come at 0.1, 0.25, 0.48, 0.81, 1.3, 2.1, 3.2, 4.9 s… of idleness). A
 * worker that has idled for long polls only every 10 s (the back-off's max), and nothing wakes it
 * across processes, so in production the pick-up can add up to 10 s to the session timeout.
 */
const TICK_MS = 500;
const MARGIN_MS = 3_000 * TIMING; // ZK_PLAN_TIMING=2 on a slow machine

const faults = useFaultEnv();

describe('recovery time after kill -9 of the worker running a task', () => {
  it.each([2_000, 4_000])(
    'with a session timeout of %i ms, the task starts again within the session timeout + 3 s',
    { timeout: 60_000 * TIMING },
    async (sessionTimeoutMs) => {
      const env = await faults.start({
        name: `recovery-${sessionTimeoutMs}`,
        tickTimeMs: TICK_MS,
        workers: { loops: 1, sessionTimeoutMs },
      });
      const { zkPlan, fleet } = env;
      const plan = await zkPlan.createPlan(env.parent, { maxAttempts: 1 }); // losing a session must not use up the only attempt
      const long = await zkPlan.addTask(
        plan,
        call('marked', { label: 'long', firstRunMs: 120_000, rerunMs: 100 }),
        [],
        { keepResult: true },
      );

      const victim = fleet.spawn('victim');
      await victim.ready();
      await zkPlan.markAsReady(plan);
      await waitFor(
        'the victim to start the long task',
        () => env.log().find((e) => e.task === long && e.event === 'start' && e.pid === victim.pid),
        {
          timeoutMs: 20_000,
        },
      );
      const survivor = fleet.spawn('survivor');
      await survivor.ready();

      // Watch the owner node: its deletion is the moment the server expired the victim's session.
      let ownerGoneAt: number | undefined;
      const ownerGone = new Promise<void>((resolve) => {
        void zkPlan.zk
          .exists(`${long}/owner`, (event) => {
            if (event.type === 'deleted') ownerGoneAt = Date.now();
            resolve();
          })
          .then((stat) => expect(stat, 'the victim owns the task').toBeDefined());
      });

      const killedAt = await victim.kill9();
      const rerun = await waitFor(
        'the survivor to start the task again',
        () =>
          env.log().find((e) => e.task === long && e.event === 'start' && e.pid === survivor.pid),
        {
          timeoutMs: sessionTimeoutMs + 20_000,
        },
      );
      await withDeadline(ownerGone, 5_000, () => 'no watch event for the owner node');
      await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
      expect(await zkPlan.getResult(long)).toEqual({ by: survivor.pid, run: 2 });

      const recoveryMs = rerun.at - killedAt;
      const expiryMs = (ownerGoneAt ?? Number.NaN) - killedAt;
      printFigures(`recovery-time ${sessionTimeoutMs} ms`, {
        sessionTimeoutMs,
        killToOwnerGoneMs: expiryMs,
        ownerGoneToRestartMs: rerun.at - (ownerGoneAt ?? Number.NaN),
        killToRestartMs: recoveryMs,
        boundMs: sessionTimeoutMs + MARGIN_MS,
      });
      expect(ownerGoneAt).toBeDefined();
      // The server keeps a dead session for about its timeout (it was last touched up to a third of it before the kill).
      expect(expiryMs).toBeGreaterThanOrEqual(sessionTimeoutMs / 2);
      expect(recoveryMs).toBeGreaterThanOrEqual(expiryMs);
      expect(recoveryMs).toBeLessThanOrEqual(sessionTimeoutMs + MARGIN_MS);
    },
  );
});
