/**
 * The failure hand-on's crash sweep and its plan, shared by trigger-crashes.test.ts and the self-test
 * of the mutant hand-on-failure-after-mark (test/mutants): a task fails for good; a clean-up under
 * `allDone` takes it directly and through a task it blocks; a `oneFailed` branch takes it too. The
 * worker process that fails the task dies right before each of its writes in turn, and a survivor
 * finishes the plan.
 */
import { expect } from 'vitest';
import {
  FunctionRegistry,
  PermanentError,
  PlanFailedError,
  call,
  type InputOutcome,
} from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim, WRITE_OPS } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

export const PARENT = '/plans';
export const MAX_POINTS = 150;

export interface Runs {
  extract: number;
  transform: number;
  cleanup: string[];
  branch: string[];
}

export function functions(runs: Runs): FunctionRegistry {
  const describe = (outcomes: InputOutcome[]): string =>
    outcomes
      .map((outcome) =>
        outcome.status === 'failed'
          ? `failed(${outcome.error.code}${outcome.error.blocked === undefined ? '' : ' blocked'})`
          : outcome.status,
      )
      .join(',');
  return new FunctionRegistry()
    .register('extract', () => {
      runs.extract += 1;
      throw new PermanentError('the source is gone', { code: 'SOURCE_GONE' });
    })
    .register('transform', () => {
      runs.transform += 1;
      return 'transformed';
    })
    .register('side', () => 'side')
    .register('cleanup', (_ctx, ...outcomes: InputOutcome[]) => {
      runs.cleanup.push(describe(outcomes));
      return 'cleaned';
    })
    .register('branch', (_ctx, ...outcomes: InputOutcome[]) => {
      runs.branch.push(describe(outcomes));
      return 'alerted';
    });
}

const CLEANUP = 'failed(SOURCE_GONE),failed(SOURCE_GONE blocked),succeeded';
const BRANCH = 'failed(SOURCE_GONE)';

export async function build(proc: MemoryProcess): Promise<{ plan: string; extract: string }> {
  const plan = await proc.zkPlan.createPlan(PARENT);
  const extract = await proc.zkPlan.addTask(plan, call('extract'), [], { key: 'extract' });
  const transform = await proc.zkPlan.addTask(plan, call('transform'), [extract], {
    key: 'transform',
  });
  const side = await proc.zkPlan.addTask(plan, call('side'), [], { key: 'side' });
  await proc.zkPlan.addTask(plan, call('cleanup'), [extract, transform, side], {
    key: 'cleanup',
    trigger: 'allDone',
  });
  await proc.zkPlan.addTask(plan, call('branch'), [extract], {
    key: 'branch',
    trigger: 'oneFailed',
  });
  await proc.zkPlan.markAsReady(plan);
  return { plan, extract };
}

export async function expectOneFailure(
  proc: MemoryProcess,
  plan: string,
  extract: string,
  runs: Runs,
  describeFault: () => string,
  runsMayRepeat: boolean,
) {
  const ended = await proc.zkPlan
    .waitForCompletion(plan, { timeoutMs: 10_000 })
    .then(() => undefined)
    .catch((error: unknown) => error);
  const where = describeFault();
  expect(ended, where).toBeInstanceOf(PlanFailedError);
  const status = await proc.zkPlan.plans.status(plan);
  expect(
    status.failed.map(({ task }) => task),
    where,
  ).toEqual([extract]);
  expect(status.counts, where).toMatchObject({ done: 3, failed: 1, blocked: 1, remaining: 2 });
  if (runsMayRepeat) {
    // A run whose process died, or whose claim's session expired, under it is run again (at least
    // once, never by two live owners): every run got the same outcomes.
    expect(new Set(runs.cleanup), where).toEqual(new Set([CLEANUP]));
    expect(new Set(runs.branch), where).toEqual(new Set([BRANCH]));
  } else {
    expect(runs.cleanup, where).toEqual([CLEANUP]);
    expect(runs.branch, where).toEqual([BRANCH]);
  }
  expect(runs.transform, where).toBe(0);
}

/** Resolves false once the plan has failed (the doomed process got through without a crash). */
async function waitFailed(proc: MemoryProcess, plan: string): Promise<false> {
  for (;;) {
    if ((await proc.zk.exists(`${plan}/failed`)) !== undefined) {
      await pause(50);
      return false;
    }
    await pause(5);
  }
}

