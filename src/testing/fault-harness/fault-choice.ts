/**
 * Which fault, if any, the injector sets off as an execution of the plan starts: a pure decision on
 * what the injector knows at that moment, with the run's seeded random source. The injector
 * (fault-injector.ts) does the I/O; this module only decides, so that the decision can be tested
 * without a server or a process.
 *
 * Two ways a fault is chosen:
 * - **drawn**: each fault asked for that has not used up its `max` hits with its `probability`, the
 *   kinds tried in a seeded order so that none always wins the draw;
 * - **forced** (`atLeastOnce`): each kind asked for is *owed* one injection until it has had one.
 *   - A server restart can only start while no other fault is in progress, and once the draws have
 *     set faults off there is seldom such a moment: a fault freezes a worker for more than a session
 *     timeout, and the plan goes on meanwhile on the other workers. So an owed restart comes first:
 *     no other fault is set off until it has hit, and it hits at a start drawn from the seed among
 *     the first third of the executions the fault-free run started. It holds every worker up while
 *     it lasts, so the plan has not moved on when the other faults begin.
 *   - The other kinds are left to the draws for the first third of those starts. From then on they
 *     are due: each start is given to an owed kind that can hit there, without a draw, until none
 *     is owed. A third leaves the draws the start of the plan, and the owed kinds the rest of it,
 *     in which they may have to wait for a worker no fault holds.
 */
import { FAULT_KINDS, type FaultKind } from './fault-report.js';
import type { ResolvedFaultRate } from './harness-options.js';

/** The share of the fault-free run's execution starts after which owed kinds come due. */
const OWED_FAULTS_DUE_SHARE = 1 / 3;

/** What the injector knows when an execution of the plan under test starts. */
export interface ExecutionStartSituation {
  /** The faults asked for, each with its rate. */
  readonly faults: ReadonlyMap<FaultKind, ResolvedFaultRate>;
  /** How many times each kind has been injected so far in this run (absent: never). */
  readonly used: ReadonlyMap<FaultKind, number>;
  /** Each kind asked for is owed one injection (the `atLeastOnce` option). */
  readonly atLeastOnce: boolean;
  /** Executions of the plan started so far in the fault run, this one included. */
  readonly startsSeen: number;
  /** Executions of the plan the fault-free run started: how much work the plan is expected to give. */
  readonly expectedStarts: number;
  /**
   * The worker that started this execution can take a fault now: it is ready, no fault holds it, and
   * hitting it leaves another worker alone.
   */
  readonly workerCanTakeFault: boolean;
  /** Faults in progress: a server restart waits until there is none. */
  readonly faultsInFlight: number;
  /** The start from which an owed server restart hits (owedRestartStart, drawn once per run). */
  readonly restartDueAt: number;
}

/** The fault to set off, and whether it was forced (owed) rather than drawn. */
export interface FaultChoice {
  readonly kind: FaultKind;
  readonly forced: boolean;
}

/** The kinds asked for that have not been injected yet, in the order reports list them. */
export function owedFaultKinds(
  faults: ReadonlyMap<FaultKind, ResolvedFaultRate>,
  used: ReadonlyMap<FaultKind, number>,
): FaultKind[] {
  return FAULT_KINDS.filter((kind) => faults.has(kind) && (used.get(kind) ?? 0) === 0);
}

/**
 * The start from which owed kinds are due: the one that reaches a third of the fault-free run's
 * starts (the first start when that run started fewer than three executions).
 */
function owedFaultsDueFrom(expectedStarts: number): number {
  return Math.max(1, Math.ceil(expectedStarts * OWED_FAULTS_DUE_SHARE));
}

/** Owed kinds other than a server restart are due at this start. */
export function owedFaultsDue(startsSeen: number, expectedStarts: number): boolean {
  return startsSeen >= owedFaultsDueFrom(expectedStarts);
}

/**
 * The start at which an owed server restart hits: drawn from the seed, from the first start to the
 * one from which the other owed kinds are due. Drawn once per run, before its first start.
 */
export function owedRestartStart(expectedStarts: number, random: () => number): number {
  return 1 + Math.floor(random() * owedFaultsDueFrom(expectedStarts));
}

/**
 * The fault to set off at this execution start, or undefined for none. While a server restart is
 * owed, nothing else is set off (a fault in progress would keep it waiting). While other owed kinds
 * are due, the start goes to one of them or to none: a drawn fault would take the worker an owed
 * kind is waiting for.
 */
export function chooseFault(
  situation: ExecutionStartSituation,
  random: () => number,
): FaultChoice | undefined {
  const owed = situation.atLeastOnce ? owedFaultKinds(situation.faults, situation.used) : [];
  if (owed.includes('restartZooKeeper')) {
    const canRestart =
      situation.startsSeen >= situation.restartDueAt && situation.faultsInFlight === 0;
    return canRestart ? { kind: 'restartZooKeeper', forced: true } : undefined;
  }
  if (owed.length > 0 && owedFaultsDue(situation.startsSeen, situation.expectedStarts)) {
    // Every kind but the restart needs the starting worker; which owed one takes it is drawn.
    if (!situation.workerCanTakeFault) return undefined;
    const kind = owed[Math.floor(random() * owed.length)];
    return kind === undefined ? undefined : { kind, forced: true };
  }
  const kind = drawnKind(situation, random);
  return kind === undefined ? undefined : { kind, forced: false };
}

/** The drawn kind: the first, in a seeded order, that is in budget, can be injected here, and wins its draw. */
function drawnKind(
  situation: ExecutionStartSituation,
  random: () => number,
): FaultKind | undefined {
  for (const kind of shuffledKinds(situation.faults, random)) {
    const rate = situation.faults.get(kind);
    if (rate === undefined || (situation.used.get(kind) ?? 0) >= rate.max) continue;
    const canInject =
      kind === 'restartZooKeeper' ? situation.faultsInFlight === 0 : situation.workerCanTakeFault;
    if (!canInject) continue;
    if (random() >= rate.probability) continue;
    return kind;
  }
  return undefined;
}

/** The kinds asked for, in a seeded order (Fisher–Yates), so that none always wins the draw. */
function shuffledKinds(
  faults: ReadonlyMap<FaultKind, ResolvedFaultRate>,
  random: () => number,
): FaultKind[] {
  const kinds = FAULT_KINDS.filter((kind) => faults.has(kind));
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j] as FaultKind, kinds[i] as FaultKind];
  }
  return kinds;
}
