/**
 * snapshots.export, snapshots.import and snapshots.rerun, as ZkPlan offers them (src/plan/zk-plan.ts delegates
 * here): export-plan.ts reads a plan into a snapshot, import-plan.ts recreates a snapshot as a new
 * plan, rerun.ts (with src/spec/rerun-selection.ts) turns a plan's snapshot into the one a rerun
 * imports.
 */
import { PlanNotFoundError } from '../errors/plan-errors.js';
import { SnapshotError } from '../errors/snapshot-errors.js';
import { readSpecRecord } from '../spec/spec-record.js';
import { assertValidPath, parentOf } from '../zk/layout.js';
import { exportPlan } from './export-plan.js';
import { importSnapshot, type ImportContext, type ImportedPlan } from './import-plan.js';
import type { PlanSnapshot } from './plan-snapshot.js';
import { rerunFrom, rerunSnapshot, type RerunOptions } from './rerun.js';

export type { ImportedPlan, PlanSnapshot, RerunOptions };

export class PlanSnapshots {
  constructor(private readonly context: ImportContext) {}

  /** A self-contained snapshot of the plan (src/snapshot/export-plan.ts). */
  exportPlan(plan: string): Promise<PlanSnapshot> {
    return exportPlan(this.context.zk, this.context.store, plan);
  }

  /** The snapshot recreated as a new plan under `parent` that goes on where it stood (src/snapshot/import-plan.ts). */
  importPlan(parent: string, snapshot: PlanSnapshot): Promise<ImportedPlan> {
    return importSnapshot(this.context, parent, snapshot, { kind: 'import' });
  }

  /** A new run of the plan's spec beside it, from `from` (src/snapshot/rerun.ts). */
  async rerunPlan(plan: string, options: unknown): Promise<ImportedPlan> {
    assertValidPath('plan', plan);
    const from = rerunFrom(plan, options);
    if ((await this.context.zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
    if ((await readSpecRecord(this.context.zk, plan)) === undefined)
      throw new SnapshotError(
        'RERUN_NO_SPEC',
        undefined,
        `plan ${plan} has no spec record (it was built with addTask): only plans from submitPlan, a schedule, snapshots.import or snapshots.rerun can be rerun. snapshots.export derives a spec from its tasks; snapshots.import of that snapshot makes a plan that can be`,
        plan,
        `plan ${plan} has no spec record (it was built task by task, not from a spec): only plans from zk-plan submit, a schedule, zk-plan import or zk-plan rerun can be rerun. zk-plan export ${plan} derives a spec from its tasks; zk-plan import of that snapshot makes a plan that can be`,
      );
    const snapshot = rerunSnapshot(
      await exportPlan(this.context.zk, this.context.store, plan),
      from,
    );
    return importSnapshot(this.context, parentOf(plan), snapshot, { kind: 'rerun', from });
  }
}
