/** `zk-plan show --timeline`'s text (issue 25): bars per try scaled to the width, the critical path marked, labels printable. */
import { describe, expect, it } from 'vitest';
import { renderTimeline } from '../../src/cli/timeline-text.js';
import type { PlanView, TaskView } from '../../src/plan/plan-view.js';
import type { TaskTry } from '../../src/plan/task-tries-view.js';

const PLAN = '/plans/plan-0000000001';
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);
const at = (ms: number): Date => new Date(T0 + ms);

function task(serial: number, key: string, tries: TaskTry[], inputs: string[] = []): TaskView {
  const name = `task-${String(serial).padStart(10, '0')}`;
  return {
    task: `${PLAN}/${name}`,
    name,
    key,
    state: tries.at(-1)?.outcome === 'running' ? 'running' : 'done',
    fn: 'f',
    params: [],
    inputs: inputs.map((input) => `${PLAN}/${input}`),
    pendingInputs: 0,
    keepResult: false,
    tries,
  };
}

function done(attempt: number, workerId: string, from: number, to: number): TaskTry {
  return { attempt, outcome: 'done', workerId, startedAt: at(from), finishedAt: at(to) };
}

const VIEW: PlanView = {
  plan: PLAN,
  status: {} as PlanView['status'], // the timeline reads the tasks only
  done: 3,
  historyKept: true,
  tasks: [
    task(1, 'extract', [done(1, 'w/1', 0, 1_000)]),
    task(
      2,
      'transform',
      [
        {
          attempt: 1,
          outcome: 'failed',
          workerId: 'w/2',
          startedAt: at(1_000),
          finishedAt: at(1_500),
          error: { code: 'E', message: 'broke' },
        },
        done(2, 'w/1', 2_000, 3_000),
      ],
      ['task-0000000001'],
    ),
    task(3, 'side\u001b[2Jjob', [done(1, 'w/2', 0, 500)]),
    task(
      4,
      'load',
      [{ attempt: 1, outcome: 'running', workerId: 'w/2', startedAt: at(3_000) }],
      ['task-0000000002'],
    ),
  ],
};

describe('renderTimeline', () => {
  const text = renderTimeline(VIEW, { width: 80, now: T0 + 4_000 });
  const lines = text.split('\n');
  const line = (label: string): string => lines.find((entry) => entry.includes(` ${label} `)) ?? '';
  const bar = (label: string): string => /\|(.*)\|/.exec(line(label))?.[1] ?? '';

  it('draws one line per task, ordered by start, each try where it ran on one scale, within the width', () => {
    expect(lines.every((entry) => entry.length <= 80)).toBe(true);
    expect(bar('extract')).toMatch(/^#+ +$/);
    // transform: its failed try, a gap (the retry's wait), then its done try.
    expect(bar('transform')).toMatch(/^ +x+ +#+ +$/);
    expect(bar('load')).toMatch(/^ +>+$/);
    const width = bar('extract').length;
    expect(bar('extract').lastIndexOf('#') + 1).toBeCloseTo(width / 4, -1);
    expect(bar('transform').indexOf('#')).toBeCloseTo(width / 2, -1);
    const order = ['extract', 'sidejob', 'transform', 'load'].map((label) =>
      lines.indexOf(line(label)),
    );
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('marks the critical path, the chain of inputs that ran longest, and names it', () => {
    expect(line('extract').startsWith('* ')).toBe(true);
    expect(line('transform').startsWith('* ')).toBe(true);
    expect(line('load').startsWith('* ')).toBe(true);
    expect(line('sidejob').startsWith('  ')).toBe(true);
    expect(text).toContain('critical path (3.5s): extract → transform → load');
  });

  it('strips control characters from labels, and draws a line per worker with --by-worker', () => {
    expect(text).not.toContain('\u001b');
    const byWorker = renderTimeline(VIEW, { width: 80, now: T0 + 4_000, byWorker: true });
    const rows = byWorker
      .split('\n')
      .filter((entry) => /\|.*\|/.test(entry) && !entry.includes('|0ms'));
    expect(rows.map((row) => row.slice(2, 5))).toEqual(['w/1', 'w/2']);
    // w/1 ran extract and transform's second try, both on the critical path.
    expect(/\|(.*)\|/.exec(rows[0] ?? '')?.[1]).toMatch(/^@+ +@+ +$/);
    expect(/\|(.*)\|/.exec(rows[1] ?? '')?.[1]).toMatch(/^#+ *x+ +>+$/);
  });

  it('says so when no task has started', () => {
    expect(renderTimeline({ ...VIEW, tasks: [] }, { now: T0 })).toContain(
      'no task has started yet',
    );
  });
});
