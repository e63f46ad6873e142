import { afterEach, describe, expect, it } from 'vitest';
import { SnapshotError } from '../src/errors/snapshot-errors.js';
import { MemoryZooKeeper } from '../src/testing/index.js';
import { rerunSelection } from '../src/snapshot/rerun.js';
import type { PlanSnapshot } from '../src/snapshot/plan-snapshot.js';
import { expectRejects } from './support/expect-error.js';
import { SNAPSHOT_SPEC, snapshotFunctions } from './support/snapshot-fixture.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from './support/memory-plan.js';

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
  const gateOpen = options.gated ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const functions = snapshotFunctions(runs, options.flakyFails, gateOpen);
  const memory = new MemoryZooKeeper();
  const proc = memoryProcess(memory, name, functions);
  open.push(proc);
  proc.zkPlan.startWorkers(PARENT, { count: 3, backoff: FAST_BACKOFF, retention: false });
  return { server: memory, runs, proc, gate: { open: () => release() } };
}

async function results(proc: MemoryProcess, tasks: Record<string, string>): Promise<Record<string, unknown>> {
  return Object.fromEntries(await Promise.all(Object.entries(tasks).map(async ([key, task]) => [key, await proc.zkPlan.getResult(task)] as const)));
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
    const snapshot = await first.proc.zkPlan.exportPlan(plan);
    expect(Object.fromEntries(Object.entries(snapshot.tasks).map(([key, task]) => [key, task.state]))).toEqual({
      extract: 'done',
      clean: 'pending', // running (waiting at the gate)
      report: 'pending',
      audit: 'done',
      flaky: 'failed',
      late: 'pending',
    });
    expect(snapshot.tasks['extract']).toMatchObject({ hasResult: true, result: 10 });
    expect(snapshot.tasks['flaky']).toMatchObject({ failure: { code: 'PERMANENT', message: expect.stringContaining('flaky fails here') } });
    first.gate.open();

    const second = server('second', { flakyFails: false, gated: false });
    const imported = await second.proc.zkPlan.importPlan(PARENT, structuredClone(snapshot));
    expect((await second.proc.zkPlan.planStatus(imported.plan)).failed.map(({ task }) => task)).toEqual([imported.tasks['flaky']]);
    expect(await second.proc.zkPlan.retryFailed(imported.plan)).toEqual([imported.tasks['flaky']]);
    await second.proc.zkPlan.waitForCompletion(imported.plan, { timeoutMs: 10_000 });
    expect(second.runs.sort()).toEqual(['clean', 'flaky', 'late', 'report']);
    expect(await results(second.proc, imported.tasks)).toEqual(expected);
  });

  it('refuses what it cannot import, naming the problem, and writes nothing', async () => {
    const { proc, server: memory } = server('a', { flakyFails: false, gated: false });
    const bad = await expectRejects(() => proc.zkPlan.importPlan(PARENT, { format: 'other' } as unknown as PlanSnapshot), SnapshotError);
    expect(bad.code).toBe('SNAPSHOT_INVALID');
    const snapshot: PlanSnapshot = {
      format: 'zk-plan-snapshot',
      version: 1,
      exportedAt: new Date().toISOString(),
      plan: '/elsewhere/plan-0000000001',
      spec: { tasks: { a: { fn: 'count', params: ['a', 1] }, b: { fn: 'count', params: ['b', 2], inputs: ['a'] } } },
      params: {},
      options: {},
      tasks: { a: { state: 'done', hasResult: false }, b: { state: 'pending', failures: 0 } },
    };
    const missing = await expectRejects(() => proc.zkPlan.importPlan(PARENT, snapshot), SnapshotError);
    expect([missing.code, missing.key]).toEqual(['SNAPSHOT_RESULT_MISSING', 'a']);
    const noState = await expectRejects(
      () => proc.zkPlan.importPlan(PARENT, { ...snapshot, tasks: { a: snapshot.tasks['a'] } } as PlanSnapshot),
      SnapshotError,
    );
    expect([noState.code, noState.key]).toEqual(['SNAPSHOT_INVALID', 'b']);
    expect(memory.children(PARENT).filter((name) => name.startsWith('plan-'))).toEqual([]);
    const built = await proc.zkPlan.createPlan(PARENT);
    const noSpec = await expectRejects(() => proc.zkPlan.exportPlan(built), SnapshotError);
    expect(noSpec.code).toBe('SNAPSHOT_NO_SPEC');
  });
});

