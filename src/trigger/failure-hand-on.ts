/**
 * Hands a task's failure for good on to the tasks whose trigger rule takes failures (every rule
 * but `allSucceeded`). A task under the default rule that waits for the failed one can never run
 * (it is blocked, and runs only if the failure is retried), so the walk goes on through it to the
 * tasks that wait for it: a clean-up step after a pipeline learns that an input will never come,
 * wherever the failure happened upstream.
 *
 * The failing worker walks after it recorded the final try (`attempts` with a failure that is not
 * retryable) and before it marks the task `failed`: until then the task can be claimed again, and
 * the next claim finds the final try and walks again. Every hand-on is `giveInput`, which a repeat
 * finds done, followed by the removal of the link it went through. A task added later that takes failures and names the failed task as an input is
 * handed the failure by the addTask that links it (PlanWriter).
 */
import type { TaskFailure } from '../store/failure-policy.js';
import type { Claim, TaskStore } from '../store/task-store.js';
import { encodeValue } from '../serialization/codec.js';
import {
  DEP_PREFIX,
  PROV_PREFIX,
  childPath,
  hasSequentialName,
  isContinuedSerial,
  nameOf,
  parentOf,
  serialOf,
} from '../zk/layout.js';
import { MalformedNodeError } from '../errors/task-errors.js';
import type { TaskDefinition } from '../exec/task-spec.js';
import { failedValue, type InputFailure } from './task-outcome.js';
import { takesOutcomes } from './trigger-rule.js';

/** The most tasks one walk looks at: a walk through a larger blocked part of a plan stops there. */
export const MAX_WALKED_TASKS = 100_000;
/** The tasks of one level whose links the walk reads at once. */
const WALK_BATCH = 64;

/** Runs `step` on every item, `size` at a time. */
async function inBatches<T>(
  items: readonly T[],
  size: number,
  step: (item: T) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < items.length; start += size)
    await Promise.all(items.slice(start, start + size).map(step));
}

/** What a failed task's dependents are told of it. */
export function inputFailureOf(
  task: string,
  key: string | undefined,
  failure: TaskFailure,
): InputFailure {
  return {
    task,
    ...(key === undefined ? {} : { key }),
    code: failure.code,
    type: failure.type,
    message: failure.message,
  };
}

/**
 * Walks from the claimed task, which failed for good, down its links: a dependent whose rule takes
 * failures gets the failure as that input; one under the default rule is blocked by it, and the
 * walk goes on from there. Resolves the dependents the hand-on made runnable.
 */
export async function handOnFailure(
  store: TaskStore,
  claim: Claim,
  failure: InputFailure,
): Promise<string[]> {
  const fence = store.fence(claim);
  const runnable: string[] = [];
  const walked = new Set<string>([claim.task]);
  let producers: string[] = [claim.task];
  while (producers.length > 0 && walked.size < MAX_WALKED_TASKS) {
    const next: string[] = [];
    // A level at a time, WALK_BATCH tasks at once: a wide fan-out is not read all in one go.
    await inBatches(producers, WALK_BATCH, async (producer) => {
      const listing = await store.reads.inspectTask(producer);
      if (listing === undefined) return;
      const links = await readLinksOrNone(store, producer, listing.children);
      const told = producer === claim.task ? failure : { ...failure, blocked: producer };
      const encoded = encodeValue(failedValue(told), 'input failure');
      await Promise.all(
        [...links].map(async ([prov, dep]) => {
          const dependent = parentOf(dep);
          // A link is followed within the plan only: one that points elsewhere was not made by
          // addTask (anyone may write a prov-N), and the failure is not written there.
          if (parentOf(dependent) !== claim.plan) return;
          const definition = await readDefinitionOrNone(store, dependent);
          if (definition === undefined) return;
          // A task waiting for its continuation's result (its link input) completes with that
          // result whatever its own rule: a failed continuation blocks it, as a failed input does.
          if (
            takesOutcomes(definition.trigger) &&
            !isContinuedSerial(serialOf(nameOf(dep), DEP_PREFIX))
          ) {
            // As a refeed: a dep that is gone was handed this failure by an earlier walk (whose
            // worker died before the unlink), and its task may have run and be half deleted since:
            // nothing is written into it then.
            const made = await store.giveInput(dep, encoded, fence, true);
            if (made !== undefined) runnable.push(made);
            // The link goes once the failure is the input: a retryFailed may make the producer
            // succeed later, and its result must not reach a dependent that took the failure
            // (and may be finished, or half deleted, by then). A crash before this delete leaves
            // the task unmarked, so the next claim walks again and deletes it.
            await store.unlink(childPath(producer, prov), fence);
          } else if (!walked.has(dependent) && walked.size < MAX_WALKED_TASKS) {
            walked.add(dependent);
            next.push(dependent);
          }
        }),
      );
    });
    producers = next;
  }
  return runnable;
}

/** A producer's links, each read on its own: one that is not a link a writer makes is passed by, the others are followed. */
async function readLinksOrNone(
  store: TaskStore,
  producer: string,
  children: readonly string[],
): Promise<ReadonlyMap<string, string>> {
  const provs = children.filter((name) => hasSequentialName(name, PROV_PREFIX));
  const deps = await Promise.all(
    provs.map(async (name) => {
      try {
        return await store.reads.readLink(childPath(producer, name));
      } catch (error) {
        if (error instanceof MalformedNodeError) return undefined;
        throw error;
      }
    }),
  );
  return new Map(
    provs.flatMap((name, index) => {
      const dep = deps[index];
      return dep === undefined ? [] : [[name, dep] as const];
    }),
  );
}

/** A dependent's definition; undefined when it is gone or is not one a writer makes (it can never run either way). */
async function readDefinitionOrNone(
  store: TaskStore,
  task: string,
): Promise<TaskDefinition | undefined> {
  try {
    return await store.reads.readDefinition(task);
  } catch (error) {
    if (error instanceof MalformedNodeError) return undefined;
    throw error;
  }
}
