/**
 * Starts a small ensemble of real Apache ZooKeeper servers (QuorumPeerMain)
 * on 127.0.0.1 whose members can be stopped and restarted one by one.
 */
import { DEFAULTS } from '../config/defaults.js';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findZooKeeperDistribution, type ZooKeeperDistribution } from './distribution.js';
import {
  createTempDir,
  LOG_FILE_NAME,
  LOOPBACK,
  reserveLoopbackPorts,
  ServerExitedEarlyError,
  START_ATTEMPTS_WITH_FRESH_PORTS,
  startError,
  waitUntilServing,
  zooCfg,
} from './server-config.js';
import { launchJava, QUORUM_MAIN, type ServerProcess } from './server-process.js';

/** One server of a ZooKeeperEnsemble; stop and start it to test how a cluster rides out the loss of a member. */
export interface EnsembleMember {
  /** The member's `myid`, 1-based. */
  readonly id: number;
  readonly clientPort: number;
  readonly dataDir: string;
  readonly running: boolean;
  readonly pid: number | undefined;
  /** Stops this member and keeps its data dir, so start() brings it back with its data. Idempotent. */
  stop(): Promise<void>;
  /** (Re)starts this member on its ports and resolves once it is a leader or follower. No-op if running. */
  start(): Promise<void>;
}

/** An ensemble that startEnsemble started: its connect string, its members, and `stop()`. */
export interface ZooKeeperEnsemble {
  /** Every member's client address, comma-separated. */
  readonly connectString: string;
  readonly members: readonly EnsembleMember[];
  /** Stops every member; removes the base dir if we created it. Idempotent. */
  stop(): Promise<void>;
}

/** Options of startEnsemble: base directory, tick, start timeout and heap of each member. */
export interface StartEnsembleOptions {
  /** Parent of the members' data dirs (`member-<id>`); default: a fresh `zk-plan-zk-*` dir under os.tmpdir(), removed by stop(). */
  baseDir?: string;
  /** ZooKeeper tick; default 2000 ms. */
  tickTimeMs?: number;
  /** How long to wait for the whole ensemble to serve; default 30000 ms (per attempt). */
  startTimeoutMs?: number;
  /** JVM max heap of each member; default 256 MB. */
  heapMb?: number;
}

/**
 * Starts an ensemble of `size` ZooKeeper servers (QuorumPeerMain) on
 * 127.0.0.1 and resolves once every member is a leader or follower.
 *
 * Defaults: size 3, a fresh base dir under os.tmpdir() holding
 * `member-<id>` data dirs, tickTime 2000 ms, start timeout 30000 ms for the
 * whole ensemble, heap 256 MB per member. Ports are chosen by the OS; if a
 * member exits during start-up the ensemble is retried with fresh ports (up
 * to 3 times). Each member logs to `<member dataDir>/zookeeper.log`.
 *
 * @throws ZooKeeperNotFoundError when ZooKeeper or Java is not installed
 * @throws ZooKeeperStartError (with the logs' tails) when the ensemble does not serve in time
 */
export async function startEnsemble(
  size = 3,
  options: StartEnsembleOptions = {},
): Promise<ZooKeeperEnsemble> {
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`ensemble size must be a positive integer, not ${size}`);
  const distribution = findZooKeeperDistribution();
  const ownsBaseDir = options.baseDir === undefined;
  const baseDir = options.baseDir ?? (await createTempDir());
  const settings: EnsembleSettings = {
    distribution,
    baseDir,
    tickTimeMs: options.tickTimeMs ?? DEFAULTS.localServer.tickTimeMs,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULTS.localServer.startTimeoutMs,
    heapMb: options.heapMb ?? DEFAULTS.localServer.heapMb,
  };

  for (let attempt = 1; ; attempt++) {
    const members = await prepareMembers(size, settings);
    try {
      await startAllMembers(members, settings.startTimeoutMs);
      return new Ensemble(members, baseDir, ownsBaseDir);
    } catch (error) {
      await Promise.all(members.map((member) => member.stop()));
      if (error instanceof ServerExitedEarlyError && attempt < START_ATTEMPTS_WITH_FRESH_PORTS)
        continue;
      throw await startError(
        `ZooKeeper ensemble in ${baseDir}`,
        error,
        ...members.map((m) => m.logFile),
      );
    }
  }
}

