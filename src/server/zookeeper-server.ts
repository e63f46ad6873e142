/**
 * Starts real Apache ZooKeeper servers (standalone or a small ensemble) on
 * 127.0.0.1 for integration tests and examples, and makes sure none outlive
 * the Node process that started them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants as fsConstants, existsSync, openSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ZOOKEEPER_INSTALL_HINT, ZooKeeperNotFoundError, ZooKeeperStartError } from '../errors/server-errors.js';
import { fourLetterWord } from './four-letter-word.js';

const LOOPBACK = '127.0.0.1';
const DEBIAN_ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
const DEBIAN_ZOOKEEPER_CONF = '/etc/zookeeper/conf';
const SLF4J_SIMPLE_JAR = '/usr/share/java/slf4j-simple.jar';
const STANDALONE_MAIN = 'org.apache.zookeeper.server.ZooKeeperServerMain';
const QUORUM_MAIN = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';
const LOG_FILE_NAME = 'zookeeper.log';
const DEFAULT_TICK_TIME_MS = 2000;
const DEFAULT_START_TIMEOUT_MS = 30_000;
const DEFAULT_HEAP_MB = 256;
const MAX_SESSION_TIMEOUT_MS = 60_000;
const START_ATTEMPTS_WITH_FRESH_PORTS = 3;
const STOP_GRACE_MS = 5000;
const READINESS_POLL_MS = 100;

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

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
}

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
}

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

export interface ZooKeeperEnsemble {
  /** Every member's client address, comma-separated. */
  readonly connectString: string;
  readonly members: readonly EnsembleMember[];
  /** Stops every member; removes the base dir if we created it. Idempotent. */
  stop(): Promise<void>;
}

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

/** Where the ZooKeeper classes and the `java` executable are. */
export interface ZooKeeperDistribution {
  readonly classpath: string[];
  readonly javaExecutable: string;
}

/**
 * Finds a ZooKeeper distribution and Java.
 *
 * Looks at `$ZOOKEEPER_HOME` first (its `lib/*.jar`, a zookeeper jar at its
 * root if any, and `$ZOOKEEPER_HOME/conf`), then at Debian's
 * `/usr/share/java/zookeeper.jar` + `/etc/zookeeper/conf`. Adds
 * slf4j-simple when the classpath has no SLF4J binding, so the server logs.
 * Java is `$JAVA_HOME/bin/java` if that exists, else `java` on PATH.
 *
 * @param env - environment to read; default `process.env`
 * @throws ZooKeeperNotFoundError saying how to install what is missing
 */
export function findZooKeeperDistribution(env: NodeJS.ProcessEnv = process.env): ZooKeeperDistribution {
  const javaExecutable = findJava(env);
  const classpath = zookeeperHomeClasspath(env.ZOOKEEPER_HOME) ?? debianClasspath();
  if (classpath === undefined) {
    throw new ZooKeeperNotFoundError(
      `No Apache ZooKeeper distribution found (${describeZooKeeperHome(env.ZOOKEEPER_HOME)}; ` +
        `${DEBIAN_ZOOKEEPER_JAR} does not exist). ${ZOOKEEPER_INSTALL_HINT}` +
        (javaExecutable === undefined ? ` Java is missing too: ${JAVA_MISSING}` : ''),
    );
  }
  if (javaExecutable === undefined) {
    throw new ZooKeeperNotFoundError(`ZooKeeper was found but Java was not: ${JAVA_MISSING}`);
  }
  return { classpath: withLoggingBinding(classpath), javaExecutable };
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
 * @throws ZooKeeperNotFoundError when ZooKeeper or Java is not installed
 * @throws ZooKeeperStartError (with the log's tail) when the server does not serve in time
 */
export async function startZooKeeper(options: StartZooKeeperOptions = {}): Promise<ZooKeeperServer> {
  const distribution = findZooKeeperDistribution();
  const tickTimeMs = options.tickTimeMs ?? DEFAULT_TICK_TIME_MS;
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const heapMb = options.heapMb ?? DEFAULT_HEAP_MB;
  const ownsDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await createTempDir());
  await mkdir(dataDir, { recursive: true });
  const logFile = join(dataDir, LOG_FILE_NAME);
  const attempts = options.port === undefined ? START_ATTEMPTS_WITH_FRESH_PORTS : 1;

  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await reserveLoopbackPorts(1))[0]!;
    const configFile = join(dataDir, 'zoo.cfg');
    await writeFile(configFile, zooCfg({ dataDir, clientPort: port, tickTimeMs }));
    const server = launchJava(distribution, STANDALONE_MAIN, configFile, logFile, heapMb, options.fsync ?? false);
    try {
      await waitUntilServing(server, port, ['standalone'], Date.now() + startTimeoutMs);
      return new StandaloneServer(server, port, dataDir, logFile, ownsDataDir);
    } catch (error) {
      await server.stop();
      if (error instanceof ServerExitedEarlyError && attempt < attempts) continue;
      throw await startError(`ZooKeeper on ${LOOPBACK}:${port}`, error, logFile);
    }
  }
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
export async function startEnsemble(size = 3, options: StartEnsembleOptions = {}): Promise<ZooKeeperEnsemble> {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`ensemble size must be a positive integer, not ${size}`);
  const distribution = findZooKeeperDistribution();
  const ownsBaseDir = options.baseDir === undefined;
  const baseDir = options.baseDir ?? (await createTempDir());
  const settings: EnsembleSettings = {
    distribution,
    baseDir,
    tickTimeMs: options.tickTimeMs ?? DEFAULT_TICK_TIME_MS,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    heapMb: options.heapMb ?? DEFAULT_HEAP_MB,
  };

  for (let attempt = 1; ; attempt++) {
    const members = await prepareMembers(size, settings);
    try {
      await startAllMembers(members, settings.startTimeoutMs);
      return new Ensemble(members, baseDir, ownsBaseDir);
    } catch (error) {
      await Promise.all(members.map((member) => member.stop()));
      if (error instanceof ServerExitedEarlyError && attempt < START_ATTEMPTS_WITH_FRESH_PORTS) continue;
      throw await startError(`ZooKeeper ensemble in ${baseDir}`, error, ...members.map((m) => m.logFile));
    }
  }
}

