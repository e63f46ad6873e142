/** A schedule's name: the node name under its schedules' parent, checked where it is given. */
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { RESERVED_PREFIX, isPlanName } from '../zk/layout.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** Letters, digits, `_`, `.` and `-`, up to 100, not zk-plan's own prefix: InvalidArgumentError otherwise. */
export function assertScheduleName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME.test(name) || !isPlanName(name))
    throw new InvalidArgumentError(
      'name',
      `expected a schedule name of letters, digits, "_", "." and "-" (up to 100, not starting with "${RESERVED_PREFIX}"), got ${JSON.stringify(name)}`,
    );
}
