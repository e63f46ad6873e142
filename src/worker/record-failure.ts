import {
  resolveRetryPolicy,
  type PlanSettings,
  type ResolvedRetryPolicy,
} from '../config/plan-options.js';
import type { TaskDefinition } from '../exec/task-spec.js';
import {
  decideAfterFailure,
  describeFailure,
  type AttemptRecord,
  type TaskFailure,
} from '../store/failure-policy.js';
import { failedTryOf, withFailedTry } from '../store/task-tries.js';
import type { Claim, TaskStore } from '../store/task-store.js';
import { handOnFailure, inputFailureOf } from '../trigger/failure-hand-on.js';

/** What became of a task after a failed try charged to it. */
export interface FailureOutcome {
  readonly failure: TaskFailure;
  /** True when the task failed for good. */
  readonly final: boolean;
  /** When the next try may start (when not final). */
  readonly notBefore: Date;
  /** How many tries the task's retry policy allows in all. */
  readonly maxAttempts: number;
}

/** The retry policy of a task: its own overrides over its plan's. */
export async function retryPolicyFor(
  store: TaskStore,
  plan: string,
  definition: TaskDefinition | undefined,
): Promise<ResolvedRetryPolicy> {
  return retryPolicyOf(await store.reads.readPlanSettings(plan), definition);
}

/** The retry policy of a task out of its plan's settings, read already. Throws InvalidArgumentError when the task's own is malformed. */
export function retryPolicyOf(
  settings: PlanSettings,
  definition: TaskDefinition | undefined,
): ResolvedRetryPolicy {
  return definition?.retry ? resolveRetryPolicy(definition.retry, settings.retry) : settings.retry;
}

/**
 * Charges a failed try to the task, in ZooKeeper and under the claim: counts it in `attempts`
 * (with the time the next try may start), and when none is left or the error is permanent, hands
 * the failure on to the dependents whose trigger rule takes failures and marks the task and its
 * plan failed. Written before the claim is released, so a crash in between leaves a count that the
 * next owner honours: a final try's record (its failure not retryable) makes the next owner finish
 * the failure (failTaskForGood) instead of running the task again.
 */
export async function recordChargedFailure(
  store: TaskStore,
  claim: Claim,
  error: unknown,
  permanent: boolean,
): Promise<FailureOutcome> {
  let definition: TaskDefinition | undefined;
  try {
    definition = await store.reads.readDefinition(claim.task);
  } catch {
    definition = undefined; // a malformed definition: the plan's policy applies
  }
  const policy = await retryPolicyFor(store, claim.plan, definition);
  let previous: AttemptRecord | undefined;
  try {
    previous = await store.reads.readAttempts(claim.task);
  } catch {
    previous = undefined; // an unreadable record is replaced
  }
  const now = Date.now();
  const decision = decideAfterFailure(previous?.failures ?? 0, permanent, policy, now);
  // A try after which no other comes is recorded as not retryable, whatever the error said of itself.
  const failure = describeFailure(
    error,
    decision.failTask,
    decision.failures,
    claim.workerId,
    new Date(now),
  );
  const notBefore = new Date(decision.notBefore);
  // The list of tries goes in the same write as the count: no write of its own (docs/design/history.md).
  await store.writeAttempts(claim, {
    failures: decision.failures,
    notBefore,
    lastFailure: failure,
    tries: withFailedTry(previous?.tries ?? [], failedTryOf(failure, claim.progress.tryStartedAt)),
  });
  if (decision.failTask) await failTaskForGood(store, claim, failure, definition?.key);
  else await store.unmarkRunnable(claim.task, { fence: claim.session }); // back in the index once its delay is over
  return { failure, final: decision.failTask, notBefore, maxAttempts: policy.maxAttempts };
}

/**
 * Fails the claimed task for good, its final try recorded already: its failure goes to the
 * dependents whose trigger rule takes failures (src/trigger/failure-hand-on.ts), then the task and
 * its plan are marked failed. Until the mark, the task can be claimed again, and that claim does
 * the same from the start.
 */
export async function failTaskForGood(
  store: TaskStore,
  claim: Claim,
  failure: TaskFailure,
  key: string | undefined,
): Promise<void> {
  await handOnFailure(store, claim, inputFailureOf(claim.task, key, failure));
  await store.markFailed(claim, failure);
}