/**
 * The failing worker dies before one of its writes (`crashAt`, or the first that `strike` accepts),
 * and a survivor must end the plan as expected (expectOneFailure). Resolves what happened, or
 * undefined when the worker got through without a crash. `open` collects the processes to close.
 */
export async function crashAndRecover(
  open: MemoryProcess[],
  crashAt: number,
  strike?: (op: string, path: string) => boolean,
): Promise<string | undefined> {
  const runs: Runs = { extract: 0, transform: 0, cleanup: [], branch: [] };
  const scheduler = new CrashScheduler();
  const server = new MemoryZooKeeper({ scheduler });
  const builder = memoryProcess(server, 'builder', functions(runs));
  open.push(builder);
  const { plan, extract } = await build(builder);
  // Every worker of a parent registers every function (a missing one is charged to the task).
  const doomed = memoryProcess(server, 'doomed', functions(runs));
  const victim = new Victim(server, doomed.zk, crashAt, strike);
  scheduler.victim = victim;
  void doomed.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF });
  const crashed = await Promise.race([victim.crashed.then(() => true), waitFailed(builder, plan)]);
  scheduler.victim = undefined;
  if (!crashed) {
    await doomed.zkPlan.close();
    return undefined;
  }
  const survivor = memoryProcess(server, 'survivor', functions(runs), {
    fullScanIntervalMs: 100,
  });
  open.push(survivor);
  survivor.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF });
  await expectOneFailure(
    survivor,
    plan,
    extract,
    runs,
    () => `${victim.describe()}\n${server.dump(plan)}`,
    true,
  );
  expect(runs.cleanup.length + runs.branch.length, victim.describe()).toBeLessThanOrEqual(3);
  expect(runs.extract, victim.describe()).toBeLessThanOrEqual(2);
  return `${victim.describe()}: extract ran ${runs.extract}×`;
}

type Strike = (op: string, path: string) => boolean;

/** Accepts the first write `matches` accepts once the final try's record was written (a write of the hand-on, not of a result). */
function afterFinalTry(matches: Strike): () => Strike {
  return () => {
    let final = false;
    return (op, path) => {
      if (final && matches(op, path)) return true;
      if (op === 'create' && path.endsWith('/attempts')) final = true;
      return false;
    };
  };
}

/** The writes of the failure's hand-on, each struck in turn whatever its place among the worker's writes. */
export const HAND_ON_WRITES: readonly { readonly name: string; readonly strike: () => Strike }[] = [
  {
    name: "the final try's record",
    strike: () => (op, path) => op === 'create' && path.endsWith('/attempts'),
  },
  {
    name: 'a failure handed on (its arg-N)',
    strike: afterFinalTry((op, path) => op === 'create' && /\/task-\d+\/arg-\d+$/.test(path)),
  },
  {
    name: 'the input it replaces (dep-N removed)',
    strike: afterFinalTry((op, path) => op === 'delete' && /\/task-\d+\/dep-\d+$/.test(path)),
  },
  {
    name: 'the link it went through (prov-N removed)',
    strike: afterFinalTry((op, path) => op === 'delete' && /\/task-\d+\/prov-\d+$/.test(path)),
  },
  {
    name: "the task's failed mark",
    strike: () => (op, path) => op === 'create' && /\/task-\d+\/failed$/.test(path),
  },
  {
    name: "the plan's failed mark",
    strike: () => (op, path) => op === 'create' && /\/plan-\d+\/failed$/.test(path),
  },
];

/**
 * Crashes the failing worker before its 1st, 2nd, … write until it gets through (the order of its
 * writes may vary from one run to the next), then before each write of the hand-on by name.
 * Resolves what each crash led to.
 */
export async function failureCrashSweep(open: MemoryProcess[]): Promise<string[]> {
  const points: string[] = [];
  for (let crashAt = 1; crashAt <= MAX_POINTS; crashAt++) {
    const point = await crashAndRecover(open, crashAt);
    if (point === undefined) {
      points.push(`no crash after ${crashAt - 1} crash points`);
      break;
    }
    points.push(point);
  }
  for (const { name, strike } of HAND_ON_WRITES) {
    const point = await crashAndRecover(open, 0, strike());
    points.push(`${name}: ${point ?? 'never written'}`);
  }
  return points;
}
