import { describe, expect, it } from 'vitest';
import { prng } from '../../examples/seeded-random.js';
import { call, waitForPlan } from '../../src/index.js';
import { pauseUntil, useFaultEnv } from '../support/fault-env.js';
import { awaitPlanCompletion, printFigures } from '../support/fault-plan.js';
import { describeExit, type WorkerProcess } from '../support/worker-process.js';
import { TIMING } from '../support/zk-test-env.js';

/**
 * A dependent task checking every 50 ms (claim, `waiting` record, out of the index, release, back
 * in the index at its time) on two `zk-plan worker` processes, one of which, picked at random, is
 * killed with SIGKILL every ~0.7 s for 6 s and restarted, while the plan it waits for is not ready.
 * Then that plan is readied and runs. The dependent must complete with that plan's outcome, once
 * (one history record), and the plan around it must complete: no check lost with a killed worker.
 */
const SESSION_TIMEOUT_MS = 2_000;
const KILL_EVERY_MS = 700;
const CHAOS_MS = 6_000;

const faults = useFaultEnv();

describe('kill -9 of worker processes while a dependent task checks', () => {
  it(
    'the dependent completes once the other plan did, whatever check a kill cut short',
    { timeout: 120_000 * TIMING },
    async () => {
      const seed = Number(process.env['FAULTS_SEED'] ?? Date.now() % 1_000_000);
      const random = prng(seed);
      const env = await faults.start({
        name: 'dependent-kill-9',
        tickTimeMs: 500,
        workers: { loops: 2, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      const { zkPlan, fleet } = env;
      const upstream = await zkPlan.createPlan(env.parent, { name: 'upstream' });
      await zkPlan.addTask(upstream, call('work', { label: 'upstream', ms: 10, add: 1 }));
      const plan = await zkPlan.createPlan(env.parent, { name: 'downstream', maxAttempts: 1 });
      const wait = await zkPlan.addTask(
        plan,
        waitForPlan({ plan: upstream, checkEveryMs: 50 }),
        [],
        { key: 'upstream-done', keepResult: true },
      );
      await zkPlan.markAsReady(plan);
      const slots: WorkerProcess[] = await env.startWorkers(2);
      const startedAt = Date.now();
      let kills = 0;
      for (let round = 1; Date.now() < startedAt + CHAOS_MS; round++) {
        await pauseUntil(startedAt + round * KILL_EVERY_MS + Math.floor((random() - 0.5) * 300));
        const index = Math.floor(random() * slots.length);
        const victim = slots[index] as WorkerProcess;
        if (!victim.alive) continue;
        await victim.kill9();
        kills += 1;
        slots[index] = fleet.restart(victim);
      }
      const view = await zkPlan.plans.describe(plan);
      const checks = view.tasks.find((task) => task.key === 'upstream-done')?.waiting?.checks ?? 0;
      // The other plan runs only now: every check so far said "not yet".
      await zkPlan.markAsReady(upstream);
      await awaitPlanCompletion(zkPlan, plan, {
        logFile: env.logFile,
        timeoutMs: 60_000 * TIMING,
        context: () => fleet.outputs(),
      });
      expect(await zkPlan.getResult(wait)).toEqual({ plan: upstream, state: 'completed' });
      const history = (await zkPlan.plans.describe(plan)).tasks.filter(
        (task) => task.key === 'upstream-done',
      );
      expect(history).toHaveLength(1);
      expect(history[0]?.state).toBe('done');
      await Promise.all(fleet.live.map((worker) => worker.ready()));
      const exits = await Promise.all(fleet.live.map((worker) => worker.terminate()));
      expect(exits.map(describeExit)).toEqual(exits.map(() => 'exit code 0'));
      printFigures('dependent-kill-9', { seed, kills, checksBeforeReady: checks });
      expect(kills).toBeGreaterThanOrEqual(3);
      expect(checks).toBeGreaterThanOrEqual(3);
    },
  );
});
