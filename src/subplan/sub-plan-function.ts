/**
 * The name of the built-in function of sub-plan tasks: every worker runs it; no FunctionRegistry
 * takes it. A module of its own, importing nothing, so that any module can name it.
 *
 * @category Plans and tasks
 */
export const SUB_PLAN_FUNCTION = 'zk-plan:sub-plan';
