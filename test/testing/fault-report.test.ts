import { describe, expect, it } from 'vitest';
import {
  parseExecutionRecords,
  valueHash,
  type ExecutionRecord,
} from '../../src/testing/fault-harness/execution-record.js';
import {
  buildFaultReport,
  type FaultReportInput,
  type ObservedTask,
  type RunObservation,
} from '../../src/testing/fault-harness/fault-report.js';
import {
  NotFaultTolerantError,
  expectFaultTolerant,
  faultToleranceProblems,
  formatFaultReport,
} from '../../src/testing/index.js';

const BASELINE = '/h/plan-0000000000';
const FAULTY = '/h/plan-0000000001';

/** Builds the records of one execution: start, effects, then its ending (none: cut short). */
function execution(
  plan: string,
  run: string,
  task: string,
  fn: string,
  {
    inputs = 'in',
    ending = { outcome: 'returned', result: 1 },
    aborted = false,
    effects = [],
    attempt = 1,
    pid = Number(run.split(':')[0]),
  }: {
    inputs?: unknown;
    ending?: { outcome: 'returned'; result: unknown } | { outcome: 'threw' } | 'cut short';
    aborted?: boolean;
    effects?: readonly [string, unknown][];
    attempt?: number;
    pid?: number;
  } = {},
): ExecutionRecord[] {
  const at = Number(run.split(':')[1] ?? 0);
  const records: ExecutionRecord[] = [
    {
      kind: 'start',
      run,
      at,
      plan,
      task: `${plan}/${task}`,
      fn,
      attempt,
      pid,
      workerId: `w${pid}`,
      inputsHash: valueHash(inputs),
    },
  ];
  for (const [name, value] of effects)
    records.push({
      kind: 'effect',
      run,
      at,
      name,
      valueHash: valueHash(value),
      preview: String(value),
    });
  if (ending === 'cut short') return records;
  records.push(
    ending.outcome === 'returned'
      ? {
          kind: 'end',
          run,
          at: at + 1,
          outcome: 'returned',
          aborted,
          resultHash: valueHash(ending.result),
          preview: JSON.stringify(ending.result),
        }
      : { kind: 'end', run, at: at + 1, outcome: 'threw', aborted, error: 'Error: boom' },
  );
  return records;
}

function task(
  plan: string,
  name: string,
  fn: string,
  extra: Partial<ObservedTask> = {},
): ObservedTask {
  return { path: `${plan}/${name}`, name, key: name, fn, state: 'done', ...extra };
}

function run(plan: string, tasks: ObservedTask[], records: ExecutionRecord[]): RunObservation {
  return { plan, finished: true, durationMs: 1000, tasks, records };
}

function input(baseline: RunObservation, faulty: RunObservation): FaultReportInput {
  return {
    seed: 42,
    faultsSelected: ['killWorkers'],
    atLeastOnce: true,
    faults: [{ kind: 'killWorkers', atMs: 10, target: 'pid 1', during: 'a', forced: false }],
    baseline,
    faulty,
  };
}

