/**
 * `zkPlan.control`: steering a plan while it runs: pause, resume, cancel, and letting failed tasks
 * run again. Each change is one record in ZooKeeper that every worker reads before it starts a task.
 */
import type { PlanControl, CancelOptions, PauseOptions, PauseOutcome } from '../control/plan-control.js';
import { PlanCancelledError } from '../errors/plan-errors.js';
import type { PlanWriter } from '../plan/plan-writer.js';
import type { FacadeState } from './facade-state.js';

/**
 * `zkPlan.control`: pause, resume and cancel a plan across the cluster, and let its failed tasks run again.
 *
 * @category Sub-APIs
 */
export class ControlApi {
  /** @internal Made by ZkPlan; reach it as `zkPlan.control`. */
  constructor(
    private readonly facade: FacadeState,
    private readonly control: PlanControl,
    private readonly writer: PlanWriter,
  ) {}

  /**
   * Pauses the plan: no task of it starts anywhere until `resume`; running tasks finish (or, with
   * `abortRunning`, have their signal aborted and are given back uncharged). Resolves once the
   * pause is in ZooKeeper, with the tasks held by workers at that moment (the only ones that may
   * still start). Safe to repeat; a paused plan is neither completed nor failed.
   */
  pause(plan: string, options: PauseOptions = {}): Promise<PauseOutcome> {
    this.facade.assertOpen();
    return this.control.pause(plan, options);
  }

  /** Lets a paused plan run again (a plan that is not paused is left alone); PlanCancelledError for a cancelled one. */
  async resume(plan: string): Promise<void> {
    this.facade.assertOpen();
    await this.control.resume(plan);
    this.facade.wakeWorkers();
  }

  /**
   * Cancels the plan for good: nothing of it starts any more, running tasks have their signal
   * aborted, its tasks are deleted; the plan stays, `cancelled` with the reason, until
   * `plans.delete` or retention removes it. waitForCompletion rejects with PlanCancelledError
   * (PLAN_CANCELLED).
   */
  cancel(plan: string, options: CancelOptions = {}): Promise<void> {
    this.facade.assertOpen();
    return this.control.cancel(plan, options);
  }

  /** Lets the plan's failed tasks (and so their dependents) run again, attempts reset; returns the tasks reset. */
  async retryFailed(plan: string): Promise<string[]> {
    this.facade.assertOpen();
    const control = await this.control.read(plan);
    if (control?.state === 'cancelled') throw new PlanCancelledError(plan, control.reason);
    const reset = await this.writer.retryFailed(plan);
    this.facade.wakeWorkers();
    return reset;
  }
}
