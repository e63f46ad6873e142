/**
 * Plans and checks shared by the fault tests (integ/faults): a seeded layered plan of `work` tasks
 * whose every result is known in advance, the checks run on the execution log, the figures they
 * print, and the wait for a plan's completion that tells a stuck plan early.
 */
import { statSync } from 'node:fs';
import { call, type ZkPlan } from '../../src/index.js';
import { prng } from '../../examples/seeded-random.js';
import { WORK_MODULUS, type Execution, type LogEntry } from './execution-log.js';
import { waitFor } from './zk-test-env.js';

export interface PlannedTask {
  readonly path: string;
  readonly label: string;
  /** The task's inputs, as indices into the plan's task list, in argument order. */
  readonly inputs: readonly number[];
  /** Its result, computed here the way `work` computes it. */
  readonly expected: number;
}

export interface LayeredPlanShape {
  /** Tasks without inputs. */
  readonly independent: number;
  /** Tasks each depending on 2–3 earlier tasks. */
  readonly dependent: number;
  /** Tasks each depending on `fanInWidth` earlier tasks. */
  readonly fanIns: number;
  readonly fanInWidth?: readonly [number, number];
  /** Run time of each task, drawn uniformly. */
  readonly msRange: readonly [number, number];
  readonly seed: number;
  /** Tasks added concurrently; a task's inputs are always in earlier batches. @defaultValue 25 */
  readonly batch?: number;
}

/**
 * Adds a layered plan of `work` tasks (all with keepResult, so every result can be checked):
 * independent ones, then dependents of 2–3 earlier tasks, then fan-ins. Returns the tasks in order.
 */
export async function addLayeredPlan(
  zkPlan: ZkPlan,
  plan: string,
  shape: LayeredPlanShape,
): Promise<PlannedTask[]> {
  const random = prng(shape.seed);
  const between = (low: number, high: number): number =>
    low + Math.floor(random() * (high - low + 1));
  const batch = shape.batch ?? 25;
  const [fanLow, fanHigh] = shape.fanInWidth ?? [5, 10];
  const total = shape.independent + shape.dependent + shape.fanIns;
  const specs: { label: string; inputs: number[]; ms: number; add: number; expected: number }[] =
    [];
  for (let index = 0; index < total; index++) {
    const available = Math.floor(index / batch) * batch; // inputs only from earlier batches
    let width = 0;
    if (index >= shape.independent + shape.dependent) width = between(fanLow, fanHigh);
    else if (index >= shape.independent) width = between(2, 3);
    width = Math.min(width, available);
    const inputs = Array.from({ length: width }, () => between(0, available - 1)); // repeats allowed, like the API
    const add = between(1, 1000);
    const expected =
      (add + inputs.reduce((sum, input) => sum + specs[input]!.expected, 0)) % WORK_MODULUS;
    specs.push({
      label: `t${index}`,
      inputs,
      ms: between(shape.msRange[0], shape.msRange[1]),
      add,
      expected,
    });
  }
  const paths: string[] = [];
  for (let start = 0; start < total; start += batch) {
    const added = await Promise.all(
      specs.slice(start, start + batch).map(({ label, inputs, ms, add }) =>
        zkPlan.addTask(
          plan,
          call('work', { label, ms, add }),
          inputs.map((input) => paths[input]!),
          { keepResult: true },
        ),
      ),
    );
    paths.push(...added);
  }
  return specs.map(({ label, inputs, expected }, index) => ({
    path: paths[index]!,
    label,
    inputs,
    expected,
  }));
}

/**
 * Everything that must hold of a finished plan: each task's kept result is its expected value,
 * each task ran at least once to its end, and every run (re-runs too) got the expected inputs
 * in order and returned the expected value. Returns the problems found (empty when all is right).
 */
