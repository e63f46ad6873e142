import { once } from 'node:events';
import { ZkAuthError } from '../errors/zk-auth-error.js';
import {
  ForeignAclError,
  NativeClientUnpatchedError,
  ZkError,
  isZkError,
} from '../errors/zk-error.js';
import { aclWithin, describeAcl, fromNativeAcl, toNativeAcl, type AclEntry } from './acl.js';
import {
  NATIVE,
  NATIVE_CREATE_MODE,
  nativeCreatesWithAcl,
  type NativeZooKeeper,
  type ZkAclEntry,
  type ZkStat,
} from './native-client.js';
import { openNativeSession } from './native-session.js';
import { ZkBase } from './zk-base.js';
import { WatchRegistry, type WatchKind } from './watch-registry.js';
import type {
  CreateMode,
  SessionState,
  Watcher,
  WriteOptions,
  ZkClientOptions,
  ZkOperationCounts,
  ZkSession,
} from './zk-client-types.js';

const RECONNECT_PAUSE_MS = 500;
/** How many checked paths `assertOwnAcl` remembers before it starts over. */
const OWN_ACL_MEMORY = 10_000;
/** The C client's ZCONNECTIONLOSS. */
const CONNECTION_LOSS_RC = -4;

/**
 * The single adapter over the native ZooKeeper client: camelCase methods, typed results and
 * `ZkError`s with stable codes. On session expiry it opens a new session by itself (the native
 * handle closes and must never be reused) and emits `session:expired` then `session:started`.
 *
 * @category ZooKeeper client
 */
export class ZkClient extends ZkBase {
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
  /** Nodes whose ACL `assertOwnAcl` found to be the configured one. */
  private readonly ownAclSeen = new Set<string>();
  /** The watchers of this client's watches (see WatchRegistry for why they are not handed to the native client). */
  private readonly watches = new WatchRegistry();
  /** Why the client closed itself (a new session could not authenticate), for the errors of later calls. */
  private authFailure: ZkAuthError | undefined;

  private constructor(readonly options: ZkClientOptions) {
    super();
    this.setMaxListeners(0); // every worker loop of a process listens for session expiry
    this.nativeAcl = options.acl === undefined ? undefined : toNativeAcl(options.acl);
    // Without the patched addon a node could only be given its ACL one round trip after its
    // create, a window in which anyone may create children under it: refuse rather than open it.
    if (this.nativeAcl !== undefined && !nativeCreatesWithAcl())
      throw new NativeClientUnpatchedError();
  }

  /** Connects and resolves once the first session is established; rejects with ZkConnectTimeoutError otherwise. */
  static async connect(options: ZkClientOptions): Promise<ZkClient> {
    const client = new ZkClient(options);
    await client.openSession();
    return client;
  }

  get sessionTimeoutMs(): number {
    return this.options.sessionTimeoutMs;
  }

  /** The connection state (see SessionState). */
  get state(): SessionState {
    return this.currentState;
  }

