/** What a function's name may be (pure): checked where a name is given, registered, or read back. */
import { InvalidArgumentError } from '../errors/usage-errors.js';

const NAME_PATTERN = /^[A-Za-z_$][\w$.:/-]*$/;

/** Throws InvalidArgumentError unless `name` is a function name: letters, digits, `_ $ . : / -`, not starting with a digit. */
export function assertFunctionName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new InvalidArgumentError(
      'function name',
      `expected a name such as "sum" or "etl.load" (letters, digits, _ $ . : / -, not starting with a digit), got ${JSON.stringify(name)}`,
    );
  }
}
