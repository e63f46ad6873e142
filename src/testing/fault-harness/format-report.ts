/**
 * A fault report as text: a summary line, the faults injected (and those asked for but missed), one
 * table row per task, and the functions found not idempotent. Every value goes through `printable` (task keys and previews
 * come from the user's plan and functions).
 */
import { printable } from '../../util/printable.js';
import { FAULT_KINDS, type FaultReport } from './fault-report.js';

const COLUMNS = [
  'task',
  'fn',
  'state',
  'executions',
  're-executions',
  'cut short',
  'aborted',
  'workers',
  'result',
] as const;
/** Columns whose values are numbers: aligned right. */
const NUMERIC = new Set([3, 4, 5, 6, 7]);

/**
 * The report as a text table, for a test's output or a CI log.
 *
 * @category Fault harness
 */
export function formatFaultReport(report: FaultReport): string {
  const counts = FAULT_KINDS.map(
    (kind) => [kind, report.faults.filter((fault) => fault.kind === kind).length] as const,
  ).filter(([kind, count]) => count > 0 || report.faultsSelected.includes(kind));
  const lines = [
    `fault run ${clean(report.plan)}: ${report.finished ? 'finished' : 'did NOT finish'} in ${report.durationMs} ms ` +
      `(fault-free ${report.baselineDurationMs} ms), seed ${report.seed}, ` +
      `results ${report.resultsMatch ? 'match' : 'DIFFER'}`,
    `faults injected: ${counts.map(([kind, count]) => `${kind} ${count}`).join(', ') || 'none'}`,
    ...(report.missedFaults.length === 0
      ? []
      : [`faults MISSED (asked for, never injected): ${report.missedFaults.join(', ')}`]),
    ...report.faults.map(
      (fault) =>
        `  ${(fault.atMs / 1000).toFixed(1).padStart(6)} s  ${fault.kind} ${clean(fault.target)}` +
        (fault.during === undefined ? '' : ` (as it started ${clean(fault.during)})`) +
        (fault.forced ? ', forced (owed)' : ''),
    ),
    '',
    table(
      COLUMNS,
      report.tasks.map((task) => [
        clean(task.task),
        clean(task.fn),
        clean(task.state),
        String(task.executions),
        String(task.reExecutions),
        String(task.cutShort),
        String(task.aborted),
        String(task.workers),
        task.result,
      ]),
    ),
  ];
  if (report.nonIdempotent.length === 0) lines.push('', 'not idempotent: none found');
  else {
    lines.push('', 'not idempotent:');
    for (const fn of report.nonIdempotent) {
      lines.push(
        `  ${clean(fn.fn)} (${fn.reasons.join(', ')}) in ${fn.tasks.map(clean).join(', ')}`,
      );
      for (const evidence of fn.evidence) lines.push(`    ${clean(evidence)}`);
    }
  }
  return lines.join('\n');
}

function clean(text: string): string {
  return printable(text, { multiline: false });
}

function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) =>
        NUMERIC.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [
    line(headers),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...rows.map(line),
  ].join('\n');
}