describe('rerunPlan', () => {
  it('after completion, from a middle task: only it and its downstream run, and the results are the same', async () => {
    const { proc, runs } = server('a', { flakyFails: false, gated: false });
    const first = await proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await proc.zkPlan.waitForCompletion(first.plan, { timeoutMs: 10_000 });
    const expected = await results(proc, first.tasks);
    runs.length = 0;
    const rerun = await proc.zkPlan.rerunPlan(first.plan, { from: 'clean' });
    await proc.zkPlan.waitForCompletion(rerun.plan, { timeoutMs: 10_000 });
    expect(runs.sort()).toEqual(['clean', 'report']);
    expect(await results(proc, rerun.tasks)).toEqual(expected);
    await expect(proc.zkPlan.rerunPlan(first.plan, { from: 'nope' })).rejects.toMatchObject({ code: 'RERUN_UNKNOWN_KEY' });
    await expect(proc.zkPlan.rerunPlan(first.plan, { from: 'failed' })).rejects.toMatchObject({ code: 'RERUN_NOTHING_FAILED' });
  });

  it("from 'failed': the failed tasks and their downstream run again", async () => {
    const { proc, runs } = server('a', { flakyFails: true, gated: false });
    const first = await proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await expect(proc.zkPlan.waitForCompletion(first.plan, { timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'PLAN_FAILED' });
    runs.length = 0;
    const rerun = await proc.zkPlan.rerunPlan(first.plan, { from: 'failed' });
    await expect(proc.zkPlan.waitForCompletion(rerun.plan, { timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'PLAN_FAILED' });
    expect(runs).toEqual(['flaky (failed)']); // the rest reused: nothing else ran
  });

  it('selects the seeds and everything downstream of them (pure)', () => {
    expect([...rerunSelection(SNAPSHOT_SPEC, 'extract', [])].sort()).toEqual(['audit', 'clean', 'extract', 'report']);
    expect([...rerunSelection(SNAPSHOT_SPEC, 'clean', [])].sort()).toEqual(['clean', 'report']);
    expect([...rerunSelection(SNAPSHOT_SPEC, 'failed', ['flaky'])].sort()).toEqual(['flaky', 'late']);
  });
});

describe('importPlan cut short', () => {
  it('after any of its writes leaves a plan that runs nothing, and importing again runs to the same results', async () => {
    const source = server('source', { flakyFails: false, gated: false });
    const done = await source.proc.zkPlan.submitPlan(PARENT, SNAPSHOT_SPEC);
    await source.proc.zkPlan.waitForCompletion(done.plan, { timeoutMs: 10_000 });
    const expected = await results(source.proc, done.tasks);
    const snapshot = await source.proc.zkPlan.exportPlan(done.plan);
    const halfway = {
      ...snapshot,
      tasks: { ...snapshot.tasks, report: { state: 'pending' as const, failures: 0 }, late: { state: 'pending' as const, failures: 0 } },
    };

    // How many writes one import takes, undisturbed.
    const probe = server('probe', { flakyFails: false, gated: false });
    let writes = 0;
    probe.server.onApplied = (event) => {
      if (event.clientName === 'importer' && event.ok && ['create', 'setData', 'delete'].includes(event.op)) writes += 1;
    };
    const probeImporter = memoryProcess(probe.server, 'importer', snapshotFunctions([], false, Promise.resolve()));
    open.push(probeImporter);
    await probeImporter.zkPlan.importPlan(PARENT, halfway);
    expect(writes).toBeGreaterThan(10);

    for (let n = 1; n <= writes; n++) {
      const target = server(`target-${n}`, { flakyFails: false, gated: false });
      const importer = memoryProcess(target.server, 'importer', snapshotFunctions([], false, Promise.resolve()));
      let seen = 0;
      target.server.onApplied = (event) => {
        if (event.clientName !== 'importer' || !event.ok || !['create', 'setData', 'delete'].includes(event.op)) return;
        if (++seen === n) {
          importer.zk.crash();
          target.server.expireSession(event.sessionId);
        }
      };
      void importer.zkPlan.importPlan(PARENT, halfway).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const plans = target.server.children(PARENT).filter((name) => name.startsWith('plan-'));
      const readied = plans.filter((name) => target.server.exists(`${PARENT}/${name}/ready`));
      if (readied.length === 0) {
        expect(target.runs, `crash after write ${n}`).toEqual([]); // the half-made plan is not ready: nothing of it runs
        const again = await target.proc.zkPlan.importPlan(PARENT, halfway);
        await target.proc.zkPlan.waitForCompletion(again.plan, { timeoutMs: 10_000 });
        expect(await results(target.proc, again.tasks), `crash after write ${n}`).toEqual(expected);
      } else {
        // Cut short after `ready`, its last write but the touch: the plan is whole and runs.
        expect(readied, `crash after write ${n}`).toHaveLength(1);
        await target.proc.zkPlan.waitForCompletion(`${PARENT}/${readied[0]}`, { timeoutMs: 10_000 });
      }
      expect(target.runs.sort(), `crash after write ${n}`).toEqual(['late', 'report']);
    }
  });
});
