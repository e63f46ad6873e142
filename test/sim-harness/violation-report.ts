/**
 * What a seed that breaks an invariant prints: enough to see what happened and to run that seed
 * alone again. Every simulation's result has the seed and the first violation it found.
 */

export interface SeedResult {
  readonly seed: number;
  /** The first invariant the seed broke, undefined when it kept them all. */
  readonly violation: string | undefined;
}

/** How many of the plan simulation's trace entries a report shows: the end is where it went wrong. */
const TRACE_TAIL = 60;

/**
 * The report of the schedule and job simulations, whose lists of faults or events are short enough
 * to show whole: `seed 7 (2.0 h simulated): <violation>`, the list on one line, the replay line.
 */
export function reportViolation(
  result: SeedResult,
  how: {
    /** Said after the seed, in brackets (the simulated time of the long-horizon simulations). */
    readonly about?: string;
    readonly listName: 'faults' | 'events';
    readonly list: readonly string[];
    /** What replays the seed: its environment variable, as `SCHEDULE_SIM_SEED=7`. */
    readonly replay: string;
  },
): string {
  const about = how.about === undefined ? '' : ` (${how.about})`;
  return `seed ${result.seed}${about}: ${result.violation}\n${how.listName}: ${how.list.join('; ')}\nreplay: ${how.replay}`;
}

/**
 * The report of the plan simulation, whose trace runs to thousands of entries: the seed, how to
 * replay it, the violation and the last TRACE_TAIL entries of the trace.
 */
export function reportTraceTail(
  result: SeedResult & {
    readonly trace: readonly string[];
    readonly steps: number;
    readonly simulatedMs: number;
  },
  replay: string,
): string {
  return [
    `seed ${result.seed} violated an invariant after ${result.steps} steps, ${result.simulatedMs} ms of simulated time`,
    `replay: ${replay}`,
    result.violation ?? '',
    `--- last ${TRACE_TAIL} trace entries ---`,
    ...result.trace.slice(-TRACE_TAIL),
  ].join('\n');
}
