/**
 * The options of `runFaultHarness`: what a user passes (all but the functions module, the plan and
 * the faults optional), their checks, and the resolved form the run uses. Defaults live in
 * DEFAULTS.faultHarness (src/config/defaults.ts).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULTS } from '../../config/defaults.js';
import { InvalidArgumentError } from '../../errors/usage-errors.js';
import type { PlanSpec } from '../../spec/plan-spec-types.js';
import type { ZkPlan } from '../../zk-plan.js';
import { FAULT_KINDS, type FaultKind } from './fault-report.js';

/**
 * Builds the plan under test: creates it under `parent` with `zkPlan`, adds its tasks, marks it
 * ready and resolves its path. Called twice (the fault-free run, then the fault run), so it must
 * build the same plan each time; give tasks keys (`options.key`) so that the report names them and
 * matches them across the runs.
 *
 * @category Fault harness
 */
export type PlanBuilder = (zkPlan: ZkPlan, parent: string) => Promise<string>;

/**
 * How often a fault is injected. At the start of each execution of a task in the fault run, each
 * fault still in budget hits the worker running it with this probability (one fault per worker at a time).
 * With `atLeastOnce`, a fault the draws have missed is also set off once without a draw.
 *
 * @category Fault harness
 */
export interface FaultRate {
  /** The chance, at each execution's start, that the fault hits (above 0, at most 1). @defaultValue DEFAULTS.faultHarness.probability (0.25) */
  readonly probability?: number;
  /** The most times the fault is injected in the run (1–100). @defaultValue DEFAULTS.faultHarness.maxPerFault (3) */
  readonly max?: number;
}

/**
 * A slow link: for one session timeout, every byte between the worker and ZooKeeper arrives this much later.
 *
 * @category Fault harness
 */
export interface SlowLinkFault extends FaultRate {
  /** The delay added each way (1–10 000 ms). @defaultValue DEFAULTS.faultHarness.latencyMs (200) */
  readonly latencyMs?: number;
}

/**
 * The faults to inject; `true` takes a fault's defaults, `false` or absent leaves it out. Each hits
 * the worker process that has just started an execution (restartZooKeeper: the server).
 *
 * @category Fault harness
 */
export interface FaultSelection {
  /** SIGKILL the worker process, and start a new one in its place: its tasks run again elsewhere once its session expires. */
  readonly killWorkers?: FaultRate | boolean;
  /** Cut the worker off from ZooKeeper (its link goes silent) past its session timeout: its session expires, then it comes back on a new one. */
  readonly expireSessions?: FaultRate | boolean;
  /** SIGSTOP the worker past its session timeout, then SIGCONT: it wakes up having lost its tasks, whose late results are fenced off. */
  readonly freezeWorkers?: FaultRate | boolean;
  /** Stop the ZooKeeper server and start it again on the same data, half a session timeout later (sessions survive). */
  readonly restartZooKeeper?: FaultRate | boolean;
  /** Drop ZooKeeper's replies to the worker from its next create, setData or delete on, then cut the link: the write happened, the worker never heard. */
  readonly loseReplies?: FaultRate | boolean;
  /** Slow the worker's link to ZooKeeper for one session timeout. */
  readonly slowLinks?: SlowLinkFault | boolean;
}

/**
 * What `runFaultHarness` runs, under which faults.
 *
 * @category Fault harness
 */
export interface FaultHarnessOptions {
  /** The module of task functions, as `zk-plan worker --functions` loads it (a path; relative to the working directory). */
  readonly functions: string;
  /** The plan: a spec (as `submitPlan` takes it; results kept unless a task says otherwise), or a builder. */
  readonly plan: PlanSpec | PlanBuilder;
  /** Values of the spec's `{ $param: name }` placeholders. @defaultValue none */
  readonly params?: Readonly<Record<string, unknown>>;
  /** The faults to inject in the fault run. */
  readonly faults: FaultSelection;
  /** The seed of every random choice (which fault, when): the report gives it, to repeat a run. @defaultValue a new one per run */
  readonly seed?: number;
  /**
   * Inject each fault asked for at least once. Faults are drawn at execution starts, so the draws
   * alone may miss a kind. With this on, a server restart (which needs no other fault in progress)
   * comes first, at a start drawn from the seed in the first third of the plan's executions (as
   * many as the fault-free run started); a kind the draws have not hit once that third has started
   * is set off, without a draw, at the next starts where it can be. A kind the plan ends too soon
   * for is listed in the report's `missedFaults`, which `expectFaultTolerant` fails on. `false`
   * leaves it all to the draws (the report still lists what they missed).
   * @defaultValue DEFAULTS.faultHarness.atLeastOnce (true)
   */
  readonly atLeastOnce?: boolean;
  /** Worker processes (2–16): one is always left alone by the faults, so the plan keeps going. @defaultValue DEFAULTS.faultHarness.workers (3) */
  readonly workers?: number;
  /** Worker loops per process (1–16). @defaultValue DEFAULTS.faultHarness.loopsPerWorker (2) */
  readonly loopsPerWorker?: number;
  /** The workers' ZooKeeper session timeout (1 000–30 000 ms): how long a dead or frozen worker holds its tasks. @defaultValue DEFAULTS.faultHarness.sessionTimeoutMs (2 000) */
  readonly sessionTimeoutMs?: number;
  /** How long each run (fault-free, then under faults) may take (1 000–3 600 000 ms). @defaultValue DEFAULTS.faultHarness.timeoutMs (120 000) */
  readonly timeoutMs?: number;
}

