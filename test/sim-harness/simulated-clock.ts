/**
 * Simulated time for the simulations that run on vitest's fake timers (the plan simulation and the
 * long-horizon job simulation): the timers to fake, and a Date.now that moves only with them.
 */

/**
 * Timers faked for a simulation. `Date` is not among them: the fake Date's instances have their own
 * prototype, which the codec refuses to store ("an instance of Date, which would lose its class").
 * `Date.now` is stubbed per seed instead (SimulatedClock), from the fake `performance.now()`;
 * `new Date()` then reads the real clock, but the engine only stores such dates, it never decides by
 * them.
 */
export const FAKED_TIMERS = [
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'performance',
] as const;

/**
 * Wall-clock time of one seed: it starts at `epoch` and moves only with the fake timers, so every
 * run of a seed sees the same instants.
 */
export class SimulatedClock {
  private readonly startedAt = performance.now();
  private realDateNow: (() => number) | undefined;

  constructor(private readonly epoch: number) {}

  readonly now = (): number => this.epoch + Math.round(performance.now() - this.startedAt);

  /** Date.now reads this clock until `restore`; replaced outright, not spied on: a spy would record each of its many calls. */
  install(): void {
    this.realDateNow = Date.now;
    Date.now = this.now;
  }

  restore(): void {
    if (this.realDateNow !== undefined) Date.now = this.realDateNow;
  }
}
