import { defineConfig } from 'vitest/config';
import { mutantPlugin } from './test/mutants/mutant-plugin.js';
import { MUTANTS } from './test/mutants/mutants.js';

/** Scales every wait in the integration tests on a slow machine (Curator's `Timing`): ZK_PLAN_TIMING=2 doubles them. */
const timing = Number(process.env['ZK_PLAN_TIMING'] ?? '1');

/** The engine's folders, and the share of their lines the unit tests alone (no ZooKeeper server) must run. */
export const COVERED_FOLDERS = ['src/worker', 'src/plan', 'src/store'] as const;
export const LINE_COVERAGE_FLOOR = 80;

const ROOT = import.meta.dirname;

export default defineConfig({
  test: {
    // One project for the tests of the product as it is, and one per mutant (test/mutants/mutants.ts):
    // each applies its patch to src/ in its own module graph and runs its self-test only.
    projects: [
      { extends: true as const, test: { name: 'zk-plan', include: ['test/**/*.test.ts', 'integ/**/*.integ.test.ts'], exclude: ['test/mutants/**'] } },
      ...MUTANTS.map((mutant) => ({
        extends: true as const,
        plugins: [mutantPlugin(mutant, ROOT)],
        test: { name: `mutant:${mutant.name}`, include: [`test/mutants/${mutant.name}.mutant.test.ts`] },
      })),
    ],
    testTimeout: 60_000 * timing,
    hookTimeout: 60_000 * timing,
    pool: 'forks',
    // scripts/test.sh names one report per run (unit, integration); print-test-summary.mjs adds them up.
    reporters: ['default', ['json', { outputFile: process.env['VITEST_JSON_REPORT'] ?? 'test-output/vitest-report.json' }]],
    // Only with --coverage (scripts/test.sh runs the unit tests so): a folder under its floor fails the run.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/testing/**'],
      reportsDirectory: 'test-output/coverage',
      reportOnFailure: true,
      reporter: ['text-summary', ['json-summary', { file: 'coverage-summary.json' }]],
      thresholds: Object.fromEntries(COVERED_FOLDERS.map((folder) => [`${folder}/**`, { lines: LINE_COVERAGE_FLOOR }])),
    },
  },
});
