import { describe, expect, it } from 'vitest';
import { FunctionRegistry, call, type PlanStatus, type PlanSummary } from '../src/index.js';
import { runCli, type CliRun } from './support/run-cli.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('plan-progress');
const QUICK = { backoff: { initial: 10, max: 50 } } as const;

const run = (args: string[]): Promise<CliRun> => runCli(env.connectString, args);

const tries = new Map<string, number>();
const functions = new FunctionRegistry()
  .register('nap', async (ctx) => {
    await new Promise((resolve) => setTimeout(resolve, Number(ctx.params[0])));
    return 1;
  })
  .register('flaky', (ctx) => {
    const count = (tries.get(ctx.task) ?? 0) + 1;
    tries.set(ctx.task, count);
    if (count === 1) throw new Error('first try fails');
    return count;
  })
  .register('boom', () => {
    throw new Error('the disk is full');
  });

describe("a plan's progress numbers agree everywhere", () => {
  it('a 21-task plan with history: the API never reports more (or fewer) than 21 tasks while it runs, and 21/21 at the end', async () => {
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { history: true, initialDelayMs: 10 });
    await zkPlan.addTasks(plan, [
      ...Array.from({ length: 20 }, () => ({ task: call('nap', 20) })),
      { task: call('flaky') },
    ]);

    // Not started yet: 0/21, in the API, the `plans` command and the web view's row.
    const [notStarted] = await zkPlan.plans.list(parent);
    expect(notStarted?.status.counts).toMatchObject({ total: 21, done: 0, remaining: 21 });
    const plans = await run(['plans', parent]);
    expect(plans.stdout).toMatch(new RegExp(`${plan}\\s+building\\s+0/21\\s+0`));

    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(parent, { count: 4, ...QUICK });
    const finished = zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 * TIMING });
    let settled = false;
    void finished.finally(() => (settled = true)).catch(() => undefined);
    const seen: string[] = [];
    while (!settled) {
      const [view, summaries] = await Promise.all([
        zkPlan.plans.describe(plan),
        zkPlan.plans.list(parent),
      ]);
      for (const counts of [view.status.counts, summaries[0]?.status.counts]) {
        seen.push(`${counts?.done}+${counts?.remaining}=${counts?.total}`);
        expect(counts?.total).toBe(21);
        expect((counts?.done ?? 0) + (counts?.remaining ?? 0)).toBe(21);
      }
      expect(view.tasks).toHaveLength(21);
      expect(view.done).toBe(view.status.counts.done);
    }
    await finished;
    expect(seen.length).toBeGreaterThan(2);

    const [waitJson, show, plansJson] = await Promise.all([
      run(['wait', plan, '--json']),
      run(['show', plan]),
      run(['plans', parent, '--json']),
    ]);
    expect(JSON.parse(waitJson.stdout)).toMatchObject({
      state: 'completed',
      counts: { total: 21, done: 21, remaining: 0 },
    });
    expect((JSON.parse(plansJson.stdout) as PlanSummary[])[0]?.status.counts).toMatchObject({
      total: 21,
      done: 21,
      remaining: 0,
    });
    expect(show.stdout).toContain(`${plan}: completed, 21 task(s): 21 done`);
    // The task that failed once, then succeeded, shows its failed try in ATTEMPTS.
    expect(show.stdout).toMatch(
      /task-\d+\s+done\s+flaky\(\)\s+-\s+1\s+\S+\/\d+\s+\d\d:\d\d:\d\d\s/,
    );
  });

  it("wait's last progress line for a failing plan shows what was done at the end", async () => {
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { history: true, maxAttempts: 1 });
    await zkPlan.addTasks(plan, [
      ...Array.from({ length: 20 }, () => ({ task: call('nap', 5) })),
      { task: call('boom') },
    ]);
    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(parent, { count: 4, ...QUICK });
    const waited = await run(['wait', plan]);
    expect(waited.code).toBe(1);
    const status = (await zkPlan.plans.describe(plan)).status as PlanStatus;
    expect(status.counts).toMatchObject({ total: 21, done: 20, failed: 1 });
    expect(waited.stderr.trim().split('\n').at(-1)).toMatch(
      /^plan-\d+: 20\/21 done \(95%\), .*, 1 failed$/,
    );
  });
});
