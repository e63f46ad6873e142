/**
 * Checks shared by every options object (pure): whole-number durations within a timer's range, and
 * unknown option names (with the nearest known one suggested).
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { MAX_TIMER_MS } from '../util/abort-signals.js';

/**
 * Checks a time option: a whole number of ms from 1 (0 with `allowZero`) to `max` (by default
 * MAX_TIMER_MS, the longest a Node timer waits). Throws InvalidArgumentError naming the option.
 */
export function assertDurationMs(
  argument: string,
  value: unknown,
  { allowZero = false, max = MAX_TIMER_MS }: { allowZero?: boolean; max?: number } = {},
): asserts value is number {
  const min = allowZero ? 0 : 1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const got =
      typeof value === 'number'
        ? String(value)
        : typeof value === 'string'
          ? JSON.stringify(value)
          : value === null
            ? 'null'
            : typeof value;
    throw new InvalidArgumentError(
      argument,
      `expected a whole number of ms from ${min} to ${max}, got ${got}`,
    );
  }
}

/**
 * Refuses option names that `known` does not hold (a misspelled option would otherwise be ignored
 * silently): InvalidArgumentError naming the key, the closest known name, and all known names.
 */
export function assertKnownKeys(
  where: string,
  options: object,
  known: Readonly<Record<string, true>>,
): void {
  const names = Object.keys(known);
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(known, key)) continue;
    const close = names.filter((name) => editDistance(name.toLowerCase(), key.toLowerCase()) <= 2);
    throw new InvalidArgumentError(
      key,
      `unknown option of ${where}${close.length > 0 ? ` (did you mean ${close.join(' or ')}?)` : ''}; the known options are ${names.join(', ')}`,
    );
  }
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}
