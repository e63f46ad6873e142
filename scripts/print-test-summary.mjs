// Adds up vitest's JSON reports (the unit run and the integration run) into one plain closing line
// ("vitest: N passed, N failed, N skipped"), the form CI reads in any language; with
// --coverage-summary <file>, first prints the unit tests' line coverage of the engine's folders and
// fails, saying which, when one is under its floor.
//
//   node scripts/print-test-summary.mjs [report.json …] [--coverage-summary coverage-summary.json]
import { existsSync, readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';

/** The folders and floor vitest.config.ts sets (coverage.thresholds); checked here too for a clear message. */
const COVERED_FOLDERS = ['src/worker', 'src/plan', 'src/store'];
const LINE_COVERAGE_FLOOR = 80;

const args = process.argv.slice(2);
const reports = [];
let coverageSummary;
for (let index = 0; index < args.length; index++) {
  if (args[index] === '--coverage-summary') coverageSummary = args[++index];
  else reports.push(args[index]);
}
if (reports.length === 0) reports.push('test-output/vitest-report.json');

let ok = true;
const totals = { passed: 0, failed: 0, skipped: 0, total: 0 };
for (const file of reports) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    // A run that wrote no report (vitest could not start, or crashed) counts as one failure.
    console.error(`no test report at ${file}: ${error.message}`);
    totals.failed += 1;
    ok = false;
    continue;
  }
  totals.passed += report.numPassedTests ?? 0;
  totals.failed += (report.numFailedTests ?? 0) + (report.numFailedTestSuites ?? 0);
  totals.skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  totals.total += report.numTotalTests ?? 0;
}

if (coverageSummary !== undefined && !checkCoverage(coverageSummary)) {
  totals.failed += 1; // the coverage floor counts as a failed check
  ok = false;
}

console.log(`vitest: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
if (totals.total === 0) {
  console.error('no test ran');
  ok = false;
}
if (!ok || totals.failed > 0) process.exit(1);

/** Prints each covered folder's line coverage; false (with a message) when one is under the floor or missing. */
function checkCoverage(file) {
  if (!existsSync(file)) {
    console.error(`coverage: no summary at ${file} (did the unit run start?)`);
    return false;
  }
  const summary = JSON.parse(readFileSync(file, 'utf8'));
  const folders = new Map(COVERED_FOLDERS.map((folder) => [folder, { covered: 0, total: 0 }]));
  for (const [path, metrics] of Object.entries(summary)) {
    if (path === 'total') continue;
    const rel = relative(process.cwd(), path).split(sep).join('/');
    const folder = COVERED_FOLDERS.find((candidate) => rel.startsWith(`${candidate}/`));
    if (folder === undefined) continue;
    folders.get(folder).covered += metrics.lines.covered;
    folders.get(folder).total += metrics.lines.total;
  }
  let met = true;
  const figures = [];
  for (const [folder, { covered, total }] of folders) {
    const pct = total === 0 ? 0 : (100 * covered) / total;
    figures.push(`${folder} ${pct.toFixed(2)}% (${covered}/${total})`);
    if (pct < LINE_COVERAGE_FLOOR) {
      console.error(
        `coverage: ${folder} has ${pct.toFixed(2)}% of its lines run by the unit tests, under the floor of ${LINE_COVERAGE_FLOOR}%: add unit tests (test/) for it`,
      );
      met = false;
    }
  }
  console.log(`coverage (lines, unit tests): ${figures.join(', ')}`);
  return met;
}
