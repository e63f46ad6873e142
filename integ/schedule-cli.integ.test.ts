/** `zk-plan schedule put|ls|pause|resume|trigger|rm|backfill|backfills|cancel-backfill` and `zk-plan show` of a schedule's plan, on a real server. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FunctionRegistry, type TaskContext } from '../src/index.js';
import { runCli } from './support/run-cli.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('schedule-cli');
const dir = mkdtempSync(join(tmpdir(), 'zk-plan-schedule-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = async (
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> => {
  const { code, stdout, stderr } = await runCli(env.connectString, args);
  return { status: code, stdout, stderr };
};

describe('zk-plan schedule', () => {
  it('puts a YAML schedule, lists it, triggers a run that completes, pauses, resumes and removes it', async () => {
    const functions = new FunctionRegistry().register(
      'stamp',
      (ctx: TaskContext<unknown[]>) => `ran for ${String(ctx.params[0])}`,
    );
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const schedules = `${parent}-schedules`;
    zkPlan.startWorkers(parent, { count: 1, backoff: { initial: 10, max: 50 }, retention: false });
    const file = join(dir, 'nightly.yaml');
    writeFileSync(
      file,
      [
        'name: nightly',
        "cron: '0 30 2 * * *'",
        'timezone: Europe/Berlin',
        `planParent: ${parent}`,
        'spec:',
        '  tasks:',
        '    stamp: { fn: stamp, params: [{ $param: firedAt }], options: { keepResult: true } }',
      ].join('\n'),
    );
    const put = await cli(['schedule', 'put', file, '--schedules', schedules]);
    expect(put.status, put.stderr).toBe(0);
    expect(put.stdout).toContain('put nightly: 0 30 2 * * * (Europe/Berlin)');

    const listed = await cli(['schedule', 'ls', '--schedules', schedules, '--json']);
    const [summary] = JSON.parse(listed.stdout) as [
      { schedule: { name: string }; nextFireTimes: string[] },
    ];
    expect(summary.schedule.name).toBe('nightly');
    expect(summary.nextFireTimes).toHaveLength(5);
    expect(summary.nextFireTimes[0]).toMatch(/T01:30:00\.000Z$/); // 02:30 in Berlin's winter

    const triggered = await cli([
      'schedule',
      'trigger',
      'nightly',
      '--schedules',
      schedules,
      '--json',
    ]);
    expect(triggered.status, triggered.stderr).toBe(0);
    const { plan, state } = JSON.parse(triggered.stdout) as { plan: string; state: string };
    expect(state).toBe('fired');
    expect(plan).toMatch(
      new RegExp(`^${parent}/nightly@\\d{8}T\\d{6}\\.\\d{3}Z-manual-[0-9a-f]{8}$`),
    );
    const waited = await cli(['wait', plan, '--timeout-ms', '30000']);
    expect(waited.status, waited.stderr).toBe(0);
    const shown = await cli(['show', plan, '--json']);
    expect(shown.status, shown.stderr).toBe(0);

    expect(
      (await cli(['schedule', 'pause', 'nightly', '--schedules', schedules])).stdout,
    ).toContain('paused nightly');
    const paused = JSON.parse(
      (await cli(['schedule', 'ls', '--schedules', schedules, '--json'])).stdout,
    ) as [{ nextFireTimes: string[]; recentRuns: unknown[] }];
    expect(paused[0].nextFireTimes).toEqual([]);
    expect(paused[0].recentRuns).toMatchObject([
      { kind: 'manual', state: 'fired', plan, outcome: 'completed' },
    ]);
    expect((await cli(['schedule', 'resume', 'nightly', '--schedules', schedules])).status).toBe(0);
    expect((await cli(['schedule', 'rm', 'nightly', '--schedules', schedules])).status).toBe(0);
    const gone = await cli(['schedule', 'trigger', 'nightly', '--schedules', schedules]);
    expect(gone.status).toBe(5);
    expect(gone.stderr).toBe(
      `zk-plan: no schedule "nightly" under ${schedules} (zk-plan schedule ls --schedules ${schedules} lists them) [SCHEDULE_NOT_FOUND]\n`,
    );
    // Removing a name that is not there is an error too, not a quiet "removed".
    const again = await cli(['schedule', 'rm', 'nightly', '--schedules', schedules]);
    expect(again.status).toBe(5);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('[SCHEDULE_NOT_FOUND]');
  });

  it('refuses a bad schedule with a coded error naming it, before writing anything', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'bad',
        cron: 'every day',
        planParent: '/p',
        spec: { tasks: { a: { fn: 'x' } } },
      }),
    );
    const put = await cli(['schedule', 'put', file, '--schedules', `${env.root()}-schedules`]);
    expect(put.status).toBe(2);
    expect(put.stderr).toContain('schedule "bad": "every day" is not a cron expression');
  });

  it('backfills a range with --parallel, lists its progress to the end, and cancels another; bad ranges are refused with a coded error', async () => {
    const functions = new FunctionRegistry().register(
      'stamp',
      (ctx: TaskContext<unknown[]>) => `ran for ${String(ctx.params[0])}`,
    );
    const zkPlan = await env.zkPlan({ functions });
    const parent = env.root();
    const schedules = `${parent}-schedules`;
    zkPlan.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 50 }, retention: false });
    const file = join(dir, 'hourly.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'hourly',
        cron: '0 0 * * * *',
        planParent: parent,
        spec: { tasks: { stamp: { fn: 'stamp', params: [{ $param: 'firedAt' }] } } },
      }),
    );
    expect((await cli(['schedule', 'put', file, '--schedules', schedules])).status).toBe(0);
    const made = await cli([
      'schedule',
      'backfill',
      'hourly',
      '--schedules',
      schedules,
      '--from',
      '2026-11-01T00:00:00Z',
      '--to',
      '2026-11-01T05:30:00Z',
      '--parallel',
      '3',
    ]);
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toMatch(
      /^backfill backfill-\d{15}-[0-9a-f]{8}: 6 tick\(s\) of hourly from 2026-11-01T00:00:00.000Z to 2026-11-01T05:30:00.000Z, up to 3 at a time; started 3 /,
    );
    const id = /^backfill (\S+):/.exec(made.stdout)?.[1] ?? '';
    const scheduler = zkPlan.startScheduler(schedules);
    try {
      let listed = '';
      for (const until = Date.now() + 30_000; Date.now() < until;) {
        listed = (await cli(['schedule', 'backfills', 'hourly', '--schedules', schedules])).stdout;
        if (listed.includes('COMPLETED')) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(listed).toContain(
        `${id}  COMPLETED  2026-11-01T00:00:00.000Z … 2026-11-01T05:30:00.000Z  parallel 3  6/6 ended: 6 completed, 0 failed, 0 not run`,
      );
    } finally {
      await scheduler.stop();
    }
    // Without a running scheduler, a second backfill's first tick waits: cancelled, it makes no plan.
    const second = await cli([
      'schedule',
      'backfill',
      'hourly',
      '--schedules',
      schedules,
      '--from',
      '2026-10-01T00:00:00Z',
      '--to',
      '2026-10-01T03:00:00Z',
      '--json',
    ]);
    const { id: secondId } = JSON.parse(second.stdout) as { id: string };
    const cancelled = await cli([
      'schedule',
      'cancel-backfill',
      'hourly',
      secondId,
      '--schedules',
      schedules,
      '--reason',
      'wrong month',
    ]);
    expect(cancelled.status, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toContain(`${secondId}  CANCELLED`);
    expect(cancelled.stdout).toContain('(wrong month)');

    const future = await cli([
      'schedule',
      'backfill',
      'hourly',
      '--schedules',
      schedules,
      '--from',
      '2026-11-01T00:00:00Z',
      '--to',
      new Date(Date.now() + 3_600_000).toISOString(),
    ]);
    expect(future.status).toBe(2);
    expect(future.stderr).toContain('is in the future: a backfill covers past ticks');
    const unknown = await cli([
      'schedule',
      'cancel-backfill',
      'hourly',
      'backfill-001764036000000-00000000',
      '--schedules',
      schedules,
    ]);
    expect(unknown.status).toBe(5);
    expect(unknown.stderr).toContain(
      'zk-plan schedule backfills hourly lists them [BACKFILL_NOT_FOUND]',
    );
  });
});
