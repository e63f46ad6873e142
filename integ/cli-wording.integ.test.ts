/**
 * Rough edge 7 of issue 21: the CLI named API calls ("retryFailed(plan)", "resumePlan lets it
 * run", "startWorkers or the DI module"). Each command here ends in an error or a remedy whose
 * library wording names an API call; what the command prints names its own commands instead.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionRegistry, call, type ZkPlan } from '../src/index.js';
import { API_CALL } from '../test/support/api-call-names.js';
import { runCli, type CliRun } from './support/run-cli.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('cli-wording');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zk-plan-cli-wording-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `zk-plan <args>` against this file's server; what it printed must name no API call. */
async function zkPlanCli(args: readonly string[]): Promise<CliRun & { readonly text: string }> {
  const run = await runCli(env.connectString, args);
  const text = `${run.stdout}${run.stderr}`;
  expect({ args, apiCalls: text.split('\n').filter((line) => API_CALL.test(line)) }).toEqual({
    args,
    apiCalls: [],
  });
  return { ...run, text };
}

async function file(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(content));
  return path;
}

/** A ZkPlan whose pool on `parent` runs `boom`, which always fails. */
async function failingWorker(parent: string): Promise<ZkPlan> {
  const zkPlan = await env.zkPlan({
    functions: new FunctionRegistry().register('boom', () => {
      throw new Error('the disk is full');
    }),
  });
  zkPlan.startWorkers(parent, { backoff: { initial: 10, max: 50 } });
  return zkPlan;
}

describe('the CLI says its own commands where the library names API calls', () => {
  it('a plan that fails under submit --wait, wait and why: zk-plan retry <plan>', async () => {
    const parent = env.root();
    await failingWorker(parent);
    const spec = await file('fail.json', {
      tasks: { audit: { fn: 'boom' } },
      options: { maxAttempts: 1 },
    });
    const submitted = await zkPlanCli([
      'submit',
      spec,
      '--parent',
      parent,
      '--wait',
      '--timeout-ms',
      '30000',
    ]);
    expect(submitted.code).toBe(1);
    const plan = /Plan (\S+) failed/.exec(submitted.stderr)?.[1] ?? '';
    expect(submitted.stderr).toContain(`zk-plan retry ${plan} runs them again [PLAN_FAILED]`);

    const waited = await zkPlanCli(['wait', plan, '--no-progress']);
    expect(waited.code).toBe(1);
    expect(waited.stdout).toContain(`'zk-plan retry ${plan}' runs the failed tasks again`);

    const why = await zkPlanCli(['why', plan, 'audit']); // by its key: its node's number depends on what else the plan holds
    expect(why.stdout).toContain(`zk-plan retry ${plan} runs it again`);
  });

  it('a wait that times out: zk-plan worker and zk-plan why, not startWorkers', async () => {
    const parent = env.root();
    const spec = await file('lonely.json', { tasks: { a: { fn: 'nobody-runs-this' } } });
    const run = await zkPlanCli([
      'submit',
      spec,
      '--parent',
      parent,
      '--allow-unknown',
      '--wait',
      '--timeout-ms',
      '1000',
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`(zk-plan worker --parent ${parent} --functions <module>)`);
    expect(run.stderr).toMatch(/zk-plan why \S+ tells what holds its tasks\) \[WAIT_TIMEOUT\]/);
  });

  it('a paused plan: why says zk-plan resume', async () => {
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(env.root());
    const task = await zkPlan.addTask(plan, call('anything'));
    await zkPlan.markAsReady(plan);
    await zkPlan.control.pause(plan);
    const why = await zkPlanCli(['why', task]);
    expect(why.stdout).toContain(`PLAN_PAUSED: its plan is paused`);
    expect(why.stdout).toContain(`zk-plan resume ${plan} lets it run`);
  });

  it('a rerun of a plan built task by task, an import of a file that is no snapshot, and spec options: said in CLI words', async () => {
    const zkPlan = await env.zkPlan();
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent);
    await zkPlan.addTask(plan, call('anything'));
    await zkPlan.markAsReady(plan);
    const rerun = await zkPlanCli(['rerun', plan, '--from', 'failed']);
    expect(rerun.code).toBe(2);
    expect(rerun.stderr).toContain(`zk-plan export ${plan} derives a spec from its tasks`);

    const imported = await zkPlanCli(['import', parent, await file('hello.json', { hello: 1 })]);
    expect(imported.code).toBe(2);

    const options = await zkPlanCli([
      'submit',
      await file('options.json', { tasks: { a: { fn: 'f' } }, options: 3 }),
      '--parent',
      parent,
      '--allow-unknown',
    ]);
    expect(options.code).toBe(2);
    expect(options.stderr).toContain('"options" must be an object of plan options');
  });
});
