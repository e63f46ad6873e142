// Prints vitest's JSON report as one plain closing line ("vitest: N passed, N failed, N skipped"),
// the form CI reads in any language.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'test-output/vitest-report.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.error(`no test report at ${file}: ${error.message}`);
  process.exit(1);
}
const failed = report.numFailedTests + (report.numFailedTestSuites ?? 0);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`vitest: ${report.numPassedTests} passed, ${failed} failed, ${skipped} skipped`);
if (report.numTotalTests === 0) {
  console.error('no test ran');
  process.exit(1);
}