// ---------------------------------------------------------------------------
// Locating ZooKeeper and Java
// ---------------------------------------------------------------------------

const JAVA_MISSING =
  'no `java` on PATH (nor $JAVA_HOME/bin/java). Install it with ' +
  '`apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y default-jre-headless` ' +
  '(installing the `zookeeper` package brings it in too).';

const ZOOKEEPER_JAR = /^zookeeper(-\d[\w.-]*)?\.jar$/;
const SLF4J_BINDING_JAR = /^(logback-classic|slf4j-(simple|log4j12|reload4j|jdk14|nop))[\w.-]*\.jar$/;

function zookeeperHomeClasspath(home: string | undefined): string[] | undefined {
  if (home === undefined || home === '' || !isDirectory(home)) return undefined;
  const libJars = jarsIn(join(home, 'lib'));
  const rootJars = jarsIn(home).filter((jar) => ZOOKEEPER_JAR.test(baseName(jar)));
  const hasServerJar = [...libJars, ...rootJars].some((jar) => ZOOKEEPER_JAR.test(baseName(jar)));
  if (!hasServerJar) return undefined;
  return [join(home, 'conf'), ...rootJars, ...libJars];
}

function debianClasspath(): string[] | undefined {
  // The Debian jar's manifest Class-Path lists its dependencies in /usr/share/java.
  return existsSync(DEBIAN_ZOOKEEPER_JAR) ? [DEBIAN_ZOOKEEPER_CONF, DEBIAN_ZOOKEEPER_JAR] : undefined;
}

function describeZooKeeperHome(home: string | undefined): string {
  if (home === undefined || home === '') return 'ZOOKEEPER_HOME is not set';
  return `ZOOKEEPER_HOME=${home} holds no zookeeper-*.jar in it or in its lib/`;
}

/** Without an SLF4J binding ZooKeeper logs nothing; slf4j-simple writes to stderr, i.e. our log file. */
function withLoggingBinding(classpath: string[]): string[] {
  const hasBinding = classpath.some((entry) => SLF4J_BINDING_JAR.test(baseName(entry)));
  return hasBinding || !existsSync(SLF4J_SIMPLE_JAR) ? classpath : [...classpath, SLF4J_SIMPLE_JAR];
}

function findJava(env: NodeJS.ProcessEnv): string | undefined {
  const candidates = [
    ...(env.JAVA_HOME ? [join(env.JAVA_HOME, 'bin', 'java')] : []),
    ...(env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'java')),
  ];
  return candidates.find(isExecutableFile);
}

function jarsIn(dir: string): string[] {
  if (!isDirectory(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jar'))
    .sort()
    .map((name) => join(dir, name));
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// Ports, directories and configuration
// ---------------------------------------------------------------------------

/** Asks the OS for `count` distinct free loopback ports (all held open together, then released). */
async function reserveLoopbackPorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listenOnFreeLoopbackPort());
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('could not read a reserved port');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

function listenOnFreeLoopbackPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: LOOPBACK, port: 0, exclusive: true }, () => resolve(server));
  });
}

function createTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'zk-plan-zk-'));
}

