/**
 * `zk-plan/testing`: what users' own tests and development set-ups need. Local ZooKeeper servers
 * and ensembles on free loopback ports; the in-memory ZooKeeper double and its schedulers for unit
 * tests and seeded simulations; the raw client, the znode layout and the value codec to look at
 * what zk-plan wrote; fault helpers (expire a session the way a network partition would); and the
 * fault harness, which runs a user's own plan under faults (killed and frozen workers, expired
 * sessions, a restarted server, lost replies, slow links) and reports whether it held up
 * (`runFaultHarness`, `expectFaultTolerant`; docs/guide/fault-testing.md).
 *
 * @module zk-plan/testing
 */
export {
  startZooKeeper,
  type StartZooKeeperOptions,
  type ZooKeeperServer,
} from '../local-zookeeper/zookeeper-server.js';
export {
  startEnsemble,
  type ZooKeeperEnsemble,
  type EnsembleMember,
  type StartEnsembleOptions,
} from '../local-zookeeper/zookeeper-ensemble.js';
export {
  findZooKeeperDistribution,
  type ZooKeeperDistribution,
} from '../local-zookeeper/distribution.js';
export {
  PortInUseError,
  ZooKeeperNotFoundError,
  ZooKeeperStartError,
} from '../errors/server-errors.js';
export { ZkClient } from '../zk/zk-client.js';
export type {
  ZkClientOptions,
  ZkSession,
  SessionState,
  CreateMode,
  WatchEvent,
} from '../zk/zk-client-types.js';
export * as layout from '../zk/layout.js';
export { encodeValue, decodeValue, MAX_VALUE_BYTES } from '../serialization/codec.js';
export { expireSession } from './expire-session.js';
export { MemoryZooKeeper } from './memory-zookeeper.js';
export type { WatchDelivery } from './memory-protocol.js';
export type {
  AppliedOperation,
  MemoryZooKeeperOptions,
  SessionInfo,
  WatchInfo,
} from './memory-zookeeper.js';
export type { MemoryReply, MemoryRequest, MemoryResults } from './memory-protocol.js';
export type { WatchKind } from './memory-view.js';
export type { MemoryZkClient, OperationFilter, ConnectionDropOptions } from './memory-zk-client.js';
export {
  ManualScheduler,
  immediateScheduler,
  type OperationScheduler,
  type ScheduledOperation,
} from './operation-scheduler.js';
export { PERSISTENT_OWNER } from './memory-tree.js';

// ---------------------------------------------------------------------------------------------
// Fault harness: a user's plan run without faults, then under faults, by worker processes that
// record every execution; the report, its verdict and its table.
// ---------------------------------------------------------------------------------------------
export { runFaultHarness } from './fault-harness/run-fault-harness.js';
export type {
  FaultHarnessOptions,
  FaultSelection,
  FaultRate,
  SlowLinkFault,
  PlanBuilder,
} from './fault-harness/harness-options.js';
export type {
  FaultReport,
  FaultKind,
  InjectedFault,
  TaskReport,
  NonIdempotentFunction,
  NonIdempotenceReason,
} from './fault-harness/fault-report.js';
export {
  expectFaultTolerant,
  faultToleranceProblems,
  type FaultToleranceExpectations,
} from './fault-harness/expect-fault-tolerant.js';
export { formatFaultReport } from './fault-harness/format-report.js';
export { recordEffect } from './fault-harness/effects.js';
export {
  FaultHarnessError,
  NotFaultTolerantError,
  type FaultHarnessErrorCode,
} from '../errors/fault-harness-errors.js';
