import { EventEmitter, once } from 'node:events';
import { ZkAuthError } from '../errors/zk-auth-error.js';
import { ZkConnectTimeoutError, ZkError, isZkError, zkErrorCodeOf } from '../errors/zk-error.js';
import { fromNativeAcl, toNativeAcl, type AclEntry, type ZkAuth } from './acl.js';
import { childPath, parentOf } from './layout.js';
import { NATIVE, createNativeClient, type NativeZooKeeper, type ZkAclEntry, type ZkStat } from './native-client.js';

export type { ZkStat } from './native-client.js';

/** How a znode is created. */
export type CreateMode = 'persistent' | 'ephemeral' | 'persistent-sequential' | 'ephemeral-sequential';

/**
 * Connection state, after Curator: `suspended` means disconnected with the session possibly
 * alive (stop claiming), `expired` means the session and all its ephemeral nodes are gone.
 */
export type SessionState = 'connecting' | 'connected' | 'suspended' | 'expired' | 'closed';

/** One ZooKeeper session of a client; `generation` grows by one each time a new session replaces an expired one. */
export interface ZkSession {
  readonly generation: number;
  readonly id: string;
}

/** What fired a one-shot watch; `session-lost` means the session expired before the watched change. */
export interface WatchEvent {
  readonly type: 'created' | 'deleted' | 'changed' | 'child' | 'session-lost';
  readonly path: string;
}

export type Watcher = (event: WatchEvent) => void;

export interface ZkClientOptions {
  /** Comma-separated host:port list. */
  readonly connect: string;
  readonly sessionTimeoutMs: number;
  /** How long `connect` (and each reconnect after expiry) may wait for a server. */
  readonly connectTimeoutMs: number;
  /**
   * Credentials added (`add_auth`) to every session this client opens, the first and each one
   * after an expiry, before the session is announced: no operation ever goes through an
   * unauthenticated session. @defaultValue none
   */
  readonly auth?: readonly ZkAuth[];
  /** ACL given to every node this client creates (see `create`). @defaultValue none: ZooKeeper's open ACL */
  readonly acl?: readonly AclEntry[];
}

export interface ZkClientEvents {
  state: [SessionState];
  'session:started': [ZkSession];
  'session:expired': [ZkSession];
  /** A new session (after an expiry) could not authenticate: the client closed itself. */
  'auth:failed': [ZkAuthError];
}

/** Options of a write; `fence` makes it fail with SESSION_EXPIRED unless that session is still the current one. */
export interface WriteOptions {
  readonly fence?: ZkSession;
}

/** Counts of operations sent, for benchmarks and metrics. */
export interface ZkOperationCounts {
  reads: number;
  writes: number;
}

const NATIVE_MODE: Record<CreateMode, number> = {
  persistent: NATIVE.PERSISTENT,
  ephemeral: NATIVE.EPHEMERAL,
  'persistent-sequential': NATIVE.PERSISTENT_SEQUENTIAL,
  'ephemeral-sequential': NATIVE.EPHEMERAL_SEQUENTIAL,
};

const RECONNECT_PAUSE_MS = 500;

/**
 * The single adapter over the native ZooKeeper client: camelCase methods, typed results and
 * `ZkError`s with stable codes. On session expiry it opens a new session by itself (the native
 * handle closes and must never be reused) and emits `session:expired` then `session:started`.
 */
export class ZkClient extends EventEmitter<ZkClientEvents> {
  readonly counts: ZkOperationCounts = { reads: 0, writes: 0 };
  /**
   * Told of every operation sent while it is set, when its answer comes: the op's name, its round
   * trip in ms (a resend after a connection loss is a separate operation) and whether the answer
   * was OK. For metrics; it must not throw (what it throws is ignored).
   */
  onOperation: ((op: string, ms: number, ok: boolean) => void) | undefined;
  private native: NativeZooKeeper | undefined;
  private currentSession: ZkSession | undefined;
  private currentState: SessionState = 'connecting';
  private generations = 0;
  /** The configured ACL in the native client's shape, or undefined when nodes keep the open ACL. */
  private readonly nativeAcl: ZkAclEntry[] | undefined;
  /** Why the client closed itself (a new session could not authenticate), for the errors of later calls. */
  private authFailure: ZkAuthError | undefined;

