/** `zk-plan jobs define|ls|show|runs|disable|enable|trigger|rm|disable-worker|enable-worker` and `zk-plan workers --jobs`, on a real server. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  type JobContext,
  type JobSummary,
  type JobWorkerSummary,
} from '../src/index.js';
import { runCli } from './support/run-cli.js';
import { TIMING, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('jobs-cli');
const dir = mkdtempSync(join(tmpdir(), 'zk-plan-jobs-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('zk-plan jobs', () => {
  it('defines a YAML job, shows its assignment with tokens, triggers a run, disables, enables and removes it; workers --jobs shows the items', async () => {
    const runs: string[][] = [];
    const functions = new FunctionRegistry().registerJob('poll', (ctx: JobContext) => {
      runs.push(ctx.items.map((item) => item.id));
      ctx.log.info(`polled ${ctx.items.length} mailboxes`);
    });
    const worker = await env.zkPlan({ functions });
    const jobs = `${env.root()}-jobs`;
    const handle = worker.startJobWorker(jobs, { leaseMs: 1_000, pollMs: 200 });
    const cli = (args: string[]) => runCli(env.connectString, [...args, '--jobs', jobs]);
    const file = join(dir, 'mailboxes.yaml');
    writeFileSync(
      file,
      [
        'name: mailboxes',
        'fn: poll',
        'workPool: { shards: 3, params: [eu, us, ap] }',
        'mode: { everyMs: 600000 }',
      ].join('\n'),
    );
    const defined = await cli(['jobs', 'define', file]);
    expect(defined.code, defined.stderr).toBe(0);
    expect(defined.stdout).toContain('defined mailboxes: poll, every 600000 ms, evenly');
    await expect
      .poll(() => handle.held()['mailboxes'], { timeout: 10_000 * TIMING })
      .toEqual(['0', '1', '2']);

    const listed = await cli(['jobs', 'ls', '--json']);
    const [summary] = JSON.parse(listed.stdout) as JobSummary[];
    expect(summary?.assignment).toEqual({ [handle.id]: ['0', '1', '2'] });
    expect(
      Object.values(summary?.leases ?? {}).every(
        (lease) => lease.holder === handle.id && lease.token > 0,
      ),
    ).toBe(true);
    const shown = await cli(['jobs', 'show', 'mailboxes']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`${handle.id}: 0#\\d+ 1#\\d+ 2#\\d+`));

    const triggered = await cli(['jobs', 'trigger', 'mailboxes']);
    expect(triggered.stdout).toContain('triggered mailboxes');
    await expect.poll(() => runs.length, { timeout: 10_000 * TIMING }).toBe(1);
    expect(runs[0]).toEqual(['0', '1', '2']);
    // The run's record: written before the function and again after it, so poll for its end.
    await expect
      .poll(async () => (await cli(['jobs', 'runs', 'mailboxes'])).stdout, {
        timeout: 10_000 * TIMING,
      })
      .toMatch(/succeeded\s+trigger\s+1\s+\d+ ms\s+\S+\s+0#\d+ 1#\d+ 2#\d+/);
    const history = await cli(['jobs', 'runs', 'mailboxes', '--json']);
    expect(JSON.parse(history.stdout)).toMatchObject({
      job: 'mailboxes',
      runs: [{ worker: handle.id, cause: 'trigger', state: 'succeeded', attempt: 1 }],
      counts: { runs: 1, failed: 0 },
    });
    const withLog = await cli(['jobs', 'runs', 'mailboxes', '--log']);
    expect(withLog.stdout).toMatch(/INFO polled 3 mailboxes/);
    const badLimit = await cli(['jobs', 'runs', 'mailboxes', '--limit', '0']);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toContain("'--limit <n>' argument '0' is invalid");

    const workers = await runCli(env.connectString, ['workers', '--jobs', jobs, '--json']);
    const { jobWorkers } = JSON.parse(workers.stdout) as { jobWorkers: JobWorkerSummary[] };
    expect(jobWorkers.map((entry) => [entry.id, entry.manager, entry.items])).toEqual([
      [handle.id, true, { mailboxes: ['0', '1', '2'] }],
    ]);
    expect((await runCli(env.connectString, ['workers', '--jobs', jobs])).stdout).toContain(
      '(manager)',
    );

    expect((await cli(['jobs', 'disable', 'mailboxes'])).stdout).toContain('disabled mailboxes');
    await expect
      .poll(() => handle.held()['mailboxes'], { timeout: 10_000 * TIMING })
      .toBeUndefined();
    expect((await cli(['jobs', 'enable', 'mailboxes'])).stdout).toContain('enabled mailboxes');
    await expect
      .poll(() => handle.held()['mailboxes'], { timeout: 10_000 * TIMING })
      .toEqual(['0', '1', '2']);
    const removed = await cli(['jobs', 'rm', 'mailboxes']);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await cli(['jobs', 'ls'])).stdout).toContain(`no jobs under ${jobs}`);
    const missing = await cli(['jobs', 'show', 'mailboxes']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toBe(
      `zk-plan: no job "mailboxes" under ${jobs} (zk-plan jobs ls --jobs ${jobs} lists them) [JOB_NOT_FOUND]\n`,
    );
    // Removing a name that is not there is an error too, not a quiet "removed".
    const again = await cli(['jobs', 'rm', 'mailboxes']);
    expect(again.code).toBe(5);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('[JOB_NOT_FOUND]');
  });

  it("disable-worker moves a live job worker's items to the other one, workers --jobs shows it disabled, enable-worker brings items back; an id that is not live is refused (exit 5)", async () => {
    const functions = new FunctionRegistry().registerJob('poll', () => undefined);
    const jobs = `${env.root()}-jobs`;
    const first = (await env.zkPlan({ functions })).startJobWorker(jobs, {
      leaseMs: 1_000,
      pollMs: 200,
    });
    const second = (await env.zkPlan({ functions })).startJobWorker(jobs, {
      leaseMs: 1_000,
      pollMs: 200,
    });
    const cli = (args: string[]) => runCli(env.connectString, [...args, '--jobs', jobs]);
    const file = join(dir, 'pool.json');
    writeFileSync(
      file,
      JSON.stringify({ name: 'pool', fn: 'poll', workPool: { shards: 4 }, mode: 'continuous' }),
    );
    expect((await cli(['jobs', 'define', file])).code).toBe(0);
    const heldBy = (handle: typeof first): number => handle.held()['pool']?.length ?? 0;
    await expect
      .poll(() => [heldBy(first), heldBy(second)], { timeout: 10_000 * TIMING })
      .toEqual([2, 2]);

    const disabled = await cli(['jobs', 'disable-worker', first.id]);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toBe(`disabled job worker ${first.id}\n`);
    await expect
      .poll(() => [heldBy(first), heldBy(second)], { timeout: 10_000 * TIMING })
      .toEqual([0, 4]);
    expect((await cli(['jobs', 'disable-worker', first.id])).stdout).toBe(
      `job worker ${first.id} was already disabled\n`,
    );
    const listed = await runCli(env.connectString, ['workers', '--jobs', jobs, '--json']);
    const { jobWorkers } = JSON.parse(listed.stdout) as { jobWorkers: JobWorkerSummary[] };
    expect(Object.fromEntries(jobWorkers.map((entry) => [entry.id, entry.disabled]))).toEqual({
      [first.id]: true,
      [second.id]: false,
    });
    expect((await runCli(env.connectString, ['workers', '--jobs', jobs])).stdout).toContain(
      '(disabled)',
    );

    const enabled = await cli(['jobs', 'enable-worker', first.id, '--json']);
    expect(JSON.parse(enabled.stdout)).toEqual({
      worker: first.id,
      state: 'enabled',
      changed: true,
    });
    await expect
      .poll(() => [heldBy(first), heldBy(second)], { timeout: 10_000 * TIMING })
      .toEqual([2, 2]);

    const unknown = await cli(['jobs', 'disable-worker', 'gone-1a2b3c4d']);
    expect(unknown.code).toBe(5);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(
      `zk-plan: no live job worker "gone-1a2b3c4d" under ${jobs}: only a live one can be disabled, and a worker's id changes with every start (zk-plan workers --jobs ${jobs} lists the live ones) [JOB_WORKER_NOT_LIVE]\n`,
    );
    const malformed = await cli(['jobs', 'disable-worker', '../escape']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('Invalid id: expected a job worker id');
  });

  it('refuses a bad definition with a clear error and writes nothing', async () => {
    const jobs = `${env.root()}-jobs`;
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({ name: 'bad', fn: 'poll', workPool: { shards: 0 }, mode: 'continuous' }),
    );
    const result = await runCli(env.connectString, ['jobs', 'define', file, '--jobs', jobs]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('workPool.shards');
    expect((await runCli(env.connectString, ['jobs', 'ls', '--jobs', jobs])).stdout).toContain(
      'no jobs',
    );
  });
});
