/** Options of `startJobWorker` (and `zk-plan worker --jobs`), checked and defaulted from DEFAULTS.jobs. */
import { DEFAULTS } from './defaults.js';
import { assertDurationMs, assertKnownKeys } from './option-checks.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { leaseProblem, type LeaseTiming } from '../jobs/lease.js';
import type { AssignmentStrategy } from '../jobs/strategies.js';

/**
 * Options of `startJobWorker`: the worker's name, lease timing, polling, restarts, the manager election and extra assignment strategies.
 *
 * @category Jobs
 */
export interface JobWorkerOptions {
  /** Prefix of the worker's id (a random suffix makes it unique per start). @defaultValue `<host>-<pid>` */
  readonly name?: string;
  /** How long an item's lease lasts unless renewed; the holder renews every third of it. @defaultValue DEFAULTS.jobs.leaseMs (10 000) */
  readonly leaseMs?: number;
  /** A holder that could not renew stops this long before its lease ends (at most half of leaseMs). @defaultValue DEFAULTS.jobs.marginMs (2 000), at most a fifth of leaseMs */
  readonly marginMs?: number;
  /** The most two hosts' wall clocks differ: a new holder waits this long past the previous lease's end. @defaultValue DEFAULTS.jobs.driftMs (1 000), at most a tenth of leaseMs */
  readonly driftMs?: number;
  /** How often the manager and the worker look again besides their watches. @defaultValue DEFAULTS.jobs.pollMs (5 000) */
  readonly pollMs?: number;
  /** Pause before a job function runs again after it threw (doubling with each failure in a row), or after a continuous run returned. @defaultValue DEFAULTS.jobs.restartDelayMs (1 000) */
  readonly restartDelayMs?: number;
  /** The longest pause after runs that threw in a row. @defaultValue DEFAULTS.jobs.maxRestartDelayMs (60 000) */
  readonly maxRestartDelayMs?: number;
  /** Take part in the manager election. @defaultValue DEFAULTS.jobs.manager (true) */
  readonly manager?: boolean;
  /** Strategies by name besides 'evenly', 'rendezvous' and 'evenlyRendezvous': register the same ones on every job worker (any may become the manager). */
  readonly strategies?: Readonly<Record<string, AssignmentStrategy>>;
}

export interface ResolvedJobWorkerOptions {
  readonly name: string | undefined;
  readonly timing: LeaseTiming;
  readonly pollMs: number;
  readonly restartDelayMs: number;
  readonly maxRestartDelayMs: number;
  readonly manager: boolean;
  readonly strategies: Readonly<Record<string, AssignmentStrategy>>;
}

const KEYS: Record<keyof JobWorkerOptions, true> = {
  name: true,
  leaseMs: true,
  marginMs: true,
  driftMs: true,
  pollMs: true,
  restartDelayMs: true,
  maxRestartDelayMs: true,
  manager: true,
  strategies: true,
};

export function resolveJobWorkerOptions(options: JobWorkerOptions): ResolvedJobWorkerOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'expected an object of job worker options');
  assertKnownKeys('startJobWorker', options, KEYS);
  const defaults = DEFAULTS.jobs;
  const leaseMs = options.leaseMs ?? defaults.leaseMs;
  assertDurationMs('leaseMs', leaseMs);
  // Defaults that fit a short lease: the margin at most a fifth of it, the drift at most a tenth.
  const marginMs = options.marginMs ?? Math.min(defaults.marginMs, Math.floor(leaseMs / 5));
  const driftMs = options.driftMs ?? Math.min(defaults.driftMs, Math.floor(leaseMs / 10));
  assertDurationMs('marginMs', marginMs, { allowZero: true });
  assertDurationMs('driftMs', driftMs, { allowZero: true });
  const timing = { leaseMs, marginMs, driftMs };
  const problem = leaseProblem(timing);
  if (problem !== undefined) throw new InvalidArgumentError('leaseMs', problem);
  const pollMs = options.pollMs ?? defaults.pollMs;
  assertDurationMs('pollMs', pollMs);
  const restartDelayMs = options.restartDelayMs ?? defaults.restartDelayMs;
  assertDurationMs('restartDelayMs', restartDelayMs, { allowZero: true });
  const maxRestartDelayMs = options.maxRestartDelayMs ?? defaults.maxRestartDelayMs;
  assertDurationMs('maxRestartDelayMs', maxRestartDelayMs, { allowZero: true });
  if (options.manager !== undefined && typeof options.manager !== 'boolean')
    throw new InvalidArgumentError('manager', 'expected true or false');
  if (
    options.name !== undefined &&
    (typeof options.name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/.test(options.name))
  )
    throw new InvalidArgumentError(
      'name',
      `expected letters, digits and _ . : - (up to 64), got ${JSON.stringify(options.name)}`,
    );
  const strategies = options.strategies ?? {};
  if (typeof strategies !== 'object' || strategies === null)
    throw new InvalidArgumentError('strategies', 'expected { [name]: strategy function }');
  return {
    name: options.name,
    timing,
    pollMs,
    restartDelayMs,
    maxRestartDelayMs,
    manager: options.manager ?? defaults.manager,
    strategies,
  };
}
