/** Events a ZkPlan emits about its workers; tests and metrics listen to these instead of sleeping. */
export interface ZkPlanEvents {
  /** A worker took a task (created its owner node). */
  'task:claimed': [{ readonly task: string; readonly plan: string; readonly workerId: string }];
  /** A task's result is stored and handed to its dependents, and the task node is deleted. `reusedResult`: a previous owner had stored it. */
  'task:completed': [{ readonly task: string; readonly plan: string; readonly workerId: string; readonly durationMs: number; readonly reusedResult: boolean }];
  /**
   * A task's run failed and its owner node was removed. `charged`: the failure counts against the
   * task's attempts (infrastructure faults and aborts by the worker do not); `final`: the task has
   * now failed for good; otherwise it may be tried again from `nextTryAt`.
   */
  'task:failed': [
    {
      readonly task: string;
      readonly plan: string;
      readonly workerId: string;
      readonly error: Error;
      readonly charged: boolean;
      readonly final: boolean;
      readonly attempts?: number;
      readonly nextTryAt?: Date;
    },
  ];
  /** A worker found nothing to do and sleeps `sleepMs` (the spec's back-off, round `round`). */
  'worker:idle': [{ readonly workerId: string; readonly round: number; readonly sleepMs: number }];
  /** A scheduler of this ZkPlan brought a tick to its final state: `fired` (its plan is ready), `skipped` or `failed` (`reason`). */
  'schedule:tick': [{ readonly schedules: string; readonly schedule: string; readonly tick: string; readonly state: string; readonly plan: string }];
  /** A scheduler pass hit a problem (ZooKeeper unreachable, a malformed node…) and carries on. */
  'schedule:error': [{ readonly schedules: string; readonly error: Error }];
  /** A worker hit a problem outside any task (ZooKeeper unreachable, a malformed node…) and carries on. */
  'worker:error': [{ readonly workerId: string; readonly error: Error }];
}