// ---------------------------------------------------------------------------
// Ensemble objects
// ---------------------------------------------------------------------------

interface EnsembleSettings {
  readonly distribution: ZooKeeperDistribution;
  readonly baseDir: string;
  readonly tickTimeMs: number;
  readonly startTimeoutMs: number;
  readonly heapMb: number;
}

async function prepareMembers(size: number, settings: EnsembleSettings): Promise<Member[]> {
  const ports = await reserveLoopbackPorts(3 * size);
  const portAt = (index: number): number => ports[index]!;
  const ids = Array.from({ length: size }, (_, index) => index + 1);
  const peers = ids.map((id) => ({
    id,
    peerPort: portAt(3 * (id - 1) + 1),
    electionPort: portAt(3 * (id - 1) + 2),
  }));
  const acceptedModes = size === 1 ? ['standalone', 'leader'] : ['leader', 'follower'];
  return Promise.all(
    ids.map(async (id) => {
      const dataDir = join(settings.baseDir, `member-${id}`);
      const clientPort = portAt(3 * (id - 1));
      await mkdir(dataDir, { recursive: true });
      await writeFile(join(dataDir, 'myid'), `${id}\n`);
      const configFile = join(dataDir, 'zoo.cfg');
      await writeFile(
        configFile,
        zooCfg({ dataDir, clientPort, tickTimeMs: settings.tickTimeMs, peers }),
      );
      return new Member(id, clientPort, dataDir, configFile, acceptedModes, settings);
    }),
  );
}

/** Launches every member at once (they need each other for a quorum), then waits for all. */
async function startAllMembers(members: readonly Member[], startTimeoutMs: number): Promise<void> {
  const deadline = Date.now() + startTimeoutMs;
  for (const member of members) member.launch();
  const results = await Promise.allSettled(
    members.map((member) => member.waitUntilServing(deadline)),
  );
  const failures = results.flatMap((result) =>
    result.status === 'rejected' ? [result.reason as unknown] : [],
  );
  const exitedEarly = failures.find((failure) => failure instanceof ServerExitedEarlyError);
  if (exitedEarly !== undefined) throw exitedEarly;
  if (failures.length > 0) throw failures[0];
}

class Member implements EnsembleMember {
  readonly logFile: string;
  private server: ServerProcess | undefined;

  constructor(
    readonly id: number,
    readonly clientPort: number,
    readonly dataDir: string,
    private readonly configFile: string,
    private readonly acceptedModes: readonly string[],
    private readonly settings: EnsembleSettings,
  ) {
    this.logFile = join(dataDir, LOG_FILE_NAME);
  }

  get running(): boolean {
    return this.server !== undefined && !this.server.hasExited;
  }

  get pid(): number | undefined {
    return this.running ? this.server?.pid : undefined;
  }

  launch(): void {
    if (this.running) return;
    const { distribution, heapMb } = this.settings;
    this.server = launchJava(
      distribution,
      QUORUM_MAIN,
      this.configFile,
      this.logFile,
      heapMb,
      false,
    );
  }

  async waitUntilServing(deadline: number): Promise<void> {
    if (this.server === undefined) throw new Error(`member ${this.id} was not launched`);
    await waitUntilServing(this.server, this.clientPort, this.acceptedModes, deadline);
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.launch();
    try {
      await this.waitUntilServing(Date.now() + this.settings.startTimeoutMs);
    } catch (error) {
      await this.stop();
      throw await startError(
        `ZooKeeper ensemble member ${this.id} (${LOOPBACK}:${this.clientPort})`,
        error,
        this.logFile,
      );
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    await server.stop();
    if (this.server === server) this.server = undefined;
  }
}

class Ensemble implements ZooKeeperEnsemble {
  readonly connectString: string;
  private stopping: Promise<void> | undefined;

  constructor(
    readonly members: readonly Member[],
    private readonly baseDir: string,
    private readonly ownsBaseDir: boolean,
  ) {
    this.connectString = members.map((member) => `${LOOPBACK}:${member.clientPort}`).join(',');
  }

  stop(): Promise<void> {
    this.stopping ??= this.stopAndCleanUp();
    return this.stopping;
  }

  private async stopAndCleanUp(): Promise<void> {
    await Promise.all(this.members.map((member) => member.stop()));
    if (this.ownsBaseDir) await rm(this.baseDir, { recursive: true, force: true });
  }
}
