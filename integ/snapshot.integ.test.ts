/**
 * Export, import and rerun on real servers: a plan caught half-way on one server (some tasks done,
 * one failed, one running) is exported with `zk-plan export`, imported into a second server with
 * `zk-plan import`, and run there; `zk-plan rerun --from` after completion; a plan built with addTask
 * exported (its spec derived) and imported with the CLI.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ZkPlan, call } from '../src/index.js';
import { SNAPSHOT_SPEC, snapshotFunctions } from '../test/support/snapshot-fixture.js';
import { startZooKeeper } from '../src/testing/index.js';
import { runCli } from './support/run-cli.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('snapshot');
const dir = mkdtempSync(join(tmpdir(), 'zk-plan-snapshot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How many times each task ran, by its label. */
function executions(runs: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const label of runs) counts[label] = (counts[label] ?? 0) + 1;
  return counts;
}

async function resultsOf(
  zkPlan: ZkPlan,
  tasks: Record<string, string>,
): Promise<Record<string, unknown>> {
  return Object.fromEntries(
    await Promise.all(
      Object.entries(tasks).map(
        async ([key, task]) => [key, await zkPlan.getResult(task)] as const,
      ),
    ),
  );
}

describe('export, import and rerun on real servers', () => {
  it('a plan exported half-way (done, failed, running) and imported into a second server runs there without the done tasks, to the results of an uninterrupted run', async () => {
    const parent = env.root();
    const referenceRuns: string[] = [];
    const reference = await env.zkPlan({
      functions: snapshotFunctions(referenceRuns, false, Promise.resolve()),
    });
    reference.startWorkers(`${parent}-reference`, {
      count: 3,
      backoff: { initial: 10, max: 50 },
      retention: false,
    });
    const whole = await reference.submitPlan(`${parent}-reference`, SNAPSHOT_SPEC);
    await reference.waitForCompletion(whole.plan, { timeoutMs: 30_000 * TIMING });
    const expected = await resultsOf(reference, whole.tasks);

    let openGate: () => void = () => undefined;
    const firstRuns: string[] = [];
    const first = await env.zkPlan({
      functions: snapshotFunctions(
        firstRuns,
        true,
        new Promise<void>((resolve) => (openGate = resolve)),
      ),
    });
    first.startWorkers(parent, { count: 3, backoff: { initial: 10, max: 50 }, retention: false });
    const { plan } = await first.submitPlan(parent, SNAPSHOT_SPEC);
    await expect
      .poll(() => [...firstRuns].sort(), { timeout: 20_000 * TIMING })
      .toEqual(['audit', 'extract', 'flaky (failed)']);
    await expect
      .poll(async () => (await first.plans.status(plan)).failed.length, {
        timeout: 20_000 * TIMING,
      })
      .toBe(1);
    const exported = await runCli(env.connectString, ['export', plan]);
    expect(exported.code, exported.stderr).toBe(0);
    openGate();
    const file = join(dir, 'snap.json');
    writeFileSync(file, exported.stdout);

    const second = await startZooKeeper();
    try {
      const secondRuns: string[] = [];
      const there = await ZkPlan.connect({
        connect: second.connectString,
        functions: snapshotFunctions(secondRuns, false, Promise.resolve()),
      });
      try {
        there.startWorkers('/imported', {
          count: 3,
          backoff: { initial: 10, max: 50 },
          retention: false,
        });
        const imported = await runCli(second.connectString, [
          'import',
          '/imported',
          file,
          '--json',
        ]);
        expect(imported.code, imported.stderr).toBe(0);
        const made = JSON.parse(imported.stdout) as {
          plan: string;
          tasks: Record<string, string>;
          existing: boolean;
        };
        expect(made.existing).toBe(false);
        expect((await there.plans.status(made.plan)).failed.map(({ task }) => task)).toEqual([
          made.tasks['flaky'],
        ]); // as it stood: failed for good
        expect(await there.control.retryFailed(made.plan)).toEqual([made.tasks['flaky']]);
        await there.waitForCompletion(made.plan, { timeoutMs: 30_000 * TIMING });
        // extract and audit finished on the first server: they never run here; each other task runs once.
        expect(executions(secondRuns)).toEqual({ clean: 1, flaky: 1, late: 1, report: 1 });
        expect(await resultsOf(there, made.tasks)).toEqual(expected);
        // The same file imported again (a repeat after a lost reply) makes nothing new.
        const repeated = await runCli(second.connectString, [
          'import',
          '/imported',
          file,
          '--json',
        ]);
        expect(repeated.code, repeated.stderr).toBe(0);
        expect(JSON.parse(repeated.stdout)).toEqual({ ...made, existing: true });
        expect(executions(secondRuns)).toEqual({ clean: 1, flaky: 1, late: 1, report: 1 });
      } finally {
        await there.close();
      }
    } finally {
      await second.stop();
    }
  });

  it('zk-plan rerun --from a middle task after completion runs only it and its downstream', async () => {
    const parent = env.root();
    const runs: string[] = [];
    const zkPlan = await env.zkPlan({
      functions: snapshotFunctions(runs, false, Promise.resolve()),
    });
    zkPlan.startWorkers(parent, { count: 3, backoff: { initial: 10, max: 50 }, retention: false });
    const first = await zkPlan.submitPlan(parent, SNAPSHOT_SPEC);
    await zkPlan.waitForCompletion(first.plan, { timeoutMs: 30_000 * TIMING });
    const expected = await resultsOf(zkPlan, first.tasks);
    runs.length = 0;
    const rerun = await runCli(env.connectString, [
      'rerun',
      first.plan,
      '--from',
      'clean',
      '--wait',
      '--json',
    ]);
    expect(rerun.code, rerun.stderr).toBe(0);
    const made = JSON.parse(rerun.stdout) as { plan: string; tasks: Record<string, string> };
    expect(executions(runs)).toEqual({ clean: 1, report: 1 }); // extract, audit, flaky and late reuse their results
    expect(await resultsOf(zkPlan, made.tasks)).toEqual(expected);
    const unknown = await runCli(env.connectString, ['rerun', first.plan, '--from', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Task "nope": is not a task key');
    expect(unknown.stderr).toContain('[RERUN_UNKNOWN_KEY]');
  });

  it('zk-plan export of a plan built with addTask derives its spec; zk-plan import of that file runs only what had not finished', async () => {
    const parent = env.root();
    const runs: string[] = [];
    let openGate: () => void = () => undefined;
    const zkPlan = await env.zkPlan({
      functions: snapshotFunctions(
        runs,
        false,
        new Promise<void>((resolve) => (openGate = resolve)),
      ),
    });
    zkPlan.startWorkers(parent, { count: 3, backoff: { initial: 10, max: 50 }, retention: false });
    const plan = await zkPlan.createPlan(parent, { history: true });
    const extract = await zkPlan.addTask(plan, call('count', 'extract', 10));
    const clean = await zkPlan.addTask(plan, call('gated', 'clean', 1), [extract]);
    const report = await zkPlan.addTask(plan, call('count', 'report', 100), [clean, extract], {
      keepResult: true,
    });
    await zkPlan.markAsReady(plan);
    await expect.poll(() => [...runs], { timeout: 20_000 * TIMING }).toEqual(['extract']);
    const exported = await runCli(env.connectString, ['export', plan]);
    expect(exported.code, exported.stderr).toBe(0);
    openGate(); // this plan now finishes here; the import below is a second run of its unfinished part
    await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 * TIMING });
    const file = join(dir, 'derived.json');
    writeFileSync(file, exported.stdout);

    runs.length = 0;
    const imported = await runCli(env.connectString, ['import', parent, file, '--json']);
    expect(imported.code, imported.stderr).toBe(0);
    const made = JSON.parse(imported.stdout) as { plan: string; tasks: Record<string, string> };
    expect(Object.keys(made.tasks).sort()).toEqual(
      [extract, clean, report].map((task) => task.slice(plan.length + 1)).sort(),
    );
    await zkPlan.waitForCompletion(made.plan, { timeoutMs: 30_000 * TIMING });
    expect(executions(runs)).toEqual({ clean: 1, report: 1 });
    expect(await zkPlan.getResult(made.tasks[report.slice(plan.length + 1)] as string)).toBe(
      await zkPlan.getResult(report),
    );
  });
});
