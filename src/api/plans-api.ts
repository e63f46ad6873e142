/**
 * `zkPlan.plans`: reading and removing plans: where a plan stands, every task of it with its history,
 * the plans under a parent, a task found by its key.
 */
import type { PlanDescriber } from '../plan/plan-describer.js';
import type { PlanReader } from '../plan/plan-reader.js';
import type { PlanStatus } from '../plan/plan-status.js';
import type { PlanSummary, PlanView } from '../plan/plan-view.js';
import type { FacadeState } from './facade-state.js';

/**
 * `zkPlan.plans`: where a plan stands, every task of it, the plans under a parent, a task by its key, and deleting a plan.
 *
 * @category Sub-APIs
 */
export class PlansApi {
  /** @internal Made by ZkPlan; reach it as `zkPlan.plans`. */
  constructor(
    private readonly facade: FacadeState,
    private readonly reader: PlanReader,
    private readonly describer: PlanDescriber,
  ) {}

  /** Where the plan stands: state, task counts, failed tasks with their errors, tasks blocked forever, tasks to be retried. */
  status(plan: string): Promise<PlanStatus> {
    this.facade.assertOpen();
    return this.reader.planStatus(plan);
  }

  /**
   * Every task of the plan with its state, function, inputs, owner, attempts, failure, worker and
   * times (ended ones from its history, kept unless the plan was created with `{ history: false }`).
   */
  describe(plan: string): Promise<PlanView> {
    this.facade.assertOpen();
    return this.describer.describePlan(plan);
  }

  /** The plans under `parent`, oldest first, with their status. */
  list(parent: string): Promise<PlanSummary[]> {
    this.facade.assertOpen();
    return this.describer.listPlans(parent);
  }

  /** Removes a plan and everything below it; workers running its tasks find them gone and move on. */
  delete(plan: string): Promise<void> {
    this.facade.assertOpen();
    return this.describer.deletePlan(plan);
  }

  /**
   * The path of the plan's task known by `key` (its spec's key, or addTask's `{ key }`), also once it
   * has finished; TaskKeyNotFoundError (TASK_KEY_NOT_FOUND) when no task of the plan has the key.
   */
  taskOfKey(plan: string, key: string): Promise<string> {
    this.facade.assertOpen();
    return this.reader.taskOfKey(plan, key);
  }
}
