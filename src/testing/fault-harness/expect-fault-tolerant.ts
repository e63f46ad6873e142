/**
 * The verdict on a fault report: the problems it shows, and the assertion that throws them.
 */
import { InvalidArgumentError } from '../../errors/usage-errors.js';
import { NotFaultTolerantError } from '../../errors/fault-harness-errors.js';
import { FAULT_KINDS, type FaultKind, type FaultReport } from './fault-report.js';

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
  /**
   * Accept a run in which some faults asked for were never injected (the report's `missedFaults`):
   * `true` accepts any, a list accepts those kinds only, such as `['restartZooKeeper']` for a plan
   * too short for a server restart. A run no fault hit at all is `allowNoFaults`'s case.
   * @defaultValue false
   */
  readonly allowMissedFaults?: boolean | readonly FaultKind[];
}

/** The most tasks a problem line names; the rest are counted. */
const NAMED_PER_LINE = 10;

/**
 * The problems a fault report shows, one readable line each (none: the plan held up): functions
 * not idempotent (by name, with why), tasks whose final result differs from the fault-free run's,
 * tasks that ended otherwise than in it, tasks that never finished, a run no fault hit, and faults
 * asked for that were never injected.
 *
 * @category Fault harness
 */
export function faultToleranceProblems(
  report: FaultReport,
  expectations: FaultToleranceExpectations = {},
): string[] {
  const checked = checkExpectations(expectations);
  const except = new Set(checked.except ?? []);
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
  if (report.faults.length === 0) {
    if (checked.allowNoFaults !== true)
      problems.push(
        `no fault was injected (asked for: ${report.faultsSelected.join(', ') || 'none'}): the run proves nothing; raise the faults' probability or give the plan longer tasks`,
      );
    return problems;
  }
  const missed = unallowedMissedFaults(report, checked.allowMissedFaults ?? false);
  if (missed.length > 0)
    problems.push(
      `faults asked for but never injected: ${missed.join(', ')}; ${report.atLeastOnce ? 'the plan ended before they could hit' : 'the draws missed them (atLeastOnce is off)'}, so the run does not show the plan survives them: give the plan more work, or allow them (allowMissedFaults)`,
    );
  return problems;
}

/** The report's missed faults that `allowed` does not accept. */
function unallowedMissedFaults(
  report: FaultReport,
  allowed: boolean | readonly FaultKind[],
): FaultKind[] {
  if (allowed === true) return [];
  const accepted = new Set<FaultKind>(allowed === false ? [] : allowed);
  return report.missedFaults.filter((kind) => !accepted.has(kind));
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
    throw new InvalidArgumentError(
      'expectations',
      'expected { except?, allowNoFaults?, allowMissedFaults? }',
    );
  const { except, allowNoFaults, allowMissedFaults } = expectations;
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
  if (
    allowMissedFaults !== undefined &&
    typeof allowMissedFaults !== 'boolean' &&
    !(
      Array.isArray(allowMissedFaults) &&
      allowMissedFaults.every((kind) => (FAULT_KINDS as readonly unknown[]).includes(kind))
    )
  )
    throw new InvalidArgumentError(
      'allowMissedFaults',
      `expected true, false, or a list of faults such as ['restartZooKeeper']; the faults: ${FAULT_KINDS.join(', ')}`,
    );
  return expectations;
}

function listed(names: readonly string[]): string {
  const shown = names.slice(0, NAMED_PER_LINE).join(', ');
  return names.length > NAMED_PER_LINE
    ? `${shown} and ${names.length - NAMED_PER_LINE} more`
    : shown;
}
