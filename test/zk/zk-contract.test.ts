import { beforeEach } from 'vitest';
import { MemoryZooKeeper, type MemoryZkClient } from '../../src/testing/index.js';
import { defineZkContract } from '../support/zk-contract.js';

let server = new MemoryZooKeeper();
let rootIndex = 0;
beforeEach(() => {
  server = new MemoryZooKeeper(); // a fresh server for every case
});

defineZkContract<MemoryZkClient>('MemoryZooKeeper', {
  client: () => Promise.resolve(server.connect()),
  root: () => `/t-${++rootIndex}`,
  async expire(client) {
    const started = new Promise<void>((resolve) => client.once('session:started', () => resolve()));
    client.expireSession();
    await started;
  },
});
