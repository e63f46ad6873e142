/**
 * Runs the operations a `ManualScheduler` holds back until none is left, the way the schedule and
 * job simulations interleave their clients: one client's next operation at a time, picked at random
 * among those that may run now, lagging followers catching up a few writes now and then, and a fault
 * injected before a step at `faultRate` (fault-schedule.ts). When nothing may run, every follower
 * catches up: a settled cluster has no lag left.
 */
import type { ManualScheduler, MemoryZooKeeper } from '../../src/testing/index.js';
import type { Prng } from './prng.js';

const realSetImmediate = globalThis.setImmediate;
/** Lets every promise that can settle now settle (real timers, not the simulation's fake ones). */
export const flush = (): Promise<void> => new Promise((resolve) => realSetImmediate(resolve));

export interface SettleOptions {
  readonly manual: ManualScheduler;
  readonly server: MemoryZooKeeper;
  readonly random: Prng;
  /** The clients whose operations may run now (not frozen, not dead). */
  readonly pending: () => string[];
  readonly faultRate: number;
  readonly inject: (client: string) => void;
  /** Called after every flush: the simulation's invariant check over the state between operations. */
  readonly check?: () => void;
  /** Called after every operation that lands: a check that must see each one. */
  readonly afterStep?: () => void;
  /** True once a violation is found: settling stops there. */
  readonly stop?: () => boolean;
  /**
   * Whether, with nothing left to run, the followers catch up and settling looks again (the
   * long-horizon simulations), or settling ends at once (the short ones, which have no followers).
   * The second look lets promises run one more turn, so the short simulations' seeds would replay
   * otherwise than they were recorded.
   */
  readonly lookAgainWhenQuiet?: boolean;
  readonly maxSteps?: number;
}

const MAX_STEPS = 50_000;
const RECENT_SHOWN = 30;

export async function settleOperations(options: SettleOptions): Promise<void> {
  const { manual, server, random, pending, faultRate, inject, check, afterStep, stop } = options;
  const maxSteps = options.maxSteps ?? MAX_STEPS;
  const recent: { readonly client: string; readonly op: string; readonly path: string }[] = [];
  for (let steps = 0; steps < maxSteps; steps++) {
    await flush();
    check?.();
    if (server.followerCount > 0 && random.chance(0.3))
      server.catchUp(random.int(1, server.followerCount), random.int(1, 5));
    const waiting = pending();
    if (waiting.length === 0) {
      if (options.lookAgainWhenQuiet === false) return;
      server.catchUp();
      await flush();
      if (pending().length === 0) return;
      continue;
    }
    const client = random.pick(waiting);
    if (faultRate > 0 && random.chance(faultRate)) inject(client);
    if (!pending().includes(client)) continue;
    const next = manual.step(client);
    afterStep?.();
    // Kept as they are, put into words only if the loop never ends.
    recent.push({ client, ...next });
    if (recent.length > RECENT_SHOWN) recent.shift();
    if (stop?.() === true) return;
  }
  // Operations that never stop coming: name the last ones, since that is where the loop is.
  throw new Error(
    `operations still pending after ${maxSteps} steps; the last ones: ${recent.map(({ client, op, path }) => `${client} ${op} ${path}`).join(', ')}`,
  );
}
