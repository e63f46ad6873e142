/** Plan specs on a real server: `zk-plan submit --wait` and `zk-plan validate`. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FunctionRegistry, type TaskContext } from '../src/index.js';
import { runCli } from './support/run-cli.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('spec');
const dir = mkdtempSync(join(tmpdir(), 'zk-plan-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = async (
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> => {
  const { code, stdout, stderr } = await runCli(env.connectString, args);
  return { status: code, stdout, stderr };
};

describe('zk-plan submit and validate', () => {
  it('submits a spec with a param, waits for it, and the results are those of the spec', async () => {
    const functions = new FunctionRegistry()
      .register(
        'load',
        (ctx: TaskContext<unknown[]>) => `${String(ctx.params[0])}@${String(ctx.params[1])}`,
      )
      .register('join', (_ctx: TaskContext<unknown[]>, ...inputs: string[]) => inputs.join('+'));
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    zkPlan.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 50 }, retention: false });
    const file = join(dir, 'report.json');
    writeFileSync(
      file,
      JSON.stringify({
        tasks: {
          eu: { fn: 'load', params: ['eu', { $param: 'date' }] },
          us: { fn: 'load', params: ['us', { $param: 'date' }] },
          report: { fn: 'join', inputs: ['eu', 'us'], options: { keepResult: true } },
        },
      }),
    );
    const submitted = await cli([
      'submit',
      file,
      '--parent',
      parent,
      '--param',
      'date=2026-11-22',
      '--wait',
      '--json',
    ]);
    expect(submitted.status).toBe(0);
    const { plan, tasks } = JSON.parse(submitted.stdout) as {
      plan: string;
      tasks: Record<string, string>;
    };
    expect((await zkPlan.plans.status(plan)).state).toBe('completed');
    expect(await zkPlan.getResult(tasks['report'] as string)).toBe('eu@2026-11-22+us@2026-11-22');
  });

  it('refuses a function no live worker registers unless --allow-unknown; wait then says within seconds that no worker can run it', async () => {
    const parent = env.root();
    const file = join(dir, 'orphan.json');
    writeFileSync(file, JSON.stringify({ tasks: { report: { fn: 'report' } } }));
    const refused = await cli(['submit', file, '--parent', parent]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('task "report": nothing knows "report"');
    expect(refused.stderr).toContain('[SPEC_UNKNOWN_FUNCTION]');
    const allowed = await cli(['submit', file, '--parent', parent, '--allow-unknown']);
    expect(allowed.status, allowed.stderr).toBe(0);
    const plan = allowed.stdout.trim();
    const waited = await cli(['wait', plan, '--timeout-ms', '8000', '--no-progress']);
    expect(waited.status).toBe(3);
    expect(waited.stderr).toContain(
      `zk-plan wait: 1 task(s) of ${plan} cannot start: no live worker follows ${parent}`,
    );
    expect(waited.stderr).toContain(`zk-plan worker --parent ${parent} --functions <module>`);
    // The task is known by its key: show's KEY column, and why.
    const shown = await cli(['show', plan]);
    expect(shown.stdout.split('\n')[1]).toMatch(/^KEY\s+TASK\s+STATE/);
    expect(shown.stdout.split('\n')[2]).toMatch(/^report\s+task-\d+\s+runnable/);
    const { tasks } = JSON.parse((await cli(['show', plan, '--json'])).stdout) as {
      tasks: { key?: string; task: string }[];
    };
    const task = tasks[0]?.task ?? '';
    expect(tasks.map((entry) => entry.key)).toEqual(['report']);
    expect((await cli(['why', task])).stdout).toMatch(/^report: NO_WORKER_FOR_FUNCTION: /);
  });

  it('validate exits 2 with the code and the task key of a problem, 0 for a good spec', async () => {
    const file = join(dir, 'cycle.json');
    writeFileSync(
      file,
      JSON.stringify({ tasks: { a: { fn: 'x', inputs: ['b'] }, b: { fn: 'x', inputs: ['a'] } } }),
    );
    const bad = await cli(['validate', file]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/task "(a|b)".*cycle.*\[SPEC_CYCLE\]/);
    writeFileSync(
      file,
      JSON.stringify({ tasks: { a: { fn: 'x' }, b: { fn: 'x', inputs: ['a'] } } }),
    );
    expect(await cli(['validate', file, '--json'])).toMatchObject({
      status: 0,
      stdout: expect.stringContaining('"order": [\n    "a",\n    "b"'),
    });
  });

  it('reads a YAML spec (.yaml, .yml) as it reads JSON, and names the file of one that does not parse', async () => {
    const yaml = join(dir, 'nightly.yaml');
    writeFileSync(
      yaml,
      [
        'tasks:',
        '  a:',
        '    fn: x',
        '  b:',
        '    fn: x',
        '    inputs: [a]',
        '    params: [{ $param: date }]',
        '    options: { keepResult: true }',
        '',
      ].join('\n'),
    );
    expect(await cli(['validate', yaml, '--param', 'date=2026-11-22', '--json'])).toMatchObject({
      status: 0,
      stdout: expect.stringContaining('"order": [\n    "a",\n    "b"'),
    });
    const cyclic = join(dir, 'cycle.yml');
    writeFileSync(cyclic, 'tasks:\n  a: { fn: x, inputs: [b] }\n  b: { fn: x, inputs: [a] }\n');
    const bad = await cli(['validate', cyclic]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('[SPEC_CYCLE]');
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'tasks:\n  a: { fn: x\n');
    const unparsed = await cli(['validate', broken]);
    expect(unparsed.status).toBe(2);
    expect(unparsed.stderr).toContain(`${broken} is not YAML`);
  });
});
