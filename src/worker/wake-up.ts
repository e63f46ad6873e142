import { setTimeout as delay } from 'node:timers/promises';

/**
 * Wakes sleeping worker loops of this process when something they may want happened here
 * (a task completed, a plan was marked ready), so that local work does not wait out a back-off.
 */
export class WakeUp {
  private controller = new AbortController();

  /** A signal aborted at the next `wake()`. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  wake(): void {
    const current = this.controller;
    this.controller = new AbortController();
    current.abort();
  }
}

/** Sleeps `ms`, or less if any signal aborts; resolves true when it slept the full time. */
export async function sleepUnless(ms: number, ...signals: AbortSignal[]): Promise<boolean> {
  const signal = AbortSignal.any(signals);
  if (signal.aborted) return false;
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch (error) {
    if (signal.aborted) return false;
    throw error;
  }
}
