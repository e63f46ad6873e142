/**
 * The name of the built-in function of dependent tasks: every worker runs it; no FunctionRegistry
 * takes it. A module of its own, importing nothing, so that any module can name it.
 *
 * @category Plans and tasks
 */
export const WAIT_FOR_PLAN_FUNCTION = 'zk-plan:wait-for-plan';
