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
