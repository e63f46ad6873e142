/**
 * The fault harness's decision at each execution start (src/testing/fault-harness/fault-choice.ts):
 * which kinds are still owed, when owed kinds come due, which fault a start sets off, and that a
 * seed repeats the same choices. Pure functions, no server and no process: a run is simulated as a
 * sequence of execution starts by round-robin workers, each fault holding its worker for a few
 * starts, as the injector holds it for the fault's length.
 */
import { describe, expect, it } from 'vitest';
import {
  chooseFault,
  owedFaultKinds,
  owedFaultsDue,
  owedRestartStart,
  type ExecutionStartSituation,
  type FaultChoice,
} from '../../src/testing/fault-harness/fault-choice.js';
import { FAULT_KINDS, type FaultKind } from '../../src/testing/fault-harness/fault-report.js';
import type { ResolvedFaultRate } from '../../src/testing/fault-harness/harness-options.js';
import { seededRandom } from '../../src/testing/fault-harness/seeded-random.js';

/** Every kind asked for with the same rate. */
function faultsOf(
  kinds: readonly FaultKind[],
  rate: Partial<ResolvedFaultRate> = {},
): ReadonlyMap<FaultKind, ResolvedFaultRate> {
  return new Map(
    kinds.map((kind) => [kind, { probability: 0.3, max: 1, latencyMs: 200, ...rate }] as const),
  );
}

/** A random source that always returns `value`: 0.99 loses every draw, 0 wins every one. */
function constant(value: number): () => number {
  return () => value;
}

/** A start in the middle of the plan: owed kinds due, an owed restart due, the worker free, nothing in flight. */
function situation(overrides: Partial<ExecutionStartSituation> = {}): ExecutionStartSituation {
  return {
    faults: faultsOf(FAULT_KINDS),
    used: new Map(),
    atLeastOnce: true,
    startsSeen: 10,
    expectedStarts: 27,
    workerCanTakeFault: true,
    faultsInFlight: 0,
    restartDueAt: 1,
    ...overrides,
  };
}

const PER_WORKER_KINDS = FAULT_KINDS.filter((kind) => kind !== 'restartZooKeeper');

interface SimulatedFault extends FaultChoice {
  readonly atStart: number;
}

/**
 * How many starts each fault lasts, roughly as long as it lasts in the demo pipeline (27 starts):
 * a freeze or a cut-off link outlasts a session timeout, a killed worker's fault ends with its kill.
 */
const LASTS_STARTS: Readonly<Record<FaultKind, number>> = {
  killWorkers: 1,
  expireSessions: 8,
  freezeWorkers: 8,
  restartZooKeeper: 6,
  loseReplies: 3,
  slowLinks: 5,
};

/**
 * A fault run of `starts` execution starts by `workers` workers in turn, as the injector sees it: a
 * fault holds its worker for LASTS_STARTS of its kind (a server restart lets that many starts go
 * by), and one worker is always left alone.
 */
function simulateRun({
  seed,
  faults,
  atLeastOnce,
  starts = 27,
  workers = 3,
}: {
  seed: number;
  faults: ReadonlyMap<FaultKind, ResolvedFaultRate>;
  atLeastOnce: boolean;
  starts?: number;
  workers?: number;
}): SimulatedFault[] {
  const random = seededRandom(seed);
  const restartOwed = atLeastOnce && faults.has('restartZooKeeper');
  const restartDueAt = restartOwed ? owedRestartStart(starts, random) : 1;
  const used = new Map<FaultKind, number>();
  const busyUntil = new Map<number, number>();
  let restartedUntil = 0;
  const injected: SimulatedFault[] = [];
  for (let startsSeen = 1; startsSeen <= starts; startsSeen++) {
    for (const [worker, until] of busyUntil) {
      if (until <= startsSeen) busyUntil.delete(worker);
    }
    // While the server restarts, the injector lets starts go by.
    if (startsSeen < restartedUntil) continue;
    const worker = startsSeen % workers;
    const choice = chooseFault(
      {
        faults,
        used,
        atLeastOnce,
        startsSeen,
        expectedStarts: starts,
        workerCanTakeFault: !busyUntil.has(worker) && busyUntil.size < workers - 1,
        faultsInFlight: busyUntil.size,
        restartDueAt,
      },
      random,
    );
    if (choice === undefined) continue;
    used.set(choice.kind, (used.get(choice.kind) ?? 0) + 1);
    injected.push({ ...choice, atStart: startsSeen });
    const lastsUntil = startsSeen + LASTS_STARTS[choice.kind];
    if (choice.kind === 'restartZooKeeper') restartedUntil = lastsUntil;
    else busyUntil.set(worker, lastsUntil);
  }
  return injected;
}

