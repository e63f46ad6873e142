/**
 * The set-up and tear-down every fault test (integ/faults) shares: a ZooKeeper server or ensemble,
 * a temp dir with the execution log, the test's own ZkPlan, and a fleet of worker processes. One
 * clean-up, run after each test, stops the processes (checked by pid), closes the test's client,
 * stops the servers and removes the temp dir, from whatever point the set-up or the test reached:
 * each thing is registered for clean-up as soon as it exists.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { ZkPlan, type ConnectOptions } from '../../src/index.js';
import {
  startEnsemble,
  startZooKeeper,
  type ZooKeeperEnsemble,
  type ZooKeeperServer,
} from '../../src/testing/index.js';
import { CleanupStack } from '../../src/testing/fault-harness/cleanup-stack.js';
import { readExecutionLog, type LogEntry } from './execution-log.js';
import {
  WorkerFleet,
  faultWorkerSpec,
  type FaultWorkerSpec,
  type WorkerProcess,
  type WorkerSpec,
} from './worker-process.js';

export { CleanupStack };
export { pauseUntil } from '../../src/testing/fault-harness/pause.js';

export interface FaultEnvOptions {
  /** Names the temp dir and the default parent of the plans, `/faults/<name>`. */
  readonly name: string;
  /** The servers' tick: their minimum session timeout is 2 ticks, so short worker sessions need a short tick. */
  readonly tickTimeMs: number;
  /** Start an ensemble of this many members instead of a standalone server. */
  readonly ensembleSize?: number;
  readonly parent?: string;
  /** Options of the test's own ZkPlan (session timeout 10 s unless given). */
  readonly client?: Partial<ConnectOptions>;
  /** What every worker process of the fleet gets (loops, session timeout, …). */
  readonly workers?: Omit<FaultWorkerSpec, 'connect' | 'parent' | 'logFile'>;
}

/** One fault test's servers, client, workers and execution log. Made by useFaultEnv().start(). */
export class FaultEnv {
  readonly parent: string;
  readonly logFile: string;
  readonly fleet: WorkerFleet;
  private client: ZkPlan | undefined;

  private constructor(
    private readonly options: FaultEnvOptions,
    /** The temp dir: log, server data, removed by the clean-up. */
    readonly dir: string,
    /** The standalone server and its restarts, in order; empty with an ensemble. */
    private readonly servers: ZooKeeperServer[],
    private readonly cluster: ZooKeeperServer | ZooKeeperEnsemble,
    private readonly cleanup: CleanupStack,
  ) {
    this.parent = options.parent ?? `/faults/${options.name}`;
    this.logFile = join(dir, 'executions.jsonl');
    this.fleet = new WorkerFleet(
      faultWorkerSpec({
        ...options.workers,
        connect: cluster.connectString,
        parent: this.parent,
        logFile: this.logFile,
      }),
    );
  }

  /** Sets up in order, registering each part with `cleanup` as soon as it exists. */
  static async start(options: FaultEnvOptions, cleanup: CleanupStack): Promise<FaultEnv> {
    const dir = await mkdtemp(join(tmpdir(), `zk-plan-${options.name}-`));
    cleanup.add('remove the temp dir', () => rm(dir, { recursive: true, force: true }));
    const servers: ZooKeeperServer[] = [];
    let ensemble: ZooKeeperEnsemble | undefined;
    cleanup.add('stop ZooKeeper', () =>
      Promise.all([ensemble?.stop(), ...servers.map((server) => server.stop())]),
    );
    // Data dirs of our own inside the temp dir: a restarted server finds its data (and sessions) there.
    if (options.ensembleSize === undefined) {
      servers.push(
        await startZooKeeper({ tickTimeMs: options.tickTimeMs, dataDir: join(dir, 'zookeeper') }),
      );
      cleanup.watchPid(servers[0]?.pid);
    } else {
      ensemble = await startEnsemble(options.ensembleSize, {
        tickTimeMs: options.tickTimeMs,
        baseDir: join(dir, 'ensemble'),
      });
      for (const member of ensemble.members) cleanup.watchPid(member.pid);
    }
    const env = new FaultEnv(options, dir, servers, ensemble ?? servers[0]!, cleanup);
    await writeFile(env.logFile, '');
    cleanup.add('close the test client', () => env.disconnect());
    // Registered last, so it runs first: no worker outlives the servers or the temp dir.
    cleanup.add('stop worker processes', async () => {
      const alive = await env.fleet.stopAll();
      if (alive.length > 0) throw new Error(`worker processes still alive: ${alive.join(', ')}`);
    });
    await env.connect();
    return env;
  }

  get connectString(): string {
    return this.cluster.connectString;
  }

  /** The standalone server (the restarted one after restartServer). */
  get server(): ZooKeeperServer {
    const server = this.servers.at(-1);
    if (server === undefined)
      throw new Error('this fault environment runs an ensemble, not a standalone server');
    return server;
  }

  get ensemble(): ZooKeeperEnsemble {
    if (!('members' in this.cluster))
      throw new Error('this fault environment runs a standalone server, not an ensemble');
    return this.cluster;
  }

  /** The test's own client. */
  get zkPlan(): ZkPlan {
    if (this.client === undefined) throw new Error('the test client is closed: connect() first');
    return this.client;
  }

  /** Connects a new test client (the previous one must be closed). */
  async connect(): Promise<ZkPlan> {
    if (this.client !== undefined) throw new Error('the test client is connected already');
    this.client = await ZkPlan.connect({
      connect: this.connectString,
      sessionTimeoutMs: 10_000,
      ...this.options.client,
    });
    return this.client;
  }

  /** Closes the test client, e.g. while servers restart: a JVM spawned while it is connected would inherit its socket. */
  async disconnect(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.close();
  }

  /** The execution log so far. */
  log(): LogEntry[] {
    return readExecutionLog(this.logFile);
  }

  /** A process that must be gone after the test (e.g. a restarted ensemble member). */
  watchPid(pid: number | undefined): void {
    this.cleanup.watchPid(pid);
  }

  /** Spawns `count` worker processes and resolves once each runs its loops. */
  async startWorkers(count: number, overrides: Partial<WorkerSpec> = {}): Promise<WorkerProcess[]> {
    const workers = Array.from({ length: count }, () => this.fleet.spawn(undefined, overrides));
    await Promise.all(workers.map((worker) => worker.ready()));
    return workers;
  }

  /**
   * Closes the test client, stops the standalone server, lets `downFor` decide how long it stays
   * down, starts it again on the same port and data dir, and connects a new test client.
   */
  async restartServer(
    downFor: (stoppedAt: number) => Promise<void>,
  ): Promise<{ stoppedAt: number; servingAt: number }> {
    const { port, dataDir } = this.server;
    await this.disconnect();
    const stoppedAt = Date.now();
    await this.server.stop();
    await downFor(stoppedAt);
    const restarted = await startZooKeeper({ tickTimeMs: this.options.tickTimeMs, dataDir, port });
    const servingAt = Date.now();
    this.servers.push(restarted);
    this.cleanup.watchPid(restarted.pid);
    await this.connect();
    return { stoppedAt, servingAt };
  }
}

/** Registers the clean-up of a fault test file (after each test); `start()` sets up one test's environment. */
export function useFaultEnv(): { start(options: FaultEnvOptions): Promise<FaultEnv> } {
  const cleanup = new CleanupStack();
  afterEach(async () => {
    await cleanup.run();
  });
  return { start: (options) => FaultEnv.start(options, cleanup) };
}
