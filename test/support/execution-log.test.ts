import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeOverlap,
  executionsOf,
  overlapsOf,
  parseExecutionLog,
  readExecutionLog,
  reExecutionCount,
  type LogEntry,
} from '../../integ/support/execution-log.js';

/** A log line of run `<pid>:<n>` of `task`. */
function entry(
  task: string,
  run: string,
  event: LogEntry['event'],
  at: number,
  extra: Partial<LogEntry> = {},
): LogEntry {
  return {
    task,
    label: task.slice(-2),
    pid: Number(run.split(':')[0]),
    workerId: 'w',
    run,
    event,
    at,
    ...extra,
  };
}

const lines = (entries: readonly LogEntry[]): string =>
  entries.map((e) => `${JSON.stringify(e)}\n`).join('');

describe('reading the execution log', () => {
  it('keeps whole lines in order and skips blank and torn ones (a process killed mid-write)', () => {
    const first = entry('/p/t1', '10:1', 'start', 100);
    const second = entry('/p/t1', '10:1', 'end', 200, { result: 7 });
    const text = `${lines([first])}\n${'{"task":"/p/t2","ev'}\n${lines([second])}${'{"task":"/p/t3"'}`;
    expect(parseExecutionLog(text)).toEqual([first, second]);
  });

  it('reads a file, and gives no entries for a log not written yet', () => {
    const dir = mkdtempSync(join(tmpdir(), 'execution-log-test-'));
    try {
      const file = join(dir, 'executions.jsonl');
      expect(readExecutionLog(file)).toEqual([]);
      const start = entry('/p/t1', '10:1', 'start', 100);
      writeFileSync(file, `${lines([start])}{"torn`);
      expect(readExecutionLog(file)).toEqual([start]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('executionsOf', () => {
  it('pairs each start with the end of the same run, in start order, with its args, result and abort', () => {
    const executions = executionsOf([
      entry('/p/t2', '11:1', 'start', 150, { args: [1] }),
      entry('/p/t1', '10:1', 'start', 100, { args: [] }),
      entry('/p/t1', '10:1', 'aborted', 160, { reason: 'session expired' }),
      entry('/p/t2', '11:1', 'end', 300, { result: 'b' }),
      entry('/p/t1', '10:1', 'end', 400, { result: 'a' }),
    ]);
    expect(
      executions.map((e) => [e.run, e.startedAt, e.endedAt, e.ending, e.abortedAt, e.result]),
    ).toEqual([
      ['10:1', 100, 400, 'end', 160, 'a'],
      ['11:1', 150, 300, 'end', undefined, 'b'],
    ]);
    expect(executions[1]?.args).toEqual([1]);
  });

  it('ends a run without `end` at the kill time of its process, and leaves it running when its process was not killed', () => {
    const entries = [entry('/p/t1', '10:1', 'start', 100), entry('/p/t2', '11:1', 'start', 120)];
    const [killed, running] = executionsOf(entries, new Map([[10, 250]]));
    expect(killed).toMatchObject({ run: '10:1', endedAt: 250, ending: 'killed' });
    expect(running).toMatchObject({
      run: '11:1',
      endedAt: Number.POSITIVE_INFINITY,
      ending: 'running',
    });
  });

  it('ignores an end whose start is not in the log', () => {
    expect(executionsOf([entry('/p/t1', '10:1', 'end', 200)])).toEqual([]);
  });
});

describe('overlapsOf', () => {
  it('finds no overlap between runs of a task one after the other, nor between runs of different tasks', () => {
    const executions = executionsOf([
      entry('/p/t1', '10:1', 'start', 100),
      entry('/p/t1', '10:1', 'end', 200),
      entry('/p/t1', '11:1', 'start', 200), // starts the very ms the first ended: no overlap
      entry('/p/t1', '11:1', 'end', 300),
      entry('/p/t2', '12:1', 'start', 150),
      entry('/p/t2', '12:1', 'end', 250),
    ]);
    expect(overlapsOf(executions)).toEqual({ live: [], fenced: [] });
  });

  it('reports two runs of a task at once as live when neither saw its signal abort, with the overlap length', () => {
    const executions = executionsOf([
      entry('/p/t1', '10:1', 'start', 100),
      entry('/p/t1', '11:1', 'start', 150),
      entry('/p/t1', '10:1', 'end', 230),
      entry('/p/t1', '11:1', 'end', 300),
    ]);
    const { live, fenced } = overlapsOf(executions);
    expect(fenced).toEqual([]);
    expect(live.map((o) => [o.task, o.first.run, o.second.run, o.overlapMs])).toEqual([
      ['/p/t1', '10:1', '11:1', 80],
    ]);
    expect(describeOverlap(live[0]!)).toMatch(
      /^\/p\/t1: pid 10 run 10:1 \[100, 230\] \(end\) and pid 11 run 11:1 \[150, 300\] \(end\) overlap by 80 ms$/,
    );
  });

  it('reports an overlap as fenced when one of the runs saw its signal abort (its session was gone)', () => {
    const executions = executionsOf([
      entry('/p/t1', '10:1', 'start', 100),
      entry('/p/t1', '11:1', 'start', 150),
      entry('/p/t1', '10:1', 'aborted', 160),
      entry('/p/t1', '10:1', 'end', 200),
      entry('/p/t1', '11:1', 'end', 300),
    ]);
    const { live, fenced } = overlapsOf(executions);
    expect(live).toEqual([]);
    expect(fenced.map((o) => o.overlapMs)).toEqual([50]);
    expect(describeOverlap(fenced[0]!)).toContain('aborted at 160');
  });

  it('counts a killed run only up to the kill: a re-run after the kill does not overlap it, one before does', () => {
    const entries = [
      entry('/p/t1', '10:1', 'start', 100),
      entry('/p/t1', '11:1', 'start', 300),
      entry('/p/t1', '11:1', 'end', 400),
    ];
    expect(overlapsOf(executionsOf(entries, new Map([[10, 250]]))).live).toEqual([]);
    expect(
      overlapsOf(executionsOf(entries, new Map([[10, 350]]))).live.map((o) => o.overlapMs),
    ).toEqual([50]);
    // Without its kill time the first run never ends, so it overlaps every later run.
    expect(overlapsOf(executionsOf(entries)).live.map((o) => o.overlapMs)).toEqual([100]);
  });
});

describe('re-executions and results', () => {
  it('counts the runs beyond the first of each task', () => {
    const executions = executionsOf([
      entry('/p/t1', '10:1', 'start', 100),
      entry('/p/t1', '11:1', 'start', 200),
      entry('/p/t1', '12:1', 'start', 300),
      entry('/p/t2', '11:2', 'start', 150),
      entry('/p/t3', '12:2', 'start', 160),
      entry('/p/t3', '13:1', 'start', 170),
    ]);
    expect(reExecutionCount(executions)).toBe(3);
    expect(
      reExecutionCount(
        executionsOf([entry('/p/t1', '10:1', 'start', 100), entry('/p/t2', '10:2', 'start', 110)]),
      ),
    ).toBe(0);
  });
});
