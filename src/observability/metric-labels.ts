/**
 * The labels of the worker metrics that name a task's function: bounded by the functions the
 * worker registers, whatever the plans hold.
 */
import { SHELL_FUNCTION } from '../shell/shell-params.js';
import { WAIT_FOR_PLAN_FUNCTION } from '../dependent/dependency-target.js';
import { SUB_PLAN_FUNCTION } from '../subplan/sub-plan-target.js';

/**
 * Series of task outcomes are labelled by function, never by task key or path: a function is one of
 * the worker's registered names (so few), while keys and paths grow with every plan.
 */
export const FN_LABEL_HELP =
  'fn: the function, when this worker registers it ("inline" for inline source); absent otherwise (a task of a function this worker lacks). Tasks are never labelled by key or path.';

/**
 * The `fn` label of an event's function, or none (a label left out, not an empty one: a scrape would
 * see the same series twice). Events name the function a task's definition names, which whoever can
 * write a task chooses: only names the worker registers (and the built-ins `inline`, `shell` and
 * `zk-plan:wait-for-plan`, `zk-plan:sub-plan`)
 * become label values, so the series stay bounded by the registry whatever the plans hold.
 */
export function fnLabeller(
  functions: { has(name: string): boolean } | undefined,
): (fn: string | undefined) => { fn?: string } {
  return (fn) =>
    fn !== undefined &&
    (fn === 'inline' ||
      fn === SHELL_FUNCTION ||
      fn === WAIT_FOR_PLAN_FUNCTION ||
      fn === SUB_PLAN_FUNCTION ||
      functions?.has(fn) === true)
      ? { fn }
      : {};
}
