import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import {
  resolveFaultHarnessOptions,
  type FaultHarnessOptions,
} from '../../src/testing/fault-harness/harness-options.js';

const HERE_MODULE = new URL(import.meta.url).pathname;
const SPEC = { tasks: { a: { fn: 'f' } } };

function rejection(options: unknown): InvalidArgumentError {
  try {
    resolveFaultHarnessOptions(options as FaultHarnessOptions);
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error;
    throw error;
  }
  throw new Error('the options were accepted');
}

describe('the fault harness options', () => {
  it("applies the defaults of DEFAULTS.faultHarness, `true` taking a fault's", () => {
    const resolved = resolveFaultHarnessOptions({
      functions: HERE_MODULE,
      plan: SPEC,
      faults: { killWorkers: true, slowLinks: { latencyMs: 50 }, freezeWorkers: false },
      seed: 7,
    });
    const defaults = DEFAULTS.faultHarness;
    expect(resolved).toMatchObject({
      functions: HERE_MODULE,
      seed: 7,
      atLeastOnce: defaults.atLeastOnce,
      workers: defaults.workers,
      loopsPerWorker: defaults.loopsPerWorker,
      sessionTimeoutMs: defaults.sessionTimeoutMs,
      timeoutMs: defaults.timeoutMs,
      params: {},
    });
    expect([...resolved.faults]).toEqual([
      [
        'killWorkers',
        {
          probability: defaults.probability,
          max: defaults.maxPerFault,
          latencyMs: defaults.latencyMs,
        },
      ],
      [
        'slowLinks',
        { probability: defaults.probability, max: defaults.maxPerFault, latencyMs: 50 },
      ],
    ]);
  });

  it('owes each fault one injection by default, and takes atLeastOnce: false', () => {
    expect(DEFAULTS.faultHarness.atLeastOnce).toBe(true);
    const options = { functions: HERE_MODULE, plan: SPEC, faults: { killWorkers: true } };
    expect(resolveFaultHarnessOptions(options).atLeastOnce).toBe(true);
    expect(resolveFaultHarnessOptions({ ...options, atLeastOnce: false }).atLeastOnce).toBe(false);
  });

  it.each([
    [
      { functions: '', plan: SPEC, faults: { killWorkers: true } },
      'functions',
      /path of your functions module/,
    ],
    [
      { functions: '/no/such/module.ts', plan: SPEC, faults: { killWorkers: true } },
      'functions',
      /does not exist/,
    ],
    [
      { functions: HERE_MODULE, plan: 'spec', faults: { killWorkers: true } },
      'plan',
      /plan spec .* or a builder/,
    ],
    [{ functions: HERE_MODULE, plan: SPEC, faults: {} }, 'faults', /no fault selected/],
    [
      { functions: HERE_MODULE, plan: SPEC, faults: { killAll: true } },
      'faults.killAll',
      /no such fault; the faults: killWorkers/,
    ],
    [
      { functions: HERE_MODULE, plan: SPEC, faults: { killWorkers: { probability: 0 } } },
      'faults.killWorkers.probability',
      /above 0 and at most 1/,
    ],
    [
      { functions: HERE_MODULE, plan: SPEC, faults: { killWorkers: { max: 0.5 } } },
      'faults.killWorkers.max',
      /whole number from 1 to 100/,
    ],
    [
      { functions: HERE_MODULE, plan: SPEC, faults: { killWorkers: true }, workers: 1 },
      'workers',
      /from 2 to 16/,
    ],
    [
      { functions: HERE_MODULE, plan: SPEC, faults: { killWorkers: true }, sessionTimeoutMs: 500 },
      'sessionTimeoutMs',
      /from 1000 to 30000/,
    ],
    [
      { functions: HERE_MODULE, plan: SPEC, faults: { killWorkers: true }, atLeastOnce: 'yes' },
      'atLeastOnce',
      /expected true or false, got yes/,
    ],
    [
      { functions: HERE_MODULE, plan: SPEC, faults: { killWorkers: true }, params: [1] },
      'params',
      /object of named values/,
    ],
  ])('refuses %j with INVALID_ARGUMENT naming %s', (options, argument, message) => {
    const error = rejection(options);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.argument).toBe(argument);
    expect(error.message).toMatch(message);
  });
});
