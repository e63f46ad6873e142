import type { DependencyContainer } from 'tsyringe';

/** What a ZkPlan needs besides its client and registry. */
export interface ZkPlanSettings {
  /** Handed to task functions as `ctx.container`. */
  readonly container: DependencyContainer;
}
