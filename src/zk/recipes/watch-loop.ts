/**
 * The "read with a watch, wait for it to fire, read again" loop that following a znode needs:
 * ZooKeeper watches are one-shot, so each read arms the next one. `waitForCompletion` and the
 * CLI's `wait` progress follow a plan this way. (The web view's feeds keep many keyed watches and
 * coalesce their reads: src/ui/feed.ts.)
 */
import { once } from 'node:events';
import { isZkError } from '../../errors/zk-error.js';
import { linkSignals, sleepUnless } from '../../util/abort-signals.js';
import type { Watcher } from '../zk-client-types.js';
import type { Zk } from '../zk.js';

export interface WatchLoopOptions {
  /** Ends the loop (it then resolves `undefined`); also ends a pause or a wait for the watch. */
  readonly stop: AbortSignal;
  /** After a connection problem, read again once a new session starts or after this long, in ms. */
  readonly retryPauseMs: number;
  /**
   * Least time from one read to the next, in ms (bursts of changes cost one read); a function is
   * given how long the last read took, so that a costly read is made less often. @defaultValue 0
   */
  readonly minIntervalMs?: number | ((lastReadMs: number) => number);
}

/** What a read of the loop says: go on following, or stop with a value. */
export type WatchRead<T> = { readonly done: false } | { readonly done: true; readonly value: T };

/**
 * Calls `read(watcher)` until it returns `{ done: true }` (then resolves its value) or `stop`
 * aborts (then resolves `undefined`). After each read that is not done, waits for any watch the
 * read set with `watcher` to fire. A connection problem (ZkError with `isConnectionProblem`) while
 * reading pauses, then reads again: the watches of the failed read may never fire. Any other error
 * rejects.
 */
export async function followWithWatches<T>(
  zk: Zk,
  read: (watcher: Watcher) => Promise<WatchRead<T>>,
  options: WatchLoopOptions,
): Promise<T | undefined> {
  const { stop, retryPauseMs, minIntervalMs = 0 } = options;
  while (!stop.aborted) {
    const changed = new AbortController();
    const readStarted = performance.now();
    try {
      const outcome = await read(() => changed.abort());
      if (outcome.done) return outcome.value;
    } catch (error) {
      if (!isZkError(error) || !error.isConnectionProblem) throw error;
      await pauseAfterConnectionProblem(zk, retryPauseMs, stop);
      continue;
    }
    const gapMs =
      typeof minIntervalMs === 'function'
        ? minIntervalMs(performance.now() - readStarted)
        : minIntervalMs;
    if (gapMs > 0) await sleepUnless(gapMs, stop);
    await sleepUnless(Number.POSITIVE_INFINITY, stop, changed.signal);
  }
  return undefined;
}

/** Waits until a new session starts, `pauseMs` passes or `stop` aborts, and leaves no listener behind. */
async function pauseAfterConnectionProblem(
  zk: Zk,
  pauseMs: number,
  stop: AbortSignal,
): Promise<void> {
  const pause = new AbortController();
  const pauseOver = linkSignals(stop, pause.signal);
  try {
    await Promise.race([
      sleepUnless(pauseMs, pauseOver.signal),
      once(zk, 'session:started', { signal: pauseOver.signal }).catch(() => undefined),
    ]);
  } finally {
    pause.abort();
    pauseOver.dispose();
  }
}
