/**
 * The fault harness's report, a pure function of what the two runs left: the execution records of
 * each plan (execution-record.ts), each plan's tasks as the store describes them at the end, and
 * the faults injected. Nothing here touches a process or ZooKeeper.
 *
 * What counts (docs/guide/fault-testing.md says it for users):
 * - An execution is one call of a task's function, from its `start` record. It *counts* when it
 *   ended by itself (returned or threw) while its worker still held the task (its signal had not
 *   aborted). One cut short (no `end`: its process was killed or never woke up in time) or aborted
 *   (the worker had lost the task; its result was fenced off) does not count: nothing of it was kept.
 * - A function is *not idempotent* when two counting executions of the same task with the same
 *   params and inputs, in the fault run or one in each run, differ: one returned and the other
 *   threw, they returned different values, or they declared different effects (`recordEffect`).
 *   Executions with different inputs are not compared: the difference comes from upstream.
 * - A task's *result differs* when its final value (the kept result, else the value of its counting
 *   executions) is not the fault-free run's.
 * Values compare by hash of their canonical serialised form.
 */
import type { ExecutionRecord, StartRecord } from './execution-record.js';

/**
 * The faults the harness can inject (the keys of FaultSelection).
 *
 * @category Fault harness
 */
export type FaultKind =
  | 'killWorkers'
  | 'expireSessions'
  | 'freezeWorkers'
  | 'restartZooKeeper'
  | 'loseReplies'
  | 'slowLinks';

/** Every fault kind, in the order reports list them. */
export const FAULT_KINDS: readonly FaultKind[] = [
  'killWorkers',
  'expireSessions',
  'freezeWorkers',
  'restartZooKeeper',
  'loseReplies',
  'slowLinks',
];

/**
 * One fault the harness injected.
 *
 * @category Fault harness
 */
export interface InjectedFault {
  readonly kind: FaultKind;
  /** Milliseconds from the fault run's start. */
  readonly atMs: number;
  /** The worker process it hit (`pid 1234`), or `zookeeper`. */
  readonly target: string;
  /** The task whose execution start set it off (its key, else its name). */
  readonly during?: string;
  /**
   * Set off without a draw, because its kind was owed its one injection (`atLeastOnce`); false for
   * a fault that won its draw.
   */
  readonly forced: boolean;
}

/** A task as the store describes it at the end of a run. */
export interface ObservedTask {
  readonly path: string;
  /** Its name in the plan (`task-0000000003`). */
  readonly name: string;
  readonly key?: string;
  readonly fn: string;
  /** The task's state (`done`, `failed`, `running`, …). */
  readonly state: string;
  /** Hash of its kept result, for a task that keeps its result and is done. */
  readonly resultHash?: string;
  /** The start of its kept result's serialised form. */
  readonly resultPreview?: string;
}

/** What one run left: its plan, whether it finished, its tasks and the records of its executions. */
export interface RunObservation {
  readonly plan: string;
  /** The plan finished (completed, or failed with nothing left to run) before the deadline. */
  readonly finished: boolean;
  readonly durationMs: number;
  readonly tasks: readonly ObservedTask[];
  /** Every record of the log: those of other plans are left out here. */
  readonly records: readonly ExecutionRecord[];
}

/**
 * One task of the fault run: how often it ran and how its result compares.
 *
 * @category Fault harness
 */
export interface TaskReport {
  /** The task's key, else its name in the plan. */
  readonly task: string;
  readonly key?: string;
  readonly path: string;
  readonly fn: string;
  /** Its state at the end of the fault run (`missing`: the fault run has no such task). */
  readonly state: string;
  /** Its state at the end of the fault-free run (`missing`: that run has no such task). */
  readonly baselineState: string;
  /** Calls of its function in the fault run. */
  readonly executions: number;
  /** Executions beyond the first. */
  readonly reExecutions: number;
  /** Executions whose process was killed or stopped before the function ended. */
  readonly cutShort: number;
  /** Executions that ended after their worker had lost the task (their ending was fenced off). */
  readonly aborted: number;
  /** The highest `ctx.attempt` seen (tries charged by failures of the function itself). */
  readonly attempts: number;
  /** Distinct worker processes that ran it. */
  readonly workers: number;
  /** Its final result against the fault-free run's: `same`, `different`, or `not compared` (no result on one side). */
  readonly result: 'same' | 'different' | 'not compared';
  /** It ended (done, skipped, failed or cancelled) in the fault run. */
  readonly finished: boolean;
}

