import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS, linkSignals, onAbort, sleepUnless } from '../../src/util/abort-signals.js';

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

describe('linkSignals', () => {
  it('aborts with the reason of the first source that aborts, and detaches from all of them', () => {
    const first = new AbortController();
    const second = new AbortController();
    const linked = linkSignals(first.signal, undefined, second.signal);
    expect(listeners(first.signal)).toBe(1);
    expect(listeners(second.signal)).toBe(1);
    second.abort('second');
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('second');
    expect(listeners(first.signal)).toBe(0);
    expect(listeners(second.signal)).toBe(0);
    first.abort('first');
    expect(linked.signal.reason).toBe('second');
  });

  it('dispose detaches it without aborting it', () => {
    const source = new AbortController();
    const linked = linkSignals(source.signal);
    linked.dispose();
    expect(listeners(source.signal)).toBe(0);
    source.abort();
    expect(linked.signal.aborted).toBe(false);
    linked.dispose(); // twice is fine
  });

  it('is aborted at once when a source already is, attaching nothing', () => {
    const live = new AbortController();
    const done = new AbortController();
    done.abort('early');
    const linked = linkSignals(live.signal, done.signal);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe('early');
    expect(listeners(live.signal)).toBe(0);
  });

  it('with no source, is a signal that never aborts', () => {
    const linked = linkSignals();
    expect(linked.signal.aborted).toBe(false);
    linked.dispose();
  });

  it('leaves nothing on a long-lived source after many short links (the AbortSignal.any leak)', () => {
    const pool = new AbortController();
    for (let round = 0; round < 1_000; round++) {
      const task = new AbortController();
      const linked = linkSignals(pool.signal, task.signal);
      if (round % 2 === 0) task.abort();
      linked.dispose();
    }
    expect(listeners(pool.signal)).toBe(0);
  });
});

describe('sleepUnless', () => {
  it('resolves true after the full time, leaving no listener', async () => {
    const stop = new AbortController();
    expect(await sleepUnless(5, stop.signal)).toBe(true);
    expect(listeners(stop.signal)).toBe(0);
  });

  it('resolves false as soon as a signal aborts, leaving no listener on any signal', async () => {
    const first = new AbortController();
    const second = new AbortController();
    const started = Date.now();
    const sleeping = sleepUnless(60_000, first.signal, undefined, second.signal);
    expect(listeners(first.signal)).toBe(1);
    second.abort();
    expect(await sleeping).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(listeners(first.signal)).toBe(0);
    expect(listeners(second.signal)).toBe(0);
  });

  it('resolves false at once when a signal is already aborted', async () => {
    const stop = new AbortController();
    stop.abort();
    expect(await sleepUnless(60_000, stop.signal)).toBe(false);
    expect(listeners(stop.signal)).toBe(0);
  });

  it('waits only for a signal past the longest timer (never fires at once, as setTimeout would)', async () => {
    const stop = new AbortController();
    let settled = false;
    const sleeping = sleepUnless(MAX_TIMER_MS + 1, stop.signal).then((full) => {
      settled = true;
      return full;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    stop.abort();
    expect(await sleeping).toBe(false);
    expect(listeners(stop.signal)).toBe(0);
  });

  it('treats a negative time as no wait', async () => {
    expect(await sleepUnless(-5)).toBe(true);
  });
});

describe('onAbort', () => {
  it('calls the listener once on abort and leaves nothing behind', () => {
    const controller = new AbortController();
    let calls = 0;
    onAbort(controller.signal, () => (calls += 1));
    expect(listeners(controller.signal)).toBe(1);
    controller.abort();
    controller.abort();
    expect(calls).toBe(1);
    expect(listeners(controller.signal)).toBe(0);
  });

  it('returns a detach that removes the listener', () => {
    const controller = new AbortController();
    let calls = 0;
    const detach = onAbort(controller.signal, () => (calls += 1));
    detach();
    expect(listeners(controller.signal)).toBe(0);
    controller.abort();
    expect(calls).toBe(0);
  });

  it('calls the listener at once on an aborted signal, attaching nothing', () => {
    const controller = new AbortController();
    controller.abort();
    let calls = 0;
    const detach = onAbort(controller.signal, () => (calls += 1));
    expect(calls).toBe(1);
    expect(listeners(controller.signal)).toBe(0);
    detach();
  });
});