export async function checkPlanOutcome(
  zkPlan: ZkPlan,
  tasks: readonly PlannedTask[],
  entries: readonly LogEntry[],
): Promise<string[]> {
  const problems: string[] = [];
  const kept = await Promise.all(
    tasks.map((task) => zkPlan.getResult(task.path).catch((error: unknown) => error)),
  );
  const byTask = new Map<string, LogEntry[]>();
  for (const entry of entries) byTask.set(entry.task, [...(byTask.get(entry.task) ?? []), entry]);
  tasks.forEach((task, index) => {
    const value = kept[index];
    if (value !== task.expected)
      problems.push(
        `${task.label} (${task.path}): kept result ${describe(value)}, expected ${task.expected}`,
      );
    const runs = byTask.get(task.path) ?? [];
    if (!runs.some((entry) => entry.event === 'end'))
      problems.push(`${task.label}: no run of it reached its end (task lost?)`);
    const expectedArgs = JSON.stringify(task.inputs.map((input) => tasks[input]!.expected));
    for (const entry of runs) {
      if (entry.event === 'start' && JSON.stringify(entry.args) !== expectedArgs) {
        problems.push(
          `${task.label}: run ${entry.run} got inputs ${JSON.stringify(entry.args)}, expected ${expectedArgs}`,
        );
      }
      if (entry.event === 'end' && entry.result !== task.expected)
        problems.push(
          `${task.label}: run ${entry.run} returned ${describe(entry.result)}, expected ${task.expected}`,
        );
    }
  });
  const known = new Set(tasks.map((task) => task.path));
  for (const entry of entries)
    if (!known.has(entry.task)) problems.push(`a run of an unknown task ${entry.task}`);
  return problems.slice(0, 50);
}

function describe(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}` : JSON.stringify(value);
}

/** The share of `tasks` whose function has returned at least once, from the log. */
export function finishedShare(tasks: readonly PlannedTask[], entries: readonly LogEntry[]): number {
  const ended = new Set(
    entries.filter((entry) => entry.event === 'end').map((entry) => entry.task),
  );
  return tasks.filter((task) => ended.has(task.path)).length / tasks.length;
}

/** Distinct tasks that were started at least once. */
export function tasksRun(executions: readonly Execution[]): number {
  return new Set(executions.map((execution) => execution.task)).size;
}

/** Prints one summary line for a fault test, `[faults] <test>: key=value …`. */
export function printFigures(
  test: string,
  figures: Record<string, string | number | boolean>,
): void {
  const text = Object.entries(figures)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  console.log(`[faults] ${test}: ${text}`);
}

/**
 * What is left of a plan that did not complete: each remaining task with its children and, when
 * it has an `owner`, the owner's worker id and session; for a failure message.
 */
export async function describeRemainingTasks(
  zkPlan: ZkPlan,
  plan: string,
  limit = 20,
): Promise<string> {
  const listing = await zkPlan.zk.tryGetChildren(plan);
  if (listing === undefined) return `${plan} does not exist`;
  const tasks = listing.children.filter((name) => name.startsWith('task-')).sort();
  const lines = await Promise.all(
    tasks.slice(0, limit).map(async (name) => {
      const task = `${plan}/${name}`;
      const children = (await zkPlan.zk.tryGetChildren(task))?.children.sort() ?? [];
      const owner = children.includes('owner')
        ? await zkPlan.zk.tryGetData(`${task}/owner`)
        : undefined;
      const holder =
        owner === undefined
          ? ''
          : ` owner=${owner.data?.toString('utf8') ?? ''} session=0x${owner.stat.ephemeralOwner}`;
      return `  ${name}: [${children.join(', ')}]${holder}`;
    }),
  );
  return `${tasks.length} task(s) left in ${plan}:\n${lines.join('\n')}`;
}

/**
 * Waits for the plan to complete (ZooKeeper watch), failing early when the execution log has not
 * grown for `stallMs` × TIMING (no run started or ended: the plan is stuck) and at `timeoutMs` at the
 * latest. The error lists the tasks left (with their owners) and `context()` (e.g. worker output).
 */
export async function awaitPlanCompletion(
  zkPlan: ZkPlan,
  plan: string,
  {
    logFile,
    timeoutMs,
    stallMs = 20_000,
    context = () => '',
  }: { logFile: string; timeoutMs: number; stallMs?: number; context?: () => string },
): Promise<void> {
  const done = new AbortController();
  const completion = zkPlan.waitForCompletion(plan, { timeoutMs, signal: done.signal });
  // Each round waits for the log to grow: a round that times out is the stall.
  const stall = (async (): Promise<never> => {
    let size = statSync(logFile).size;
    for (;;) {
      size = await waitFor(
        'a task run to start or end (the plan is stalled)',
        () => {
          const now = statSync(logFile).size;
          return now !== size ? now : undefined;
        },
        { timeoutMs: stallMs, intervalMs: 250, signal: done.signal },
      );
    }
  })();
  completion.catch(() => undefined);
  stall.catch(() => undefined);
  try {
    await Promise.race([completion, stall]);
  } catch (error) {
    const remaining = await describeRemainingTasks(zkPlan, plan).catch(
      (listError: unknown) => `(could not list the tasks left: ${String(listError)})`,
    );
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\n${remaining}\n${context()}`,
    );
  } finally {
    done.abort();
  }
}
