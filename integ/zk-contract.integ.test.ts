import type { ZkClient } from '../src/testing/index.js';
import { defineZkContract } from '../test/support/zk-contract.js';
import { expireSession } from '../src/testing/expire-session.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('zk-contract');

defineZkContract<ZkClient>('real ZooKeeper', {
  client: () => env.client(),
  root: () => env.root(),
  async expire(client) {
    await expireSession(client);
    await waitFor('the client to connect on a new session', () => client.state === 'connected', {
      intervalMs: 5,
    });
  },
});