interface PeerAddress {
  readonly id: number;
  readonly peerPort: number;
  readonly electionPort: number;
}

interface ZooCfgSettings {
  readonly dataDir: string;
  readonly clientPort: number;
  readonly tickTimeMs: number;
  readonly peers?: readonly PeerAddress[];
}

function zooCfg({ dataDir, clientPort, tickTimeMs, peers }: ZooCfgSettings): string {
  const lines = [
    `tickTime=${tickTimeMs}`,
    `dataDir=${dataDir}`,
    `clientPort=${clientPort}`,
    `clientPortAddress=${LOOPBACK}`,
    // Let tests ask for short sessions (fast expiry) as well as long ones.
    `minSessionTimeout=${2 * tickTimeMs}`,
    `maxSessionTimeout=${Math.max(MAX_SESSION_TIMEOUT_MS, 20 * tickTimeMs)}`,
    'admin.enableServer=false',
    '4lw.commands.whitelist=ruok,srvr,stat,mntr',
    'maxClientCnxns=0',
  ];
  if (peers !== undefined) {
    lines.push('initLimit=10', 'syncLimit=5', 'quorumListenOnAllIPs=false', 'reconfigEnabled=false');
    for (const peer of peers) lines.push(`server.${peer.id}=${LOOPBACK}:${peer.peerPort}:${peer.electionPort}`);
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------
// The JVM process
// ---------------------------------------------------------------------------

/** A ZooKeeper JVM we spawned; stop() is idempotent. */
class ServerProcess {
  readonly pid: number;
  private exitStatus: string | undefined;
  private readonly exited: Promise<void>;
  private stopping: Promise<void> | undefined;

  constructor(private readonly child: ChildProcess) {
    if (child.pid === undefined) throw new Error('the java process did not start');
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitStatus = signal === null ? `exit code ${code}` : `signal ${signal}`;
        resolve();
      });
    });
  }

  get hasExited(): boolean {
    return this.exitStatus !== undefined;
  }

  /** How the process ended, e.g. "exit code 1"; undefined while running. */
  get howItExited(): string | undefined {
    return this.exitStatus;
  }

  stop(): Promise<void> {
    this.stopping ??= this.terminate();
    return this.stopping;
  }

  private async terminate(): Promise<void> {
    if (this.hasExited) return;
    this.child.kill('SIGTERM');
    const exitedInTime = await Promise.race([this.exited.then(() => true), delay(STOP_GRACE_MS, false, { ref: false })]);
    if (!exitedInTime) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

const PARENT_DEATH_WRAPPER = findParentDeathWrapper();

function launchJava(
  distribution: ZooKeeperDistribution,
  mainClass: string,
  configFile: string,
  logFile: string,
  heapMb: number,
  fsync: boolean,
): ServerProcess {
  const javaArgs = [...jvmFlags(heapMb, fsync), '-cp', distribution.classpath.join(':'), mainClass, configFile];
  const [command, args] =
    PARENT_DEATH_WRAPPER === undefined
      ? [distribution.javaExecutable, javaArgs]
      : [PARENT_DEATH_WRAPPER, ['--pdeathsig', 'KILL', '--', distribution.javaExecutable, ...javaArgs]];
  const logFd = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, { stdio: ['ignore', logFd, logFd], detached: false });
    child.on('error', () => {}); // a failed spawn surfaces as a missing pid below
    const server = new ServerProcess(child);
    killOnExit(child);
    return server;
  } catch (error) {
    throw new ZooKeeperStartError(`Could not run ${distribution.javaExecutable}: ${String(error)}`, { logFile, cause: error });
  } finally {
    closeSync(logFd); // the child has its own copy
  }
}

function jvmFlags(heapMb: number, fsync: boolean): string[] {
  return [
    `-Xmx${heapMb}m`,
    '-XX:+UseSerialGC',
    // A test server never gets hot enough to pay for C2; C1 only starts faster.
    '-XX:TieredStopAtLevel=1',
    '-XX:-UsePerfData',
    '-Xshare:auto',
    '-Djava.net.preferIPv4Stack=true',
    '-Dzookeeper.jmx.log4j.disable=true',
    // Test data needs no fsync per write (the page cache survives a killed process); benchmarks ask for it.
    `-Dzookeeper.forceSync=${fsync ? 'yes' : 'no'}`,
    // A restarted member may have a txn log without a snapshot yet.
    '-Dzookeeper.snapshot.trust.empty=true',
    '-Dorg.slf4j.simpleLogger.showDateTime=true',
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS",
  ];
}

/**
 * setpriv (util-linux) execs java with PR_SET_PDEATHSIG=SIGKILL, so the JVM
 * dies even when Node is SIGKILLed and no exit hook can run. The pid stays java's.
 */