function kindsMissed(
  faults: ReadonlyMap<FaultKind, ResolvedFaultRate>,
  injected: readonly SimulatedFault[],
): FaultKind[] {
  return [...faults.keys()].filter((kind) => !injected.some((fault) => fault.kind === kind));
}

const SEEDS = Array.from({ length: 40 }, (_, index) => 20240517 + index * 7919);

describe('which fault kinds are still owed', () => {
  it('owes each kind asked for until it is injected once, in the order reports list kinds', () => {
    const faults = faultsOf(['slowLinks', 'killWorkers', 'restartZooKeeper']);
    expect(owedFaultKinds(faults, new Map())).toEqual([
      'killWorkers',
      'restartZooKeeper',
      'slowLinks',
    ]);
    expect(owedFaultKinds(faults, new Map([['killWorkers', 1]]))).toEqual([
      'restartZooKeeper',
      'slowLinks',
    ]);
    // A kind not asked for is never owed, though it was injected.
    expect(
      owedFaultKinds(
        faults,
        new Map<FaultKind, number>([
          ['killWorkers', 2],
          ['restartZooKeeper', 1],
          ['slowLinks', 1],
          ['freezeWorkers', 1],
        ]),
      ),
    ).toEqual([]);
  });

  it('comes due once a third of the fault-free run’s starts have started (the first start for a plan of fewer than three)', () => {
    expect(owedFaultsDue(8, 27)).toBe(false);
    expect(owedFaultsDue(9, 27)).toBe(true);
    expect(owedFaultsDue(10, 28)).toBe(true);
    expect(owedFaultsDue(9, 28)).toBe(false);
    for (const expectedStarts of [0, 1, 2, 3]) expect(owedFaultsDue(1, expectedStarts)).toBe(true);
  });

  it('draws the start of an owed server restart from the seed, within the first third of the starts', () => {
    const drawn = SEEDS.map((seed) => owedRestartStart(27, seededRandom(seed)));
    expect(Math.min(...drawn)).toBe(1);
    expect(Math.max(...drawn)).toBe(9);
    expect(new Set(drawn).size).toBeGreaterThan(5);
    expect(SEEDS.map((seed) => owedRestartStart(27, seededRandom(seed)))).toEqual(drawn);
    expect(owedRestartStart(2, seededRandom(SEEDS[0] ?? 1))).toBe(1);
  });
});

describe('the fault an execution start sets off', () => {
  it('forces an owed kind the draws missed once owed kinds are due, and only with atLeastOnce', () => {
    const loseEveryDraw = constant(0.99);
    const due = situation({ faults: faultsOf(['killWorkers']) });
    expect(chooseFault(due, loseEveryDraw)).toEqual({ kind: 'killWorkers', forced: true });
    expect(chooseFault({ ...due, atLeastOnce: false }, loseEveryDraw)).toBeUndefined();
    expect(chooseFault({ ...due, startsSeen: 8 }, loseEveryDraw)).toBeUndefined();
  });

  it('leaves the start to the draws before owed kinds are due, and once no kind is owed', () => {
    const winEveryDraw = constant(0);
    const early = situation({ faults: faultsOf(['killWorkers']), startsSeen: 1 });
    expect(chooseFault(early, winEveryDraw)).toEqual({ kind: 'killWorkers', forced: false });
    const covered = situation({
      faults: faultsOf(['killWorkers'], { max: 2 }),
      used: new Map([['killWorkers', 1]]),
    });
    expect(chooseFault(covered, winEveryDraw)).toEqual({ kind: 'killWorkers', forced: false });
    expect(chooseFault(covered, constant(0.99))).toBeUndefined();
    const spent = { ...covered, used: new Map<FaultKind, number>([['killWorkers', 2]]) };
    expect(chooseFault(spent, winEveryDraw)).toBeUndefined();
  });

  it('forces a per-worker kind only on a worker that can take a fault, and draws none meanwhile', () => {
    const faults = faultsOf(['killWorkers', 'slowLinks'], { max: 3 });
    const owedSlowLinks = situation({
      faults,
      used: new Map([['killWorkers', 1]]),
      workerCanTakeFault: false,
    });
    expect(chooseFault(owedSlowLinks, constant(0))).toBeUndefined();
    expect(chooseFault({ ...owedSlowLinks, workerCanTakeFault: true }, constant(0.99))).toEqual({
      kind: 'slowLinks',
      forced: true,
    });
  });

  it('sets off nothing but an owed server restart, at its start and with no fault in flight', () => {
    const owedRestart = situation({ startsSeen: 3, restartDueAt: 4 });
    // Before its start: no other fault either, though the draws would win and kinds are owed.
    expect(chooseFault(owedRestart, constant(0))).toBeUndefined();
    expect(chooseFault({ ...owedRestart, startsSeen: 20 }, constant(0.99))).toEqual({
      kind: 'restartZooKeeper',
      forced: true,
    });
    expect(chooseFault({ ...owedRestart, startsSeen: 4 }, constant(0.99))).toEqual({
      kind: 'restartZooKeeper',
      forced: true,
    });
    expect(
      chooseFault({ ...owedRestart, startsSeen: 4, faultsInFlight: 1 }, constant(0)),
    ).toBeUndefined();
    // Without atLeastOnce, the draws decide from the first start.
    expect(chooseFault({ ...owedRestart, atLeastOnce: false }, constant(0))?.forced).toBe(false);
    // Once it has hit, the other owed kinds take the starts.
    const restarted = situation({ used: new Map([['restartZooKeeper', 1]]), faultsInFlight: 1 });
    const choice = chooseFault(restarted, constant(0.99));
    expect(choice?.forced).toBe(true);
    expect(PER_WORKER_KINDS).toContain(choice?.kind);
  });

  it('draws which owed kind a start forces, with the seed', () => {
    const forcedKinds = new Set<FaultKind | undefined>();
    for (const seed of SEEDS) {
      const random = seededRandom(seed);
      const choice = chooseFault(
        situation({ used: new Map([['restartZooKeeper', 1]]), faultsInFlight: 1 }),
        () => 0.99 * random(),
      );
      forcedKinds.add(choice?.kind);
    }
    expect([...forcedKinds].sort()).toEqual([...PER_WORKER_KINDS].sort());
  });
});

