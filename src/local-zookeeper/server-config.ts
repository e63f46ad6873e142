/**
 * Shared plumbing of the standalone server and the ensemble: defaults, free
 * loopback ports, temporary directories, zoo.cfg, readiness polling and
 * start-up errors.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  PortInUseError,
  ZooKeeperNotFoundError,
  ZooKeeperStartError,
} from '../errors/server-errors.js';
import { fourLetterWord } from './four-letter-word.js';
import type { ServerProcess } from './server-process.js';

export const LOOPBACK = '127.0.0.1';
export const LOG_FILE_NAME = 'zookeeper.log';
const MAX_SESSION_TIMEOUT_MS = 60_000;
export const START_ATTEMPTS_WITH_FRESH_PORTS = 3;
const READINESS_POLL_MS = 100;

// ---------------------------------------------------------------------------
// Ports, directories and configuration
// ---------------------------------------------------------------------------

/** Asks the OS for `count` distinct free loopback ports (all held open together, then released). */
export async function reserveLoopbackPorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listenOnFreeLoopbackPort());
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === 'string')
        throw new Error('could not read a reserved port');
      return address.port;
    });
  } finally {
    await Promise.all(
      servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
    );
  }
}

function listenOnFreeLoopbackPort(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: LOOPBACK, port, exclusive: true }, () => resolve(server));
  });
}

/** Throws PortInUseError when `port` cannot be bound on 127.0.0.1 now (a bind test, released at once). */
export async function assertLoopbackPortFree(port: number): Promise<void> {
  let server: Server;
  try {
    server = await listenOnFreeLoopbackPort(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new PortInUseError(port, { cause: error });
    throw error;
  }
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export function createTempDir(): Promise<string> {
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

export function zooCfg({ dataDir, clientPort, tickTimeMs, peers }: ZooCfgSettings): string {
  const lines = [
    `tickTime=${tickTimeMs}`,
    `dataDir=${dataDir}`,
    `clientPort=${clientPort}`,
    `clientPortAddress=${LOOPBACK}`,
    // Let tests ask for short sessions (fast expiry) as well as long ones.
    `minSessionTimeout=${2 * tickTimeMs}`,
    `maxSessionTimeout=${Math.max(MAX_SESSION_TIMEOUT_MS, 20 * tickTimeMs)}`,
    'admin.enableServer=false',
    '4lw.commands.whitelist=ruok,srvr,stat,mntr,conf,wchp,wchc,wchs',
    'maxClientCnxns=0',
  ];
  if (peers !== undefined) {
    lines.push(
      'initLimit=10',
      'syncLimit=5',
      'quorumListenOnAllIPs=false',
      'reconfigEnabled=false',
    );
    for (const peer of peers)
      lines.push(`server.${peer.id}=${LOOPBACK}:${peer.peerPort}:${peer.electionPort}`);
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------
// Readiness
// ---------------------------------------------------------------------------

export class ServerExitedEarlyError extends Error {
  constructor(howItExited: string) {
    super(`the server process exited during start-up (${howItExited})`);
    this.name = 'ServerExitedEarlyError';
  }
}

/**
 * Polls `srvr` until the server reports one of `modes`; throws if the process exits or the deadline
 * passes. With `dataDir`, the answering server must also be ours: its `conf` names that data dir (a
 * server someone else runs on the port answers too, while ours fails to bind and exits).
 */
export async function waitUntilServing(
  server: ServerProcess,
  port: number,
  modes: readonly string[],
  deadline: number,
  dataDir?: string,
): Promise<void> {
  let lastAnswer = 'no answer yet';
  for (;;) {
    if (server.hasExited) throw new ServerExitedEarlyError(server.howItExited ?? 'unknown');
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0)
      throw new Error(`the server did not serve in time (last srvr answer: ${lastAnswer})`);
    try {
      const answer = await fourLetterWord(LOOPBACK, port, 'srvr', Math.min(1000, remainingMs));
      const mode = /^Mode: (\w+)/m.exec(answer)?.[1];
      if (mode !== undefined && modes.includes(mode)) {
        if (dataDir === undefined) return;
        const conf = await fourLetterWord(
          LOOPBACK,
          port,
          'conf',
          Math.max(1, Math.min(1000, deadline - Date.now())),
        );
        if (/^dataDir=(.*)$/m.exec(conf)?.[1]?.startsWith(dataDir) === true && !server.hasExited)
          return;
        lastAnswer = `a server that is not ours answers on port ${port} (its conf: ${/^dataDir=.*$/m.exec(conf)?.[0] ?? 'no dataDir'})`;
      } else {
        lastAnswer = answer.trim().split('\n')[0] ?? '';
      }
    } catch (error) {
      lastAnswer = error instanceof Error ? error.message : String(error);
    }
    await delay(READINESS_POLL_MS);
  }
}

export async function startError(
  what: string,
  error: unknown,
  ...logFiles: string[]
): Promise<Error> {
  return startErrorWith(what, error, logFiles, true);
}

/** startError, saying whether the data dir is kept (else the log's tail is all that is left of it). */
export async function startErrorWith(
  what: string,
  error: unknown,
  logFiles: readonly string[],
  dataDirKept: boolean,
): Promise<Error> {
  if (
    error instanceof ZooKeeperNotFoundError ||
    error instanceof ZooKeeperStartError ||
    error instanceof PortInUseError
  )
    return error;
  const reason = error instanceof Error ? error.message : String(error);
  const tails = await Promise.all(
    logFiles.map(async (logFile) => `--- tail of ${logFile} ---\n${await logTail(logFile)}`),
  );
  const kept = dataDirKept
    ? 'The data dir is kept for inspection; see the log below.'
    : 'The data dir was removed; the tail of its log is below.';
  return new ZooKeeperStartError(
    `${what} failed to start: ${reason}. ${kept}\n${tails.join('\n')}`,
    {
      ...(dataDirKept ? { logFile: logFiles[0] } : {}),
      cause: error,
    },
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
