import type { DependencyContainer } from 'tsyringe';
import { instancePerContainerCachingFactory } from './container.js';
import { resolveConnectOptions } from '../config/options.js';
import { IllegalStateError, InvalidArgumentError } from '../errors/usage-errors.js';
import { FunctionRegistry } from '../exec/function-registry.js';
import { ZkPlan } from '../zk-plan.js';
import { assertValidPath } from '../zk/layout.js';
import { ZkClient } from '../zk/zk-client.js';
import type { ZkPlanModuleConfig } from './module-config.js';
import {
  FUNCTION_REGISTRY,
  WORKER_POOL,
  ZK_CLIENT,
  ZK_PLAN,
  ZK_PLAN_MODULE_CONFIG,
  ZK_PLAN_SETTINGS,
} from './tokens.js';

/**
 * Registers zk-plan's providers in `container` under exported tokens: the configuration, the
 * function registry and the ZkPlan (available after `startup`). The composition root: no other
 * file of zk-plan resolves from a container.
 *
 * @category Configuration
 */
export function zkPlanModule(container: DependencyContainer, config: ZkPlanModuleConfig): void {
  if (typeof container?.register !== 'function')
    throw new InvalidArgumentError('container', 'expected a tsyringe DependencyContainer');
  if (typeof config !== 'object' || config === null)
    throw new InvalidArgumentError(
      'config',
      'expected { zookeeper: { connect }, zkPlan?: { workers, parent } }',
    );
  resolveConnectOptions(config.zookeeper ?? ({} as { connect: string }));
  if (config.zkPlan !== undefined) {
    assertValidPath('zkPlan.parent', config.zkPlan.parent);
    if (!Number.isInteger(config.zkPlan.workers) || config.zkPlan.workers < 0) {
      throw new InvalidArgumentError(
        'zkPlan.workers',
        `expected a whole number ≥ 0, got ${String(config.zkPlan.workers)}`,
      );
    }
  }
  container.register(ZK_PLAN_MODULE_CONFIG, { useValue: config });
  if (config.functions !== undefined)
    container.register(FUNCTION_REGISTRY, { useValue: config.functions });
  else if (!container.isRegistered(FUNCTION_REGISTRY))
    container.register(FUNCTION_REGISTRY, { useValue: new FunctionRegistry() });
  const { maxResultBytes, fullScanIntervalMs } = config.zookeeper;
  container.register(ZK_PLAN_SETTINGS, {
    useValue: {
      container,
      ...(maxResultBytes !== undefined ? { maxResultBytes } : {}),
      ...(fullScanIntervalMs !== undefined ? { fullScanIntervalMs } : {}),
    },
  });
  registerZkPlan(container);
}

/**
 * The ZkPlan of a container, built by a factory from its registered parts (no decorator metadata
 * needed) and cached per container. Registered anew at each startup, so a restart after shutdown
 * gets a ZkPlan on the new session.
 */
function registerZkPlan(container: DependencyContainer): void {
  container.register(ZK_PLAN, {
    useFactory: instancePerContainerCachingFactory(
      (scope) =>
        new ZkPlan(
          scope.resolve(ZK_CLIENT),
          scope.resolve(FUNCTION_REGISTRY),
          scope.resolve(ZK_PLAN_SETTINGS),
        ),
    ),
  });
}

/** Containers whose module is started, so startup and shutdown know where they stand. */
const started = new WeakSet<DependencyContainer>();

/**
 * Connects to ZooKeeper, creates the ZkPlan and, when configured, starts the worker loops. Returns the ZkPlan.
 *
 * @category Configuration
 */
export async function startup(container: DependencyContainer): Promise<ZkPlan> {
  const config = moduleConfig(container);
  if (started.has(container))
    throw new IllegalStateError(
      'zk-plan module already started in this container: call shutdown(container) first',
    );
  started.add(container);
  let zk: ZkClient;
  try {
    zk = await ZkClient.connect(resolveConnectOptions(config.zookeeper));
  } catch (error) {
    started.delete(container);
    throw error;
  }
  container.register(ZK_CLIENT, { useValue: zk });
  registerZkPlan(container);
  const zkPlan = container.resolve(ZK_PLAN);
  if (config.zkPlan !== undefined && config.zkPlan.workers > 0) {
    const { workers, parent, ...workerOptions } = config.zkPlan;
    container.register(WORKER_POOL, {
      useValue: zkPlan.startWorkers(parent, { ...workerOptions, count: workers }),
    });
  }
  return zkPlan;
}

/**
 * Stops the worker loops (running tasks finish, or are released after the drain timeout) and closes the session.
 *
 * @category Configuration
 */
export async function shutdown(container: DependencyContainer): Promise<void> {
  moduleConfig(container);
  if (!started.has(container)) return;
  if (container.isRegistered(WORKER_POOL)) await container.resolve(WORKER_POOL).stop();
  await container.resolve(ZK_PLAN).close();
  started.delete(container);
}

function moduleConfig(container: DependencyContainer): ZkPlanModuleConfig {
  if (!container.isRegistered(ZK_PLAN_MODULE_CONFIG)) {
    throw new IllegalStateError(
      'zk-plan module is not registered in this container: call zkPlanModule(container, config) first',
    );
  }
  return container.resolve(ZK_PLAN_MODULE_CONFIG);
}
