/**
 * Errors raised while locating or starting a local Apache ZooKeeper server
 * (used by the integration tests and the examples).
 */
import { ZkPlanError, named } from './base-error.js';

/** How to get a ZooKeeper distribution onto this machine. */
export const ZOOKEEPER_INSTALL_HINT =
  'Install one with `apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y zookeeper` ' +
  '(as root; this also installs Java), or set ZOOKEEPER_HOME to an unpacked Apache ZooKeeper 3.8 ' +
  'distribution (the directory holding lib/ and conf/), or run scripts/setup.sh.';

/** Thrown when no ZooKeeper distribution or no `java` executable can be found. */
export class ZooKeeperNotFoundError extends ZkPlanError {
  readonly code = 'ZOOKEEPER_NOT_FOUND';

  constructor(message: string) {
    super(message);
  }
}
named(ZooKeeperNotFoundError, 'ZooKeeperNotFoundError');

/** Thrown when a ZooKeeper server process exits or does not start serving in time. */
export class ZooKeeperStartError extends ZkPlanError {
  readonly code = 'ZOOKEEPER_START_FAILED';
  /** The server's log file, to read when debugging. */
  readonly logFile: string | undefined;

  constructor(message: string, options?: { logFile?: string; cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.logFile = options?.logFile;
  }
}
named(ZooKeeperStartError, 'ZooKeeperStartError');

/** Thrown when the client port asked for is already taken on 127.0.0.1 (by another ZooKeeper, or any program). */
export class PortInUseError extends ZkPlanError {
  readonly code = 'PORT_IN_USE';

  constructor(
    readonly port: number,
    options?: { cause?: unknown },
  ) {
    super(
      `port ${port} on 127.0.0.1 is already in use: stop what listens there, or choose another port (or none, for a free one)`,
      { cause: options?.cause },
    );
  }
}
named(PortInUseError, 'PortInUseError');
