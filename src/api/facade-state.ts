/**
 * What every sub-API of a ZkPlan (`zkPlan.plans`, `zkPlan.control`, …) shares with the facade: each
 * call first checks that the ZkPlan is still open, and a call that makes tasks runnable tells this
 * process's workers to look for work at once instead of at their next poll.
 */
export interface FacadeState {
  /** Throws IllegalStateError once the ZkPlan is closing or closed. */
  assertOpen(): void;
  /** Tells this process's workers to look for work now. */
  wakeWorkers(): void;
}
