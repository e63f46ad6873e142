/**
 * ZkPlan over the in-memory ZooKeeper (src/testing): a "process" is one client (one session) and
 * one ZkPlan on it, as `ZkPlan.connect` makes for real, with no server to start.
 */
import { rootContainer as container } from '../../src/di/container.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { ZkPlan } from '../../src/zk-plan.js';
import type { ZkPlanSettings } from '../../src/plan/zk-plan-settings.js';
import type { MemoryZkClient, MemoryZooKeeper } from '../../src/testing/index.js';

/** Idle back-off short enough that an in-memory plan runs in milliseconds. */
export const FAST_BACKOFF = { initial: 1, increase: 1.5, max: 5 } as const;

/** A process: its client and the ZkPlan on its session. */
export interface MemoryProcess {
  readonly name: string;
  readonly zk: MemoryZkClient;
  readonly zkPlan: ZkPlan<MemoryZkClient>;
}

/** A new process on `server` (its own session), running `functions`, with `settings` (as ZkPlan.connect's options give them). */
export function memoryProcess(
  server: MemoryZooKeeper,
  name: string,
  functions: FunctionRegistry = new FunctionRegistry(),
  settings: Omit<ZkPlanSettings, 'container'> = {},
): MemoryProcess {
  const zk = server.connect({ name });
  return {
    name,
    zk,
    zkPlan: new ZkPlan(zk, functions, { container: container.createChildContainer(), ...settings }),
  };
}

/** Resolves after `ms` (a real timer: the engine runs on real timers). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
