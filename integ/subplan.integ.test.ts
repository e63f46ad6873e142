/**
 * Sub-plan tasks on a real ZooKeeper server. The worker checking a sub-plan task dies right before
 * each of its writes in turn (its session closed, as a kill -9 once noticed), and a survivor
 * finishes: one child plan, each child task run once, the child's result handed on. While the child
 * runs, `zk-plan show` and `zk-plan why` say what the task waits for, and the child's `show` names
 * the task that made it; pause and cancel of the parent reach the child.
 */
import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  subPlan,
  type PlanSpec,
  type TaskContext,
  type ZkPlan,
} from '../src/index.js';
import { crashBeforeWrite } from './support/crash-before-write.js';
import { runCli } from './support/run-cli.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('subplan');
const QUICK = { backoff: { initial: 5, max: 20 }, retention: false } as const;

interface Runs {
  load: number[];
  double: number[];
}

function registry(runs: Runs, gate?: Promise<void>): FunctionRegistry {
  return new FunctionRegistry()
    .register('load', async (ctx: TaskContext<[number]>) => {
      await gate;
      runs.load.push(ctx.params[0]);
      return ctx.params[0] * 10;
    })
    .register('double', (_ctx, loaded: number) => {
      runs.double.push(loaded);
      return loaded * 2;
    })
    .register('report', (_ctx, total: number) => `total ${total}`);
}

const CHILD_SPEC: PlanSpec = {
  name: 'load-day',
  tasks: {
    load: { fn: 'load', params: [{ $param: 'day' }] },
    double: { fn: 'double', inputs: ['load'] },
  },
};

async function buildParent(
  zkPlan: ZkPlan,
  parent: string,
  children: string,
  checkEveryMs = 20,
): Promise<{ plan: string; sub: string; report: string }> {
  const { plan, tasks } = await zkPlan.submitPlan(parent, {
    tasks: {
      sub: {
        fn: 'zk-plan:sub-plan',
        params: [
          {
            spec: CHILD_SPEC,
            parent: children,
            params: { day: 4 },
            result: 'double',
            checkEveryMs,
          },
        ],
      },
      report: { fn: 'report', inputs: ['sub'] },
    },
  });
  return { plan, sub: tasks['sub'] as string, report: tasks['report'] as string };
}

async function childPlansOf(zkPlan: ZkPlan, children: string): Promise<string[]> {
  return ((await zkPlan.zk.tryGetChildren(children))?.children ?? []).filter(
    (name) => !name.startsWith('zk-plan-'),
  );
}

