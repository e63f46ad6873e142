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
    const name = path.split('/').at(-3) ?? '<name>';
    super(
      `Backfill ${path} does not exist (a schedule keeps its newest finished backfills only): Schedules.backfills(name) lists them`,
      {
        path,
        cliMessage: `no backfill ${path} (a schedule keeps its newest finished backfills only): zk-plan schedule backfills ${name} lists them`,
      },
    );
  }
}
named(BackfillNotFoundError, 'BackfillNotFoundError');