  private constructor(readonly options: ZkClientOptions) {
    super();
    this.setMaxListeners(0); // every worker loop of a process listens for session expiry
    this.nativeAcl = options.acl === undefined ? undefined : toNativeAcl(options.acl);
  }

  /** Connects and resolves once the first session is established; rejects with ZkConnectTimeoutError otherwise. */
  static async connect(options: ZkClientOptions): Promise<ZkClient> {
    const client = new ZkClient(options);
    await client.openSession();
    return client;
  }

  get state(): SessionState {
    return this.currentState;
  }

  /** The current session; throws when there is none (closed, or between an expiry and the next session). */
  get session(): ZkSession {
    if (this.currentSession === undefined || this.native === undefined) {
      throw new ZkError('session', NATIVE.ZSESSIONEXPIRED, '/', 'No ZooKeeper session right now: the last one expired and a new one is being opened');
    }
    return this.currentSession;
  }

  /** Id and password of the current session, for tools that attach to it from another handle (e.g. to expire it on purpose). */
  sessionCredentials(): { readonly id: string; readonly password: string } {
    const { id } = this.session; // throws when there is no session
    return { id, password: (this.native as NativeZooKeeper).client_password };
  }

  /** True while `session` is the live session of this client. */
  isCurrent(session: ZkSession): boolean {
    return this.native !== undefined && this.currentSession?.generation === session.generation;
  }

  /** Closes the session: its ephemeral nodes go at once. The client cannot be used afterwards. */
  close(): void {
    if (this.currentState === 'closed') return;
    this.setState('closed');
    const native = this.native;
    this.native = undefined;
    native?.close();
  }

  /**
   * Creates a node; resolves its path. With `acl` configured, the node has that ACL when this
   * resolves. The native client can only create with ZooKeeper's open ACL (node-zk.cpp's
   * a_create passes ZOO_OPEN_ACL_UNSAFE and takes no ACL), so the ACL is set right after the
   * create with setACL (version -1): one more write in `counts`, part of this one call.
   *
   * CAVEAT: during that one round trip the new node is world-open (world:anyone, all
   * permissions): any client may read it, change its data or ACL, delete it, or create children
   * under it, and such children keep the open ACL. See `protectCreated` for failures.
   */
  async create(path: string, data: Buffer | null = null, mode: CreateMode = 'persistent', options: WriteOptions = {}): Promise<string> {
    // A sequential create sent twice could make two nodes: it is never resent after a connection loss.
    const resend = !mode.endsWith('sequential');
    let created: string;
    try {
      created = await this.submit<string>(
        'create',
        path,
        'writes',
        options.fence,
        (native, settle) => native.a_create(path, data, NATIVE_MODE[mode], (rc, _error, createdPath) => settle(rc, createdPath)),
        resend,
      );
    } catch (error) {
      // A resent create answers NODE_EXISTS when its lost first try did create the node, which then never got the ACL.
      if (this.nativeAcl !== undefined && isZkError(error, 'NODE_EXISTS') && error.retried) await this.protectEcho(path, this.nativeAcl, options.fence);
      throw error;
    }
    if (this.nativeAcl !== undefined) await this.protectCreated(created, this.nativeAcl, options.fence);
    return created;
  }

  /** The node's ACL (perms as bits) and stat. */
  getAcl(path: string): Promise<{ acl: AclEntry[]; stat: ZkStat }> {
    return this.submit('getAcl', path, 'reads', undefined, (native, settle) =>
      native.a_get_acl(path, (rc, _error, acl, stat) => settle(rc, { acl: fromNativeAcl(acl ?? []), stat: stat as ZkStat })),
    );
  }

