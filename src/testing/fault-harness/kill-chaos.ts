/**
 * Chaos for the kill -9 fault tests: on a jittered schedule from `startedAt`, kill -9 a worker
 * process that is up (picked with the seeded `random`), and start a new one in its place, until
 * `signal` aborts. Only workers that finished starting are picked, so a replacement is not killed
 * before it could take anything.
 */
import { pauseUntil } from './pause.js';
import type { WorkerFleet, WorkerProcess } from './worker-process.js';

/** What killAtRandom needs: the processes, a seeded random source, the schedule and when to stop. */
export interface ChaosOptions {
  /** The worker processes, by slot: a killed one's slot gets its replacement. */
  readonly slots: WorkerProcess[];
  readonly fleet: WorkerFleet;
  readonly random: () => number;
  readonly startedAt: number;
  /** Time between kills, from `startedAt`. */
  readonly everyMs: number;
  /** Each kill is moved by up to half of this, either way. */
  readonly jitterMs: number;
  readonly signal: AbortSignal;
}

/** Runs the chaos until `signal` aborts; resolves how many workers it killed. */
export async function killAtRandom({
  slots,
  fleet,
  random,
  startedAt,
  everyMs,
  jitterMs,
  signal,
}: ChaosOptions): Promise<number> {
  let kills = 0;
  const readyOnes = new Set<WorkerProcess>(slots);
  for (let round = 1; !signal.aborted; round++) {
    await pauseUntil(startedAt + round * everyMs + Math.floor((random() - 0.5) * jitterMs), signal); // the schedule, cut short by the abort
    if (signal.aborted) break;
    const candidates = slots
      .map((worker, index) => ({ worker, index }))
      .filter(({ worker }) => readyOnes.has(worker));
    const victim = candidates[Math.floor(random() * candidates.length)];
    if (victim === undefined) continue;
    await victim.worker.kill9();
    kills += 1;
    const replacement = fleet.restart(victim.worker);
    slots[victim.index] = replacement;
    void replacement.ready().then(
      () => readyOnes.add(replacement),
      () => undefined,
    );
  }
  return kills;
}