/**
 * Why a function is reported as not idempotent.
 *
 * @category Fault harness
 */
export type NonIdempotenceReason = 'outcome differs' | 'result differs' | 'effects differ';

/**
 * A function whose executions with the same inputs disagreed.
 *
 * @category Fault harness
 */
export interface NonIdempotentFunction {
  readonly fn: string;
  /** The tasks (keys, else names) where it showed. */
  readonly tasks: readonly string[];
  readonly reasons: readonly NonIdempotenceReason[];
  /** A few readable cases: which executions, what each gave. */
  readonly evidence: readonly string[];
}

/**
 * The fault harness's report: plain data (JSON-serialisable), printable with formatFaultReport.
 *
 * @category Fault harness
 */
export interface FaultReport {
  /** The seed of the run's random choices: pass it again (`seed`) to repeat the same choices. */
  readonly seed: number;
  /** The fault run's plan, and the fault-free run's. */
  readonly plan: string;
  readonly baselinePlan: string;
  /** The fault run's plan finished before the deadline. */
  readonly finished: boolean;
  readonly durationMs: number;
  readonly baselineDurationMs: number;
  /** The faults that were asked for. */
  readonly faultsSelected: readonly FaultKind[];
  /** The run owed each fault asked for one injection at least (the `atLeastOnce` option). */
  readonly atLeastOnce: boolean;
  /** Each fault injected, in order. */
  readonly faults: readonly InjectedFault[];
  /**
   * The faults asked for that were never injected, in the order of FaultKind: the plan ended before
   * they could hit (or, without `atLeastOnce`, the draws missed them). The run does not show that
   * the plan survives these; `expectFaultTolerant` fails on them unless allowed.
   */
  readonly missedFaults: readonly FaultKind[];
  /** Every task of either run, in the fault run's order, then those only the fault-free run has. */
  readonly tasks: readonly TaskReport[];
  readonly nonIdempotent: readonly NonIdempotentFunction[];
  /** Every task's final result equals the fault-free run's (those compared). */
  readonly resultsMatch: boolean;
}

/** What the report is made of. */
export interface FaultReportInput {
  readonly seed: number;
  readonly faultsSelected: readonly FaultKind[];
  readonly atLeastOnce: boolean;
  readonly faults: readonly InjectedFault[];
  readonly baseline: RunObservation;
  readonly faulty: RunObservation;
}

/** How an execution ended. */
type Ending = 'returned' | 'threw' | 'cut short';

interface Execution {
  readonly run: string;
  readonly start: StartRecord;
  readonly ending: Ending;
  readonly aborted: boolean;
  readonly resultHash: string | undefined;
  readonly preview: string | undefined;
  readonly effects: string;
  readonly effectsPreview: string;
  readonly fromBaseline: boolean;
}

/** Task states in which a task has ended. */
const ENDED_STATES = new Set(['done', 'skipped', 'failed', 'cancelled']);

