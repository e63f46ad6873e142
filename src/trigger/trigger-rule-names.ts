/**
 * The names of the trigger rules, a module of types alone: the one place of defaults
 * (src/config/defaults.ts) and the rules' checks (trigger-rule.ts) both import it, and it imports
 * nothing, so neither needs the other's module.
 */

/**
 * When a task runs, given how its inputs ended (`addTask(…, { trigger })`, a spec's `trigger`).
 *
 * - `allSucceeded` (the default): once every input succeeded. A skipped input skips the task; a
 *   failed one blocks it.
 * - `allDone`: once every input succeeded, failed for good or was skipped: a clean-up or
 *   notification step.
 * - `anySucceeded`: once every input ended, if at least one succeeded; skipped otherwise.
 * - `oneFailed`: once every input ended, if at least one failed for good; skipped otherwise (a
 *   branch that runs only on failure).
 *
 * A task with a rule other than `allSucceeded` receives each input as an {@link InputOutcome}.
 *
 * @category Plans and tasks
 */
export type TriggerRule = 'allSucceeded' | 'allDone' | 'anySucceeded' | 'oneFailed';
