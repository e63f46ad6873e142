/**
 * Test-only switches that put known defects back, so the seeded simulation's self-test can show
 * that it catches each of them (test/simulation). Never set outside that self-test: every switch
 * breaks a guarantee of docs/guide/plans-and-workers.md on purpose.
 */
export const reintroducedDefects = {
  /** The published Clojure deletion order: `owner` before the task's other children (a half-deleted task can be taken and run again). */
  ownerFirstDelete: false,
  /** performTask runs a claimed task without looking for its `failed` child (defect 1: a task failed for good runs again). */
  runFailedTask: false,
  /** A claim that throws in the scan keeps its reservation (defect 4: the task is never taken again in that process). */
  keepReservationOnClaimError: false,
  /** performTask trusts the process's watch on the plan and does not read its `control` node after the claim (a paused plan starts tasks). */
  skipControlCheckAfterClaim: false,
  /** The plan tracker keeps vouching that a plan is not paused after its plan watch fired, until its reload answers (a pause is missed by a claim's check in that window). */
  trustStaleControlView: false,
  /** A task with a concurrency key starts even when every slot of the key is held (the limit is not enforced). */
  startWhenLimitFull: false,
};

/** The same for schedules (test/schedule/schedule-simulation's self-test). */
export const reintroducedScheduleDefects = {
  /** A scheduler that takes over a tick fills the half-built plan of a dead firer without deleting its tasks first (a plan with extra tasks). */
  keepHalfBuiltTickPlan: false,
  /** A scheduler fires a tick without its lock (two firers build one plan at once). */
  fireTickWithoutLock: false,
  /** Overlap looks only at the newest fired run, so a finished manual run hides an unfinished cron run. */
  overlapNewestRunOnly: false,
};

/** The same for jobs (test/jobs/job-simulation's self-test). */
export const reintroducedJobDefects = {
  /** A worker takes an item as soon as it is assigned, without waiting for the previous holder's lease to be released or run out. */
  takeBeforeLeaseEnds: false,
  /** A worker that cannot renew keeps working on its items past its stop deadline (a detached worker does not stop on its own). */
  workPastDeadline: false,
};