describe('a sub-plan task on a real server', () => {
  it(
    'a crash before each write of its check is finished by another worker: one child plan, each child task run once',
    { timeout: 600_000 },
    async () => {
      const outcomes: string[] = [];
      for (let crashAt = 1; crashAt < 60; crashAt++) {
        const runs: Runs = { load: [], double: [] };
        const [parent, children] = [env.root(), env.root()];
        const builder = await env.zkPlan({ functions: registry(runs) });
        const built = await buildParent(builder, parent, children);
        // The children's tasks run in a process never struck: the sweep is of the checking worker's writes.
        const childRunner = await env.zkPlan({ functions: registry(runs) });
        const childPool = childRunner.startWorkers(children, { count: 2, ...QUICK });
        const doomed = await env.zkPlan({ functions: registry(runs) });
        const hook = crashBeforeWrite(doomed.zk, crashAt);
        // The doomed worker checks the sub-plan task until its first "not yet" (the child is made), or crashes.
        const stop = new AbortController();
        let checked = false;
        doomed.on('task:waiting', (event) => {
          if (event.task !== built.sub) return;
          checked = true;
          stop.abort();
        });
        const doomedLoop = doomed.worker(parent, { backoff: QUICK.backoff }, stop.signal);
        await waitFor(
          'the doomed worker to crash or make the child',
          () => hook.crashed() || checked,
          {
            intervalMs: 5,
          },
        );
        stop.abort();
        await doomedLoop;
        const withoutCrash = !hook.crashed();
        const survivor = await env.zkPlan({ functions: registry(runs) });
        const pool = survivor.startWorkers(parent, { count: 2, ...QUICK });
        await survivor.waitForCompletion(built.plan, { timeoutMs: 30_000 });
        await Promise.all([pool.stop(), childPool.stop()]);
        const where = `crash before write ${crashAt}`;
        expect(await survivor.getResult(built.report), where).toBe('total 80');
        const plans = await childPlansOf(survivor, children);
        expect(plans, where).toHaveLength(1);
        const child = `${children}/${plans[0] as string}`;
        expect((await survivor.plans.status(child)).state, where).toBe('completed');
        expect(
          (await survivor.zk.tryGetChildren(`${child}/history`))?.children,
          where,
        ).toHaveLength(2);
        expect(runs, where).toEqual({ load: [4], double: [40] });
        outcomes.push(`${where}: ${withoutCrash ? 'no crash' : 'finished by the survivor'}`);
        await Promise.all([builder.close(), childRunner.close(), doomed.close(), survivor.close()]);
        if (withoutCrash) break;
      }
      console.log(outcomes.join('\n'));
      // Every write of the claim, the record, the child's node, its tasks, spec and ready, and the "not yet".
      expect(outcomes.length).toBeGreaterThan(20);
      expect(outcomes.at(-1)).toMatch(/no crash/);
    },
  );

  it('while the child runs, zk-plan show and why say what the task waits for; pause and cancel of the parent reach the child', async () => {
    const runs: Runs = { load: [], double: [] };
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const parent = env.root();
    const zkPlan = await env.zkPlan({ functions: registry(runs, gate) });
    zkPlan.startWorkers(parent, { count: 2, ...QUICK });
    const plan = await zkPlan.createPlan(parent, { name: 'nightly' });
    // Checked every 10 s: between two checks the commands below see it waiting, not being checked.
    const sub = await zkPlan.addTask(
      plan,
      subPlan({ spec: CHILD_SPEC, params: { day: 2 }, result: 'double', checkEveryMs: 10_000 }),
      [],
      { key: 'load-2', keepResult: true },
    );
    await zkPlan.markAsReady(plan);
    const child = `${parent}/${plan.split('/').pop()}~${sub.split('/').pop()}`;
    await waitFor(
      'the child to run its first task',
      async () =>
        runs.load.length === 0 &&
        (await zkPlan.plans.status(child).then(
          (s) => s.counts.running > 0,
          () => false,
        )),
    );
    await waitFor('the task to wait', async () =>
      (await zkPlan.plans.describe(plan)).tasks.some((task) => task.waiting !== undefined),
    );

    const shown = await runCli(env.connectString, ['show', plan]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`child plan ${child}`);
    expect(shown.stdout).toMatch(/waits: its child plan \S+ was started \(2 task\(s\)\)/);
    const why = await runCli(env.connectString, ['why', plan, 'load-2']);
    expect(why.code).toBe(0);
    expect(why.stdout).toContain(`its child plan ${child} was started (2 task(s))`);
    const childShown = await runCli(env.connectString, ['show', child]);
    expect(childShown.code).toBe(0);
    expect(childShown.stdout).toContain(`sub-plan of task ${sub}`);
    expect(childShown.stdout).toContain('(load-day)');

    const paused = await runCli(env.connectString, ['pause', plan]);
    expect(paused.code).toBe(0);
    expect((await zkPlan.plans.status(child)).control?.state).toBe('paused');
    expect((await runCli(env.connectString, ['resume', plan])).code).toBe(0);
    expect((await zkPlan.plans.status(child)).control).toBeUndefined();
    expect((await runCli(env.connectString, ['cancel', plan, '--reason', 'not needed'])).code).toBe(
      0,
    );
    release();
    const status = await zkPlan.plans.status(child);
    expect(status.state).toBe('cancelled');
    expect(status.control?.reason).toBe(`its parent plan ${plan} was cancelled`);
  });
});
