import { ZkPlanError, named } from './base-error.js';

/**
 * What is wrong with a plan spec (the contract: `submitPlan` and `zk-plan validate` report these codes).
 *
 * @category Errors
 */
export type PlanSpecProblem =
  /** Not the shape of a spec: `{ tasks: { [key]: { fn, params?, inputs?, options? } }, options? }`. */
  | 'SPEC_INVALID'
  /** `inputs` names a key that is not a task of the spec. */
  | 'SPEC_UNKNOWN_INPUT'
  /** The inputs form a cycle. */
  | 'SPEC_CYCLE'
  /** No registered (or live worker's) function has the name. */
  | 'SPEC_UNKNOWN_FUNCTION'
  /** A param or option superjson cannot store. */
  | 'SPEC_UNSERIALIZABLE'
  /** A `{ $param: name }` placeholder without a value among the submitted params. */
  | 'SPEC_MISSING_PARAM'
  /** Not as many params or inputs as the function's schemas declare. */
  | 'SPEC_ARITY'
  /** A producer's result type is not one its consumer's input schema accepts (where both expose JSON Schema). */
  | 'SPEC_EDGE_TYPE'
  /** A param does not match the function's param schema. */
  | 'SPEC_PARAM_INVALID';

/**
 * Thrown before anything is written when a plan spec cannot be submitted; `key` names the task (undefined: the spec as a whole).
 *
 * @category Errors
 */
export class PlanSpecError extends ZkPlanError {
  readonly code: PlanSpecProblem;
  constructor(
    problem: PlanSpecProblem,
    readonly key: string | undefined,
    message: string,
  ) {
    super(`Plan spec${key === undefined ? '' : `, task "${key}"`}: ${message}`);
    this.code = problem;
  }
}
named(PlanSpecError, 'PlanSpecError');
