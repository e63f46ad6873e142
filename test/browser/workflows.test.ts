/** Plans as runs of workflows (src/ui/browser/workflows.ts): grouping, order, summary and the filters of the workflows page. */
import { describe, expect, it } from 'vitest';
import {
  filterQuery,
  filterRuns,
  groupWorkflows,
  isRunOfBackfill,
  parseRunFilter,
  tickTimeOf,
} from '../../src/ui/browser/workflows.js';
import type { UiBackfill, UiPlanRow } from '../../src/ui/ui-wire.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-20T10:00:00.000Z');

function run(
  name: string,
  planName: string | undefined,
  state: UiPlanRow['state'],
  createdAt: number | undefined,
  extra: Partial<UiPlanRow> = {},
): UiPlanRow {
  return {
    plan: `/plans/${name}`,
    name,
    ...(planName === undefined ? {} : { planName }),
    state,
    priority: 0,
    done: 1,
    total: 2,
    historyKept: true,
    running: 0,
    failed: state === 'failed' ? 1 : 0,
    blocked: 0,
    waiting: 0,
    ...(createdAt === undefined ? {} : { createdAt }),
    ...extra,
  };
}

const rows: UiPlanRow[] = [
  run('plan-0000000001', 'etl', 'completed', T0, { finishedAt: T0 + 60_000 }),
  run('plan-0000000002', 'etl', 'failed', T0 + 2 * HOUR, { finishedAt: T0 + 2 * HOUR + 5_000 }),
  run('plan-0000000003', 'report', 'running', T0 + HOUR),
  run('plan-0000000004', 'etl', 'completed', T0 + 26 * HOUR),
  run('plan-0000000005', undefined, 'completed', T0 + 3 * HOUR),
  run('plan-0000000003~task-0000000001', 'report', 'running', T0 + HOUR, {
    subPlanOf: '/plans/plan-0000000003/task-0000000001',
  }),
  run('plan-0000000006', 'etl', 'cancelled', T0 + 27 * HOUR),
];

describe('groupWorkflows', () => {
  it('groups plans by name, runs newest first, the workflow with the newest run first; unnamed plans and sub-plans belong to none', () => {
    const { workflows, unnamed } = groupWorkflows(rows);
    expect(workflows.map((workflow) => workflow.name)).toEqual(['etl', 'report']);
    const etl = workflows[0];
    expect(etl?.runs.map((entry) => entry.name)).toEqual([
      'plan-0000000006',
      'plan-0000000004',
      'plan-0000000002',
      'plan-0000000001',
    ]);
    expect(workflows[1]?.runs.map((entry) => entry.name)).toEqual(['plan-0000000003']);
    expect(unnamed).toBe(1);
  });

  it('sums a workflow up: its last run, runs, failed and running ones, and the share of ended runs that completed', () => {
    const [etl, report] = groupWorkflows(rows).workflows;
    expect(etl?.last.name).toBe('plan-0000000006');
    expect([etl?.ended, etl?.completed, etl?.failed, etl?.running]).toEqual([4, 2, 1, 0]);
    expect(etl?.successRate).toBe(0.5);
    expect(report?.successRate).toBeUndefined(); // nothing ended yet
    expect(report?.running).toBe(1);
  });

  it('orders runs without a creation time by their tick, then by node name', () => {
    const ticks = [
      run('nightly@20261124T013000.000Z', 'nightly', 'completed', undefined),
      run('nightly@20261126T013000.000Z', 'nightly', 'completed', undefined),
      run('nightly@20261125T013000.000Z', 'nightly', 'failed', undefined),
    ];
    expect(groupWorkflows(ticks).workflows[0]?.runs.map((entry) => entry.name)).toEqual([
      'nightly@20261126T013000.000Z',
      'nightly@20261125T013000.000Z',
      'nightly@20261124T013000.000Z',
    ]);
  });
});

