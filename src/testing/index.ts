/** The in-memory ZooKeeper double and its schedulers, for unit tests and seeded simulations. */
export { MemoryZooKeeper } from './memory-zookeeper.js';
export type {
  AppliedOperation,
  MemoryReply,
  MemoryRequest,
  MemoryResults,
  MemoryZooKeeperOptions,
  SessionInfo,
  WatchInfo,
  WatchKind,
} from './memory-zookeeper.js';
export { MemoryZkClient, type OperationFilter } from './memory-zk-client.js';
export { ManualScheduler, immediateScheduler, type OperationScheduler, type ScheduledOperation } from './scheduler.js';
export { PERSISTENT_OWNER } from './memory-tree.js';
