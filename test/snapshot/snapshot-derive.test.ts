/**
 * exportPlan of plans built with addTask (no spec record): a spec derived from the task graph,
 * keyed by task name, with and without the plan's history; and their import elsewhere.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SnapshotError } from '../../src/errors/snapshot-errors.js';
import { FunctionRegistry, call, inline, type TaskContext } from '../../src/index.js';
import { UNKNOWN_FUNCTION, type PlanSnapshot } from '../../src/snapshot/plan-snapshot.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { nameOf } from '../../src/zk/layout.js';
import { expectRejects } from '../support/expect-error.js';
import { snapshotFunctions } from '../support/snapshot-fixture.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

/** Imports `snapshot` on a new server, runs it: only `three` and `four` run, and `four` comes to 11. */
async function importAndRunElsewhere(
  snapshot: PlanSnapshot,
  four: string,
): Promise<{
  second: MemoryProcess;
  imported: { plan: string; tasks: Readonly<Record<string, string>> };
}> {
  const runs: string[] = [];
  const second = processOn('second', runs, Promise.resolve());
  const imported = await second.zkPlan.snapshots.import(PARENT, snapshot);
  await second.zkPlan.waitForCompletion(imported.plan, { timeoutMs: 10_000 });
  expect(runs.sort()).toEqual(['four', 'three']);
  expect(await second.zkPlan.getResult(imported.tasks[four] as string)).toBe(11);
  return { second, imported };
}

function processOn(name: string, runs: string[], gate: Promise<void>): MemoryProcess {
  const proc = memoryProcess(new MemoryZooKeeper(), name, snapshotFunctions(runs, false, gate));
  open.push(proc);
  proc.zkPlan.startWorkers(PARENT, { count: 3, backoff: FAST_BACKOFF, retention: false });
  return proc;
}

/** one → two → three (gated, takes two and one) → four; `three` is caught running. Uninterrupted: 1, 3, 7, 11. */
async function halfRunPlan(history: boolean): Promise<{
  proc: MemoryProcess;
  runs: string[];
  plan: string;
  names: string[];
  release: () => void;
}> {
  const runs: string[] = [];
  let release: () => void = () => undefined;
  const proc = processOn('first', runs, new Promise<void>((resolve) => (release = resolve)));
  const plan = await proc.zkPlan.createPlan(PARENT, { history, failurePolicy: 'failFast' });
  const one = await proc.zkPlan.addTask(plan, call('count', 'one', 1));
  const two = await proc.zkPlan.addTask(plan, call('count', 'two', 2), [one]);
  const three = await proc.zkPlan.addTask(plan, call('gated', 'three', 3), [two, one], {
    timeoutMs: 60_000,
  });
  const four = await proc.zkPlan.addTask(plan, call('count', 'four', 4), [three], {
    keepResult: true,
    priority: 2,
  });
  await proc.zkPlan.markAsReady(plan);
  await expect
    .poll(
      async () =>
        (await proc.zkPlan.plans.describe(plan)).tasks.find((task) => task.task === three)?.state,
    )
    .toBe('running');
  return { proc, runs, plan, names: [one, two, three, four].map(nameOf), release };
}

