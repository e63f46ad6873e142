// @ts-check
/**
 * Mutation testing of the pure decision modules (`npm run mutate`; not part of `npm test`): Stryker
 * changes one operator, condition or literal at a time in these files and runs the unit tests that
 * cover the change (vitest.mutate.config.ts). A mutant that every test still passes with has
 * survived. Scores and the equivalent survivors: docs/mutation-testing.md.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  mutate: [
    'src/schedule/tick-decisions.ts',
    'src/schedule/cron-times.ts',
    'src/store/task-state.ts',
    'src/store/failure-policy.ts',
    'src/jobs/strategies.ts',
    'src/jobs/assignment.ts',
    'src/jobs/lease.ts',
    'src/limits/limit-record.ts',
  ],
  coverageAnalysis: 'perTest',
  // Every module scores at least 90 % (its survivors are all equivalent): below that overall, the run fails.
  thresholds: { high: 95, low: 90, break: 90 },
  // Two cores on the project's machines, shared with other work.
  concurrency: 2,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'test-output/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false },
  // The sandbox copies of the project go under test-output/ (ignored by git, eslint and prettier).
  tempDirName: 'test-output/mutation/tmp',
  ignorePatterns: ['/test-output', '/dist', '/coverage', '/.zk-data', '/integ', '/bench'],
  cleanTempDir: true,
};
