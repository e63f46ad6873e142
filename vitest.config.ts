import { defineConfig } from 'vitest/config';
import { mutantPlugin } from './test/mutants/mutant-plugin.js';
import { MUTANTS } from './test/mutants/mutants.js';

/** Scales every wait in the integration tests on a slow machine (Curator's `Timing`): ZK_PLAN_TIMING=2 doubles them. */
const timing = Number(process.env['ZK_PLAN_TIMING'] ?? '1');

/** The engine's folders, and the share of their lines the unit tests alone (no ZooKeeper server) must run. */
export const COVERED_FOLDERS = ['src/worker', 'src/plan', 'src/store'] as const;
export const LINE_COVERAGE_FLOOR = 80;

const ROOT = import.meta.dirname;

/**
 * The seeded simulations: nearly all of the unit tests' time. They are a project of their own, which
 * scripts/test.sh runs without coverage: measuring it slowed them by a fifth to a third, and the
 * other unit tests alone run well over the floor of each covered folder (about 90 % each).
 */
export const SIMULATION_TESTS = [
  'test/simulation/sim-*.test.ts',
  'test/simulation/stress-baseline.test.ts',
  'test/simulation/stress-regressions.test.ts',
  'test/simulation/replay.test.ts',
  'test/schedule/schedule-simulation.test.ts',
  'test/schedule/schedule-long-simulation.test.ts',
  'test/schedule/schedule-long-replay.test.ts',
  'test/jobs/job-simulation.test.ts',
  'test/jobs/job-long-simulation.test.ts',
];

export default defineConfig({
  test: {
    // Two projects for the tests of the product as it is (the simulations, and the rest), and one per
    // mutant (test/mutants/mutants.ts): each applies its patch to src/ in its own module graph and
    // runs its self-test only.
    projects: [
      {
        extends: true as const,
        test: {
          name: 'zk-plan',
          // examples/: the example tests (the fault harness on the demo pipeline) run with the integration tests.
          include: ['test/**/*.test.ts', 'integ/**/*.integ.test.ts', 'examples/**/*.test.ts'],
          exclude: ['test/mutants/**', ...SIMULATION_TESTS],
        },
      },
      { extends: true as const, test: { name: 'simulations', include: [...SIMULATION_TESTS] } },
      ...MUTANTS.map((mutant) => ({
        extends: true as const,
        plugins: [mutantPlugin(mutant, ROOT)],
        test: {
          name: `mutant:${mutant.name}`,
          include: [`test/mutants/${mutant.name}.mutant.test.ts`],
        },
      })),
    ],
    testTimeout: 60_000 * timing,
    hookTimeout: 60_000 * timing,
    pool: 'forks',
    // scripts/test.sh names one report per run (unit, simulations, integration); print-test-summary.mjs adds them up.
    reporters: [
      'default',
      [
        'json',
        { outputFile: process.env['VITEST_JSON_REPORT'] ?? 'test-output/vitest-report.json' },
      ],
    ],
    // Only with --coverage (scripts/test.sh runs the unit tests so): a folder under its floor fails the run.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/testing/**'],
      reportsDirectory: 'test-output/coverage',
      reportOnFailure: true,
      reporter: ['text-summary', ['json-summary', { file: 'coverage-summary.json' }]],
      thresholds: Object.fromEntries(
        COVERED_FOLDERS.map((folder) => [`${folder}/**`, { lines: LINE_COVERAGE_FLOOR }]),
      ),
    },
  },
});
