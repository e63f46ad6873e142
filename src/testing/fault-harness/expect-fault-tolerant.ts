/**
 * The verdict on a fault report: the problems it shows, and the assertion that throws them.
 */
import { InvalidArgumentError } from '../../errors/usage-errors.js';
import { NotFaultTolerantError } from '../../errors/fault-harness-errors.js';
import type { FaultReport } from './fault-report.js';

/**
 * Options of `expectFaultTolerant` and `faultToleranceProblems`.
 *
 * @category Fault harness
 */
export interface FaultToleranceExpectations {
  /**
   * Functions known not to be idempotent, left out of the verdict (their tasks' results too): a
   * function that stamps the time, say, whose tasks are leaves. @defaultValue none
   */
  readonly except?: readonly string[];
  /** Accept a run in which no fault was injected (the plan finished before any hit). @defaultValue false */
  readonly allowNoFaults?: boolean;
}

/** The most tasks a problem line names; the rest are counted. */
const NAMED_PER_LINE = 10;

/**
 * The problems a fault report shows, one readable line each (none: the plan held up): functions
 * not idempotent (by name, with why), tasks whose final result differs from the fault-free run's,
 * tasks that ended otherwise than in it, tasks that never finished, and a run no fault hit.
 *
 * @category Fault harness
 */
export function faultToleranceProblems(
  report: FaultReport,
  expectations: FaultToleranceExpectations = {},
): string[] {
  const except = new Set(checkExpectations(expectations).except ?? []);
  const problems: string[] = [];
  for (const fn of report.nonIdempotent) {
    if (except.has(fn.fn)) continue;
    problems.push(
      `function ${fn.fn} is not idempotent (${fn.reasons.join(', ')}) in ${listed(fn.tasks)}` +
        (fn.evidence.length > 0 ? `; e.g. ${fn.evidence[0]}` : ''),
    );
  }
  const judged = report.tasks.filter((task) => !except.has(task.fn));
  const differing = judged.filter((task) => task.result === 'different');
  if (differing.length > 0)
    problems.push(
      `tasks whose result differs from the fault-free run: ${listed(differing.map((task) => task.task))}`,
    );
  const unfinished = judged.filter((task) => !task.finished && task.state !== 'missing');
  if (!report.finished || unfinished.length > 0)
    problems.push(
      `tasks that never finished (the plan ${report.finished ? 'finished' : 'did not finish'} within the timeout): ${unfinished.length > 0 ? listed(unfinished.map((task) => `${task.task} (${task.state})`)) : 'none listed'}`,
    );
  const otherwise = judged.filter((task) => task.finished && task.state !== task.baselineState);
  if (otherwise.length > 0)
    problems.push(
      `tasks that ended otherwise than in the fault-free run: ${listed(otherwise.map((task) => `${task.task} (${task.state}, fault-free ${task.baselineState})`))}`,
    );
  const missing = judged.filter((task) => task.state === 'missing');
  if (missing.length > 0)
    problems.push(
      `tasks of the fault-free run missing from the fault run: ${listed(missing.map((task) => task.task))}`,
    );
  if (report.faults.length === 0 && expectations.allowNoFaults !== true)
    problems.push(
      `no fault was injected (asked for: ${report.faultsSelected.join(', ') || 'none'}): the run proves nothing; raise the faults' probability or give the plan longer tasks`,
    );
  return problems;
}

/**
 * Throws NotFaultTolerantError listing what failed when the report shows any problem (see
 * faultToleranceProblems); returns quietly otherwise. In a test:
 * `expectFaultTolerant(await runFaultHarness(options))`.
 *
 * @category Fault harness
 */
export function expectFaultTolerant(
  report: FaultReport,
  expectations: FaultToleranceExpectations = {},
): void {
  const problems = faultToleranceProblems(report, expectations);
  if (problems.length > 0) throw new NotFaultTolerantError(problems);
}

function checkExpectations(expectations: FaultToleranceExpectations): FaultToleranceExpectations {
  if (typeof expectations !== 'object' || expectations === null)
    throw new InvalidArgumentError('expectations', 'expected { except?, allowNoFaults? }');
  const { except, allowNoFaults } = expectations;
  if (
    except !== undefined &&
    !(Array.isArray(except) && except.every((fn) => typeof fn === 'string'))
  )
    throw new InvalidArgumentError(
      'except',
      "expected a list of function names, such as ['audit.stamp']",
    );
  if (allowNoFaults !== undefined && typeof allowNoFaults !== 'boolean')
    throw new InvalidArgumentError('allowNoFaults', 'expected true or false');
  return expectations;
}

function listed(names: readonly string[]): string {
  const shown = names.slice(0, NAMED_PER_LINE).join(', ');
  return names.length > NAMED_PER_LINE
    ? `${shown} and ${names.length - NAMED_PER_LINE} more`
    : shown;
}
