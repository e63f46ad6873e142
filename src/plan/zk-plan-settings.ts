import type { DependencyContainer } from 'tsyringe';

/**
 * What a ZkPlan needs besides its client and registry.
 *
 * @category Plans and tasks
 */
export interface ZkPlanSettings {
  /** Handed to task functions as `ctx.container`. */
  readonly container: DependencyContainer;
  /** `ConnectOptions.maxResultBytes`: the largest stored value its reads accept, and its workers' default. @defaultValue DEFAULTS.maxResultBytes */
  readonly maxResultBytes?: number;
  /** `ConnectOptions.fullScanIntervalMs`: how often this process's workers scan followed plans in full. @defaultValue DEFAULTS.fullScanIntervalMs */
  readonly fullScanIntervalMs?: number;
  /** `ConnectOptions.juteMaxBufferBytes`: the largest child listing of a plan addTask lets it reach. @defaultValue DEFAULTS.juteMaxBufferBytes */
  readonly juteMaxBufferBytes?: number;
}
