interface Sleeper {
  readonly wake: () => void;
}

/**
 * Where idle worker loops of a process sleep out their back-off, and what wakes them early when
 * work may be there: `wake(n)` wakes at most `n` of them (one per new candidate task, so a single
 * new task does not send every idle loop to ZooKeeper), `wake()` wakes them all.
 */
export class WakeUp {
  private sleepers: Sleeper[] = [];

  /** Sleeps `ms`, or less if woken or `stop` aborts; resolves true when it slept the full time. */
  sleep(ms: number, stop: AbortSignal): Promise<boolean> {
    if (stop.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (sleptFully: boolean): void => {
        clearTimeout(timer);
        stop.removeEventListener('abort', onStop);
        this.sleepers = this.sleepers.filter((sleeper) => sleeper !== self);
        resolve(sleptFully);
      };
      const onStop = (): void => done(false);
      const self: Sleeper = { wake: () => done(false) };
      const timer = setTimeout(() => done(true), ms);
      stop.addEventListener('abort', onStop, { once: true });
      this.sleepers.push(self);
    });
  }

  /** Wakes up to `count` sleeping loops, longest asleep first. */
  wake(count = Number.POSITIVE_INFINITY): void {
    for (const sleeper of this.sleepers.slice(0, count)) sleeper.wake();
  }
}
