/**
 * A client of `MemoryZooKeeper`: the `Zk` seam with `ZkClient`'s behaviour (errors, resends after a
 * connection loss, fencing, session renewal, events), plus fault injection for tests: connection
 * loss, lost replies, session expiry and a crash of the process.
 */
import { once } from 'node:events';
import { ZkError } from '../errors/zk-error.js';
import type { ZkStat } from '../zk/native-client.js';
import { ZkBase } from '../zk/zk-base.js';
import type { CreateMode, SessionState, Watcher, WriteOptions, ZkOperationCounts, ZkSession } from '../zk/zk-client-types.js';
import { RC, isValidPath } from './memory-tree.js';
import type { MemoryReply, MemoryRequest, MemoryResults, MemoryServer, SessionListener } from './memory-protocol.js';
import type { ScheduledOperation } from './scheduler.js';

/** Picks which operation `loseNextReply` hits. */
export type OperationFilter = (op: string, path: string) => boolean;

/** One operation sent on a session and not answered yet. */
class InFlightOperation implements ScheduledOperation {
  private answered = false;

  constructor(
    readonly clientName: string,
    readonly op: string,
    readonly path: string,
    private readonly run: () => void,
    private readonly reject: (rc: number) => void,
  ) {}

  get live(): boolean {
    return !this.answered;
  }

  apply(): void {
    if (this.answered) return;
    this.answered = true;
    this.run();
  }

  /** Answers it with `rc` without applying it. */
  fail(rc: number): void {
    if (this.answered) return;
    this.answered = true;
    this.reject(rc);
  }

  /** Never answers it (the process crashed). */
  abandon(): void {
    this.answered = true;
  }
}

export class MemoryZkClient extends ZkBase implements SessionListener {
  readonly counts: ZkOperationCounts = { reads: 0, writes: 0 };
  /** Like `ZkClient.onOperation` (round trips are 0 ms here). Must not throw. */
  onOperation: ((op: string, ms: number, ok: boolean) => void) | undefined;
  private currentState: SessionState = 'connecting';
  private currentSession: ZkSession | undefined;
  /** The server's id of the current session; kept after a crash so the server can be told to expire it. */
  private serverSessionId: string | undefined;
  private generations = 0;
  private crashed = false;
  private inFlight: InFlightOperation[] = [];
  private lostReplyFilter: OperationFilter | undefined;

  /** Use `MemoryZooKeeper.connect`. */
  constructor(
    private readonly server: MemoryServer,
    readonly name: string,
    readonly sessionTimeoutMs: number,
  ) {
    super();
    this.setMaxListeners(0);
    this.openSession();
  }

  get state(): SessionState {
    return this.currentState;
  }

  get session(): ZkSession {
    if (this.currentSession === undefined) {
      throw new ZkError('session', RC.SESSION_EXPIRED, '/', 'No ZooKeeper session right now: the last one expired and a new one is being opened');
    }
    return this.currentSession;
  }

  /** The server's id of this client's session, also after a crash (for `MemoryZooKeeper.expireSession`). */
  get sessionId(): string | undefined {
    return this.serverSessionId;
  }

  isCurrent(session: ZkSession): boolean {
    return this.currentSession !== undefined && this.currentSession.generation === session.generation;
  }

  close(): void {
    if (this.crashed || this.currentState === 'closed') return;
    this.setState('closed');
    const sessionId = this.serverSessionId;
    this.currentSession = undefined;
    this.serverSessionId = undefined;
    this.failInFlight(RC.CLOSING);
    if (sessionId !== undefined) this.server.closeSession(sessionId);
  }

  create(path: string, data: Buffer | null = null, mode: CreateMode = 'persistent', options: WriteOptions = {}): Promise<string> {
    // A sequential create sent twice could make two nodes: it is never resent after a connection loss.
    const resend = !mode.endsWith('sequential');
    return this.submit('writes', options.fence, { op: 'create', path, data, mode }, resend);
  }