/** The report of two runs: see the module's comment for what counts. */
export function buildFaultReport(input: FaultReportInput): FaultReport {
  const { baseline, faulty } = input;
  const faultyExecutions = executionsOf(faulty, false);
  const baselineExecutions = executionsOf(baseline, true);
  const baselineByIdentity = new Map(baseline.tasks.map((task) => [identityOf(task), task]));
  const faultyByIdentity = new Map(faulty.tasks.map((task) => [identityOf(task), task]));
  const faultyPerTask = groupBy(faultyExecutions, (execution) => execution.start.task);
  const baselinePerTask = groupBy(baselineExecutions, (execution) => execution.start.task);
  const verdicts = new Map<string, MutableVerdict>();

  const tasks: TaskReport[] = [];
  for (const task of faulty.tasks) {
    const twin = baselineByIdentity.get(identityOf(task));
    const runs = faultyPerTask.get(task.path) ?? [];
    const twinRuns = twin === undefined ? [] : (baselinePerTask.get(twin.path) ?? []);
    compareExecutions(labelOf(task), [...twinRuns, ...runs], verdicts);
    tasks.push(taskReport(task, twin, runs, twinRuns));
  }
  for (const task of baseline.tasks) {
    if (faultyByIdentity.has(identityOf(task))) continue;
    tasks.push({
      task: labelOf(task),
      ...(task.key === undefined ? {} : { key: task.key }),
      path: task.path,
      fn: task.fn,
      state: 'missing',
      baselineState: task.state,
      executions: 0,
      reExecutions: 0,
      cutShort: 0,
      aborted: 0,
      attempts: 0,
      workers: 0,
      result: 'not compared',
      finished: false,
    });
  }
  const nonIdempotent = [...verdicts.values()]
    .map((verdict) => ({
      fn: verdict.fn,
      tasks: [...verdict.tasks].sort(),
      reasons: [...verdict.reasons].sort(),
      evidence: verdict.evidence,
    }))
    .sort((a, b) => (a.fn < b.fn ? -1 : a.fn > b.fn ? 1 : 0));
  return {
    seed: input.seed,
    plan: faulty.plan,
    baselinePlan: baseline.plan,
    finished: faulty.finished,
    durationMs: faulty.durationMs,
    baselineDurationMs: baseline.durationMs,
    faultsSelected: [...input.faultsSelected],
    atLeastOnce: input.atLeastOnce,
    faults: [...input.faults],
    missedFaults: missedFaultKinds(input.faultsSelected, input.faults),
    tasks,
    nonIdempotent,
    resultsMatch: tasks.every((task) => task.result !== 'different'),
  };
}

/** The kinds asked for that no injected fault is of, in the order of FAULT_KINDS. */
function missedFaultKinds(
  selected: readonly FaultKind[],
  injected: readonly InjectedFault[],
): FaultKind[] {
  const hit = new Set(injected.map((fault) => fault.kind));
  return FAULT_KINDS.filter((kind) => selected.includes(kind) && !hit.has(kind));
}

/** How a task is matched across the runs: its key, else its name in the plan. */
function identityOf(task: ObservedTask): string {
  return task.key === undefined ? `name:${task.name}` : `key:${task.key}`;
}

function labelOf(task: ObservedTask): string {
  return task.key ?? task.name;
}

function taskReport(
  task: ObservedTask,
  twin: ObservedTask | undefined,
  runs: readonly Execution[],
  twinRuns: readonly Execution[],
): TaskReport {
  return {
    task: labelOf(task),
    ...(task.key === undefined ? {} : { key: task.key }),
    path: task.path,
    fn: task.fn,
    state: task.state,
    baselineState: twin?.state ?? 'missing',
    executions: runs.length,
    reExecutions: Math.max(0, runs.length - 1),
    cutShort: runs.filter((run) => run.ending === 'cut short').length,
    aborted: runs.filter((run) => run.aborted).length,
    attempts: runs.reduce((most, run) => Math.max(most, run.start.attempt), 0),
    workers: new Set(runs.map((run) => run.start.pid)).size,
    result: compareResults(task, twin, runs, twinRuns),
    finished: ENDED_STATES.has(task.state),
  };
}

/**
 * The final result against the fault-free run's: the kept results when both runs kept one, else the
 * single value the counting executions of each run returned.
 */
function compareResults(
  task: ObservedTask,
  twin: ObservedTask | undefined,
  runs: readonly Execution[],
  twinRuns: readonly Execution[],
): TaskReport['result'] {
  if (twin === undefined) return 'not compared';
  if (task.resultHash !== undefined && twin.resultHash !== undefined)
    return task.resultHash === twin.resultHash ? 'same' : 'different';
  const mine = returnedValues(runs);
  const theirs = returnedValues(twinRuns);
  if (mine.size === 0 || theirs.size === 0) return 'not compared';
  const all = new Set([...mine, ...theirs]);
  return all.size === 1 ? 'same' : 'different';
}