  /** Replaces the node's ACL (ZooKeeper's setACL, which needs the admin permission). */
  setAcl(path: string, acl: readonly AclEntry[], version = -1, options: WriteOptions = {}): Promise<void> {
    return this.setNativeAcl(path, toNativeAcl(acl), version, options.fence);
  }

  /** Creates the node unless it exists; resolves true when this call created it. */
  async createIfAbsent(path: string, data: Buffer | null = null, mode: CreateMode = 'persistent', options: WriteOptions = {}): Promise<boolean> {
    try {
      await this.create(path, data, mode, options);
      return true;
    } catch (error) {
      if (isZkError(error, 'NODE_EXISTS')) return false;
      throw error;
    }
  }

  /** Creates `path` and any missing ancestors as empty persistent nodes. */
  async ensurePath(path: string): Promise<void> {
    if (path === '/') return;
    if (await this.exists(path)) return;
    await this.ensurePath(parentOf(path));
    await this.createIfAbsent(path);
  }

  exists(path: string, watcher?: Watcher): Promise<ZkStat | undefined> {
    const wrapped = watcher && this.wrapWatcher(watcher);
    return this.submit<ZkStat | undefined>('exists', path, 'reads', undefined, (native, settle) => {
      const done = (rc: number, _error: string, stat: ZkStat): void =>
        rc === NATIVE.ZNONODE ? settle(NATIVE.ZOK, undefined) : settle(rc, stat);
      return wrapped ? native.aw_exists(path, wrapped, done) : native.a_exists(path, false, done);
    });
  }

  getData(path: string, watcher?: Watcher): Promise<{ stat: ZkStat; data: Buffer | null }> {
    const wrapped = watcher && this.wrapWatcher(watcher);
    return this.submit('getData', path, 'reads', undefined, (native, settle) => {
      const done = (rc: number, _error: string, stat: ZkStat, data: Buffer | null): void => settle(rc, { stat, data });
      return wrapped ? native.aw_get(path, wrapped, done) : native.a_get(path, false, done);
    });
  }

  /** Like getData, but resolves undefined when the node does not exist. */
  async tryGetData(path: string): Promise<{ stat: ZkStat; data: Buffer | null } | undefined> {
    try {
      return await this.getData(path);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined;
      throw error;
    }
  }

