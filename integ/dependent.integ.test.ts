/**
 * Dependent tasks on a real ZooKeeper server, across two processes' sessions: the dependent waits
 * (no worker held) while the other plan runs, `zk-plan why` and `zk-plan show` say what it waits
 * for, and it
 * completes once that plan completed; one whose plan fails says so when it fails for good.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry, PermanentError, call, waitForPlan } from '../src/index.js';
import { runCli } from './support/run-cli.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('dependent');
const QUICK = { backoff: { initial: 10, max: 50 }, retention: false } as const;

describe('a dependent task on a real server', () => {
  it('waits while the other plan runs (zk-plan why says so), then completes; fails for good when the other plan failed', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const upstreamFunctions = new FunctionRegistry()
      .register('export', async () => {
        await held;
        return 'exported';
      })
      .register('broken', () => {
        throw new PermanentError('the source is gone');
      });
    const downstreamFunctions = new FunctionRegistry().register(
      'load',
      (_ctx, dependency: { plan: string; state: string }) => `loaded after ${dependency.plan}`,
    );
    const upstream = await env.zkPlan({ functions: upstreamFunctions });
    const downstream = await env.zkPlan({ functions: downstreamFunctions });
    const [upParent, downParent] = [env.root(), env.root()];
    upstream.startWorkers(upParent, { count: 1, ...QUICK });
    downstream.startWorkers(downParent, { count: 1, ...QUICK });

    const exportPlan = await upstream.createPlan(upParent, { name: 'export' });
    await upstream.addTask(exportPlan, call('export'));
    await upstream.markAsReady(exportPlan);
    const loadPlan = await downstream.createPlan(downParent, { name: 'load' });
    const wait = await downstream.addTask(
      loadPlan,
      // Checked every 10 s: between two checks the commands below see it waiting, not being checked.
      waitForPlan({ plan: exportPlan, checkEveryMs: 10_000 }),
      [],
      { key: 'export-done' },
    );
    const load = await downstream.addTask(loadPlan, call('load'), [wait], { keepResult: true });
    await downstream.markAsReady(loadPlan);
    await waitFor(
      'the dependent to wait',
      async () => (await downstream.explain.task(wait)).code === 'WAITING_FOR_CONDITION',
    );
    const why = await runCli(env.connectString, ['why', loadPlan, 'export-done']);
    expect(why.code, why.stderr).toBe(0);
    expect(why.stdout).toContain('WAITING_FOR_CONDITION');
    expect(why.stdout).toContain(`it waits: plan ${exportPlan} is running (0/1 tasks done)`);
    const shownWaiting = await runCli(env.connectString, ['show', loadPlan]);
    expect(shownWaiting.stdout).toMatch(
      new RegExp(
        `export-done .*waits: plan ${exportPlan} is running \\(0/1 tasks done\\) \\(check \\d+; next`,
      ),
    );
    release();
    await downstream.waitForCompletion(loadPlan, { timeoutMs: 30_000 });
    expect(await downstream.getResult(load)).toBe(`loaded after ${exportPlan}`);

    const brokenPlan = await upstream.createPlan(upParent, { maxAttempts: 1 });
    await upstream.addTask(brokenPlan, call('broken'));
    await upstream.markAsReady(brokenPlan);
    const failing = await downstream.createPlan(downParent, { maxAttempts: 3 });
    const failed = await downstream.addTask(
      failing,
      waitForPlan({ plan: brokenPlan, checkEveryMs: 100 }),
    );
    await downstream.markAsReady(failing);
    await expect(downstream.waitForCompletion(failing, { timeoutMs: 30_000 })).rejects.toThrow();
    const status = await downstream.plans.status(failing);
    expect(status.failed).toHaveLength(1);
    expect(status.failed[0]?.task).toBe(failed);
    expect(status.failed[0]?.failure?.code).toBe('DEPENDENCY_FAILED');
    expect(status.failed[0]?.failure?.attempts).toBe(1);
    const shown = await runCli(env.connectString, ['why', failed]);
    expect(shown.stdout).toContain(`plan ${brokenPlan} failed`);
  });
});
