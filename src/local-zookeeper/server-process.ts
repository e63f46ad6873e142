/**
 * Launches a ZooKeeper JVM with its log redirected to a file, and makes sure
 * it never outlives the Node process that started it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { ZooKeeperStartError } from '../errors/server-errors.js';
import { isExecutableFile, type ZooKeeperDistribution } from './distribution.js';

export const STANDALONE_MAIN = 'org.apache.zookeeper.server.ZooKeeperServerMain';
export const QUORUM_MAIN = 'org.apache.zookeeper.server.quorum.QuorumPeerMain';
const STOP_GRACE_MS = 5000;

// ---------------------------------------------------------------------------
// The JVM process
// ---------------------------------------------------------------------------

/** A ZooKeeper JVM we spawned; stop() is idempotent. */
export class ServerProcess {
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

  /** Resolves once the process has ended, with how (e.g. "exit code 1"). */
  whenExited(): Promise<string> {
    return this.exited.then(() => this.exitStatus ?? 'unknown');
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
    const exitedInTime = await Promise.race([
      this.exited.then(() => true),
      delay(STOP_GRACE_MS, false, { ref: false }),
    ]);
    if (!exitedInTime) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

const PARENT_DEATH_WRAPPER = findParentDeathWrapper();

export function launchJava(
  distribution: ZooKeeperDistribution,
  mainClass: string,
  configFile: string,
  logFile: string,
  heapMb: number,
  fsync: boolean,
): ServerProcess {
  const javaArgs = [
    ...jvmFlags(heapMb, fsync),
    '-cp',
    distribution.classpath.join(':'),
    mainClass,
    configFile,
  ];
  const [command, args] =
    PARENT_DEATH_WRAPPER === undefined
      ? [distribution.javaExecutable, javaArgs]
      : [
          PARENT_DEATH_WRAPPER,
          ['--pdeathsig', 'KILL', '--', distribution.javaExecutable, ...javaArgs],
        ];
  const logFd = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, { stdio: ['ignore', logFd, logFd], detached: false });
    child.on('error', () => {}); // a failed spawn surfaces as a missing pid below
    const server = new ServerProcess(child);
    killOnExit(child);
    return server;
  } catch (error) {
    throw new ZooKeeperStartError(
      `Could not run ${distribution.javaExecutable}: ${String(error)}`,
      { logFile, cause: error },
    );
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