describe('exportPlan of a plan built with addTask', () => {
  it('with history: every task, done ones included, keyed by task name, with inputs, options and results; imported, only the unfinished run', async () => {
    const first = await halfRunPlan(true);
    const [one, two, three, four] = first.names as [string, string, string, string];
    const snapshot = await first.proc.zkPlan.snapshots.export(first.plan);
    first.release();
    expect(snapshot.source).toBe('task-graph');
    expect(snapshot.gaps).toEqual([]);
    expect(snapshot.spec).toEqual({
      tasks: {
        [one]: { fn: 'count', params: ['one', 1], options: { keepResult: false } },
        [two]: { fn: 'count', params: ['two', 2], options: { keepResult: false }, inputs: [one] },
        [three]: {
          fn: 'gated',
          params: ['three', 3],
          options: { timeoutMs: 60_000 },
          inputs: [two, one],
        },
        [four]: {
          fn: 'count',
          params: ['four', 4],
          options: { keepResult: true, priority: 2 },
          inputs: [three],
        },
      },
      options: {
        failurePolicy: 'failFast',
        history: true,
        priority: 0,
        maxAttempts: 3,
        initialDelayMs: 1000,
        multiplier: 2,
        maxDelayMs: 60_000,
      },
    });
    // Neither kept its result: it is found as the input `three` holds, through the history record's outputs.
    expect(snapshot.tasks).toEqual({
      [one]: { state: 'done', hasResult: true, result: 1, resultFrom: 'input', failedTries: 0 },
      [two]: { state: 'done', hasResult: true, result: 3, resultFrom: 'input', failedTries: 0 },
      [three]: { state: 'running', failedTries: 0 },
      [four]: { state: 'waiting', failedTries: 0 },
    });

    const { second, imported } = await importAndRunElsewhere(snapshot, four);
    // The import has a spec record: it can be exported as it was submitted, and rerun.
    expect((await second.zkPlan.snapshots.export(imported.plan)).source).toBe('spec-record');
  });

  it('without history: what finished and was deleted is carried as what it left (inputs a live task holds), named in gaps', async () => {
    const first = await halfRunPlan(false);
    const [, , three, four] = first.names as [string, string, string, string];
    const snapshot = await first.proc.zkPlan.snapshots.export(first.plan);
    first.release();
    const [twoInput, oneInput] = (snapshot.spec.tasks[three]?.inputs ?? []) as [string, string];
    expect(twoInput).toMatch(new RegExp(`^${three}/arg-\\d{10}$`));
    expect(oneInput).toMatch(new RegExp(`^${three}/arg-\\d{10}$`));
    expect(twoInput < oneInput).toBe(true); // argument order
    expect(Object.keys(snapshot.spec.tasks).sort()).toEqual(
      [three, twoInput, oneInput, four].sort(),
    );
    expect(snapshot.spec.tasks[twoInput]).toEqual({ fn: UNKNOWN_FUNCTION, params: [] });
    expect(snapshot.tasks[twoInput]).toEqual({
      state: 'done',
      hasResult: true,
      result: 3,
      resultFrom: 'input',
    });
    expect(snapshot.tasks[oneInput]).toEqual({
      state: 'done',
      hasResult: true,
      result: 1,
      resultFrom: 'input',
    });
    expect(snapshot.gaps).toEqual([expect.stringContaining('the plan keeps no history')]);

    // Imported where `zk-plan:unknown` is not registered: done tasks are never called.
    await importAndRunElsewhere(snapshot, four);
  });

  it('carries a kept result of a deleted task under its name, and refuses an inline task still to run (SNAPSHOT_UNDERIVABLE naming it)', async () => {
    const runs: string[] = [];
    const proc = processOn('first', runs, Promise.resolve());
    const plan = await proc.zkPlan.createPlan(PARENT, { history: false });
    const kept = await proc.zkPlan.addTask(plan, call('count', 'kept', 5), [], {
      keepResult: true,
    });
    await proc.zkPlan.markAsReady(plan);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const snapshot = await proc.zkPlan.snapshots.export(plan);
    expect(snapshot.spec.tasks).toEqual({ [nameOf(kept)]: { fn: UNKNOWN_FUNCTION, params: [] } });
    expect(snapshot.tasks).toEqual({
      [nameOf(kept)]: { state: 'done', hasResult: true, result: 5, resultFrom: 'kept' },
    });

    // No worker allows inline functions: the task stays to run.
    const withInline = await proc.zkPlan.createPlan(PARENT);
    const sandboxed = await proc.zkPlan.addTask(
      withInline,
      inline(() => 1),
    );
    await proc.zkPlan.markAsReady(withInline);
    const error = await expectRejects(
      () => proc.zkPlan.snapshots.export(withInline),
      SnapshotError,
    );
    expect([error.code, error.key]).toEqual(['SNAPSHOT_UNDERIVABLE', nameOf(sandboxed)]);
  });
});
