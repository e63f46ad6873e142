import type { InjectionToken } from 'tsyringe';
import type { ZkClient } from '../zk/zk-client.js';
import type { FunctionRegistry } from '../exec/function-registry.js';
import type { ZkPlanSettings } from '../plan/zk-plan-settings.js';
import type { ZkPlan } from '../zk-plan.js';
import type { WorkerPool } from '../worker/worker-pool.js';
import type { ZkPlanModuleConfig } from './module-config.js';

/**
 * The module's configuration, as given to `zkPlanModule`.
 *
 * @category Configuration
 */
export const ZK_PLAN_MODULE_CONFIG: InjectionToken<ZkPlanModuleConfig> =
  Symbol.for('zk-plan.module-config');
/**
 * The connected ZooKeeper client (registered by `startup`).
 *
 * @category Configuration
 */
export const ZK_CLIENT: InjectionToken<ZkClient> = Symbol.for('zk-plan.zk-client');
/**
 * The functions workers of this process can run.
 *
 * @category Configuration
 */
export const FUNCTION_REGISTRY: InjectionToken<FunctionRegistry> = Symbol.for(
  'zk-plan.function-registry',
);
/**
 * Settings of the ZkPlan instance, which `zkPlanModule` registers from the module's configuration;
 * nothing outside the module resolves them.
 *
 * @internal
 */
export const ZK_PLAN_SETTINGS: InjectionToken<ZkPlanSettings> = Symbol.for('zk-plan.settings');
/**
 * The ZkPlan API (registered by `zkPlanModule`, usable after `startup`).
 *
 * @category Configuration
 */
export const ZK_PLAN: InjectionToken<ZkPlan> = Symbol.for('zk-plan.zk-plan');
/**
 * The worker pool started by `startup` when the module config has `zkPlan`.
 *
 * @category Configuration
 */
export const WORKER_POOL: InjectionToken<WorkerPool> = Symbol.for('zk-plan.worker-pool');
