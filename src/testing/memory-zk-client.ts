/**
 * A client of `MemoryZooKeeper`: the `Zk` seam with `ZkClient`'s behaviour (errors, resends after a
 * connection loss through the same session or the next one, fencing, session renewal, watches
 * told of a dropped connection, events), plus fault injection for tests: connection loss, lost
 * replies (with or without an expiry before the reconnect), writes lost before they reach the
 * server, session expiry, a process frozen for a while, and a crash of the process.
 */
import { once } from 'node:events';
import { ZkError } from '../errors/zk-error.js';
import type { ZkStat } from '../zk/native-client.js';
import { ZkBase } from '../zk/zk-base.js';
import type {
  CreateMode,
  SessionState,
  WatchEvent,
  Watcher,
  WriteOptions,
  ZkOperationCounts,
  ZkSession,
} from '../zk/zk-client-types.js';
import { RC, isValidPath } from './memory-tree.js';
import type { MemoryReply, MemoryRequest, MemoryResults, MemoryServer } from './memory-protocol.js';
import type { ScheduledOperation } from './operation-scheduler.js';

/** Picks which operation `loseNextReply` or `failNextSend` hits. */
export type OperationFilter = (op: string, path: string) => boolean;

/** What happens after a lost reply or a lost send, before the client is connected again. */
export interface ConnectionDropOptions {
  /** The server expires the session while the client is cut off: it reconnects on a new session, through which it resends. @defaultValue false */
  readonly expireSession?: boolean;
  /** Reconnect on the next microtask; false: stay disconnected until `reconnect()`. @defaultValue true */
  readonly reconnect?: boolean;
  /** Reconnect after this many ms (a timer of the caller's clock, fake or real) instead of at once. */
  readonly reconnectAfterMs?: number;
}

/** A fault armed for the next operation that passes its filter. */
interface ArmedFault {
  readonly filter: OperationFilter;
  readonly options: ConnectionDropOptions;
}

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

/**
 * A client of a MemoryZooKeeper (made by its `connect`): the raw client's operations on the
 * in-memory tree, with the faults a test injects (lost replies and sends, disconnects, expiries,
 * frozen and crashed processes). A ZkPlan runs on it as on a ZkClient.
 *
 * It is the server's SessionListener, checked where it registers (`openSession(name, this)`) rather
 * than by an implements clause, so that the published declaration names no internal protocol type.
 */
export class MemoryZkClient extends ZkBase {
  readonly counts: ZkOperationCounts = { reads: 0, writes: 0 };
  /** Like `ZkClient.onOperation` (round trips are 0 ms here). Must not throw. */
  onOperation: ((op: string, ms: number, ok: boolean) => void) | undefined;
  private currentState: SessionState = 'connecting';
  private currentSession: ZkSession | undefined;
  /** The server's id of the current session; kept after a crash so the server can be told to expire it. */
  private serverSessionId: string | undefined;
  private generations = 0;
  private crashed = false;
  /** Frozen: nothing reaches the process until `thaw` (replies, watch events, news of an expiry wait). */
  private frozen = false;
  private readonly whileFrozen: (() => void)[] = [];
  /** The connection came back while the process was frozen: it reconnects when it wakes. */
  private reconnectOnThaw = false;
  private inFlight: InFlightOperation[] = [];
  private lostReply: ArmedFault | undefined;
  private lostSend: ArmedFault | undefined;
  /** Watchers set through the current connection and not told anything yet, with the path each watches. */
  private readonly pendingWatchers = new Map<(event: WatchEvent) => void, string>();

  /**
   * Use `MemoryZooKeeper.connect`: the server protocol this takes is not public API.
   *
   * @internal
   */
  constructor(
    private readonly server: MemoryServer,
    readonly name: string,
    readonly sessionTimeoutMs: number,
  ) {
    super();
    this.setMaxListeners(0);
    this.openSession();
  }

  /** The connection state (see SessionState). */
  get state(): SessionState {
    return this.currentState;
  }

  get session(): ZkSession {
    if (this.currentSession === undefined) {
      throw new ZkError(
        'session',
        RC.SESSION_EXPIRED,
        '/',
        'No ZooKeeper session right now: the last one expired and a new one is being opened',
      );
    }
    return this.currentSession;
  }

  /** The server's id of this client's session, also after a crash (for `MemoryZooKeeper.expireSession`). */
  get sessionId(): string | undefined {
    return this.serverSessionId;
  }

  isCurrent(session: ZkSession): boolean {
    return (
      this.currentSession !== undefined && this.currentSession.generation === session.generation
    );
  }

  close(): void {
    if (this.crashed || this.currentState === 'closed') return;
    this.setState('closed');
    const sessionId = this.serverSessionId;
    this.currentSession = undefined;
    this.serverSessionId = undefined;
    this.pendingWatchers.clear();
    this.failInFlight(RC.CLOSING);
    if (sessionId !== undefined) this.server.closeSession(sessionId);
  }

