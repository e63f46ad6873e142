import { once } from 'node:events';

/** Resolves with the first of SIGINT and SIGTERM to arrive. */
export async function untilSignal(): Promise<NodeJS.Signals> {
  const controller = new AbortController();
  const signals = ['SIGINT', 'SIGTERM'] as const;
  // The losers reject with AbortError once the race is decided; that is expected.
  const first = await Promise.race(
    signals.map((name) =>
      once(process, name, { signal: controller.signal }).then(
        () => name,
        () => name,
      ),
    ),
  );
  controller.abort();
  return first;
}
