import { defineConfig } from 'vitest/config';

/**
 * The unit tests that the mutation run (`npm run mutate`, stryker.config.mjs) runs against each
 * mutant of the pure decision modules: the tests of those modules alone. None needs a ZooKeeper
 * server or waits on real time, so the tests of one mutant take milliseconds and always give the
 * same verdict.
 */
const MUTATION_TEST_FILES = [
  'test/schedule/tick-decisions.test.ts',
  'test/store/task-state.test.ts',
  'test/store/failure-policy.test.ts',
  'test/jobs/strategies.test.ts',
  'test/jobs/assignment.test.ts',
  'test/limits/limit-record.test.ts',
] as const;

export default defineConfig({
  test: {
    include: [...MUTATION_TEST_FILES],
  },
});