  create(
    path: string,
    data: Buffer | null = null,
    mode: CreateMode = 'persistent',
    options: WriteOptions = {},
  ): Promise<string> {
    // A sequential create sent twice could make two nodes: it is never resent after a connection loss.
    const resend = !mode.endsWith('sequential');
    return this.resendingCreate(path, options, resend, () =>
      this.submitOnce('writes', options.fence, { op: 'create', path, data, mode }),
    );
  }

  exists(path: string, watcher?: Watcher): Promise<ZkStat | undefined> {
    return this.submit('reads', undefined, { op: 'exists', path, ...this.watchOf(path, watcher) });
  }

  getData(path: string, watcher?: Watcher): Promise<{ stat: ZkStat; data: Buffer | null }> {
    return this.submit('reads', undefined, { op: 'getData', path, ...this.watchOf(path, watcher) });
  }

  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: ZkStat }> {
    return this.submit('reads', undefined, {
      op: 'getChildren',
      path,
      ...this.watchOf(path, watcher),
    });
  }

  /** Replaces the node's data if its version is `version` (-1 matches every version); resolves the new stat. Sent again after a connection loss, guarded as `options` say. */
  setData(
    path: string,
    data: Buffer | null,
    version = -1,
    options: WriteOptions = {},
  ): Promise<ZkStat> {
    return this.resendingWrite('setData', path, options, () =>
      this.submitOnce('writes', options.fence, { op: 'setData', path, data, version }),
    );
  }

  /** Deletes the node if its version is `version` (-1 matches every version); it must have no children. Sent again after a connection loss, guarded as `options` say. */
  delete(path: string, version = -1, options: WriteOptions = {}): Promise<void> {
    return this.resendingWrite('delete', path, options, () =>
      this.submitOnce('writes', options.fence, { op: 'delete', path, version }),
    );
  }

  sync(path: string): Promise<void> {
    return this.submit('reads', undefined, { op: 'sync', path });
  }

  // ---- fault injection ----

  /**
   * The connection drops (the session lives on): operations in flight, and those sent until
   * `reconnect`, fail with CONNECTION_LOSS unapplied (they are resent after `reconnect`, but for
   * sequential creates), state goes `suspended` and every watcher of the session hears
   * `session-lost`. The server keeps the watches (a real client sets them again when it reconnects):
   * they fire into nothing later, or go when the session ends.
   */
  disconnect(): void {
    if (this.crashed || this.currentState !== 'connected') return;
    this.setState('suspended');
    this.failInFlight(RC.CONNECTION_LOSS);
    const told = [...this.pendingWatchers];
    this.pendingWatchers.clear();
    for (const [watcher, path] of told) this.deliver(() => watcher({ type: 'session-lost', path }));
  }

  /** The connection comes back (for a frozen process, when it wakes); if the server expired the session meanwhile, a new session is opened. */
  reconnect(): void {
    if (this.frozen) {
      this.reconnectOnThaw = true;
      return;
    }
    if (this.crashed || this.currentState !== 'suspended') return;
    if (this.serverSessionId === undefined || !this.server.isAlive(this.serverSessionId)) {
      this.sessionLost();
      return;
    }
    this.setState('connected');
  }

  /**
   * The next operation that passes `filter` is applied, but its reply is lost: its caller gets
   * CONNECTION_LOSS (after a resend, for all but sequential creates) and the connection drops and
   * comes back. With `expireSession` the session expires while the client is cut off, so it
   * reconnects on a new session and resends through it (a fenced write is refused then).
   */
  loseNextReply(filter: OperationFilter = () => true, options: ConnectionDropOptions = {}): void {
    this.lostReply = { filter, options };
  }

  /**
   * The next operation that passes `filter` never reaches the server: the connection drops as it is
   * sent, and it is resent after the reconnect (on a new session, with `expireSession`).
   */
  failNextSend(filter: OperationFilter = () => true, options: ConnectionDropOptions = {}): void {
    this.lostSend = { filter, options };
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
   * The process stops (SIGSTOP, a long pause): what it sent before may still land, but it sends
   * nothing more and hears nothing, not even that its session expired, until `thaw`.
   */
  freeze(): void {
    if (this.crashed) return;
    this.frozen = true;
  }

  /** The process goes on: it hears what came while it was frozen, in order, then finds out whether its session lives. */
  thaw(): void {
    if (!this.frozen) return;
    this.frozen = false;
    for (const heard of this.whileFrozen.splice(0)) heard();
    if (this.reconnectOnThaw) {
      this.reconnectOnThaw = false;
      this.reconnect();
    }
    if (
      this.currentState === 'connected' &&
      this.serverSessionId !== undefined &&
      !this.server.isAlive(this.serverSessionId)
    )
      this.sessionLost();
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
    // Crashed: nobody hears. Disconnected: found out on reconnect. Frozen: found out on waking.
    if (this.crashed || this.frozen || this.currentState !== 'connected') return;
    this.sessionLost();
  }

  // ---- internals ----

  private openSession(): void {
    this.serverSessionId = this.server.openSession(this.name, this);
    this.currentSession = { generation: ++this.generations, id: this.serverSessionId };
    this.setState('connected');
    this.emit('session:started', this.currentSession);
  }

  /** Like ZkClient.onSessionLost: pending operations fail, watchers hear `session-lost`, `expired`, then a new session. */
  private sessionLost(): void {
    const lost = this.currentSession;
    this.currentSession = undefined;
    this.serverSessionId = undefined;
    this.failInFlight(RC.SESSION_EXPIRED);
    const told = [...this.pendingWatchers];
    this.pendingWatchers.clear();
    for (const [watcher, path] of told)
      queueMicrotask(() => watcher({ type: 'session-lost', path }));
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

  /** Runs what the process hears now, or when it wakes if it is frozen; never in a crashed process. */
  private deliver(heard: () => void): void {
    if (this.crashed) return;
    if (this.frozen) this.whileFrozen.push(heard);
    else heard();
  }

  /**
   * A watch that fires at most once, never in a crashed process, and waits while it is frozen. It
   * is told `session-lost` when the connection drops; the server's watch may fire later into nothing.
   */
  private watchOf(path: string, watcher: Watcher | undefined): { watch?: Watcher } {
    if (watcher === undefined) return {};
    let fired = false;
    const once = (event: WatchEvent): void => {
      if (fired || this.crashed) return;
      fired = true;
      this.pendingWatchers.delete(once);
      watcher(event);
    };
    this.pendingWatchers.set(once, path);
    return { watch: (event) => this.deliver(() => once(event)) };
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

  /** The connection drops after an armed fault; the session may expire before the client is back. */
  private dropConnection(options: ConnectionDropOptions): void {
    const sessionId = this.serverSessionId;
    this.disconnect();
    if (options.expireSession === true && sessionId !== undefined)
      this.server.expireSession(sessionId);
    if (options.reconnect === false) return;
    if (options.reconnectAfterMs === undefined) queueMicrotask(() => this.reconnect());
    else setTimeout(() => this.reconnect(), options.reconnectAfterMs);
  }

  private submitOnce<R extends MemoryRequest>(
    kind: keyof ZkOperationCounts,
    fence: ZkSession | undefined,
    request: R,
  ): Promise<MemoryResults[R['op']]> {
    // A frozen process sends nothing: what it issues while frozen goes out when it wakes.
    if (this.frozen)
      return new Promise((resolve, reject) => {
        this.whileFrozen.push(() => {
          this.submitOnce(kind, fence, request).then(resolve, reject);
        });
      });
    const { op, path } = request;
    return new Promise((resolve, reject) => {
      if (this.crashed) return; // a dead process hears nothing
      const refuse = (rc: number, message?: string): void =>
        reject(new ZkError(op, rc, path, message));
      if (this.currentState === 'closed') {
        refuse(RC.CLOSING, `ZooKeeper ${op} of ${path}: this client is closed; create a new one`);
        return;
      }
      const sentOn = this.currentSession;
      const sessionId = this.serverSessionId;
      if (sentOn === undefined || sessionId === undefined) {
        refuse(
          RC.SESSION_EXPIRED,
          `ZooKeeper ${op} of ${path}: the session expired and a new one is not open yet; retry shortly`,
        );
        return;
      }
      if (fence !== undefined && fence.generation !== sentOn.generation) {
        refuse(
          RC.SESSION_EXPIRED,
          `ZooKeeper ${op} of ${path} refused: session ${fence.id} that guards it has expired`,
        );
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
            this.deliver(() => fail(RC.SESSION_EXPIRED));
            return;
          }
          if (this.lostSend?.filter(op, path) === true) {
            const { options } = this.lostSend;
            this.lostSend = undefined;
            fail(RC.CONNECTION_LOSS);
            this.dropConnection(options);
            return;
          }
          const lost = this.lostReply?.filter(op, path) === true ? this.lostReply : undefined;
          const reply: MemoryReply<MemoryResults[R['op']]> = this.server.apply(sessionId, request, {
            replyLost: lost !== undefined,
          });
          if (lost !== undefined) {
            this.lostReply = undefined;
            fail(RC.CONNECTION_LOSS);
            this.dropConnection(lost.options);
            return;
          }
          this.deliver(() => {
            answer(reply.ok);
            if (reply.ok) resolve(reply.value);
            else refuse(reply.rc);
          });
        },
        fail,
      );
      this.inFlight.push(operation);
      this.server.scheduler.enqueue(operation);
    });
  }
}
