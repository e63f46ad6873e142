import type { ConnectOptions, WorkerPoolOptions } from '../config/options.js';
import type { FunctionRegistry } from '../exec/function-registry.js';

/**
 * Configuration of the DI module: the Clojure original's `zookeeper-config` and `zk-plan-config`.
 *
 * @category Configuration
 */
export interface ZkPlanModuleConfig {
  /** Coordinates of the ZooKeeper service, and the `auth` and `acl` of its sessions and nodes (as in `ZkPlan.connect`). */
  readonly zookeeper: Pick<
    ConnectOptions,
    | 'connect'
    | 'sessionTimeoutMs'
    | 'connectTimeoutMs'
    | 'auth'
    | 'acl'
    | 'maxResultBytes'
    | 'fullScanIntervalMs'
  >;
  /** When present, `startup` spawns `workers` worker loops on plans under `parent`. */
  readonly zkPlan?: { readonly workers: number; readonly parent: string } & Omit<
    WorkerPoolOptions,
    'count'
  >;
  /** Functions the workers can run. @defaultValue the registry already registered under FUNCTION_REGISTRY, else a new empty one */
  readonly functions?: FunctionRegistry;
}