function findParentDeathWrapper(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  return ['/usr/bin/setpriv', '/bin/setpriv'].find(isExecutableFile);
}

// ---------------------------------------------------------------------------
// Never leave a server behind
// ---------------------------------------------------------------------------

const liveChildren = new Set<ChildProcess>();
let cleanupHooksInstalled = false;

function killOnExit(child: ChildProcess): void {
  installCleanupHooks();
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
}

function killLiveChildrenNow(): void {
  for (const child of liveChildren) {
    try {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  liveChildren.clear();
}

function installCleanupHooks(): void {
  if (cleanupHooksInstalled) return;
  cleanupHooksInstalled = true;
  process.on('exit', killLiveChildrenNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killLiveChildrenNow();
      // If nobody else handles the signal, behave as if we had not listened: die of it.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

// ---------------------------------------------------------------------------
// Readiness
// ---------------------------------------------------------------------------

class ServerExitedEarlyError extends Error {
  constructor(howItExited: string) {
    super(`the server process exited during start-up (${howItExited})`);
    this.name = 'ServerExitedEarlyError';
  }
}

/** Polls `srvr` until the server reports one of `modes`; throws if the process exits or the deadline passes. */
async function waitUntilServing(server: ServerProcess, port: number, modes: readonly string[], deadline: number): Promise<void> {
  let lastAnswer = 'no answer yet';
  for (;;) {
    if (server.hasExited) throw new ServerExitedEarlyError(server.howItExited ?? 'unknown');
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) throw new Error(`the server did not serve in time (last srvr answer: ${lastAnswer})`);
    try {
      const answer = await fourLetterWord(LOOPBACK, port, 'srvr', Math.min(1000, remainingMs));
      const mode = /^Mode: (\w+)/m.exec(answer)?.[1];
      if (mode !== undefined && modes.includes(mode)) return;
      lastAnswer = answer.trim().split('\n')[0] ?? '';
    } catch (error) {
      lastAnswer = error instanceof Error ? error.message : String(error);
    }
    await delay(READINESS_POLL_MS);
  }
}

async function startError(what: string, error: unknown, ...logFiles: string[]): Promise<Error> {
  if (error instanceof ZooKeeperNotFoundError || error instanceof ZooKeeperStartError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  const tails = await Promise.all(logFiles.map(async (logFile) => `--- tail of ${logFile} ---\n${await logTail(logFile)}`));
  return new ZooKeeperStartError(
    `${what} failed to start: ${reason}. The data dir is kept for inspection; see the log below.\n${tails.join('\n')}`,
    { logFile: logFiles[0], cause: error },
  );
}

async function logTail(logFile: string, lineCount = 30): Promise<string> {
  try {
    const lines = (await readFile(logFile, 'utf8')).trimEnd().split('\n');
    return lines.slice(-lineCount).join('\n');
  } catch {
    return '(no log file)';
  }
}

// ---------------------------------------------------------------------------
// Standalone server and ensemble objects
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

  private async stopAndCleanUp(): Promise<void> {
    await this.server.stop();
    if (this.ownsDataDir) await rm(this.dataDir, { recursive: true, force: true });
  }
}

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
  const peers = ids.map((id) => ({ id, peerPort: portAt(3 * (id - 1) + 1), electionPort: portAt(3 * (id - 1) + 2) }));
  const acceptedModes = size === 1 ? ['standalone', 'leader'] : ['leader', 'follower'];
  return Promise.all(
    ids.map(async (id) => {
      const dataDir = join(settings.baseDir, `member-${id}`);
      const clientPort = portAt(3 * (id - 1));
      await mkdir(dataDir, { recursive: true });
      await writeFile(join(dataDir, 'myid'), `${id}\n`);
      const configFile = join(dataDir, 'zoo.cfg');
      await writeFile(configFile, zooCfg({ dataDir, clientPort, tickTimeMs: settings.tickTimeMs, peers }));
      return new Member(id, clientPort, dataDir, configFile, acceptedModes, settings);
    }),
  );
}

/** Launches every member at once (they need each other for a quorum), then waits for all. */
async function startAllMembers(members: readonly Member[], startTimeoutMs: number): Promise<void> {
  const deadline = Date.now() + startTimeoutMs;
  for (const member of members) member.launch();
  const results = await Promise.allSettled(members.map((member) => member.waitUntilServing(deadline)));
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
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
    this.server = launchJava(distribution, QUORUM_MAIN, this.configFile, this.logFile, heapMb, false);
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
      throw await startError(`ZooKeeper ensemble member ${this.id} (${LOOPBACK}:${this.clientPort})`, error, this.logFile);
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
