/** The seeded job simulation (job-simulation.ts) over many seeds, and its self-test with each job defect put back. */
import { afterEach, describe, expect, it } from 'vitest';
import { reintroducedJobDefects } from '../../src/store/reintroduced-defects.js';
import { runJobSeed, type JobSimResult } from './job-simulation.js';

const SEEDS = Number(process.env['JOB_SIM_SEEDS'] ?? 80);
type Defect = keyof typeof reintroducedJobDefects;

function report(result: JobSimResult): string {
  return `seed ${result.seed}: ${result.violation}\nfaults: ${result.faults.join('; ')}\nreplay: JOB_SIM_SEED=${result.seed}`;
}

async function firstViolation(seeds: readonly number[]): Promise<JobSimResult | undefined> {
  for (const seed of seeds) {
    const result = await runJobSeed(seed);
    if (result.violation !== undefined) return result;
  }
  return undefined;
}

const only = process.env['JOB_SIM_SEED'];
const seeds = only ? [Number(only)] : Array.from({ length: SEEDS }, (_, index) => index + 1);

describe('job simulation', () => {
  afterEach(() => {
    for (const defect of Object.keys(reintroducedJobDefects) as Defect[]) reintroducedJobDefects[defect] = false;
  });

  it(
    `never has two live holders working on one item over ${seeds.length} seeds of crashes, detaches, blips, lost replies, clock moves, stops, new workers and pool changes`,
    { timeout: 900_000 },
    async () => {
      const failing = await firstViolation(seeds);
      if (failing !== undefined) expect.fail(report(failing));
    },
  );

  it.each(Object.keys(reintroducedJobDefects) as Defect[])('finds the reintroduced defect %s', { timeout: 900_000 }, async (defect) => {
    reintroducedJobDefects[defect] = true;
    const caught = await firstViolation(seeds);
    expect(caught, `no seed caught ${defect}`).toBeDefined();
    console.log(`${defect}: caught by seed ${caught?.seed}: ${caught?.violation?.split('\n')[0]}`);
  });
});
