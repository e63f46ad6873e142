import { ZkPlanError, named } from './base-error.js';

/**
 * No schedule of that name under the schedules' parent.
 *
 * @category Errors
 */
export class ScheduleNotFoundError extends ZkPlanError {
  readonly code = 'SCHEDULE_NOT_FOUND';
  constructor(path: string) {
    super(
      `Schedule ${path} does not exist: put it with schedules(parent).put({ name, … }) (list them with schedules(parent).list())`,
      { path },
    );
  }
}
named(ScheduleNotFoundError, 'ScheduleNotFoundError');

/**
 * No backfill of that id for the schedule (never made, or pruned: a schedule keeps its newest
 * finished backfills only).
 *
 * @category Errors
 */
export class BackfillNotFoundError extends ZkPlanError {
  readonly code = 'BACKFILL_NOT_FOUND';
  constructor(path: string) {
    super(
      `Backfill ${path} does not exist: list a schedule's backfills with schedules(parent).backfills(name) (zk-plan schedule backfills <name>)`,
      { path },
    );
  }
}
named(BackfillNotFoundError, 'BackfillNotFoundError');
