import { beforeEach } from 'vitest';
import { MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';
import {
  defineZkFaultContract,
  outcomeOf,
  type FaultScenario,
} from '../support/zk-contract-faults.js';

let server = new MemoryZooKeeper();
let rootIndex = 0;
beforeEach(() => {
  server = new MemoryZooKeeper(); // a fresh server for every case
});

/** Lets the operations in flight land and their replies and events arrive. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function cutOff<T>(
  client: MemoryZkClient,
  scenario: FaultScenario<T>,
): Promise<Awaited<ReturnType<typeof outcomeOf<T>>>> {
  const outcome = outcomeOf(scenario.write());
  await flush();
  await scenario.meanwhile?.();
  client.reconnect();
  return outcome;
}

defineZkFaultContract<MemoryZkClient>('MemoryZooKeeper', {
  faulty: () => Promise.resolve(server.connect()),
  observer: () => Promise.resolve(server.connect()),
  root: () => `/f-${++rootIndex}`,
  replyLost(client, scenario) {
    client.loseNextReply(() => true, {
      expireSession: scenario.expireSession === true,
      reconnect: false,
    });
    return cutOff(client, scenario);
  },
  sendLost(client, scenario) {
    client.failNextSend(() => true, {
      expireSession: scenario.expireSession === true,
      reconnect: false,
    });
    return cutOff(client, scenario);
  },
  async dropConnection(client) {
    client.disconnect();
    client.reconnect();
    await flush();
  },
  serverWatches: (path) =>
    Promise.resolve(
      server
        .watches()
        .flatMap((watch) => (watch.path === path ? [`${watch.sessionId} ${watch.path}`] : [])),
    ),
});
