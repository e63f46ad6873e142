import superjson from 'superjson';
import { afterEach, describe, expect, it } from 'vitest';
import { SnapshotError } from '../../src/errors/snapshot-errors.js';
import { PlanSpecError } from '../../src/errors/spec-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry, call, type TaskContext } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { PlanSnapshot } from '../../src/snapshot/plan-snapshot.js';
import { expectRejects } from '../support/expect-error.js';
import { SNAPSHOT_SPEC, snapshotFunctions } from '../support/snapshot-fixture.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';

interface Server {
  readonly server: MemoryZooKeeper;
  readonly runs: string[];
  readonly proc: MemoryProcess;
  readonly gate: { open: () => void };
}

const open: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

/** A server with one worker process; `flakyFails`: whether `flaky` fails for good there; `gated`: whether `clean` waits for gate.open(). */
function server(name: string, options: { flakyFails: boolean; gated: boolean }): Server {
  const runs: string[] = [];
  let release: () => void = () => undefined;
  const gateOpen = options.gated
    ? new Promise<void>((resolve) => (release = resolve))
    : Promise.resolve();
  const functions = snapshotFunctions(runs, options.flakyFails, gateOpen);
  const memory = new MemoryZooKeeper();
  const proc = memoryProcess(memory, name, functions);
  open.push(proc);
  proc.zkPlan.startWorkers(PARENT, { count: 3, backoff: FAST_BACKOFF, retention: false });
  return { server: memory, runs, proc, gate: { open: () => release() } };
}

async function results(
  proc: MemoryProcess,
  tasks: Record<string, string>,
): Promise<Record<string, unknown>> {
  return Object.fromEntries(
    await Promise.all(
      Object.entries(tasks).map(
        async ([key, task]) => [key, await proc.zkPlan.getResult(task)] as const,
      ),
    ),
  );
}