describe('the fault report (execution records → report)', () => {
  it('counts executions, re-executions, cut-short and aborted runs, attempts and workers per task, by key', () => {
    const records = [
      ...execution(BASELINE, '1:1', 'a', 'f'),
      ...execution(FAULTY, '1:2', 'a', 'f', { ending: 'cut short' }),
      ...execution(FAULTY, '2:3', 'a', 'f', { aborted: true }),
      ...execution(FAULTY, '3:4', 'a', 'f', { attempt: 2 }),
    ];
    const report = buildFaultReport(
      input(
        run(BASELINE, [task(BASELINE, 'a', 'f')], records),
        run(FAULTY, [task(FAULTY, 'a', 'f')], records),
      ),
    );
    expect(report.tasks).toEqual([
      {
        task: 'a',
        key: 'a',
        path: `${FAULTY}/a`,
        fn: 'f',
        state: 'done',
        baselineState: 'done',
        executions: 3,
        reExecutions: 2,
        cutShort: 1,
        aborted: 1,
        attempts: 2,
        workers: 3,
        result: 'same',
        finished: true,
      },
    ]);
    expect(report.nonIdempotent).toEqual([]);
    expect(faultToleranceProblems(report)).toEqual([]);
    expect(() => expectFaultTolerant(report)).not.toThrow();
  });

  it('names a function whose re-executions with the same inputs returned different values, and the task whose result differs', () => {
    const records = [
      ...execution(BASELINE, '1:1', 'r', 'random', {
        ending: { outcome: 'returned', result: 0.1 },
      }),
      ...execution(FAULTY, '1:2', 'r', 'random', { ending: { outcome: 'returned', result: 0.2 } }),
      ...execution(FAULTY, '2:3', 'r', 'random', { ending: { outcome: 'returned', result: 0.3 } }),
    ];
    const report = buildFaultReport(
      input(
        run(BASELINE, [task(BASELINE, 'r', 'random', { resultHash: valueHash(0.1) })], records),
        run(FAULTY, [task(FAULTY, 'r', 'random', { resultHash: valueHash(0.3) })], records),
      ),
    );
    expect(report.nonIdempotent.map(({ fn, tasks, reasons }) => ({ fn, tasks, reasons }))).toEqual([
      { fn: 'random', tasks: ['r'], reasons: ['result differs'] },
    ]);
    expect(report.nonIdempotent[0]?.evidence[0]).toContain('returned 0.1');
    expect(report.tasks[0]?.result).toBe('different');
    expect(report.resultsMatch).toBe(false);
    const problems = faultToleranceProblems(report);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^function random is not idempotent \(result differs\) in r/);
    expect(problems[1]).toBe('tasks whose result differs from the fault-free run: r');
    expect(faultToleranceProblems(report, { except: ['random'] })).toEqual([]);
  });

  it('names a function one of whose executions threw where another returned, with the same inputs', () => {
    const records = [
      ...execution(BASELINE, '1:1', 'a', 'flaky'),
      ...execution(FAULTY, '2:2', 'a', 'flaky', { ending: { outcome: 'threw' } }),
      ...execution(FAULTY, '2:3', 'a', 'flaky'),
    ];
    const report = buildFaultReport(
      input(
        run(BASELINE, [task(BASELINE, 'a', 'flaky')], records),
        run(FAULTY, [task(FAULTY, 'a', 'flaky')], records),
      ),
    );
    expect(report.nonIdempotent.map((fn) => fn.reasons)).toEqual([['outcome differs']]);
  });

  it('names a function whose executions declared different effects, though their results agree', () => {
    const records = [
      ...execution(BASELINE, '1:1', 'mail', 'send', { effects: [['email', 'invoice 1']] }),
      ...execution(FAULTY, '1:2', 'mail', 'send', { effects: [['email', 'invoice 1']] }),
      ...execution(FAULTY, '2:3', 'mail', 'send', { effects: [['email', 'invoice 2']] }),
    ];
    const report = buildFaultReport(
      input(
        run(BASELINE, [task(BASELINE, 'mail', 'send')], records),
        run(FAULTY, [task(FAULTY, 'mail', 'send')], records),
      ),
    );
    expect(report.nonIdempotent.map(({ fn, reasons }) => ({ fn, reasons }))).toEqual([
      { fn: 'send', reasons: ['effects differ'] },
    ]);
    expect(report.tasks[0]?.result).toBe('same');
  });

  it('does not blame a function for executions cut short, aborted (fenced) or given other inputs', () => {
    const records = [
      ...execution(BASELINE, '1:1', 'a', 'f', {
        inputs: 'x',
        ending: { outcome: 'returned', result: 1 },
      }),
      ...execution(FAULTY, '1:2', 'a', 'f', {
        inputs: 'x',
        ending: 'cut short',
        effects: [['half', 1]],
      }),
      ...execution(FAULTY, '2:3', 'a', 'f', {
        inputs: 'x',
        aborted: true,
        ending: { outcome: 'returned', result: 99 },
      }),
      ...execution(FAULTY, '3:4', 'a', 'f', {
        inputs: 'y',
        ending: { outcome: 'returned', result: 2 },
      }),
    ];
    const report = buildFaultReport(
      input(
        run(BASELINE, [task(BASELINE, 'a', 'f', { resultHash: valueHash(1) })], records),
        run(FAULTY, [task(FAULTY, 'a', 'f', { resultHash: valueHash(2) })], records),
      ),
    );
    expect(report.nonIdempotent).toEqual([]);
    // Its inputs differed: the result differs, upstream's doing, and is reported as such.
    expect(report.tasks[0]?.result).toBe('different');
  });

  it('reports tasks that never finished, ended otherwise, or are missing from the fault run, and a run no fault hit', () => {
    const baseline = run(
      BASELINE,
      [task(BASELINE, 'a', 'f'), task(BASELINE, 'b', 'f'), task(BASELINE, 'gone', 'f')],
      [],
    );
    const faulty: RunObservation = {
      ...run(
        FAULTY,
        [task(FAULTY, 'a', 'f', { state: 'running' }), task(FAULTY, 'b', 'f', { state: 'failed' })],
        [],
      ),
      finished: false,
    };
    const report = buildFaultReport({ ...input(baseline, faulty), faults: [] });
    expect(report.tasks.map((t) => [t.task, t.state, t.finished])).toEqual([
      ['a', 'running', false],
      ['b', 'failed', true],
      ['gone', 'missing', false],
    ]);
    expect(faultToleranceProblems(report)).toEqual([
      'tasks that never finished (the plan did not finish within the timeout): a (running)',
      'tasks that ended otherwise than in the fault-free run: b (failed, fault-free done)',
      'tasks of the fault-free run missing from the fault run: gone',
      "no fault was injected (asked for: killWorkers): the run proves nothing; raise the faults' probability or give the plan longer tasks",
    ]);
    expect(faultToleranceProblems(report, { allowNoFaults: true })).toHaveLength(3);
  });

  it('lists the faults asked for that were never injected, and fails the verdict on them unless allowed', () => {
    const records = execution(FAULTY, '1:2', 'a', 'f');
    const report = buildFaultReport({
      ...input(
        run(BASELINE, [task(BASELINE, 'a', 'f')], execution(BASELINE, '1:1', 'a', 'f')),
        run(FAULTY, [task(FAULTY, 'a', 'f')], records),
      ),
      faultsSelected: ['slowLinks', 'killWorkers', 'restartZooKeeper', 'freezeWorkers'],
      faults: [
        { kind: 'killWorkers', atMs: 10, target: 'pid 1', during: 'a', forced: false },
        { kind: 'freezeWorkers', atMs: 20, target: 'pid 2', during: 'a', forced: true },
      ],
    });
    // In the order reports list the kinds, not the order they were asked for.
    expect(report.missedFaults).toEqual(['restartZooKeeper', 'slowLinks']);
    const missedLine =
      'faults asked for but never injected: restartZooKeeper, slowLinks; the plan ended before they could hit, so the run does not show the plan survives them: give the plan more work, or allow them (allowMissedFaults)';
    expect(faultToleranceProblems(report)).toEqual([missedLine]);
    expect(() => expectFaultTolerant(report)).toThrow(NotFaultTolerantError);
    expect(() => expectFaultTolerant(report)).toThrow(
      /faults asked for but never injected: restartZooKeeper, slowLinks/,
    );
    expect(faultToleranceProblems(report, { allowMissedFaults: true })).toEqual([]);
    expect(faultToleranceProblems(report, { allowMissedFaults: ['restartZooKeeper'] })).toEqual([
      missedLine.replace('restartZooKeeper, slowLinks', 'slowLinks'),
    ]);
    expect(
      faultToleranceProblems(report, { allowMissedFaults: ['slowLinks', 'restartZooKeeper'] }),
    ).toEqual([]);
    expect(faultToleranceProblems({ ...report, atLeastOnce: false })[0]).toContain(
      'the draws missed them (atLeastOnce is off)',
    );
    const text = formatFaultReport(report);
    expect(text).toContain(
      'faults injected: killWorkers 1, freezeWorkers 1, restartZooKeeper 0, slowLinks 0',
    );
    expect(text).toContain(
      'faults MISSED (asked for, never injected): restartZooKeeper, slowLinks',
    );
    expect(text).toContain('     0.0 s  freezeWorkers pid 2 (as it started a), forced (owed)');
  });

  it('a run no fault hit is one problem (allowNoFaults accepts it), not also a list of missed faults', () => {
    const report = buildFaultReport({
      ...input(run(BASELINE, [], []), run(FAULTY, [], [])),
      faultsSelected: ['killWorkers', 'slowLinks'],
      faults: [],
    });
    expect(report.missedFaults).toEqual(['killWorkers', 'slowLinks']);
    expect(faultToleranceProblems(report)).toEqual([
      "no fault was injected (asked for: killWorkers, slowLinks): the run proves nothing; raise the faults' probability or give the plan longer tasks",
    ]);
    expect(faultToleranceProblems(report, { allowNoFaults: true })).toEqual([]);
  });

  it('refuses allowMissedFaults other than true, false or a list of fault kinds, with INVALID_ARGUMENT', () => {
    const report = buildFaultReport(input(run(BASELINE, [], []), run(FAULTY, [], [])));
    expect(report.missedFaults).toEqual([]);
    for (const allowMissedFaults of ['killWorkers', ['killAll'], 1]) {
      expect(() =>
        faultToleranceProblems(report, { allowMissedFaults: allowMissedFaults as never }),
      ).toThrow(/Invalid allowMissedFaults: expected true, false, or a list of faults/);
    }
  });

  it('matches tasks without keys by their name in the plan', () => {
    const records = [
      ...execution(BASELINE, '1:1', 'task-0000000001', 'f', {
        ending: { outcome: 'returned', result: 5 },
      }),
      ...execution(FAULTY, '1:2', 'task-0000000001', 'f', {
        ending: { outcome: 'returned', result: 5 },
      }),
    ];
    const unkeyed = (plan: string): ObservedTask => ({
      path: `${plan}/task-0000000001`,
      name: 'task-0000000001',
      fn: 'f',
      state: 'done',
    });
    const report = buildFaultReport(
      input(run(BASELINE, [unkeyed(BASELINE)], records), run(FAULTY, [unkeyed(FAULTY)], records)),
    );
    expect(report.tasks.map((t) => [t.task, t.result, t.executions])).toEqual([
      ['task-0000000001', 'same', 1],
    ]);
  });

  it('expectFaultTolerant throws NotFaultTolerantError whose message lists each problem', () => {
    const records = [
      ...execution(BASELINE, '1:1', 'r', 'audit.invoice', {
        ending: { outcome: 'returned', result: 'A' },
      }),
      ...execution(FAULTY, '1:2', 'r', 'audit.invoice', {
        ending: { outcome: 'returned', result: 'B' },
      }),
    ];
    const report = buildFaultReport(
      input(
        run(BASELINE, [task(BASELINE, 'r', 'audit.invoice')], records),
        run(FAULTY, [task(FAULTY, 'r', 'audit.invoice')], records),
      ),
    );
    let thrown: unknown;
    try {
      expectFaultTolerant(report);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(NotFaultTolerantError);
    const error = thrown as NotFaultTolerantError;
    expect(error.code).toBe('NOT_FAULT_TOLERANT');
    expect(error.problems).toHaveLength(2);
    expect(error.message).toContain(
      '- function audit.invoice is not idempotent (result differs) in r',
    );
    expect(error.message).toContain('- tasks whose result differs from the fault-free run: r');
    expect(() => expectFaultTolerant(report, { except: 'audit.invoice' as never })).toThrow(
      /Invalid except: expected a list of function names/,
    );
  });

  it('is plain data that prints as a table, control characters stripped', () => {
    const records = execution(FAULTY, '1:2', 'evil\u001b[2Jkey', 'f');
    const report = buildFaultReport(
      input(run(BASELINE, [], []), run(FAULTY, [task(FAULTY, 'evil\u001b[2Jkey', 'f')], records)),
    );
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
    const text = formatFaultReport(report);
    expect(text).toContain('evilkey');
    expect(text).not.toContain('\u001b');
    const lines = text.split('\n');
    expect(lines.find((line) => line.startsWith('task'))).toMatch(
      /^task\s+fn\s+state\s+executions\s+re-executions\s+cut short\s+aborted\s+workers\s+result$/,
    );
    expect(text).toContain('faults injected: killWorkers 1');
    expect(text).toContain('     0.0 s  killWorkers pid 1 (as it started a)');
  });
});

describe('the execution log', () => {
  it('skips a torn last line (a process killed mid-write) and lines of another shape', () => {
    const [start] = execution(FAULTY, '1:1', 'a', 'f');
    const text = [
      JSON.stringify(start),
      '{"kind":"end","run":"1:1","at":5,"outcome":"returned","aborted":fal',
      JSON.stringify({ kind: 'start', run: '2:1' }),
      '',
    ].join('\n');
    expect(parseExecutionRecords(text)).toEqual([start]);
  });

  it('hashes values by content: key order does not matter, Map and Date values do', () => {
    expect(valueHash({ a: 1, b: 2 })).toBe(valueHash({ b: 2, a: 1 }));
    expect(valueHash(new Map([['x', 1]]))).not.toBe(valueHash(new Map([['x', 2]])));
    expect(valueHash(new Date(0))).not.toBe(valueHash(new Date(1)));
  });
});