  exists(path: string, watcher?: Watcher): Promise<ZkStat | undefined> {
    return this.submit('reads', undefined, { op: 'exists', path, ...this.watchOf(watcher) });
  }

  getData(path: string, watcher?: Watcher): Promise<{ stat: ZkStat; data: Buffer | null }> {
    return this.submit('reads', undefined, { op: 'getData', path, ...this.watchOf(watcher) });
  }

  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: ZkStat }> {
    return this.submit('reads', undefined, { op: 'getChildren', path, ...this.watchOf(watcher) });
  }

  setData(path: string, data: Buffer | null, version = -1, options: WriteOptions = {}): Promise<ZkStat> {
    return this.submit('writes', options.fence, { op: 'setData', path, data, version });
  }

  /** Not `async`: every primitive answers after the same number of microtask hops, so replies stay in FIFO order. */
  delete(path: string, version = -1, options: WriteOptions = {}): Promise<void> {
    return this.submit('writes', options.fence, { op: 'delete', path, version });
  }

  // ---- fault injection ----

  /**
   * The connection drops (the session lives on): operations in flight, and those sent until
   * `reconnect`, fail with CONNECTION_LOSS unapplied (idempotent ones are resent after `reconnect`),
   * state goes `suspended` and every watch of the session fires `session-lost`.
   */
  disconnect(): void {
    if (this.crashed || this.currentState !== 'connected') return;
    this.setState('suspended');
    this.failInFlight(RC.CONNECTION_LOSS);
    if (this.serverSessionId !== undefined) this.server.loseWatches(this.serverSessionId);
  }

  /** The connection comes back; if the server expired the session meanwhile, a new session is opened. */
  reconnect(): void {
    if (this.crashed || this.currentState !== 'suspended') return;
    if (this.serverSessionId === undefined || !this.server.isAlive(this.serverSessionId)) {
      this.sessionLost();
      return;
    }
    this.setState('connected');
  }

  /**
   * The next operation that passes `filter` is applied, but its reply is lost: its caller gets
   * CONNECTION_LOSS (after a resend, for an idempotent one) and the connection drops and comes back.
   */
  loseNextReply(filter: OperationFilter = () => true): void {
    this.lostReplyFilter = filter;
  }

  /** The server expires this client's session; it then opens a new one (`session:expired`, `session:started`). */
  expireSession(): void {
    if (this.serverSessionId !== undefined) this.server.expireSession(this.serverSessionId);
  }

  /** Same as `expireSession`, named for a crashed client whose server-side session outlives it. */
  expireSessionOnServer(): void {
    this.expireSession();
  }

  /**
   * The process dies: nothing sent so far or later is ever answered, no event is emitted. The server
   * keeps the session and its ephemerals until `expireSessionOnServer` (or `server.expireSession`).
   */
  crash(): void {
    if (this.crashed) return;
    this.crashed = true;
    for (const operation of this.inFlight.splice(0)) operation.abandon();
  }

  /** @internal The server expired the session. */
  sessionExpired(): void {
    // Crashed: nobody hears. Disconnected: found out on reconnect.
    if (this.crashed || this.currentState !== 'connected') return;
    this.sessionLost();
  }

  // ---- internals ----

  private openSession(): void {
    this.serverSessionId = this.server.openSession(this.name, this);
    this.currentSession = { generation: ++this.generations, id: this.serverSessionId };
    this.setState('connected');
    this.emit('session:started', this.currentSession);
  }

  /** Like ZkClient.onSessionLost: pending operations fail, `expired`, then a new session. */
  private sessionLost(): void {
    const lost = this.currentSession;
    this.currentSession = undefined;
    this.serverSessionId = undefined;
    this.failInFlight(RC.SESSION_EXPIRED);
    this.setState('expired');
    if (lost) this.emit('session:expired', lost);
    queueMicrotask(() => {
      if (!this.crashed && this.currentState === 'expired') this.openSession();
    });
  }

  private setState(state: SessionState): void {
    if (this.crashed || this.currentState === state) return;
    this.currentState = state;
    this.emit('state', state);
  }

  private failInFlight(rc: number): void {
    for (const operation of this.inFlight.splice(0)) operation.fail(rc);
  }

  /** A watch that fires at most once, and never in a crashed process. */
  private watchOf(watcher: Watcher | undefined): { watch?: Watcher } {
    if (watcher === undefined) return {};
    let fired = false;
    return {
      watch: (event) => {
        if (fired || this.crashed) return;
        fired = true;
        watcher(event);
      },
    };
  }

  /** As ZkClient.submit: after a connection loss, waits for the connection and sends again unless `resend` is false. */
  private async submit<R extends MemoryRequest>(
    kind: keyof ZkOperationCounts,
    fence: ZkSession | undefined,
    request: R,
    resend = true,
  ): Promise<MemoryResults[R['op']]> {
    return await this.resending(resend, () => this.submitOnce(kind, fence, request));
  }

  /** Waits until connected again; false once closed. (No deadline: a double's connection only comes back when told.) */
  protected override async reconnected(): Promise<boolean> {
    while (this.currentState !== 'connected') {
      if (this.currentState === 'closed') return false;
      await once(this, 'state');
    }
    return true;
  }

  private submitOnce<R extends MemoryRequest>(kind: keyof ZkOperationCounts, fence: ZkSession | undefined, request: R): Promise<MemoryResults[R['op']]> {
    const { op, path } = request;
    return new Promise((resolve, reject) => {
      if (this.crashed) return; // a dead process hears nothing
      const refuse = (rc: number, message?: string): void => reject(new ZkError(op, rc, path, message));
      if (this.currentState === 'closed') {
        refuse(RC.CLOSING, `ZooKeeper ${op} of ${path}: this client is closed; create a new one`);
        return;
      }
      const sentOn = this.currentSession;
      const sessionId = this.serverSessionId;
      if (sentOn === undefined || sessionId === undefined) {
        refuse(RC.SESSION_EXPIRED, `ZooKeeper ${op} of ${path}: the session expired and a new one is not open yet; retry shortly`);
        return;
      }
      if (fence !== undefined && fence.generation !== sentOn.generation) {
        refuse(RC.SESSION_EXPIRED, `ZooKeeper ${op} of ${path} refused: session ${fence.id} that guards it has expired`);
        return;
      }
      this.counts[kind] += 1;
      const answer = (ok: boolean): void => {
        try {
          this.onOperation?.(op, 0, ok);
        } catch {
          // a metrics hook must never break an operation
        }
      };
      const fail = (rc: number): void => {
        answer(false);
        refuse(rc);
      };
      // The C client checks paths before sending.
      if (!isValidPath(path, request.op === 'create' ? request.mode : undefined)) {
        fail(RC.BAD_ARGUMENTS);
        return;
      }
      if (this.currentState !== 'connected') {
        fail(RC.CONNECTION_LOSS); // sent while disconnected: never reaches the server
        return;
      }
      const operation: InFlightOperation = new InFlightOperation(
        this.name,
        op,
        path,
        () => {
          this.inFlight = this.inFlight.filter((other) => other !== operation);
          // The session may have expired, or the fence's session ended, while it waited in the queue.
          const fenceBroken = fence !== undefined && !this.isCurrent(fence);
          if (this.serverSessionId !== sessionId || fenceBroken) {
            fail(RC.SESSION_EXPIRED);
            return;
          }
          const reply: MemoryReply<MemoryResults[R['op']]> = this.server.apply(sessionId, request);
          if (this.lostReplyFilter?.(op, path)) {
            this.lostReplyFilter = undefined;
            fail(RC.CONNECTION_LOSS);
            this.disconnect();
            queueMicrotask(() => this.reconnect());
            return;
          }
          answer(reply.ok);
          if (reply.ok) resolve(reply.value);
          else refuse(reply.rc);
        },
        fail,
      );
      this.inFlight.push(operation);
      this.server.scheduler.enqueue(operation);
    });
  }
}
