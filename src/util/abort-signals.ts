/**
 * Abort-signal helpers that free what they attach. `AbortSignal.any` keeps every combined signal
 * alive as long as a long-lived source lives (nodejs/node#55351), and `setTimeout` fires at once past
 * 2^31−1 ms, so the engine links and sleeps through these instead.
 */

/** The longest delay a Node timer honours. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A signal aborted when any source aborts (with that source's reason); `dispose` detaches it from the sources. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

export function linkSignals(...sources: readonly (AbortSignal | undefined)[]): LinkedSignal {
  const controller = new AbortController();
  const attached: { source: AbortSignal; listener: () => void }[] = [];
  const dispose = (): void => {
    for (const { source, listener } of attached.splice(0))
      source.removeEventListener('abort', listener);
  };
  for (const source of sources) {
    if (source === undefined) continue;
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    const listener = (): void => {
      controller.abort(source.reason);
      dispose();
    };
    source.addEventListener('abort', listener, { once: true });
    attached.push({ source, listener });
  }
  if (controller.signal.aborted) dispose();
  return { signal: controller.signal, dispose };
}

/**
 * Sleeps `ms` (a delay past MAX_TIMER_MS, or Infinity, waits for a signal only), or less if a signal
 * aborts; resolves true when it slept the full time. Leaves no listener or timer behind.
 */
export function sleepUnless(
  ms: number,
  ...signals: readonly (AbortSignal | undefined)[]
): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const live = signals.filter((signal): signal is AbortSignal => signal !== undefined);
    if (live.some((signal) => signal.aborted)) {
      resolve(false);
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (sleptFully: boolean): void => {
      if (timer !== undefined) clearTimeout(timer);
      for (const signal of live) signal.removeEventListener('abort', onAbort);
      resolve(sleptFully);
    };
    const onAbort = (): void => finish(false);
    for (const signal of live) signal.addEventListener('abort', onAbort, { once: true });
    if (ms <= MAX_TIMER_MS) timer = setTimeout(() => finish(true), Math.max(0, ms));
  });
}

/** Calls `listener` once when `signal` aborts; returns the function that detaches it. */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  if (signal.aborted) {
    listener();
    return () => undefined;
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}