describe('the run filter', () => {
  const etlRuns = groupWorkflows(rows).workflows[0]?.runs ?? [];

  it('keeps the runs of one state', () => {
    const failed = filterRuns(etlRuns, { state: 'failed' }, 'UTC');
    expect(failed.map((entry) => entry.name)).toEqual(['plan-0000000002']);
  });

  it('keeps the runs started within a range of days on the chosen zone’s clocks, the last day whole', () => {
    const day = (from: string, to: string, zone: string): string[] =>
      filterRuns(etlRuns, { from, to }, zone).map((entry) => entry.name);
    expect(day('2026-11-20', '2026-11-20', 'UTC')).toEqual(['plan-0000000002', 'plan-0000000001']);
    expect(day('2026-11-21', '2026-11-21', 'UTC')).toEqual(['plan-0000000006', 'plan-0000000004']);
    // In Honolulu (UTC−10) the first run started at midnight of the 20th and the second at 02:00;
    // the third (12:00 UTC on the 21st) at 02:00 on the 21st: not that day.
    expect(day('2026-11-20', '2026-11-20', 'Pacific/Honolulu')).toEqual([
      'plan-0000000002',
      'plan-0000000001',
    ]);
    // In Tokyo (UTC+9) the 21st begins at 15:00 UTC on the 20th: nothing of etl started then until 12:00 UTC on the 21st.
    expect(day('2026-11-21', '2026-11-21', 'Asia/Tokyo')).toEqual([
      'plan-0000000006',
      'plan-0000000004',
    ]);
    expect(day('2026-11-22', '2026-11-30', 'UTC')).toEqual([]);
    // A run whose start cannot be told is not in any range, and is kept without one.
    const unknown = [run('plan-0000000009', 'etl', 'running', undefined)];
    expect(filterRuns(unknown, { from: '2026-11-20' }, 'UTC')).toEqual([]);
    expect(filterRuns(unknown, { state: 'running' }, 'UTC')).toHaveLength(1);
  });

  it('keeps the cron ticks of a backfill’s range, not manual runs; nothing for a backfill it does not know', () => {
    const backfill: UiBackfill = {
      id: 'backfill-001764036000000-1a2b3c4d',
      from: '2026-11-01T01:30:00.000Z',
      to: '2026-11-02T01:30:00.000Z',
      mode: 'serial',
      state: 'completed',
      total: 2,
      started: 2,
      completed: 2,
      failed: 0,
      notRun: 0,
      createdAt: '2026-11-25T10:00:00.000Z',
    };
    const ticks = [
      run('nightly@20261102T013000.000Z', 'nightly', 'completed', T0),
      run('nightly@20261101T013000.000Z', 'nightly', 'failed', T0),
      run('nightly@20261101T013000.000Z-manual-0a1b2c3d', 'nightly', 'completed', T0),
      run('nightly@20261103T013000.000Z', 'nightly', 'completed', T0),
    ];
    expect(tickTimeOf('nightly@20261101T013000.000Z')).toBe(Date.parse(backfill.from));
    expect(tickTimeOf('plan-0000000001')).toBeUndefined();
    expect(ticks.map((entry) => isRunOfBackfill(entry, backfill))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(filterRuns(ticks, { backfill: backfill.id }, 'UTC', [backfill])).toHaveLength(2);
    expect(filterRuns(ticks, { backfill: 'backfill-x' }, 'UTC', [backfill])).toEqual([]);
  });

  it('is read from the query, dropping values that are none of the expected ones, and written back', () => {
    const query = new URLSearchParams(
      'name=etl&state=failed&from=2026-11-20&to=not-a-day&backfill=backfill-001764036000000-1a2b3c4d',
    );
    const filter = parseRunFilter(query);
    expect(filter).toEqual({
      state: 'failed',
      from: '2026-11-20',
      backfill: 'backfill-001764036000000-1a2b3c4d',
    });
    expect(parseRunFilter(new URLSearchParams('state=<img>&backfill=../x'))).toEqual({});
    expect(filterQuery('etl', filter)).toBe(
      'name=etl&state=failed&from=2026-11-20&backfill=backfill-001764036000000-1a2b3c4d',
    );
  });
});
