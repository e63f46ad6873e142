/**
 * The built-in function a `map` without `reduce` hands over to: it returns its inputs, the mapped
 * results, as a list in list order. Every worker runs it; no FunctionRegistry takes its name.
 */
export const COLLECT_FUNCTION = 'zk-plan:collect';
