import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ZooKeeper from 'zookeeper';
import { fourLetterWord } from '../src/local-zookeeper/four-letter-word.js';
import { startZooKeeper, type ZooKeeperServer } from '../src/local-zookeeper/zookeeper-server.js';
import {
  startEnsemble,
  type EnsembleMember,
  type ZooKeeperEnsemble,
} from '../src/local-zookeeper/zookeeper-ensemble.js';
import { waitFor } from './support/zk-test-env.js';

// Generous for a 2-core machine running three JVMs.
const TEST_TIMEOUT_MS = 60_000;
const SESSION_TIMEOUT_MS = 10_000;
const { constants } = ZooKeeper;

async function modeOf(port: number): Promise<string | undefined> {
  const answer = await fourLetterWord('127.0.0.1', port, 'srvr', 2000);
  return /^Mode: (\w+)/m.exec(answer)?.[1];
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// A thin promise layer over the callback client, with retries across reconnects
// ---------------------------------------------------------------------------

class ZkCallError extends Error {
  constructor(
    readonly rc: number,
    message: string,
  ) {
    super(message);
  }
}

function connectClient(connect: string): Promise<ZooKeeper> {
  const client = new ZooKeeper({
    connect,
    timeout: SESSION_TIMEOUT_MS,
    debug_level: constants.ZOO_LOG_LEVEL_ERROR,
    host_order_deterministic: false,
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new Error(`could not connect to ${connect}`));
    }, 20_000);
    client.once('connect', () => {
      clearTimeout(timer);
      resolve(client);
    });
    client.init({});
  });
}

function createNode(client: ZooKeeper, path: string, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    client.a_create(path, data, constants.ZOO_PERSISTENT, (rc, error, createdPath) => {
      if (rc === constants.ZOK) resolve(createdPath);
      else reject(new ZkCallError(rc, `create ${path}: ${String(error)} (rc ${rc})`));
    });
  });
}

function readNode(client: ZooKeeper, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    client.a_get(path, false, (rc, error, _stat, data) => {
      if (rc === constants.ZOK) resolve(data.toString());
      else reject(new ZkCallError(rc, `get ${path}: ${String(error)} (rc ${rc})`));
    });
  });
}

/** Retries while the client is between servers (connection loss), until the session timeout. */
async function untilReconnected<T>(operation: () => Promise<T>): Promise<T> {
  const transient = new Set([constants.ZCONNECTIONLOSS, constants.ZOPERATIONTIMEOUT]);
  const outcome = await waitFor(
    'the client to reach a server again (an operation without connection loss)',
    async () => {
      try {
        return { value: await operation() };
      } catch (error) {
        if (!(error instanceof ZkCallError) || !transient.has(error.rc)) throw error;
        return undefined;
      }
    },
    { timeoutMs: SESSION_TIMEOUT_MS, intervalMs: 200 },
  );
  return outcome.value;
}

/** A create retried after a connection loss may have succeeded the first time. */
async function createNodeOnce(client: ZooKeeper, path: string, data: string): Promise<void> {
  let attempts = 0;
  await untilReconnected(async () => {
    attempts++;
    try {
      await createNode(client, path, data);
    } catch (error) {
      const alreadyCreatedByUs =
        error instanceof ZkCallError && error.rc === constants.ZNODEEXISTS && attempts > 1;
      if (!alreadyCreatedByUs) throw error;
    }
  });
}

// ---------------------------------------------------------------------------
// Standalone
// ---------------------------------------------------------------------------

describe('startZooKeeper', () => {
  const started: ZooKeeperServer[] = [];

  afterAll(async () => {
    await Promise.all(started.map((server) => server.stop()));
  }, TEST_TIMEOUT_MS);

  it(
    'serves standalone on 127.0.0.1, and stop() kills the process and removes the data dir',
    async () => {
      const server = await startZooKeeper();
      started.push(server);

      expect(server.connectString).toBe(`127.0.0.1:${server.port}`);
      expect(await modeOf(server.port)).toBe('standalone');
      expect(existsSync(server.logFile)).toBe(true);
      expect(isRunning(server.pid)).toBe(true);

      await server.stop();
      await server.stop(); // idempotent

      expect(() => process.kill(server.pid, 0)).toThrow();
      expect(existsSync(server.dataDir)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'gives servers started at the same time different ports',
    async () => {
      const servers = await Promise.all([startZooKeeper(), startZooKeeper()]);
      started.push(...servers);
      const [first, second] = servers;

      expect(first!.port).not.toBe(second!.port);
      expect(await modeOf(first!.port)).toBe('standalone');
      expect(await modeOf(second!.port)).toBe('standalone');

      await Promise.all(servers.map((server) => server.stop()));
      for (const server of servers) expect(isRunning(server.pid)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------
// Ensemble
// ---------------------------------------------------------------------------

describe('startEnsemble', () => {
  let ensemble: ZooKeeperEnsemble | undefined;
  const clients: ZooKeeper[] = [];

  beforeAll(async () => {
    ensemble = await startEnsemble(3);
  }, TEST_TIMEOUT_MS);

  afterAll(async () => {
    for (const client of clients) client.close();
    const pids =
      ensemble?.members.flatMap((member) => (member.pid === undefined ? [] : [member.pid])) ?? [];
    await ensemble?.stop();
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
  }, TEST_TIMEOUT_MS);

  async function leaderOf(members: readonly EnsembleMember[]): Promise<EnsembleMember> {
    const modes = await Promise.all(members.map((member) => modeOf(member.clientPort)));
    const leaders = members.filter((_, index) => modes[index] === 'leader');
    expect(leaders).toHaveLength(1);
    return leaders[0]!;
  }

  it(
    'has every member serving as leader or follower',
    async () => {
      const members = ensemble!.members;
      expect(members).toHaveLength(3);
      expect(ensemble!.connectString.split(',')).toEqual(
        members.map((member) => `127.0.0.1:${member.clientPort}`),
      );
      for (const member of members) {
        expect(member.running).toBe(true);
        expect(['leader', 'follower']).toContain(await modeOf(member.clientPort));
      }
      await leaderOf(members);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'keeps a client session and its data when the leader stops, and the restarted member rejoins as follower',
    async () => {
      const members = ensemble!.members;
      const client = await connectClient(ensemble!.connectString);
      clients.push(client);
      const sessionId = client.client_id;
      await createNode(client, '/before-failover', 'first');

      const oldLeader = await leaderOf(members);
      await oldLeader.stop();
      expect(oldLeader.running).toBe(false);
      expect(oldLeader.pid).toBeUndefined();
      expect(existsSync(oldLeader.dataDir)).toBe(true);

      // The two survivors elect a new leader; the client reconnects within its session timeout.
      expect(await untilReconnected(() => readNode(client, '/before-failover'))).toBe('first');
      await createNodeOnce(client, '/after-failover', 'second');
      expect(await untilReconnected(() => readNode(client, '/after-failover'))).toBe('second');
      expect(client.client_id).toBe(sessionId);
      await leaderOf(members.filter((member) => member !== oldLeader));

      await oldLeader.start();
      expect(oldLeader.running).toBe(true);
      expect(await modeOf(oldLeader.clientPort)).toBe('follower');

      // It caught up with what was written while it was down.
      const directClient = await connectClient(`127.0.0.1:${oldLeader.clientPort}`);
      clients.push(directClient);
      expect(await untilReconnected(() => readNode(directClient, '/after-failover'))).toBe(
        'second',
      );
    },
    TEST_TIMEOUT_MS,
  );
});
