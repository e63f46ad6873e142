import { defineConfig } from 'vitest/config';

/** Scales every wait in the integration tests on a slow machine (Curator's `Timing`): ZK_PLAN_TIMING=2 doubles them. */
const timing = Number(process.env['ZK_PLAN_TIMING'] ?? '1');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'integ/**/*.integ.test.ts'],
    testTimeout: 60_000 * timing,
    hookTimeout: 60_000 * timing,
    pool: 'forks',
    reporters: ['default', ['json', { outputFile: 'test-output/vitest-report.json' }]],
  },
});
