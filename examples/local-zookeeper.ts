/**
 * Where the examples find ZooKeeper: `$ZOOKEEPER_CONNECT` when set (an ensemble you run), else a
 * local standalone server started for the run (on a free loopback port) and stopped afterwards.
 *
 * ```ts
 * await withZooKeeper(async (connect) => { const zkPlan = await ZkPlan.connect({ connect }); … });
 * ```
 */
import { startZooKeeper } from '../src/testing/index.js';

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

/**
 * Runs an example's main function (which stops everything it started in `finally` blocks) and
 * sets the exit code: 0 on success, 1 with the error's message (and cause) on failure.
 */
export async function runMain(name: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    console.error(
      `\n${name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    if (error instanceof Error && error.cause !== undefined)
      console.error('caused by:', error.cause);
    process.exitCode = 1;
  }
}
