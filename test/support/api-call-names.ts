/**
 * An API call by name, as the CLI must not say it (it says its own commands: `zk-plan retry <plan>`,
 * not `retryFailed(plan)`): a method of ZkPlan, or `schedules(parent)` / `jobs(parent)` and what
 * follows. Option names (`keepResult`, `timeoutMs`, `allowInline`) are not calls: a spec uses them too.
 */
export const API_CALL =
  /\b(createPlan|addTasks?|retryFailed|resumePlan|pausePlan|cancelPlan|markAsReady|waitForCompletion|getResult|setConcurrencyLimit|getConcurrencyLimit|listConcurrencyLimits|rerunPlan|startWorkers|startJobWorker|startScheduler|deletePlan|importPlan|exportPlan|submitPlan|describePlan|planStatus|explainTask|explainPlan|listPlans|listWorkers|onPlanEvent|ZkPlan\.connect)\b|\b(schedules|jobs)\([^)]*\)\./;
