/**
 * Crash injection over the in-memory ZooKeeper: a process that dies right before its N-th write
 * reaches the server (`client.crash()`: nothing it sent later is applied or answered), whose
 * session the server then expires, so its ephemeral owner and builder nodes go. Used by the crash
 * sweeps that run an operation for N = 1, 2, … until it completes without a crash.
 */
import type {
  MemoryZkClient,
  MemoryZooKeeper,
  OperationScheduler,
  ScheduledOperation,
} from '../../src/testing/index.js';

/** What counts as a write: the operations a crash can stop before they land. */
export const WRITE_OPS: ReadonlySet<string> = new Set(['create', 'setData', 'delete']);

/** The write a crash stopped: it never reached the server. */
export interface CrashPoint {
  readonly op: string;
  readonly path: string;
}

/** The process that dies right before its `crashAt`-th write. */
export class Victim {
  writes = 0;
  point: CrashPoint | undefined;
  readonly crashed: Promise<CrashPoint>;
  private announce: (point: CrashPoint) => void = () => undefined;

  /**
   * `crashAt`: the write to die before (1 for the first). `strike`, when given, chooses instead: the
   * process dies before the first write it accepts (a write of a given node, whatever its place).
   */
  constructor(
    private readonly server: MemoryZooKeeper,
    readonly client: MemoryZkClient,
    readonly crashAt: number,
    private readonly strike?: (op: string, path: string) => boolean,
  ) {
    this.crashed = new Promise((resolve) => {
      this.announce = resolve;
    });
  }

  /** Whether the process dies before this write, its `writes`-th. */
  strikes(op: string, path: string): boolean {
    return this.strike === undefined ? this.writes === this.crashAt : this.strike(op, path);
  }

  crash(point: CrashPoint): void {
    const sessionId = this.client.sessionId;
    this.client.crash();
    if (sessionId !== undefined) this.server.expireSession(sessionId); // its session times out on the server
    this.point = point;
    this.announce(point);
  }

  describe(): string {
    return this.point === undefined
      ? `no crash (${this.writes} writes)`
      : `crash before write ${this.strike === undefined ? this.crashAt : this.writes} (${this.point.op} ${this.point.path})`;
  }
}

/** Applies every operation on a later microtask in the order sent (as `immediateScheduler`), except the victim's fatal write. */
export class CrashScheduler implements OperationScheduler {
  victim: Victim | undefined;

  enqueue(operation: ScheduledOperation): void {
    queueMicrotask(() => {
      const victim = this.victim;
      if (
        victim !== undefined &&
        operation.live &&
        operation.clientName === victim.client.name &&
        WRITE_OPS.has(operation.op)
      ) {
        victim.writes += 1;
        if (victim.point === undefined && victim.strikes(operation.op, operation.path)) {
          victim.crash({ op: operation.op, path: operation.path });
          return;
        }
      }
      operation.apply();
    });
  }
}
