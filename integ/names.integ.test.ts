/**
 * Tasks known by their keys and plans by their names, through the `zk-plan` command on a real
 * server: `show` (table and --json), `plans`, `why <plan> <key>` (and a key no task has), and
 * `wait`'s table of failed tasks, for a spec plan and for a plan built with addTask's `{ key }`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FunctionRegistry, PermanentError, call, type TaskContext } from '../src/index.js';
import { runCli } from './support/run-cli.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('names');
const dir = mkdtempSync(join(tmpdir(), 'zk-plan-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]): ReturnType<typeof runCli> => runCli(env.connectString, args);

function functions(): FunctionRegistry {
  return new FunctionRegistry()
    .register('load', (ctx: TaskContext<unknown[]>) => String(ctx.params[0]))
    .register('join', (_ctx: TaskContext<unknown[]>, ...inputs: string[]) => inputs.join('+'))
    .register('refuse', (ctx: TaskContext<unknown[]>) => {
      throw new PermanentError(`no such region: ${String(ctx.params[0])}`);
    });
}

interface ShownPlan {
  readonly status: { readonly name?: string; readonly state: string };
  readonly tasks: readonly {
    readonly task: string;
    readonly key?: string;
    readonly state: string;
  }[];
}

describe('names in the CLI', () => {
  it('a spec plan: show (--json too) and plans name it and its tasks; why takes <plan> <key>; an unknown key exits 5', async () => {
    const zkPlan = await env.zkPlan({ functions: functions() });
    const parent = env.root();
    const file = join(dir, 'report.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'daily report',
        tasks: {
          eu: { fn: 'load', params: ['eu'] },
          us: { fn: 'load', params: ['us'] },
          report: { fn: 'join', inputs: ['eu', 'us'] },
        },
        options: { history: true },
      }),
    );
    // No worker yet: `why` is asked while the tasks wait for one.
    const submitted = await cli(['submit', file, '--parent', parent, '--allow-unknown', '--json']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const { plan, tasks } = JSON.parse(submitted.stdout) as {
      plan: string;
      tasks: Record<string, string>;
    };

    // Independent commands, run side by side.
    const [shownJson, shownTable, listed, why, whyJson, unknown, notAPlan] = await Promise.all([
      cli(['show', plan, '--json']),
      cli(['show', plan]),
      cli(['plans', parent]),
      cli(['why', plan, 'report']),
      cli(['why', plan, 'report', '--json']),
      cli(['why', plan, 'nope']),
      cli(['why', tasks['report'] as string, 'report']),
    ]);
    const shown = JSON.parse(shownJson.stdout) as ShownPlan;
    expect(shown.status.name).toBe('daily report');
    expect(Object.fromEntries(shown.tasks.map((task) => [task.key, task.task]))).toEqual(tasks);
    const table = shownTable.stdout.split('\n');
    expect(table[0]).toContain(`${plan} (daily report): `);
    expect(table[1]).toMatch(/^KEY\s+TASK\s+STATE/);
    const rows = listed.stdout.split('\n');
    expect(rows[0]).toMatch(/^PLAN\s+NAME\s+STATE/);
    expect(rows[1]).toContain('daily report');

    expect(why.code, why.stderr).toBe(0);
    expect(why.stdout).toMatch(/^report: WAITING_FOR_INPUTS: /);
    expect((JSON.parse(whyJson.stdout) as { task: string }).task).toBe(tasks['report']);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toContain(
      `plan ${plan} has no task with the key "nope" (zk-plan show ${plan} lists its tasks with their keys) [TASK_KEY_NOT_FOUND]`,
    );
    expect(notAPlan.code).toBe(2);

    zkPlan.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 50 }, retention: false });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    // Done (and gone): still known by its key.
    const done = await cli(['why', plan, 'eu', '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect((JSON.parse(done.stdout) as { task: string; code: string }).task).toBe(tasks['eu']);
  });

  it('a plan built with addTask { key }: show --json, why <plan> <key>, and wait’s table of failed tasks name tasks by key', async () => {
    const zkPlan = await env.zkPlan({ functions: functions() });
    const parent = env.root();
    const plan = await zkPlan.createPlan(parent, { name: 'regions', maxAttempts: 1 });
    const eu = await zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    const mars = await zkPlan.addTask(plan, call('refuse', 'mars'), [], { key: 'load-mars' });
    await zkPlan.addTask(plan, call('join'), [eu, mars], { key: 'report' });

    const shown = JSON.parse((await cli(['show', plan, '--json'])).stdout) as ShownPlan;
    expect(shown.status.name).toBe('regions');
    expect(shown.tasks.map((task) => task.key)).toEqual(['load-eu', 'load-mars', 'report']);
    const why = await cli(['why', plan, 'load-mars']);
    expect(why.code, why.stderr).toBe(0);
    expect(why.stdout).toMatch(/^load-mars: PLAN_NOT_READY: /);

    await zkPlan.markAsReady(plan);
    zkPlan.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 50 }, retention: false });
    const waited = await cli(['wait', plan, '--no-progress', '--timeout-ms', '20000']);
    expect(waited.code, waited.stderr).toBe(1);
    const lines = waited.stdout.split('\n');
    expect(lines[1]).toMatch(/^\s+KEY\s+TASK\s+ATTEMPTS\s+ERROR/);
    expect(lines[2]).toMatch(
      /^\s+load-mars\s+task-\d+\s+1\s+PermanentError: .*no such region: mars/,
    );
    expect(waited.stdout).toContain('blocked: report');
  });
});