describe('a simulated fault run', () => {
  const rarely = faultsOf(FAULT_KINDS, { probability: 0.02, max: 2 });

  it('injects every kind asked for at least once, for every seed, when the draws are too rare to', () => {
    for (const seed of SEEDS) {
      const injected = simulateRun({ seed, faults: rarely, atLeastOnce: true });
      expect(kindsMissed(rarely, injected), `seed ${seed}`).toEqual([]);
      // The restart first, in the first third; the others left to the draws until that third.
      expect(injected[0]?.kind, `seed ${seed}`).toBe('restartZooKeeper');
      expect(injected[0]?.atStart, `seed ${seed}`).toBeLessThanOrEqual(9);
      for (const fault of injected.filter((each) => each.forced && each !== injected[0]))
        expect(fault.atStart, `seed ${seed}`).toBeGreaterThanOrEqual(9);
    }
  });

  it('injects every kind as often as the draws would, each at least once, when they are likely', () => {
    const likely = faultsOf(FAULT_KINDS, { probability: 0.3, max: 2 });
    for (const seed of SEEDS) {
      const injected = simulateRun({ seed, faults: likely, atLeastOnce: true });
      expect(kindsMissed(likely, injected), `seed ${seed}`).toEqual([]);
    }
  });

  it('misses kinds when it is left to the draws (atLeastOnce off)', () => {
    const missing = SEEDS.filter(
      (seed) =>
        kindsMissed(rarely, simulateRun({ seed, faults: rarely, atLeastOnce: false })).length > 0,
    );
    expect(missing).toEqual(SEEDS);
  });

  it('forces nothing when the draws hit every kind (no restart among them) before owed kinds are due', () => {
    const often = faultsOf(['killWorkers', 'slowLinks'], { probability: 1, max: 1 });
    const injected = simulateRun({ seed: 7, faults: often, atLeastOnce: true });
    expect(injected.map((fault) => fault.forced)).toEqual([false, false]);
    expect(Math.max(...injected.map((fault) => fault.atStart))).toBeLessThan(9);
  });

  it('sets off at most one fault per start: a plan of fewer starts than owed kinds misses some', () => {
    const injected = simulateRun({ seed: 7, faults: rarely, atLeastOnce: true, starts: 3 });
    expect(new Set(injected.map((fault) => fault.atStart)).size).toBe(injected.length);
    expect(kindsMissed(rarely, injected).length).toBeGreaterThan(0);
  });

  it('repeats the same choices for the same seed, and makes others for another seed', () => {
    const faults = faultsOf(FAULT_KINDS, { probability: 0.3, max: 2 });
    const runs = SEEDS.slice(0, 5).map((seed) => simulateRun({ seed, faults, atLeastOnce: true }));
    SEEDS.slice(0, 5).forEach((seed, index) => {
      expect(simulateRun({ seed, faults, atLeastOnce: true })).toEqual(runs[index]);
    });
    const distinct = new Set(runs.map((run) => JSON.stringify(run)));
    expect(distinct.size).toBe(runs.length);
  });
});
