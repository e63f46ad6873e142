import { ZkPlanError, named } from './base-error.js';

/**
 * Raised when a chunked value (see src/zk/chunked-value.ts) cannot be read whole: its header is
 * well-formed but chunks are missing, were deleted while being read, or the node was written again
 * meanwhile. A writer crashed part-way (or is still writing): the value's owner may delete it and
 * write it again. Not charged to a task. A header or chunks no writer makes are MalformedNodeError.
 *
 * @category Errors
 */
export class IncompleteValueError extends ZkPlanError {
  readonly code = 'INCOMPLETE_VALUE';
  constructor(path: string, problem: string) {
    super(
      `The value stored at ${path} is incomplete: ${problem}; its writer stopped part-way, so delete it and write it again`,
      { path },
    );
  }
}
named(IncompleteValueError, 'IncompleteValueError');

/**
 * Raised before anything is written when an encoded result (or input) is larger than the configured limit.
 *
 * @category Errors
 */
export class ResultTooLargeError extends ZkPlanError {
  readonly code = 'RESULT_TOO_LARGE';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    readonly bytes: number,
    readonly limitBytes: number,
    path?: string,
  ) {
    super(
      `The value${path === undefined ? '' : ` for ${path}`} is ${bytes} bytes once encoded, more than the limit of ${limitBytes} bytes` +
        ` (${formatMiB(limitBytes)}): raise the limit with the worker option maxResultBytes, or store large data elsewhere and pass a reference`,
      { path },
    );
  }
}
named(ResultTooLargeError, 'ResultTooLargeError');

function formatMiB(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return `${Number.isInteger(mib) ? mib : mib.toFixed(2)} MiB`;
}
