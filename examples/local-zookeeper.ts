/**
 * Where the examples find ZooKeeper: `$ZOOKEEPER_CONNECT` when set (an ensemble you run), else a
 * local standalone server started for the run (on a free loopback port) and stopped afterwards.
 *
 * ```ts
 * await withZooKeeper(async (connect) => { const zkPlan = await ZkPlan.connect({ connect }); … });
 * ```
 */
import { startZooKeeper } from '../src/index.js';

/** Runs `run` with a ZooKeeper connect string; stops the server it started (if any) whatever happens. */
export async function withZooKeeper<T>(run: (connectString: string) => Promise<T>): Promise<T> {
  const fromEnv = process.env['ZOOKEEPER_CONNECT']?.trim();
  if (fromEnv) {
    console.log(`zookeeper: using ZOOKEEPER_CONNECT=${fromEnv}`);
    return await run(fromEnv);
  }
  const started = performance.now();
  const server = await startZooKeeper();
  console.log(
    `zookeeper: started a local standalone server at ${server.connectString} ` +
      `(pid ${server.pid}, ${Math.round(performance.now() - started)} ms, log ${server.logFile})`,
  );
  try {
    return await run(server.connectString);
  } finally {
    await server.stop();
  }
}

/** Sleeps `ms`, rejecting with the signal's reason as soon as `signal` aborts (simulated I/O that honours cancellation). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs an example's main function (which stops everything it started in `finally` blocks), then
 * exits: 0 on success, 1 with the error's message (and cause) on failure.
 *
 * The explicit exit is needed because zk-plan leaves ref'd timers behind after a clean shutdown:
 * `WorkerPool.stop()` does not clear its drain-timeout timer (the process lingers `drainTimeoutMs`,
 * 30 s by default) and `ZooKeeperServer.stop()` does not clear its 5 s stop-grace timer. Set
 * `EXAMPLES_NATURAL_EXIT=1` to skip the explicit exit and see how long the process lingers.
 */
export async function runMain(name: string, main: () => Promise<void>): Promise<void> {
  let code = 0;
  try {
    await main();
  } catch (error) {
    console.error(`\n${name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (error instanceof Error && error.cause !== undefined) console.error('caused by:', error.cause);
    code = 1;
  }
  process.exitCode = code;
  if (process.env['EXAMPLES_NATURAL_EXIT'] === '1') {
    const finished = performance.now();
    process.once('exit', () => console.error(`${name}: the process lingered ${Math.round(performance.now() - finished)} ms after cleanup`));
    return;
  }
  process.exit(code);
}