  /** Children names in no particular order (ZooKeeper's), and the parent's stat. */
  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: ZkStat }> {
    const wrapped = watcher && this.wrapWatcher(watcher);
    return this.submit('getChildren', path, 'reads', undefined, (native, settle) => {
      const done = (rc: number, _error: string, children: string[], stat: ZkStat): void => settle(rc, { children: children ?? [], stat });
      return wrapped ? native.aw_get_children2(path, wrapped, done) : native.a_get_children2(path, false, done);
    });
  }

  /** Like getChildren, but resolves undefined when the node does not exist (no watch is set then). */
  async tryGetChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: ZkStat } | undefined> {
    try {
      return await this.getChildren(path, watcher);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined;
      throw error;
    }
  }

  setData(path: string, data: Buffer | null, version = -1, options: WriteOptions = {}): Promise<ZkStat> {
    return this.submit<ZkStat>('setData', path, 'writes', options.fence, (native, settle) =>
      native.a_set(path, data, version, (rc, _error, stat) => settle(rc, stat)),
    );
  }

  delete(path: string, version = -1, options: WriteOptions = {}): Promise<void> {
    return this.submit<void>('delete', path, 'writes', options.fence, (native, settle) =>
      native.a_delete_(path, version, (rc) => settle(rc, undefined)),
    );
  }

  /** Deletes the node if it exists; resolves true when this call deleted it. */
  async deleteIfPresent(path: string, version = -1, options: WriteOptions = {}): Promise<boolean> {
    try {
      await this.delete(path, version, options);
      return true;
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return false;
      throw error;
    }
  }

  /** Deletes a node and everything below it, children first; safe against concurrent deleters. */
  async deleteRecursive(path: string): Promise<void> {
    for (;;) {
      const listing = await this.tryGetChildren(path);
      if (listing === undefined) return;
      await Promise.all(listing.children.map((child) => this.deleteRecursive(childPath(path, child))));
      try {
        await this.delete(path);
        return;
      } catch (error) {
        if (isZkError(error, 'NO_NODE')) return;
        if (!isZkError(error, 'NOT_EMPTY')) throw error; // a child appeared meanwhile: go round again
      }
    }
  }

  private setNativeAcl(path: string, acl: readonly ZkAclEntry[], version: number, fence: ZkSession | undefined): Promise<void> {
    return this.submit<void>('setAcl', path, 'writes', fence, (native, settle) => native.a_set_acl(path, version, acl, (rc) => settle(rc, undefined)));
  }

  /**
   * Sets the configured ACL on a node this client has just created. After CONNECTION_LOSS or
   * OPERATION_TIMEOUT, `submit` sends the setACL again once reconnected (with version -1 it is
   * idempotent). NO_NODE means another client deleted the node meanwhile: the same outcome as a
   * delete right after an ACL'd create. Any other failure (or no reconnection in time) deletes the
   * node again (best effort, so that no world-open node is left behind) and rejects the create with
   * that failure's code; when that delete fails too (e.g. the session is gone), a persistent node
   * stays world-open, and the error says so.
   */
  private async protectCreated(path: string, acl: readonly ZkAclEntry[], fence: ZkSession | undefined): Promise<void> {
    try {
      await this.setNativeAcl(path, acl, -1, fence);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return;
      const removed = await this.delete(path, -1, { fence }).then(
        () => true,
        (deleteError: unknown) => isZkError(deleteError, 'NO_NODE'),
      );
      const rc = error instanceof ZkError ? error.rc : -1;
      throw new ZkError(
        'create',
        rc,
        path,
        `ZooKeeper create of ${path}: the node was created but setting its ACL failed: ${zkErrorCodeOf(rc)} (rc ${rc}); ` +
          (removed ? 'the node was deleted again' : 'the node may remain with the open ACL (world:anyone)'),
        error,
      );
    }
  }

  /**
   * A resent create answered NODE_EXISTS: the node may be this client's own first try, whose reply
   * was lost before its setACL was sent. Gives it the ACL when it still has the open one (best
   * effort: a node that went, or that this client may not change, is left alone).
   */
  private async protectEcho(path: string, acl: readonly ZkAclEntry[], fence: ZkSession | undefined): Promise<void> {
    try {
      const current = await this.getAcl(path);
      if (current.acl.every((entry) => entry.scheme === 'world')) await this.setNativeAcl(path, acl, -1, fence);
    } catch {
      // NO_NODE, NO_AUTH, or the connection again: nothing more to do here.
    }
  }

  /**
   * Sends an operation; after a connection loss (the outcome unknown), waits for the connection to
   * come back and sends it again, unless `resend` is false. Every operation zk-plan sends this way
   * gives the same outcome when repeated; `ZkError.retried` tells a caller that a NODE_EXISTS or
   * NO_NODE may come from its own first try.
   */
  private async submit<T>(
    op: string,
    path: string,
    kind: keyof ZkOperationCounts,
    fence: ZkSession | undefined,
    start: (native: NativeZooKeeper, settle: (rc: number, value: T) => void) => number,
    resend = true,
  ): Promise<T> {
    for (let retried = false; ; retried = true) {
      try {
        return await this.submitOnce(op, path, kind, fence, start);
      } catch (error) {
        if (!(error instanceof ZkError)) throw error;
        error.retried = retried;
        if (!resend || (error.code !== 'CONNECTION_LOSS' && error.code !== 'OPERATION_TIMEOUT')) throw error;
        if (!(await this.reconnected())) throw error;
      }
    }
  }

  /** Waits until the client is connected again; false when it closed, or did not reconnect within a session timeout plus a connect timeout. */
  private async reconnected(): Promise<boolean> {
    const deadline = AbortSignal.timeout(this.options.sessionTimeoutMs + this.options.connectTimeoutMs);
    while (this.currentState !== 'connected') {
      if (this.currentState === 'closed') return false;
      try {
        await once(this, 'state', { signal: deadline });
      } catch {
        return false;
      }
    }
    return true;
  }

  private submitOnce<T>(
    op: string,
    path: string,
    kind: keyof ZkOperationCounts,
    fence: ZkSession | undefined,
    start: (native: NativeZooKeeper, settle: (rc: number, value: T) => void) => number,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.currentState === 'closed') {
        reject(
          this.authFailure === undefined
            ? new ZkError(op, NATIVE.ZCLOSING, path, `ZooKeeper ${op} of ${path}: this client is closed; create a new one`)
            : new ZkError(op, NATIVE.ZAUTHFAILED, path, `ZooKeeper ${op} of ${path}: this client closed itself after its session expired, because the new session could not authenticate: ${this.authFailure.message}`, this.authFailure),
        );
        return;
      }
      const native = this.native;
      if (native === undefined) {
        reject(new ZkError(op, NATIVE.ZSESSIONEXPIRED, path, `ZooKeeper ${op} of ${path}: the session expired and a new one is not open yet; retry shortly`));
        return;
      }
      if (fence !== undefined && fence.generation !== this.currentSession?.generation) {
        reject(new ZkError(op, NATIVE.ZSESSIONEXPIRED, path, `ZooKeeper ${op} of ${path} refused: session ${fence.id} that guards it has expired`));
        return;
      }
      this.counts[kind] += 1;
      let settled = false;
      const sentAt = this.onOperation === undefined ? undefined : performance.now();
      const settle = (rc: number, value: T): void => {
        if (settled) return;
        settled = true;
        if (rc === NATIVE.ZOK) resolve(value);
        else reject(new ZkError(op, rc, path));
        if (sentAt !== undefined) {
          try {
            this.onOperation?.(op, performance.now() - sentAt, rc === NATIVE.ZOK);
          } catch {
            // a metrics hook must never break an operation
          }
        }
      };
      let submitted: number;
      try {
        submitted = start(native, settle);
      } catch (cause) {
        settled = true;
        reject(new ZkError(op, -8, path, `ZooKeeper ${op} of ${path} was rejected by the client: ${(cause as Error).message}`, cause));
        return;
      }
      if (submitted !== NATIVE.ZOK) settle(submitted, undefined as T);
    });
  }

  private wrapWatcher(watcher: Watcher): (type: number, state: number, path: string) => void {
    let fired = false;
    return (type, _state, path) => {
      if (fired) return;
      fired = true;
      watcher({ type: watchEventType(type), path });
    };
  }

  private openSession(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const native = createNativeClient({
        connect: this.options.connect,
        sessionTimeoutMs: this.options.sessionTimeoutMs,
        logLevel: process.env['ZK_PLAN_NATIVE_LOG'] === '1' ? NATIVE.LOG_LEVEL_ERROR : NATIVE.LOG_LEVEL_OFF,
      });
      let settled = false; // announced, or failed
      let connected = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        native.close();
        reject(error);
      };
      const timer = setTimeout(() => {
        fail(
          connected
            ? new ZkError('addAuth', -7, '/', `ZooKeeper at ${this.options.connect} accepted the session but did not answer add_auth within ${this.options.connectTimeoutMs} ms`)
            : new ZkConnectTimeoutError(this.options.connect, this.options.connectTimeoutMs),
        );
      }, this.options.connectTimeoutMs);
      const announce = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (this.currentState === 'closed') {
          native.close();
          reject(new ZkError('connect', NATIVE.ZCLOSING, '/', 'The client was closed while connecting'));
          return;
        }
        this.native = native;
        this.currentSession = { generation: ++this.generations, id: native.client_id };
        this.setState('connected');
        this.emit('session:started', this.currentSession);
        resolve();
      };
      native.on('connect', () => {
        if (!connected) {
          connected = true;
          // Until `announce`, `this.native` is not this handle: no operation (no claim) can go
          // through the session before its credentials are accepted.
          this.authenticate(native).then(announce, fail);
        } else if (this.native === native) {
          this.setState('connected');
        }
      });
      native.on('connecting', () => {
        if (this.native === native && this.currentState === 'connected') this.setState('suspended');
      });
      native.on('close', (_self, code) => {
        if (this.native === native) {
          this.onSessionLost();
        } else if (code === NATIVE.AUTH_FAILED_STATE) {
          // The server refused the credentials and the native client closed the handle by itself.
          fail(this.authError(this.options.auth?.[0] ?? { scheme: 'unknown', id: '' }));
        } else {
          const rc = code === NATIVE.EXPIRED_SESSION_STATE ? NATIVE.ZSESSIONEXPIRED : NATIVE.ZCLOSING;
          fail(new ZkError('connect', rc, '/', `The ZooKeeper handle closed (state ${code}) before its session was ready`));
        }
      });
      native.init({});
    });
  }

  /**
   * Adds the configured credentials to a new session, one after the other (the C client answers
   * every pending add_auth at the first reply). ZooKeeper answers AUTH_FAILED for a scheme it has
   * no provider for or credentials it refuses, then closes the connection.
   */
  private async authenticate(native: NativeZooKeeper): Promise<void> {
    for (const auth of this.options.auth ?? []) {
      const rc = await new Promise<number>((resolve) => {
        try {
          const submitted = native.add_auth(auth.scheme, auth.id, (result) => resolve(result));
          if (submitted !== NATIVE.ZOK) resolve(submitted);
        } catch {
          resolve(-8);
        }
      });
      if (rc === NATIVE.ZAUTHFAILED) throw this.authError(auth);
      if (rc !== NATIVE.ZOK) throw new ZkError('addAuth', rc, '/', `ZooKeeper add_auth (scheme ${auth.scheme}) failed: ${zkErrorCodeOf(rc)} (rc ${rc})`);
    }
  }

  /** The error for refused credentials; names the scheme and digest user, never the password. */
  private authError(auth: ZkAuth): ZkAuthError {
    const who = auth.scheme === 'digest' && auth.id.includes(':') ? ` of user '${auth.id.slice(0, auth.id.indexOf(':'))}'` : '';
    return new ZkAuthError(
      auth.scheme,
      this.options.connect,
      `authentication${who} failed (AUTH_FAILED) and the server closed the connection; check that the server has a provider for scheme '${auth.scheme}' and that the credentials are right`,
    );
  }

  /** The native handle closed by itself: the session expired (or auth failed). Open a new one until closed. */
  private onSessionLost(): void {
    const lost = this.currentSession;
    this.native = undefined;
    this.setState('expired');
    if (lost) this.emit('session:expired', lost);
    const reopen = (): void => {
      if (this.currentState === 'closed') return;
      this.openSession().catch((error: unknown) => {
        if (!(error instanceof ZkAuthError)) {
          setTimeout(reopen, RECONNECT_PAUSE_MS).unref();
          return;
        }
        // Credentials refused: retrying would loop for ever. Close, and say why in every later call.
        if (this.currentState === 'closed') return;
        this.authFailure = error;
        this.setState('closed');
        this.emit('auth:failed', error);
      });
    };
    reopen();
  }

  private setState(state: SessionState): void {
    if (this.currentState === state) return;
    this.currentState = state;
    this.emit('state', state);
  }
}

function watchEventType(type: number): WatchEvent['type'] {
  switch (type) {
    case NATIVE.CREATED_EVENT:
      return 'created';
    case NATIVE.DELETED_EVENT:
      return 'deleted';
    case NATIVE.CHANGED_EVENT:
      return 'changed';
    case NATIVE.CHILD_EVENT:
      return 'child';
    default:
      return 'session-lost';
  }
}
