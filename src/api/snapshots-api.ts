/**
 * `zkPlan.snapshots`: a plan as a self-contained value (export), made a plan again elsewhere or
 * later (import), and a new run of a plan's spec from a chosen task (rerun).
 */
import type { ImportedPlan, PlanSnapshot, PlanSnapshots, RerunOptions } from '../snapshot/plan-snapshots.js';
import type { FacadeState } from './facade-state.js';

/**
 * `zkPlan.snapshots`: export a plan as a self-contained value, import a snapshot as a new plan, rerun a plan's spec.
 *
 * @category Sub-APIs
 */
export class SnapshotsApi {
  /** @internal Made by ZkPlan; reach it as `zkPlan.snapshots`. */
  constructor(
    private readonly facade: FacadeState,
    private readonly snapshots: PlanSnapshots,
  ) {}

  /** A superjson-serialisable snapshot of the plan: spec (derived for a plan without one), params, each task's state, result or failure. */
  export(plan: string): Promise<PlanSnapshot> {
    this.facade.assertOpen();
    return this.snapshots.exportPlan(plan);
  }

  /** Recreates a snapshot as a new plan under `parent` that goes on where it stood (done tasks are not run again); safe to repeat. */
  async import(parent: string, snapshot: PlanSnapshot): Promise<ImportedPlan> {
    this.facade.assertOpen();
    const imported = await this.snapshots.importPlan(parent, snapshot);
    this.facade.wakeWorkers();
    return imported;
  }

  /** A new run of the plan's spec from `from` (a task key, or `'failed'`): it and its downstream run again, the rest reuse their results. */
  async rerun(plan: string, options: RerunOptions): Promise<ImportedPlan> {
    this.facade.assertOpen();
    const rerun = await this.snapshots.rerunPlan(plan, options);
    this.facade.wakeWorkers();
    return rerun;
  }
}
