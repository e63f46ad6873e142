import { describe, expect, it } from 'vitest';
import { useFaultEnv } from '../support/fault-env.js';
import { describeExit, type ProcessExit, type WorkerProcess } from '../support/worker-process.js';
import { TIMING } from '../support/zk-test-env.js';

/**
 * A process manager may stop a worker as soon as it says it runs: `zk-plan worker` must then drain
 * and exit 0 like at any other time, never die of the signal. The test sends SIGTERM the moment each
 * worker's start line is read, as `faults/kill-9` does to a replacement still starting when its plan
 * completes. When the worker listened only after printing that line (its listeners were in place
 * about a millisecond later; the test answered sooner), 11 of these 12 workers died of SIGTERM
 * without a "SIGTERM: stopping" line. Two at a time, as the two cores of a CI machine run them.
 */
const ROUNDS = 6;
const AT_ONCE = 2;

const faults = useFaultEnv();

describe('SIGTERM the moment a worker reports itself started', () => {
  it(
    'drains every time: a "SIGTERM: stopping" line, then exit code 0',
    { timeout: 120_000 * TIMING },
    async () => {
      const env = await faults.start({
        name: 'sigterm-at-start',
        tickTimeMs: 500,
        workers: { loops: 3, sessionTimeoutMs: 3_000 },
      });
      const outcomes: { worker: WorkerProcess; exit: ProcessExit }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const workers = Array.from({ length: AT_ONCE }, () => env.fleet.spawn());
        const exits = await Promise.all(
          workers.map(async (worker) => {
            await worker.ready();
            return await worker.terminate();
          }),
        );
        exits.forEach((exit, index) => outcomes.push({ worker: workers[index]!, exit }));
      }
      const wrong = outcomes.filter(
        ({ worker, exit }) =>
          describeExit(exit) !== 'exit code 0' || !worker.output.includes('SIGTERM: stopping'),
      );
      expect(
        wrong.map(
          ({ worker, exit }) =>
            `${worker.name} (pid ${worker.pid}): ${describeExit(exit)}\n${worker.output.slice(-1_000)}`,
        ),
      ).toEqual([]);
    },
  );
});
