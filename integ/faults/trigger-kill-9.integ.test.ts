import { describe, expect, it } from 'vitest';
import { prng } from '../../examples/seeded-random.js';
import { PlanFailedError, call } from '../../src/index.js';
import { describeOverlap, executionsOf, overlapsOf } from '../support/execution-log.js';
import { useFaultEnv } from '../support/fault-env.js';
import { killAtRandom } from '../../src/testing/fault-harness/kill-chaos.js';
import { printFigures } from '../support/fault-plan.js';
import { describeExit, type WorkerProcess } from '../support/worker-process.js';
import { TIMING } from '../support/zk-test-env.js';

/**
 * Skip and trigger rules on three `zk-plan worker` processes (real ZooKeeper), one of which, picked
 * at random, is killed with SIGKILL every ~0.8 s and restarted. Twenty-four groups of tasks: a
 * source that fails for good, skips, or succeeds (by turns), a step under the default rule after it,
 * an `allDone` clean-up over both, and a `oneFailed` alert on the source. Whatever a kill cut short
 * (a failure's hand-on, a skip's), each clean-up completes with the outcomes of its group, each
 * alert runs only in a failing group, no step after a failed or skipped source ever runs, no task
 * is run by two live owners, and the plan ends failed with exactly the failing sources.
 */
const SESSION_TIMEOUT_MS = 2_000;
const KILL_EVERY_MS = 800;
const GROUPS = 24;
const PROCESSES = 3;

const faults = useFaultEnv();

type Kind = 'fails' | 'skips' | 'succeeds';
const KINDS: readonly Kind[] = ['fails', 'skips', 'succeeds'];
const CLEANUP: Readonly<Record<Kind, string>> = {
  fails: 'failed,failed',
  skips: 'skipped,skipped',
  succeeds: 'succeeded,succeeded',
};

describe('kill -9 of worker processes while trigger rules hand on failures and skips', () => {
  it(
    "every clean-up gets its group's outcomes, alerts run only on failure, and the plan fails with exactly the failing sources",
    { timeout: 180_000 * TIMING },
    async () => {
      const seed = Number(process.env['FAULTS_SEED'] ?? Date.now() % 1_000_000);
      const random = prng(seed);
      const env = await faults.start({
        name: 'trigger-kill-9',
        tickTimeMs: 500,
        workers: { loops: 3, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      const { zkPlan, fleet } = env;
      const plan = await zkPlan.createPlan(env.parent, { name: 'trigger-rules', maxAttempts: 1 });
      const groups: { kind: Kind; source: string; cleanup: string; alert: string }[] = [];
      for (let index = 0; index < GROUPS; index++) {
        const kind = KINDS[index % KINDS.length] as Kind;
        const label = `g${index}`;
        const ms = 150 + Math.floor(random() * 400);
        const source = await zkPlan.addTask(
          plan,
          kind === 'fails'
            ? call('fail', `${label}.source`)
            : kind === 'skips'
              ? call('skipping', `${label}.source`, ms)
              : call('work', { label: `${label}.source`, ms, add: index }),
          [],
          { key: `${label}.source` },
        );
        const step = await zkPlan.addTask(
          plan,
          call('work', { label: `${label}.step`, ms: 100, add: 1 }),
          [source],
          { key: `${label}.step` },
        );
        const cleanup = await zkPlan.addTask(
          plan,
          call('outcomes', { label: `${label}.cleanup`, ms: 200 }),
          [source, step],
          { key: `${label}.cleanup`, trigger: 'allDone', keepResult: true },
        );
        const alert = await zkPlan.addTask(
          plan,
          call('outcomes', { label: `${label}.alert`, ms: 100 }),
          [source],
          { key: `${label}.alert`, trigger: 'oneFailed', keepResult: true },
        );
        groups.push({ kind, source, cleanup, alert });
      }
      const slots: WorkerProcess[] = await env.startWorkers(PROCESSES);
      await zkPlan.markAsReady(plan);
      const startedAt = Date.now();
      const done = new AbortController();
      const completion = zkPlan
        .waitForCompletion(plan, { timeoutMs: 120_000 * TIMING })
        .then(() => undefined)
        .catch((error: unknown) => error)
        .finally(() => done.abort());

      const chaos = killAtRandom({
        slots,
        fleet,
        random,
        startedAt,
        everyMs: KILL_EVERY_MS,
        jitterMs: 300,
        signal: done.signal,
      });
      const ended = await completion;
      const kills = await chaos;
      const makespanMs = Date.now() - startedAt;
      await Promise.all(fleet.live.map((worker) => worker.ready()));
      const exits = await Promise.all(fleet.live.map((worker) => worker.terminate()));
      expect(exits.map(describeExit)).toEqual(exits.map(() => 'exit code 0'));

      const entries = env.log();
      const executions = executionsOf(entries, fleet.kills());
      const overlaps = overlapsOf(executions);
      const startedLabels = new Set(
        entries.filter((entry) => entry.event === 'start').map((entry) => entry.label),
      );
      printFigures('trigger-kill-9', {
        seed,
        kills,
        makespanMs,
        executions: executions.length,
        runsCutByKill: executions.filter((execution) => execution.ending === 'killed').length,
      });

      expect(ended, fleet.outputs()).toBeInstanceOf(PlanFailedError);
      const status = await zkPlan.plans.status(plan);
      expect(status.state).toBe('failed');
      expect(
        status.failed.map(({ task }) => task).sort(),
        JSON.stringify(status.failed.slice(0, 3), null, 1),
      ).toEqual(
        groups
          .filter(({ kind }) => kind === 'fails')
          .map(({ source }) => source)
          .sort(),
      );
      for (const [index, group] of groups.entries()) {
        expect(await zkPlan.getResult(group.cleanup), `g${index} clean-up`).toBe(
          CLEANUP[group.kind],
        );
        if (group.kind === 'fails')
          expect(await zkPlan.getResult(group.alert), `g${index} alert`).toBe('failed');
        else
          await expect(zkPlan.getResult(group.alert), `g${index} alert`).rejects.toMatchObject({
            code: 'TASK_SKIPPED',
          });
        expect(startedLabels.has(`g${index}.step`), `g${index} step ran`).toBe(
          group.kind === 'succeeds',
        );
        expect(startedLabels.has(`g${index}.alert`), `g${index} alert ran`).toBe(
          group.kind === 'fails',
        );
      }
      expect(overlaps.live.map(describeOverlap)).toEqual([]);
      expect(kills).toBeGreaterThanOrEqual(2);
    },
  );
});
