import type { ZkClient } from '../src/testing/index.js';
import { defineZkContract } from '../test/support/zk-contract.js';
import { expireSession } from '../src/testing/expire-session.js';
import { until, useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('zk-contract');

defineZkContract<ZkClient>('real ZooKeeper', {
  client: () => env.client(),
  root: () => env.root(),
  async expire(client) {
    await expireSession(client);
    await until(() => client.state === 'connected');
  },
});
