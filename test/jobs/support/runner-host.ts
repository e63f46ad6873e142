/** A JobRunner's host for tests of the runner alone: every lease held, records written nowhere, each run's start kept in `starts`. */
import type { RunStart, RunnerHost } from '../../../src/jobs/job-runner.js';
import { SILENT_LOGGER } from '../../../src/logs/task-log-types.js';

export function runnerHost(
  overrides: Partial<RunnerHost> = {},
  starts: RunStart[] = [],
): RunnerHost {
  return {
    workerId: 'w',
    jobs: '/jobs',
    now: () => Date.now(),
    holding: () => true,
    runStarting: (_job, start) => {
      starts.push(start);
      return Promise.resolve({ log: SILENT_LOGGER, ended: () => Promise.resolve() });
    },
    runEnded: () => undefined,
    onMisfire: () => undefined,
    restartDelayMs: 10,
    maxRestartDelayMs: 100,
    ...overrides,
  };
}
