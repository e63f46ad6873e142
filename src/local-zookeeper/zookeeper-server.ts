/**
 * Starts real Apache ZooKeeper servers (standalone or a small ensemble) on
 * 127.0.0.1 for integration tests and examples, and makes sure none outlive
 * the Node process that started them.
 */
import { DEFAULTS } from '../config/defaults.js';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findZooKeeperDistribution } from './distribution.js';
import { PortInUseError } from '../errors/server-errors.js';
import {
  assertLoopbackPortFree,
  createTempDir,
  LOG_FILE_NAME,
  LOOPBACK,
  reserveLoopbackPorts,
  ServerExitedEarlyError,
  START_ATTEMPTS_WITH_FRESH_PORTS,
  startErrorWith,
  waitUntilServing,
  zooCfg,
} from './server-config.js';
import { launchJava, STANDALONE_MAIN, type ServerProcess } from './server-process.js';

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

/** Options of startZooKeeper: port, data directory, tick, start timeout, heap, and whether to fsync. */
export interface StartZooKeeperOptions {
  /** Client port on 127.0.0.1; default: a free port chosen by the OS. */
  port?: number;
  /** Data directory; default: a fresh `zk-plan-zk-*` directory under os.tmpdir(), removed by stop(). */
  dataDir?: string;
  /** ZooKeeper tick; default 2000 ms. The minimum session timeout is 2 ticks. */
  tickTimeMs?: number;
  /** How long to wait for the server to serve; default 30000 ms (per attempt). */
  startTimeoutMs?: number;
  /** JVM max heap; default 256 MB. */
  heapMb?: number;
  /** fsync the transaction log on every write, as a production server does (benchmarks); default false (tests need no durability). */
  fsync?: boolean;
  /**
   * Keep the data dir this call created when the start fails, for inspection (the error names
   * the log); default true. With false it is removed (the error still holds the log's tail).
   * A port already in use never keeps it: nothing ran.
   */
  keepDataDirOnFailure?: boolean;
}

/** A standalone ZooKeeper server that startZooKeeper started: where to connect, its process and log, and `stop()`. */
export interface ZooKeeperServer {
  /** `127.0.0.1:<port>`, to hand to a client. */
  readonly connectString: string;
  readonly port: number;
  readonly dataDir: string;
  readonly pid: number;
  /** The server's log (stdout and stderr of the JVM), inside dataDir. */
  readonly logFile: string;
  /** Stops the server (SIGTERM, SIGKILL after 5 s); idempotent. Removes dataDir if we created it. */
  stop(): Promise<void>;
  /** Resolves when the server process ends (stopped, or on its own), with how, e.g. "exit code 1". */
  whenExited(): Promise<string>;
}

/**
 * Starts a standalone ZooKeeper server on 127.0.0.1 and resolves once it
 * serves (`srvr` says `Mode: standalone`).
 *
 * Defaults: a free port chosen by the OS (a start that fails because the
 * process exits, e.g. the port was taken meanwhile, is retried up to 3 times
 * with a fresh port), a fresh data dir under os.tmpdir(), tickTime 2000 ms,
 * start timeout 30000 ms, heap 256 MB. The log is `<dataDir>/zookeeper.log`.
 *
 * With an explicit `port`, the port is checked free on 127.0.0.1 first, and the server that
 * answers must be ours (its `conf` names our data dir), not one already listening there.
 *
 * @throws ZooKeeperNotFoundError when ZooKeeper or Java is not installed
 * @throws PortInUseError when the `port` asked for is taken (the data dir is removed)
 * @throws ZooKeeperStartError (with the log's tail) when the server does not serve in time
 */
export async function startZooKeeper(
  options: StartZooKeeperOptions = {},
): Promise<ZooKeeperServer> {
  const distribution = findZooKeeperDistribution();
  const tickTimeMs = options.tickTimeMs ?? DEFAULTS.localServer.tickTimeMs;
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULTS.localServer.startTimeoutMs;
  const heapMb = options.heapMb ?? DEFAULTS.localServer.heapMb;
  const ownsDataDir = options.dataDir === undefined;
  if (options.port !== undefined) await assertLoopbackPortFree(options.port); // before anything is created
  const dataDir = options.dataDir ?? (await createTempDir());
  await mkdir(dataDir, { recursive: true });
  const logFile = join(dataDir, LOG_FILE_NAME);
  const attempts = options.port === undefined ? START_ATTEMPTS_WITH_FRESH_PORTS : 1;

  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await reserveLoopbackPorts(1))[0]!;
    const configFile = join(dataDir, 'zoo.cfg');
    await writeFile(configFile, zooCfg({ dataDir, clientPort: port, tickTimeMs }));
    const server = launchJava(
      distribution,
      STANDALONE_MAIN,
      configFile,
      logFile,
      heapMb,
      options.fsync ?? false,
    );
    try {
      await waitUntilServing(server, port, ['standalone'], Date.now() + startTimeoutMs, dataDir);
      return new StandaloneServer(server, port, dataDir, logFile, ownsDataDir);
    } catch (error) {
      await server.stop();
      if (error instanceof ServerExitedEarlyError && attempt < attempts) continue;
      // Taken meanwhile (or by a server that does not accept our bind test's address): say so.
      const taken =
        options.port !== undefined && error instanceof ServerExitedEarlyError
          ? await portTaken(options.port)
          : undefined;
      const keep = ownsDataDir && taken === undefined && options.keepDataDirOnFailure !== false;
      const failure =
        taken ??
        (await startErrorWith(
          `ZooKeeper on ${LOOPBACK}:${port}`,
          error,
          [logFile],
          !ownsDataDir || keep,
        ));
      if (ownsDataDir && !keep) await rm(dataDir, { recursive: true, force: true });
      throw failure;
    }
  }
}

/** The PortInUseError for `port` when it is taken now. */
async function portTaken(port: number): Promise<PortInUseError | undefined> {
  try {
    await assertLoopbackPortFree(port);
    return undefined;
  } catch (error) {
    if (error instanceof PortInUseError) return error;
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Standalone server object
// ---------------------------------------------------------------------------

class StandaloneServer implements ZooKeeperServer {
  readonly connectString: string;
  readonly pid: number;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly server: ServerProcess,
    readonly port: number,
    readonly dataDir: string,
    readonly logFile: string,
    private readonly ownsDataDir: boolean,
  ) {
    this.connectString = `${LOOPBACK}:${port}`;
    this.pid = server.pid;
  }

  stop(): Promise<void> {
    this.stopping ??= this.stopAndCleanUp();
    return this.stopping;
  }

  whenExited(): Promise<string> {
    return this.server.whenExited();
  }

  private async stopAndCleanUp(): Promise<void> {
    await this.server.stop();
    if (this.ownsDataDir) await rm(this.dataDir, { recursive: true, force: true });
  }
}