function returnedValues(runs: readonly Execution[]): Set<string> {
  return new Set(
    runs
      .filter((run) => counts(run) && run.ending === 'returned')
      .map((run) => run.resultHash ?? ''),
  );
}

/** It ended by itself while its worker held the task. */
function counts(execution: Execution): boolean {
  return execution.ending !== 'cut short' && !execution.aborted;
}

interface MutableVerdict {
  readonly fn: string;
  readonly tasks: Set<string>;
  readonly reasons: Set<NonIdempotenceReason>;
  readonly evidence: string[];
}

/** The most evidence lines kept per function. */
const EVIDENCE_PER_FUNCTION = 3;

/** Compares the counting executions of one task that had the same inputs, two by two against the first. */
function compareExecutions(
  label: string,
  executions: readonly Execution[],
  verdicts: Map<string, MutableVerdict>,
): void {
  const counting = executions.filter(counts);
  for (const group of groupBy(counting, (execution) => execution.start.inputsHash).values()) {
    const [first, ...others] = group;
    if (first === undefined) continue;
    for (const other of others) {
      const reasons = differences(first, other);
      if (reasons.length === 0) continue;
      const verdict = verdicts.get(first.start.fn) ?? {
        fn: first.start.fn,
        tasks: new Set<string>(),
        reasons: new Set<NonIdempotenceReason>(),
        evidence: [],
      };
      verdicts.set(first.start.fn, verdict);
      verdict.tasks.add(label);
      for (const reason of reasons) verdict.reasons.add(reason);
      if (verdict.evidence.length < EVIDENCE_PER_FUNCTION)
        verdict.evidence.push(`${label}: ${describe(first)} but ${describe(other)}`);
    }
  }
}

function differences(a: Execution, b: Execution): NonIdempotenceReason[] {
  const reasons: NonIdempotenceReason[] = [];
  if (a.ending !== b.ending) reasons.push('outcome differs');
  else if (a.ending === 'returned' && a.resultHash !== b.resultHash) reasons.push('result differs');
  if (a.effects !== b.effects) reasons.push('effects differ');
  return reasons;
}

function describe(execution: Execution): string {
  const where = `${execution.fromBaseline ? 'the fault-free run' : 'the fault run'} (run ${execution.run})`;
  const outcome =
    execution.ending === 'returned'
      ? `returned ${execution.preview ?? '?'}`
      : `threw ${execution.preview ?? ''}`.trimEnd();
  const effects = execution.effectsPreview === '' ? '' : `, effects ${execution.effectsPreview}`;
  return `${where} ${outcome}${effects}`;
}

/** The executions of `observation`'s plan, from its records. */
function executionsOf(observation: RunObservation, fromBaseline: boolean): Execution[] {
  const starts = new Map<string, StartRecord>();
  const ends = new Map<string, Extract<ExecutionRecord, { kind: 'end' }>>();
  const effects = new Map<string, Extract<ExecutionRecord, { kind: 'effect' }>[]>();
  for (const record of observation.records) {
    if (record.kind === 'start') {
      if (record.plan === observation.plan) starts.set(record.run, record);
    } else if (record.kind === 'end') {
      ends.set(record.run, record);
    } else {
      const list = effects.get(record.run) ?? [];
      list.push(record);
      effects.set(record.run, list);
    }
  }
  const executions: Execution[] = [];
  for (const [run, start] of starts) {
    const end = ends.get(run);
    const declared = effects.get(run) ?? [];
    executions.push({
      run,
      start,
      ending: end === undefined ? 'cut short' : end.outcome,
      aborted: end?.aborted ?? false,
      resultHash: end?.resultHash,
      preview: end?.outcome === 'threw' ? end.error : end?.preview,
      effects: declared.map((effect) => `${effect.name}=${effect.valueHash}`).join(','),
      effectsPreview: declared.map((effect) => `${effect.name} ${effect.preview}`).join('; '),
      fromBaseline,
    });
  }
  return executions.sort((a, b) => a.start.at - b.start.at);
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key) ?? [];
    group.push(item);
    groups.set(key, group);
  }
  return groups;
}