  /** The current session; throws when there is none (closed, or between an expiry and the next session). */
  get session(): ZkSession {
    if (this.currentSession === undefined || this.native === undefined) {
      throw new ZkError(
        'session',
        NATIVE.ZSESSIONEXPIRED,
        '/',
        'No ZooKeeper session right now: the last one expired and a new one is being opened',
      );
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
    this.watches.clear();
    native?.close();
  }

  /**
   * Creates a node; resolves its path. With `acl` configured the ACL travels in the create request
   * itself (the patched addon's a_create_acl), so the node never exists with any other ACL.
   */
  async create(
    path: string,
    data: Buffer | null = null,
    mode: CreateMode = 'persistent',
    options: WriteOptions = {},
  ): Promise<string> {
    // A sequential create sent twice could make two nodes: it is never resent after a connection loss.
    const resend = !mode.endsWith('sequential');
    const acl = this.nativeAcl;
    const flags = NATIVE_CREATE_MODE[mode];
    return await this.resendingCreate(path, options, resend, () =>
      this.submitOnce<string>('create', path, 'writes', options.fence, (native, settle) => {
        const answer = (rc: number, _error: string, createdPath: string): void =>
          settle(rc, createdPath);
        return acl === undefined
          ? native.a_create(path, data, flags, answer)
          : native.a_create_acl(path, data, flags, acl, answer);
      }),
    );
  }

  /**
   * Creates `path` and its missing ancestors; with `acl` configured, `path` itself (a parent of
   * plans, schedules, jobs or limits) must then have that ACL: one that existed world-open, made by
   * another tool or squatted, would let anyone list and join what zk-plan creates under it.
   */
  override async ensurePath(path: string): Promise<void> {
    await super.ensurePath(path);
    await this.assertOwnAcl(path, 'the node');
  }

  override async assertOwnAcl(path: string, what: string): Promise<void> {
    const configured = this.options.acl;
    if (configured === undefined || this.ownAclSeen.has(path)) return;
    const { acl } = await this.getAcl(path);
    if (aclWithin(acl, configured, this.options.auth ?? []) === false)
      throw new ForeignAclError(path, describeAcl(acl), what);
    // Parents and plans are checked again and again: remember them (bounded; forgetting only costs a read).
    if (this.ownAclSeen.size >= OWN_ACL_MEMORY) this.ownAclSeen.clear();
    this.ownAclSeen.add(path);
  }

  /** The node's ACL (perms as bits) and stat. */
  getAcl(path: string): Promise<{ acl: AclEntry[]; stat: ZkStat }> {
    return this.submit('getAcl', path, 'reads', undefined, (native, settle) =>
      native.a_get_acl(path, (rc, _error, acl, stat) =>
        settle(rc, { acl: fromNativeAcl(acl ?? []), stat: stat as ZkStat }),
      ),
    );
  }

  /** Replaces the node's ACL (ZooKeeper's setACL, which needs the admin permission). */
  setAcl(
    path: string,
    acl: readonly AclEntry[],
    version = -1,
    options: WriteOptions = {},
  ): Promise<void> {
    const nativeAcl = toNativeAcl(acl);
    return this.submit<void>('setAcl', path, 'writes', options.fence, (native, settle) =>
      native.a_set_acl(path, version, nativeAcl, (rc) => settle(rc, undefined)),
    );
  }

  exists(path: string, watcher?: Watcher): Promise<ZkStat | undefined> {
    return this.submit<ZkStat | undefined>('exists', path, 'reads', undefined, (native, settle) => {
      // An exists watch is set when the node exists and when it does not.
      const watch = this.registerWatch(
        path,
        'exists',
        watcher,
        (rc) => rc === NATIVE.ZOK || rc === NATIVE.ZNONODE,
      );
      const done = (rc: number, _error: string, stat: ZkStat): void => {
        watch.settled(rc);
        if (rc === NATIVE.ZNONODE) settle(NATIVE.ZOK, undefined);
        else settle(rc, stat);
      };
      return watch.started(
        watcher
          ? native.aw_exists(path, this.watches.nativeCallback, done)
          : native.a_exists(path, false, done),
      );
    });
  }

  getData(path: string, watcher?: Watcher): Promise<{ stat: ZkStat; data: Buffer | null }> {
    return this.submit('getData', path, 'reads', undefined, (native, settle) => {
      const watch = this.registerWatch(path, 'data', watcher, (rc) => rc === NATIVE.ZOK);
      const done = (rc: number, _error: string, stat: ZkStat, data: Buffer | null): void => {
        watch.settled(rc);
        settle(rc, { stat, data });
      };
      return watch.started(
        watcher
          ? native.aw_get(path, this.watches.nativeCallback, done)
          : native.a_get(path, false, done),
      );
    });
  }

  /** Children names in no particular order (ZooKeeper's), and the parent's stat. */
  getChildren(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: ZkStat }> {
    return this.submit('getChildren', path, 'reads', undefined, (native, settle) => {
      const watch = this.registerWatch(path, 'child', watcher, (rc) => rc === NATIVE.ZOK);
      const done = (rc: number, _error: string, children: string[], stat: ZkStat): void => {
        watch.settled(rc);
        settle(rc, { children: children ?? [], stat });
      };
      return watch.started(
        watcher
          ? native.aw_get_children2(path, this.watches.nativeCallback, done)
          : native.a_get_children2(path, false, done),
      );
    });
  }

  /**
   * Registers `watcher` (if any) for one try of a call; it is dropped again when the call was not
   * sent, or when its answer `rc` means ZooKeeper set no watch (`keeps(rc)` false).
   */
  private registerWatch(
    path: string,
    kind: WatchKind,
    watcher: Watcher | undefined,
    keeps: (rc: number) => boolean,
  ): { started: (rc: number) => number; settled: (rc: number) => void } {
    if (watcher === undefined) return { started: (rc) => rc, settled: () => undefined };
    const registration = this.watches.add(path, kind, watcher);
    return {
      started: (rc) => {
        if (rc !== NATIVE.ZOK) this.watches.remove(path, registration);
        return rc;
      },
      settled: (rc) => {
        if (!keeps(rc)) this.watches.remove(path, registration);
      },
    };
  }

  /** Replaces the node's data if its version is `version` (-1 matches every version); resolves the new stat. Sent again after a connection loss, guarded as `options` say. */
  setData(
    path: string,
    data: Buffer | null,
    version = -1,
    options: WriteOptions = {},
  ): Promise<ZkStat> {
    return this.resendingWrite('setData', path, options, () =>
      this.submitOnce<ZkStat>('setData', path, 'writes', options.fence, (native, settle) =>
        native.a_set(path, data, version, (rc, _error, stat) => settle(rc, stat)),
      ),
    );
  }

  /** Deletes the node if its version is `version` (-1 matches every version); it must have no children. Sent again after a connection loss, guarded as `options` say. */
  delete(path: string, version = -1, options: WriteOptions = {}): Promise<void> {
    return this.resendingWrite('delete', path, options, () =>
      this.submitOnce<void>('delete', path, 'writes', options.fence, (native, settle) =>
        native.a_delete_(path, version, (rc) => settle(rc, undefined)),
      ),
    );
  }

  /** Makes the server this session is connected to catch up with the leader before it answers what this session sends next. */
  sync(path: string): Promise<void> {
    return this.submit<void>('sync', path, 'reads', undefined, (native, settle) =>
      native.a_sync(path, (rc) => settle(rc, undefined)),
    );
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
    return await this.resending(resend, () => this.submitOnce(op, path, kind, fence, start));
  }

  /** Waits until the client is connected again; false when it closed, or did not reconnect within a session timeout plus a connect timeout. */
  protected override async reconnected(): Promise<boolean> {
    const deadline = AbortSignal.timeout(
      this.options.sessionTimeoutMs + this.options.connectTimeoutMs,
    );
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
            ? new ZkError(
                op,
                NATIVE.ZCLOSING,
                path,
                `ZooKeeper ${op} of ${path}: this client is closed; create a new one`,
              )
            : new ZkError(
                op,
                NATIVE.ZAUTHFAILED,
                path,
                `ZooKeeper ${op} of ${path}: this client closed itself after its session expired, because the new session could not authenticate: ${this.authFailure.message}`,
                this.authFailure,
              ),
        );
        return;
      }
      const native = this.native;
      if (native === undefined) {
        reject(
          new ZkError(
            op,
            NATIVE.ZSESSIONEXPIRED,
            path,
            `ZooKeeper ${op} of ${path}: the session expired and a new one is not open yet; retry shortly`,
          ),
        );
        return;
      }
      if (fence !== undefined && fence.generation !== this.currentSession?.generation) {
        reject(
          new ZkError(
            op,
            NATIVE.ZSESSIONEXPIRED,
            path,
            `ZooKeeper ${op} of ${path} refused: session ${fence.id} that guards it has expired`,
          ),
        );
        return;
      }
      this.counts[kind] += 1;
      let settled = false;
      const sentAt = this.onOperation === undefined ? undefined : performance.now();
      const settle = (rc: number, value: T): void => {
        if (settled) return;
        settled = true;
        if (rc === NATIVE.ZOK) resolve(value);
        else if (rc === NATIVE.ZCLOSING && this.currentState !== 'closed') {
          // The handle closed under it because the session expired: the C client fails what it had
          // queued (never sent while it reconnected) with ZCLOSING. Not applied, like a request sent
          // into a dropped connection: sent again through the next session unless fenced.
          reject(
            new ZkError(
              op,
              CONNECTION_LOSS_RC,
              path,
              `ZooKeeper ${op} of ${path}: the session expired before it was sent`,
            ),
          );
        } else reject(new ZkError(op, rc, path));
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
        reject(
          new ZkError(
            op,
            -8,
            path,
            `ZooKeeper ${op} of ${path} was rejected by the client: ${(cause as Error).message}`,
            cause,
          ),
        );
        return;
      }
      if (submitted !== NATIVE.ZOK) settle(submitted, undefined as T);
    });
  }

  private async openSession(): Promise<void> {
    const native = await openNativeSession(this.options, {
      reconnected: (handle) => {
        if (this.native === handle) this.setState('connected');
      },
      suspended: (handle) => {
        if (this.native === handle && this.currentState === 'connected') this.setState('suspended');
      },
      lost: (handle) => {
        if (this.native === handle) this.onSessionLost();
      },
    });
    if (this.currentState === 'closed') {
      native.close();
      throw new ZkError('connect', NATIVE.ZCLOSING, '/', 'The client was closed while connecting');
    }
    this.native = native;
    this.currentSession = { generation: ++this.generations, id: native.client_id };
    this.setState('connected');
    this.emit('session:started', this.currentSession);
  }

  /** The native handle closed by itself: the session expired (or auth failed). Open a new one until closed. */
  private onSessionLost(): void {
    const lost = this.currentSession;
    this.native = undefined;
    this.setState('expired');
    this.watches.loseAll(); // the native client tells no watcher of an expiry
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
