import { named } from './base-error.js';
import { ZkError } from './zk-error.js';

/** ZooKeeper's ZAUTHFAILED result code. */
const AUTH_FAILED_RC = -115;

/**
 * Thrown by `ZkClient.connect` (and so by `ZkPlan.connect` and the DI module's `startup`) when
 * ZooKeeper refuses the configured `auth` credentials. A `ZkError` with code `AUTH_FAILED`. The
 * message names the scheme (and, for `digest`, the user) but never the password.
 *
 * @category Errors
 */
export class ZkAuthError extends ZkError {
  constructor(
    readonly scheme: string,
    readonly connectString: string,
    detail: string,
  ) {
    super(
      'addAuth',
      AUTH_FAILED_RC,
      '/',
      `ZooKeeper at ${connectString} refused the ${scheme} credentials: ${detail}`,
    );
  }
}
named(ZkAuthError, 'ZkAuthError');
