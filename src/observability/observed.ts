import type { ZkPlanEvents } from '../worker/worker-events.js';
import type { SessionState, ZkClientEvents, ZkOperationCounts } from '../zk/zk-client-types.js';
import type { ZkStat } from '../zk/native-client.js';

/** Per-operation latency hook of a ZkClient: the op's name, its round trip in ms, and whether ZooKeeper answered OK. */
export type ZkOperationListener = (op: string, ms: number, ok: boolean) => void;

/**
 * What metrics and logs need of a ZkClient: a `ZkClient` is one; tests pass a plain EventEmitter
 * with these members.
 */
export interface ObservedZkClient {
  readonly state: SessionState;
  readonly counts: Readonly<ZkOperationCounts>;
  onOperation?: ZkOperationListener | undefined;
  /** Listens to one of the client's events. */
  on<K extends keyof ZkClientEvents>(
    event: K,
    listener: (...args: ZkClientEvents[K]) => void,
  ): unknown;
  /** Stops listening. */
  off<K extends keyof ZkClientEvents>(
    event: K,
    listener: (...args: ZkClientEvents[K]) => void,
  ): unknown;
  /** Used to time how long a claimed task waited (see `zk_plan_task_wait_seconds`). */
  exists?(path: string): Promise<ZkStat | undefined>;
}

/** What metrics and logs need of a ZkPlan: a `ZkPlan` is one. */
export interface ObservedZkPlan {
  readonly zk: ObservedZkClient;
  /** The functions its workers register: metrics label series only by these (and `inline`, `shell`). Without it, by none. */
  readonly functions?: {
    /** Whether a function of this name is registered. */
    has(name: string): boolean;
  };
  /** Listens to one of the ZkPlan's events. */
  on<K extends keyof ZkPlanEvents>(event: K, listener: (...args: ZkPlanEvents[K]) => void): unknown;
  /** Stops listening. */
  off<K extends keyof ZkPlanEvents>(
    event: K,
    listener: (...args: ZkPlanEvents[K]) => void,
  ): unknown;
}
