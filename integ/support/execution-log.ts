/**
 * The execution log of the fault tests and its analysis. The task functions of the worker
 * processes (fault-functions.ts) append one JSON line per event to a shared file with O_APPEND, one
 * write per line, so a test can see which process ran which task when, even for processes it
 * killed with SIGKILL.
 *
 * A line is `{ task, label, pid, workerId, run, event, at, args?, result?, reason? }` where `event`
 * is `start`, `aborted` (the task's AbortSignal fired during the run) or `end` (the function
 * returned); `run` identifies one execution (`<pid>:<n>`). A process killed with -9 never writes
 * `end`: its execution counts as ending at the kill time the test recorded.
 *
 * Pure functions of the log's text and the kill times: nothing here touches processes or ZooKeeper.
 */
import { existsSync, readFileSync } from 'node:fs';

/** The environment variable naming the execution log the functions append to. */
export const FAULT_LOG_ENV = 'ZK_PLAN_FAULT_LOG';

/** `work` sums modulo this prime, so values stay exact however deep a plan is. */
export const WORK_MODULUS = 1_000_003;

export interface LogEntry {
  readonly task: string;
  readonly label?: string;
  readonly pid: number;
  readonly workerId: string;
  readonly run: string;
  readonly event: 'start' | 'aborted' | 'end';
  readonly at: number;
  readonly args?: unknown[];
  readonly result?: unknown;
  readonly reason?: string;
}

/** The entries of a log's text in order; a torn line (a process killed mid-write) is skipped. */
export function parseExecutionLog(text: string): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      entries.push(JSON.parse(line) as LogEntry);
    } catch {
      // a partial line: only possible for the last write of a killed process
    }
  }
  return entries;
}

/** The log file's entries in file order (none when it does not exist yet). */
export function readExecutionLog(logFile: string): LogEntry[] {
  return existsSync(logFile) ? parseExecutionLog(readFileSync(logFile, 'utf8')) : [];
}

/** One run of a function, from its `start` to its `end` or the kill of its process. */
export interface Execution {
  readonly task: string;
  readonly label: string | undefined;
  readonly pid: number;
  readonly run: string;
  readonly args: unknown[] | undefined;
  readonly startedAt: number;
  /** `end` time; the kill time for a process killed before `end`; Infinity when neither (still running). */
  readonly endedAt: number;
  readonly ending: 'end' | 'killed' | 'running';
  /** When its signal fired, if it did (the worker lost the task: its writes are fenced). */
  readonly abortedAt: number | undefined;
  readonly result: unknown;
}

/** Pairs each `start` with its `end` (same `run`); a run of a killed pid without `end` ends at the kill. */
export function executionsOf(
  entries: readonly LogEntry[],
  kills: ReadonlyMap<number, number> = new Map(),
): Execution[] {
  const byRun = new Map<string, { start?: LogEntry; end?: LogEntry; aborted?: LogEntry }>();
  for (const entry of entries) {
    const slot = byRun.get(entry.run) ?? {};
    if (entry.event === 'start') slot.start = entry;
    else if (entry.event === 'end') slot.end = entry;
    else slot.aborted = entry;
    byRun.set(entry.run, slot);
  }
  const executions: Execution[] = [];
  for (const [run, { start, end, aborted }] of byRun) {
    if (start === undefined) continue;
    const killedAt = kills.get(start.pid);
    const ending = end !== undefined ? 'end' : killedAt !== undefined ? 'killed' : 'running';
    executions.push({
      task: start.task,
      label: start.label,
      pid: start.pid,
      run,
      args: start.args,
      startedAt: start.at,
      endedAt: end?.at ?? killedAt ?? Number.POSITIVE_INFINITY,
      ending,
      abortedAt: aborted?.at,
      result: end?.result,
    });
  }
  return executions.sort((a, b) => a.startedAt - b.startedAt);
}

/** Executions grouped by task path, each group in start order. */
export function executionsPerTask(executions: readonly Execution[]): Map<string, Execution[]> {
  const perTask = new Map<string, Execution[]>();
  for (const execution of executions) {
    const list = perTask.get(execution.task) ?? [];
    list.push(execution);
    perTask.set(execution.task, list);
  }
  return perTask;
}

export interface Overlap {
  readonly task: string;
  readonly first: Execution;
  readonly second: Execution;
  readonly overlapMs: number;
}

/**
 * Pairs of executions of the same task whose intervals overlap (a killed run ends at its kill).
 * `live`: neither run saw its signal abort, so both processes were alive and believed they owned
 * the task: exclusive ownership was broken. `fenced`: one of them had lost its session (its signal
 * aborted), so its writes were refused: allowed, reported.
 */
export function overlapsOf(executions: readonly Execution[]): {
  live: Overlap[];
  fenced: Overlap[];
} {
  const live: Overlap[] = [];
  const fenced: Overlap[] = [];
  for (const [task, runs] of executionsPerTask(executions)) {
    for (let i = 0; i < runs.length; i++) {
      for (let j = i + 1; j < runs.length; j++) {
        const first = runs[i]!;
        const second = runs[j]!;
        const overlapMs =
          Math.min(first.endedAt, second.endedAt) - Math.max(first.startedAt, second.startedAt);
        if (overlapMs <= 0) continue;
        const overlap = { task, first, second, overlapMs };
        if (first.abortedAt !== undefined || second.abortedAt !== undefined) fenced.push(overlap);
        else live.push(overlap);
      }
    }
  }
  return { live, fenced };
}

/** Executions beyond the first, per task, summed: how much work crashes made the cluster redo. */
export function reExecutionCount(executions: readonly Execution[]): number {
  let count = 0;
  for (const runs of executionsPerTask(executions).values()) count += runs.length - 1;
  return count;
}

/** A readable line for an overlap, for assertion messages. */
export function describeOverlap({ task, first, second, overlapMs }: Overlap): string {
  const side = (e: Execution): string =>
    `pid ${e.pid} run ${e.run} [${e.startedAt}, ${e.endedAt}] (${e.ending}${e.abortedAt ? `, aborted at ${e.abortedAt}` : ''})`;
  return `${task}: ${side(first)} and ${side(second)} overlap by ${overlapMs} ms`;
}