describe('exportPlan and importPlan', () => {
  it('moves a half-run plan (some tasks done, one failed) to another server, where the done tasks do not run again and the results equal an uninterrupted run', async () => {
    const reference = server('reference', { flakyFails: false, gated: false });
    const whole = await reference.proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await reference.proc.zkPlan.waitForCompletion(whole.plan, { timeoutMs: 10_000 });
    const expected = await results(reference.proc, whole.tasks);

    const first = server('first', { flakyFails: true, gated: true });
    const { plan } = await first.proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await expect.poll(() => first.runs.sort()).toEqual(['audit', 'extract', 'flaky (failed)']);
    // A function that returned is not yet a task done: its result, history record and hand-on follow (longer on a loaded machine).
    const states = async (): Promise<string[]> => {
      const { tasks } = await first.proc.zkPlan.snapshots.export(plan);
      return [tasks['audit']?.state ?? '', tasks['flaky']?.state ?? ''];
    };
    await expect.poll(states).toEqual(['done', 'failed']);
    const snapshot = await first.proc.zkPlan.snapshots.export(plan);
    expect(
      Object.fromEntries(Object.entries(snapshot.tasks).map(([key, task]) => [key, task.state])),
    ).toEqual({
      extract: 'done',
      clean: 'running', // waiting at the gate
      report: 'waiting',
      audit: 'done',
      flaky: 'failed',
      late: 'waiting',
    });
    expect(snapshot.source).toBe('spec-record');
    expect(snapshot.tasks['extract']).toMatchObject({
      hasResult: true,
      result: 10,
      resultFrom: 'kept',
    });
    expect(snapshot.tasks['clean']).toEqual({ state: 'running', failedTries: 0 });
    expect(snapshot.tasks['flaky']).toMatchObject({
      failedTries: 1,
      failure: { code: 'PERMANENT', message: expect.stringContaining('flaky fails here') },
    });
    first.gate.open();

    const second = server('second', { flakyFails: false, gated: false });
    const imported = await second.proc.zkPlan.snapshots.import(PARENT, structuredClone(snapshot));
    expect(
      (await second.proc.zkPlan.plans.status(imported.plan)).failed.map(({ task }) => task),
    ).toEqual([imported.tasks['flaky']]);
    expect(await second.proc.zkPlan.control.retryFailed(imported.plan)).toEqual([
      imported.tasks['flaky'],
    ]);
    await second.proc.zkPlan.waitForCompletion(imported.plan, { timeoutMs: 10_000 });
    expect(second.runs.sort()).toEqual(['clean', 'flaky', 'late', 'report']);
    expect(await results(second.proc, imported.tasks)).toEqual(expected);
    expect(imported.existing).toBe(false);
  });

  it('is safe to repeat: the same snapshot imported again under the same parent (also read back from superjson) returns the first plan', async () => {
    const source = server('source', { flakyFails: false, gated: false });
    const done = await source.proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await source.proc.zkPlan.waitForCompletion(done.plan, { timeoutMs: 10_000 });
    const snapshot = await source.proc.zkPlan.snapshots.export(done.plan);
    const halfway = {
      ...snapshot,
      tasks: { ...snapshot.tasks, report: { state: 'runnable' as const, failedTries: 0 } },
    };

    const target = server('target', { flakyFails: false, gated: false });
    const first = await target.proc.zkPlan.snapshots.import(PARENT, halfway);
    await target.proc.zkPlan.waitForCompletion(first.plan, { timeoutMs: 10_000 });
    const again = await target.proc.zkPlan.snapshots.import(
      PARENT,
      superjson.parse<PlanSnapshot>(superjson.stringify(halfway)),
    );
    expect(again).toEqual({ ...first, existing: true });
    expect(target.server.children(PARENT).filter((name) => name.startsWith('plan-'))).toHaveLength(
      1,
    );
    expect(target.runs).toEqual(['report']);
    // Under another parent it is another import.
    target.proc.zkPlan.startWorkers('/elsewhere', {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: false,
    });
    const elsewhere = await target.proc.zkPlan.snapshots.import('/elsewhere', halfway);
    expect(elsewhere.existing).toBe(false);
    await target.proc.zkPlan.waitForCompletion(elsewhere.plan, { timeoutMs: 10_000 });
    expect(target.runs).toEqual(['report', 'report']);
  });

  it("needs no function of a done task where it is imported, and carries each state's tries", async () => {
    const source = server('source', { flakyFails: false, gated: false });
    const done = await source.proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await source.proc.zkPlan.waitForCompletion(done.plan, { timeoutMs: 10_000 });
    const snapshot = await source.proc.zkPlan.snapshots.export(done.plan);
    expect(
      Object.values(snapshot.tasks).every(
        (task) => task.state === 'done' && task.hasResult && task.resultFrom === 'kept',
      ),
    ).toBe(true);
    // Only `gated` is registered there: every task but `clean` is done, so no other function is needed.
    const runs: string[] = [];
    const memory = new MemoryZooKeeper();
    const gatedOnly = memoryProcess(
      memory,
      'gated-only',
      new FunctionRegistry().register(
        'gated',
        (_ctx: TaskContext, n: number) => (runs.push('clean'), n + 1),
      ),
    );
    open.push(gatedOnly);
    gatedOnly.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    const imported = await gatedOnly.zkPlan.snapshots.import(PARENT, {
      ...snapshot,
      tasks: { ...snapshot.tasks, clean: { state: 'retrying', failedTries: 2, lastError: 'x' } },
    });
    await gatedOnly.zkPlan.waitForCompletion(imported.plan, { timeoutMs: 10_000 });
    expect(runs).toEqual(['clean']); // its tries start afresh: the snapshot's count is for reading
    expect(await gatedOnly.zkPlan.getResult(imported.tasks['clean'] as string)).toBe(11);
  });

  it('refuses what it cannot import, naming the problem, and writes nothing', async () => {
    const { proc, server: memory } = server('a', { flakyFails: false, gated: false });
    const bad = await expectRejects(
      () => proc.zkPlan.snapshots.import(PARENT, { format: 'other' } as unknown as PlanSnapshot),
      SnapshotError,
    );
    expect(bad.code).toBe('SNAPSHOT_INVALID');
    const snapshot: PlanSnapshot = {
      format: 'zk-plan-snapshot',
      version: 1,
      exportedAt: new Date().toISOString(),
      plan: '/elsewhere/plan-0000000001',
      spec: {
        tasks: {
          a: { fn: 'count', params: ['a', 1] },
          b: { fn: 'count', params: ['b', 2], inputs: ['a'] },
        },
      },
      params: {},
      options: {},
      source: 'spec-record',
      tasks: { a: { state: 'done', hasResult: false }, b: { state: 'waiting', failedTries: 0 } },
    };
    const missing = await expectRejects(
      () => proc.zkPlan.snapshots.import(PARENT, snapshot),
      SnapshotError,
    );
    expect([missing.code, missing.key]).toEqual(['SNAPSHOT_RESULT_MISSING', 'a']);
    expect(missing.message).toContain('export the plan again while the result is stored');
    const noState = await expectRejects(
      () =>
        proc.zkPlan.snapshots.import(PARENT, {
          ...snapshot,
          tasks: { a: snapshot.tasks['a'] },
        } as PlanSnapshot),
      SnapshotError,
    );
    expect([noState.code, noState.key]).toEqual(['SNAPSHOT_INVALID', 'b']);
    const spec = await expectRejects(
      () =>
        proc.zkPlan.snapshots.import(PARENT, {
          ...snapshot,
          spec: { tasks: { ...snapshot.spec.tasks, b: { fn: 'count', inputs: ['zz'] } } },
        }),
      PlanSpecError,
    );
    expect([spec.code, spec.key]).toEqual(['SPEC_UNKNOWN_INPUT', 'b']);
    const entry = await expectRejects(
      () =>
        proc.zkPlan.snapshots.import(PARENT, {
          ...snapshot,
          spec: { tasks: { ...snapshot.spec.tasks, a: null } },
        } as unknown as PlanSnapshot),
      PlanSpecError,
    );
    expect([entry.code, entry.key]).toEqual(['SPEC_INVALID', 'a']);
    expect(memory.children(PARENT).filter((name) => name.startsWith('plan-'))).toEqual([]);
  });

  it('checks its arguments, naming the plan, and refuses a cancelled plan', async () => {
    const { proc } = server('a', { flakyFails: false, gated: false });
    await expect(proc.zkPlan.snapshots.export('plans/plan-1')).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(proc.zkPlan.snapshots.export('/plans/plan-0000000099')).rejects.toMatchObject({
      code: 'PLAN_NOT_FOUND',
      path: '/plans/plan-0000000099',
    });
    await expect(
      proc.zkPlan.snapshots.import('nowhere', {} as PlanSnapshot),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      proc.zkPlan.snapshots.import(PARENT, null as unknown as PlanSnapshot),
    ).rejects.toMatchObject({ code: 'SNAPSHOT_INVALID' });
    const { plan } = await proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await expect(proc.zkPlan.snapshots.rerun(plan, {} as { from: string })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      path: plan,
    });
    await expect(
      proc.zkPlan.snapshots.rerun(plan, { from: 'clean', form: 1 } as { from: string }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      path: plan,
    });
    await expect(
      proc.zkPlan.snapshots.rerun('/plans/plan-0000000099', { from: 'clean' }),
    ).rejects.toMatchObject({ code: 'PLAN_NOT_FOUND' });
    const cancelled = await proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await proc.zkPlan.control.cancel(cancelled.plan);
    await expect(proc.zkPlan.snapshots.export(cancelled.plan)).rejects.toMatchObject({
      code: 'SNAPSHOT_PLAN_CANCELLED',
      path: cancelled.plan,
    });
  });
});