/** A fault's rate, resolved. */
export interface ResolvedFaultRate {
  readonly probability: number;
  readonly max: number;
  readonly latencyMs: number;
}

/** The options with every default applied and every value checked. */
export interface ResolvedFaultHarnessOptions {
  /** Absolute path of the functions module. */
  readonly functions: string;
  readonly plan: PlanSpec | PlanBuilder;
  readonly params: Readonly<Record<string, unknown>>;
  /** The faults asked for, each with its rate. */
  readonly faults: ReadonlyMap<FaultKind, ResolvedFaultRate>;
  readonly seed: number;
  /** Each fault asked for is owed one injection. */
  readonly atLeastOnce: boolean;
  readonly workers: number;
  readonly loopsPerWorker: number;
  readonly sessionTimeoutMs: number;
  readonly timeoutMs: number;
}

/** Checks `options` and applies the defaults; throws InvalidArgumentError naming the option and what to pass. */
export function resolveFaultHarnessOptions(
  options: FaultHarnessOptions,
): ResolvedFaultHarnessOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'expected { functions, plan, faults, … }');
  const defaults = DEFAULTS.faultHarness;
  return {
    functions: functionsModule(options.functions),
    plan: planOf(options.plan),
    params: paramsOf(options.params),
    faults: faultsOf(options.faults),
    seed: integer('seed', options.seed, Date.now() % 1_000_000_007, 0, Number.MAX_SAFE_INTEGER),
    atLeastOnce: boolean('atLeastOnce', options.atLeastOnce, defaults.atLeastOnce),
    workers: integer('workers', options.workers, defaults.workers, 2, 16),
    loopsPerWorker: integer(
      'loopsPerWorker',
      options.loopsPerWorker,
      defaults.loopsPerWorker,
      1,
      16,
    ),
    sessionTimeoutMs: integer(
      'sessionTimeoutMs',
      options.sessionTimeoutMs,
      defaults.sessionTimeoutMs,
      1_000,
      30_000,
    ),
    timeoutMs: integer('timeoutMs', options.timeoutMs, defaults.timeoutMs, 1_000, 3_600_000),
  };
}

function functionsModule(value: unknown): string {
  if (typeof value !== 'string' || value === '')
    throw new InvalidArgumentError(
      'functions',
      'expected the path of your functions module, as `zk-plan worker --functions` takes it',
    );
  const path = resolve(value);
  if (!existsSync(path))
    throw new InvalidArgumentError(
      'functions',
      `${value} does not exist (resolved against ${process.cwd()}): pass the path of your functions module`,
    );
  return path;
}

function planOf(value: unknown): PlanSpec | PlanBuilder {
  if (typeof value === 'function') return value as PlanBuilder;
  if (typeof value === 'object' && value !== null && 'tasks' in value) return value as PlanSpec;
  throw new InvalidArgumentError(
    'plan',
    'expected a plan spec ({ tasks: { key: { fn, inputs? } } }) or a builder (zkPlan, parent) => plan path',
  );
}

function paramsOf(value: unknown): Readonly<Record<string, unknown>> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(
      'params',
      "expected an object of named values, such as { day: '2024-05-17' }",
    );
  return value as Record<string, unknown>;
}

function faultsOf(value: unknown): ReadonlyMap<FaultKind, ResolvedFaultRate> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(
      'faults',
      `expected an object naming the faults to inject, such as { killWorkers: true }; the faults: ${FAULT_KINDS.join(', ')}`,
    );
  const faults = new Map<FaultKind, ResolvedFaultRate>();
  for (const [name, setting] of Object.entries(value as Record<string, unknown>)) {
    if (!(FAULT_KINDS as readonly string[]).includes(name))
      throw new InvalidArgumentError(
        `faults.${name}`,
        `no such fault; the faults: ${FAULT_KINDS.join(', ')}`,
      );
    const rate = faultRate(name as FaultKind, setting);
    if (rate !== undefined) faults.set(name as FaultKind, rate);
  }
  if (faults.size === 0)
    throw new InvalidArgumentError(
      'faults',
      `no fault selected: name at least one, such as { killWorkers: true }; the faults: ${FAULT_KINDS.join(', ')}`,
    );
  return faults;
}

function faultRate(kind: FaultKind, setting: unknown): ResolvedFaultRate | undefined {
  const defaults = DEFAULTS.faultHarness;
  if (setting === false || setting === undefined) return undefined;
  const given = setting === true ? {} : setting;
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new InvalidArgumentError(
      `faults.${kind}`,
      'expected true, false, or { probability?, max? }',
    );
  const rate = given as SlowLinkFault;
  const probability = rate.probability ?? defaults.probability;
  if (typeof probability !== 'number' || !(probability > 0 && probability <= 1))
    throw new InvalidArgumentError(
      `faults.${kind}.probability`,
      `expected a number above 0 and at most 1, got ${String(probability)}`,
    );
  return {
    probability,
    max: integer(`faults.${kind}.max`, rate.max, defaults.maxPerFault, 1, 100),
    latencyMs: integer(`faults.${kind}.latencyMs`, rate.latencyMs, defaults.latencyMs, 1, 10_000),
  };
}

function boolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new InvalidArgumentError(name, `expected true or false, got ${String(value)}`);
  return value;
}

function integer(
  name: string,
  value: unknown,
  fallback: number,
  low: number,
  high: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < low || value > high)
    throw new InvalidArgumentError(
      name,
      `expected a whole number from ${low} to ${high}, got ${String(value)}`,
    );
  return value;
}
