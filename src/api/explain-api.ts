/** `zkPlan.explain`: why a task is not running, and why a plan is not progressing. */
import type { Explanation, PlanExplanation } from '../explain/explain-task.js';
import type { Explainer } from '../explain/explainer.js';
import type { FacadeState } from './facade-state.js';

/**
 * `zkPlan.explain`: why a task is not running, why a plan is not progressing.
 *
 * @category Sub-APIs
 */
export class ExplainApi {
  /** @internal Made by ZkPlan; reach it as `zkPlan.explain`. */
  constructor(
    private readonly facade: FacadeState,
    private readonly explainer: Explainer,
  ) {}

  /**
   * Why a task is not running (or that it is, or is done): a stable code (PLAN_PAUSED,
   * WAITING_FOR_INPUTS, CONCURRENCY_LIMIT, NO_WORKER_FOR_FUNCTION, …), a sentence, and the data behind it.
   */
  task(task: string): Promise<Explanation> {
    this.facade.assertOpen();
    return this.explainer.explainTask(task);
  }

  /** Why a plan is not progressing: its state, and its unfinished tasks grouped by explanation code. */
  plan(plan: string): Promise<PlanExplanation> {
    this.facade.assertOpen();
    return this.explainer.explainPlan(plan);
  }
}