describe('rerunPlan', () => {
  it('after completion, from a middle task: only it and its downstream run, and the results are the same', async () => {
    const { proc, runs } = server('a', { flakyFails: false, gated: false });
    const first = await proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await proc.zkPlan.waitForCompletion(first.plan, { timeoutMs: 10_000 });
    const expected = await results(proc, first.tasks);
    runs.length = 0;
    const rerun = await proc.zkPlan.snapshots.rerun(first.plan, { from: 'clean' });
    await proc.zkPlan.waitForCompletion(rerun.plan, { timeoutMs: 10_000 });
    expect(runs.sort()).toEqual(['clean', 'report']);
    expect(await results(proc, rerun.tasks)).toEqual(expected);
    expect(rerun.existing).toBe(false);
    await expect(proc.zkPlan.snapshots.rerun(first.plan, { from: 'nope' })).rejects.toMatchObject({
      code: 'RERUN_UNKNOWN_KEY',
      key: 'nope',
    });
    await expect(proc.zkPlan.snapshots.rerun(first.plan, { from: 'failed' })).rejects.toMatchObject(
      { code: 'RERUN_NOTHING_FAILED' },
    );
    // A rerun of the rerun: the new plan has a spec record too.
    runs.length = 0;
    const again = await proc.zkPlan.snapshots.rerun(rerun.plan, { from: 'report' });
    await proc.zkPlan.waitForCompletion(again.plan, { timeoutMs: 10_000 });
    expect(runs).toEqual(['report']);
    expect(await results(proc, again.tasks)).toEqual(expected);
  });

  it('refuses a plan without a spec record, and an upstream result that is gone, naming the task and what to do; nothing is written', async () => {
    const { proc, server: memory } = server('a', { flakyFails: false, gated: false });
    const built = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(built, call('count', 'x', 1));
    await proc.zkPlan.markAsReady(built);
    await expect(proc.zkPlan.snapshots.rerun(built, { from: 'x' })).rejects.toMatchObject({
      code: 'RERUN_NO_SPEC',
      path: built,
    });
    const spec = {
      tasks: {
        ...SNAPSHOT_SPEC.tasks,
        extract: { fn: 'count', params: ['extract', 10], options: { keepResult: false } },
      },
    };
    const { plan } = await proc.zkPlan.submitPlan(PARENT, spec);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const before = memory.children(PARENT).length;
    const gone = await expectRejects(
      () => proc.zkPlan.snapshots.rerun(plan, { from: 'clean' }),
      SnapshotError,
    );
    expect([gone.code, gone.key, gone.path]).toEqual(['SNAPSHOT_RESULT_MISSING', 'extract', plan]);
    expect(gone.message).toContain('rerun from "extract" instead');
    expect(memory.children(PARENT)).toHaveLength(before);
  });

  it("from 'failed': the failed tasks and their downstream run again", async () => {
    const { proc, runs } = server('a', { flakyFails: true, gated: false });
    const first = await proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await expect(
      proc.zkPlan.waitForCompletion(first.plan, { timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ code: 'PLAN_FAILED' });
    runs.length = 0;
    const rerun = await proc.zkPlan.snapshots.rerun(first.plan, { from: 'failed' });
    await expect(
      proc.zkPlan.waitForCompletion(rerun.plan, { timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ code: 'PLAN_FAILED' });
    expect(runs).toEqual(['flaky (failed)']); // the rest reused: nothing else ran
  });
});

describe('rerunPlan beside a failed task', () => {
  it('from a key of a failFast plan with a failed task outside the rerun: refused, naming it, nothing written; under continue it runs the rerun and the plan ends failed', async () => {
    const { proc, runs, server: memory } = server('a', { flakyFails: true, gated: false });
    const failFast = await proc.zkPlan.submitPlan(PARENT, {
      ...SNAPSHOT_SPEC,
      options: { failurePolicy: 'failFast' },
    });
    await expect(
      proc.zkPlan.waitForCompletion(failFast.plan, { timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ code: 'PLAN_FAILED' });
    const before = memory.children(PARENT).length;
    const blocked = await expectRejects(
      () => proc.zkPlan.snapshots.rerun(failFast.plan, { from: 'clean' }),
      SnapshotError,
    );
    expect([blocked.code, blocked.key, blocked.path]).toEqual([
      'RERUN_BLOCKED_BY_FAILED',
      'clean',
      failFast.plan,
    ]);
    expect(blocked.message).toContain('"flaky"');
    expect(blocked.message).toContain("rerun from 'failed' first");
    expect(memory.children(PARENT)).toHaveLength(before);

    const continuing = await proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await expect(
      proc.zkPlan.waitForCompletion(continuing.plan, { timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ code: 'PLAN_FAILED' });
    runs.length = 0;
    const rerun = await proc.zkPlan.snapshots.rerun(continuing.plan, { from: 'clean' });
    await expect(
      proc.zkPlan.waitForCompletion(rerun.plan, { timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ code: 'PLAN_FAILED' });
    expect(runs.sort()).toEqual(['clean', 'report']);
  });
});

describe('importPlan cut short', () => {
  it('after any of its writes leaves a plan that runs nothing; importing again replaces it and runs to the same results, once', async () => {
    const source = server('source', { flakyFails: false, gated: false });
    const done = await source.proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await source.proc.zkPlan.waitForCompletion(done.plan, { timeoutMs: 10_000 });
    const expected = await results(source.proc, done.tasks);
    const snapshot = await source.proc.zkPlan.snapshots.export(done.plan);
    const halfway: PlanSnapshot = {
      ...snapshot,
      tasks: {
        ...snapshot.tasks,
        report: { state: 'waiting', failedTries: 0 },
        late: { state: 'runnable', failedTries: 0 },
      },
    };

    // How many writes one import takes, undisturbed.
    const probe = server('probe', { flakyFails: false, gated: false });
    let writes = 0;
    probe.server.onApplied = (event) => {
      if (
        event.clientName === 'importer' &&
        event.ok &&
        ['create', 'setData', 'delete'].includes(event.op)
      )
        writes += 1;
    };
    const probeImporter = memoryProcess(
      probe.server,
      'importer',
      snapshotFunctions([], false, Promise.resolve()),
    );
    open.push(probeImporter);
    await probeImporter.zkPlan.snapshots.import(PARENT, halfway);
    expect(writes).toBeGreaterThan(10);

    for (let n = 1; n <= writes; n++) {
      const target = server(`target-${n}`, { flakyFails: false, gated: false });
      const importer = memoryProcess(
        target.server,
        'importer',
        snapshotFunctions([], false, Promise.resolve()),
      );
      let seen = 0;
      target.server.onApplied = (event) => {
        if (
          event.clientName !== 'importer' ||
          !event.ok ||
          !['create', 'setData', 'delete'].includes(event.op)
        )
          return;
        if (++seen === n) {
          importer.zk.crash();
          target.server.expireSession(event.sessionId);
        }
      };
      void importer.zkPlan.snapshots.import(PARENT, halfway).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const plans = (): string[] =>
        target.server.children(PARENT).filter((name) => name.startsWith('plan-'));
      const readied = plans().filter((name) => target.server.exists(`${PARENT}/${name}/ready`));
      expect(readied.length, `crash after write ${n}`).toBeLessThanOrEqual(1);
      if (readied.length === 0) expect(target.runs, `crash after write ${n}`).toEqual([]); // the half-made plan is not ready: nothing of it runs
      const again = await target.proc.zkPlan.snapshots.import(PARENT, halfway);
      // Cut short after `ready` (its last write but the touch), the plan is whole: the repeat returns it.
      expect(again.existing, `crash after write ${n}`).toBe(readied.length === 1);
      expect(plans(), `crash after write ${n}`).toEqual([again.plan.slice(PARENT.length + 1)]);
      await target.proc.zkPlan.waitForCompletion(again.plan, { timeoutMs: 10_000 });
      expect(await results(target.proc, again.tasks), `crash after write ${n}`).toEqual(expected);
      expect(target.runs.sort(), `crash after write ${n}`).toEqual(['late', 'report']);
    }
  });
});
