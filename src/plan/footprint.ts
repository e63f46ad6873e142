import type { TaskStore } from '../store/task-store.js';
import type { Dispatcher } from '../worker/dispatcher.js';
import type { WorkerPool } from '../worker/worker-pool.js';
import type { Zk } from '../zk/zk.js';

/**
 * What a ZkPlan's workers keep in memory and attach to shared emitters, for leak checks: tracked
 * plans, candidates, owner watches, retry timers, plan stops, held and recently done tasks,
 * remembered plan settings, and listeners on the client and on the pools' signals.
 */
export type ZkPlanFootprint = ReturnType<Dispatcher['footprint']> & {
  readonly rememberedSettings: number;
  readonly clientListeners: number;
  readonly poolSignalListeners: number;
};

export function footprintOf(
  dispatcher: Dispatcher,
  store: TaskStore,
  zk: Zk,
  pools: Iterable<WorkerPool>,
): ZkPlanFootprint {
  return {
    ...dispatcher.footprint(),
    rememberedSettings: store.reads.rememberedPlans,
    clientListeners: zk.eventNames().reduce((sum, name) => sum + zk.listenerCount(name), 0),
    poolSignalListeners: [...pools].reduce((sum, pool) => sum + pool.signalListenerCount(), 0),
  };
}
