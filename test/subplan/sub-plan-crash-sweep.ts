/**
 * The sub-plan protocol's crash sweep and its plan, shared by sub-plan-crashes.test.ts and the
 * self-test of the mutant sub-plan-made-twice (test/mutants): a parent plan picks a day, a sub-plan
 * task runs a two-task child spec for it under its own parent, and a report takes the child's
 * result. The worker process that runs the sub-plan task's checks dies right before each of its
 * writes in turn; a process that runs only the children is never struck; a survivor finishes the
 * parent. Each time: one child plan, each child task run once, the right result.
 */
import { expect } from 'vitest';
import { FunctionRegistry, type PlanSpec, type TaskContext } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

export const PARENT = '/plans';
export const CHILDREN = '/children';
export const MAX_POINTS = 120;

export interface Runs {
  load: number[];
  double: number[];
}

export function newRuns(): Runs {
  return { load: [], double: [] };
}

export function functions(runs: Runs): FunctionRegistry {
  return new FunctionRegistry()
    .register('pick', (ctx: TaskContext<[number]>) => ctx.params[0])
    .register('load', (ctx: TaskContext<[number]>) => {
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

export async function build(
  proc: MemoryProcess,
): Promise<{ plan: string; sub: string; report: string }> {
  const { plan, tasks } = await proc.zkPlan.submitPlan(PARENT, {
    tasks: {
      day: { fn: 'pick', params: [4] },
      sub: {
        fn: 'zk-plan:sub-plan',
        params: [
          {
            spec: CHILD_SPEC,
            parent: CHILDREN,
            inputs: ['day'],
            result: 'double',
            checkEveryMs: 10,
          },
        ],
        inputs: ['day'],
      },
      report: { fn: 'report', inputs: ['sub'] },
    },
  });
  return { plan, sub: tasks['sub'] as string, report: tasks['report'] as string };
}

/** The parent completes with the child's result; one child plan, each of its tasks run once. */
export async function expectOneChild(
  proc: MemoryProcess,
  built: { plan: string; report: string },
  runs: Runs,
  describeFault: () => string,
): Promise<void> {
  const where = (): string => describeFault();
  await proc.zkPlan.waitForCompletion(built.plan, { timeoutMs: 10_000 }).catch((error: unknown) => {
    throw new Error(`${where()}\n${String(error)}`);
  });
  expect(await proc.zkPlan.getResult(built.report), where()).toBe('total 80');
  const children = (await proc.zk.getChildren(CHILDREN)).children.filter(
    (name) => !name.startsWith('zk-plan-'),
  );
  expect(children, where()).toHaveLength(1);
  const child = `${CHILDREN}/${children[0] as string}`;
  expect((await proc.zkPlan.plans.status(child)).state, where()).toBe('completed');
  expect((await proc.zk.tryGetChildren(`${child}/history`))?.children, where()).toHaveLength(2);
  expect(runs.load, where()).toEqual([4]);
  expect(runs.double, where()).toEqual([40]);
}

/** Resolves false once the parent completed (the doomed process got through without a crash). */
async function waitCompleted(proc: MemoryProcess, plan: string): Promise<false> {
  await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
  await pause(20);
  return false;
}

/**
 * The checking worker dies before its `crashAt`-th write (or the first that `strike` accepts); a
 * survivor must end the plan as expected. Resolves what happened, or undefined when the worker
 * got through without a crash. `open` collects the processes to close.
 */
export async function crashAndRecover(
  open: MemoryProcess[],
  crashAt: number,
  strike?: (op: string, path: string) => boolean,
): Promise<string | undefined> {
  const runs = newRuns();
  const scheduler = new CrashScheduler();
  const server = new MemoryZooKeeper({ scheduler });
  const builder = memoryProcess(server, 'builder', functions(runs));
  open.push(builder);
  const built = await build(builder);
  // The children's own tasks run in a process never struck: the sweep is of the sub-plan task's writes.
  const childRunner = memoryProcess(server, 'children', functions(runs));
  open.push(childRunner);
  void childRunner.zkPlan.startWorkers(CHILDREN, { count: 2, backoff: FAST_BACKOFF });
  // Not among `open`: a crashed process is never closed (its client is dead; a close would wait on it).
  const doomed = memoryProcess(server, 'doomed', functions(runs));
  const victim = new Victim(server, doomed.zk, crashAt, strike);
  scheduler.victim = victim;
  void doomed.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
  const crashed = await Promise.race([
    victim.crashed.then(() => true),
    waitCompleted(builder, built.plan),
  ]);
  scheduler.victim = undefined;
  if (!crashed) {
    await doomed.zkPlan.close();
    await expectOneChild(builder, built, runs, () => victim.describe());
    return undefined;
  }
  const survivor = memoryProcess(server, 'survivor', functions(runs), { fullScanIntervalMs: 100 });
  open.push(survivor);
  survivor.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
  await expectOneChild(
    survivor,
    built,
    runs,
    () => `${victim.describe()}\n${server.dump(CHILDREN)}`,
  );
  return victim.describe();
}

/** N = 1, 2, … until the checking worker gets through without a crash: every point it passed. */
export async function subPlanCrashSweep(open: MemoryProcess[]): Promise<string[]> {
  const points: string[] = [];
  for (let crashAt = 1; crashAt <= MAX_POINTS; crashAt++) {
    const point = await crashAndRecover(open, crashAt);
    await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close().catch(() => undefined)));
    if (point === undefined) {
      points.push(`no crash after ${crashAt - 1} points`);
      return points;
    }
    points.push(point);
  }
  throw new Error(`the checking worker still crashed at write ${MAX_POINTS}`);
}
