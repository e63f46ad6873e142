/**
 * The two waits of the fault harness: until a time (a fault's own duration, which is the scenario),
 * and a time limit on something already under way.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves at the time `at` (epoch ms), or as soon as `signal` aborts. Only for a fault's own
 * duration (how long a process stays frozen or a server stays down, when the next fault is due):
 * never to order steps, which wait for events or conditions.
 */
export async function pauseUntil(at: number, signal?: AbortSignal): Promise<void> {
  const ms = Math.ceil(at - Date.now());
  if (ms <= 0) return;
  try {
    await sleep(ms, undefined, { signal });
  } catch (error) {
    if (!signal?.aborted) throw error;
  }
}

/** Resolves with `promise`, or rejects with `message()` when it has not settled within `timeoutMs`. */
export async function withDeadline<T>(
  promise: Promise<T>,
  timeoutMs: number,
  message: () => string,
): Promise<T> {
  const timer = new AbortController();
  const wholeMs = Math.ceil(timeoutMs);
  const expired = sleep(wholeMs, undefined, { signal: timer.signal }).then(() => {
    throw new Error(`after ${wholeMs} ms: ${message()}`);
  });
  expired.catch(() => undefined); // the abort below rejects it once the race is decided
  try {
    return await Promise.race([promise, expired]);
  } finally {
    timer.abort();
  }
}
