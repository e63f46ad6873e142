import { describe, expect, it } from 'vitest';
import { prng } from '../../examples/seeded-random.js';
import { call, subPlan, type PlanSpec } from '../../src/index.js';
import { describeOverlap, executionsOf, overlapsOf } from '../support/execution-log.js';
import { useFaultEnv } from '../support/fault-env.js';
import { killAtRandom } from '../../src/testing/fault-harness/kill-chaos.js';
import { printFigures } from '../support/fault-plan.js';
import { describeExit, type WorkerProcess } from '../support/worker-process.js';
import { TIMING } from '../support/zk-test-env.js';

/**
 * Sub-plans nested three deep on three `zk-plan worker` processes (real ZooKeeper), one of which,
 * picked at random, is killed with SIGKILL every ~0.8 s and restarted. Six groups: each a sub-plan
 * task whose child runs a step and a sub-plan, whose child runs a step and a sub-plan, whose child
 * runs one step; each level sums what it got. Whatever a kill cut short (a child half-made, a check
 * between two writes), each sub-plan task made exactly one child, each child holds its spec's tasks
 * and no more, every plan completes, the total is right, and no task is run by two live owners.
 */
const SESSION_TIMEOUT_MS = 2_000;
const KILL_EVERY_MS = 800;
const GROUPS = 6;
const PROCESSES = 3;
const CHECK_EVERY_MS = 50;

const faults = useFaultEnv();

/** `work` steps: each returns (add + its inputs) % WORK_MODULUS, whoever runs it, however often. */
function step(label: string, ms: number, add: number): { fn: string; params: unknown[] } {
  return { fn: 'work', params: [{ label, ms, add }] };
}

function subPlanStep(spec: PlanSpec, result: string): { fn: string; params: unknown[] } {
  return { fn: 'zk-plan:sub-plan', params: [{ spec, result, checkEveryMs: CHECK_EVERY_MS }] };
}

/** Group g: level 3 gives 2; level 2 gives 1 + 2; level 1 gives g + 3. */
function groupSpec(group: number, ms: () => number): PlanSpec {
  const level3: PlanSpec = {
    name: `g${group}-level-3`,
    tasks: { d: step(`g${group}.d`, ms(), 2) },
  };
  const level2: PlanSpec = {
    name: `g${group}-level-2`,
    tasks: {
      b: step(`g${group}.b`, ms(), 1),
      inner: subPlanStep(level3, 'd'),
      c: { ...step(`g${group}.c`, 50, 0), inputs: ['b', 'inner'] },
    },
  };
  return {
    name: `g${group}-level-1`,
    tasks: {
      a: step(`g${group}.a`, ms(), group),
      inner: subPlanStep(level2, 'c'),
      sum: { ...step(`g${group}.sum`, 50, 0), inputs: ['a', 'inner'] },
    },
  };
}

/** Tasks per level's spec: what each child must hold, no more. */
const TASKS_BY_LEVEL: Readonly<Record<number, number>> = { 1: 3, 2: 3, 3: 1 };

describe('kill -9 of worker processes while sub-plans nest three deep', () => {
  it(
    'each sub-plan task makes one child holding its spec’s tasks, every plan completes, and the total is right',
    { timeout: 180_000 * TIMING },
    async () => {
      const seed = Number(process.env['FAULTS_SEED'] ?? Date.now() % 1_000_000);
      const random = prng(seed);
      const env = await faults.start({
        name: 'subplan-kill-9',
        tickTimeMs: 500,
        workers: { loops: 3, sessionTimeoutMs: SESSION_TIMEOUT_MS },
      });
      const { zkPlan, fleet } = env;
      const plan = await zkPlan.createPlan(env.parent, { name: 'nested', maxAttempts: 5 });
      const ms = (): number => 100 + Math.floor(random() * 300);
      const groups: string[] = [];
      for (let group = 0; group < GROUPS; group++)
        groups.push(
          await zkPlan.addTask(
            plan,
            subPlan({ spec: groupSpec(group, ms), result: 'sum', checkEveryMs: CHECK_EVERY_MS }),
            [],
            { key: `g${group}` },
          ),
        );
      const total = await zkPlan.addTask(
        plan,
        call('work', { label: 'total', ms: 20, add: 0 }),
        groups,
        {
          key: 'total',
          keepResult: true,
        },
      );
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

      const executions = executionsOf(env.log(), fleet.kills());
      const overlaps = overlapsOf(executions);
      const plans = (await zkPlan.plans.list(env.parent)).filter(
        (summary) => summary.plan !== plan,
      );
      printFigures('subplan-kill-9', {
        seed,
        kills,
        makespanMs,
        plans: plans.length + 1,
        executions: executions.length,
        runsCutByKill: executions.filter((execution) => execution.ending === 'killed').length,
      });

      expect(ended, fleet.outputs()).toBeUndefined();
      // Σ (g + 3) over the groups.
      const expected = Array.from({ length: GROUPS }, (_, group) => group + 3).reduce(
        (a, b) => a + b,
        0,
      );
      expect(await zkPlan.getResult(total)).toBe(expected);
      // One child per sub-plan task, at every level: 6 groups × 3 levels.
      expect(plans).toHaveLength(GROUPS * 3);
      for (const summary of plans) {
        const level = summary.plan.split('~').length - 1;
        expect(summary.status.state, summary.plan).toBe('completed');
        const history = await zkPlan.zk.tryGetChildren(`${summary.plan}/history`);
        expect(history?.children, `${summary.plan} holds its spec's tasks, no more`).toHaveLength(
          TASKS_BY_LEVEL[level] as number,
        );
      }
      expect(overlaps.live.map(describeOverlap)).toEqual([]);
      expect(kills).toBeGreaterThanOrEqual(2);
    },
  );
});
