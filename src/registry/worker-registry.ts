/**
 * The live worker registry: each worker pool keeps an ephemeral node under its parent
 * (`<parent>/zk-plan-workers/<id>`), so the node lives exactly as long as the pool's ZooKeeper
 * session does. It is created again after a new session replaces an expired one, its record is
 * rewritten at most once a second while the pool's running tasks change (so it costs no write per
 * task) and every HEARTBEAT_MS anyway (so a frozen worker shows), and it is deleted when the pool stops.
 */
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { IllegalStateError } from '../errors/usage-errors.js';
import { isZkError } from '../errors/zk-error.js';
import { WORKER_REGISTRY, assertValidPath, childPath } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { HEARTBEAT_MS, encodeWorkerInfo, parseWorkerInfo, type WorkerInfo } from './worker-info.js';

/** Least time between two rewrites of a pool's record. */
const UPDATE_INTERVAL_MS = 1_000;

/** zk-plan's own version, from its package.json (two levels up from src/registry and dist/registry). */
const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string })
  .version;

/** What a pool says about itself; the rest (host, pid, version, session, times) is filled in. */
export interface RegistrationInfo {
  readonly id: string;
  readonly functions: readonly string[];
  readonly loops: number;
  readonly allowInline: boolean;
  readonly allowShell: boolean;
}

export class WorkerRegistration {
  private readonly registry: string;
  private readonly path: string;
  private readonly startedAt = new Date();
  private running: readonly string[] = [];
  private stopped = false;
  private conflictReported = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly onSession = (): void => this.write();

  constructor(
    private readonly zk: Zk,
    parent: string,
    private readonly info: RegistrationInfo,
    private readonly onError: (error: unknown) => void,
  ) {
    this.registry = childPath(parent, WORKER_REGISTRY);
    this.path = childPath(this.registry, encodeURIComponent(info.id));
  }

  start(): void {
    this.zk.on('session:started', this.onSession);
    this.write();
    this.heartbeat = setInterval(() => this.write(), HEARTBEAT_MS);
    this.heartbeat.unref?.();
  }

  /** The pool's running tasks changed: rewrite the record soon (at most once per UPDATE_INTERVAL_MS). */
  runningChanged(running: readonly string[]): void {
    this.running = running;
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write();
    }, UPDATE_INTERVAL_MS);
    this.timer.unref?.();
  }

  /** Deletes the node (its session's end would remove it anyway). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    this.timer = undefined;
    this.zk.off('session:started', this.onSession);
    await this.writing;
    await this.zk.deleteIfPresent(this.path).catch(() => undefined);
  }

  /** Creates the node when this session has none, else rewrites it; one write at a time, in order. */
  private write(): void {
    if (this.stopped) return;
    this.writing = this.writing
      .then(() => this.writeOnce())
      .catch((error: unknown) => {
        // A connection problem, or no session right now: the next session:started, change or heartbeat writes it again.
        if (!isZkError(error) || !error.isConnectionProblem) this.onError(error);
      });
  }

  private async writeOnce(): Promise<void> {
    if (this.stopped) return;
    const session = this.zk.session;
    const record = encodeWorkerInfo(
      {
        ...this.info,
        host: hostname(),
        pid: process.pid,
        version: VERSION,
        running: this.running,
        startedAt: this.startedAt,
        updatedAt: new Date(),
        sessionId: session.id,
        sessionTimeoutMs: this.zk.sessionTimeoutMs,
      },
      this.path,
    );
    const holder = (await this.zk.exists(this.path))?.ephemeralOwner;
    if (holder === session.id) {
      await this.zk.setData(this.path, record);
    } else if (holder === undefined) {
      await this.zk.ensurePath(this.registry);
      await this.zk.createIfAbsent(this.path, record, 'ephemeral');
    } else if (!this.conflictReported) {
      this.conflictReported = true; // once: the heartbeat would repeat it every few seconds
      this.onError(
        new IllegalStateError(
          `another live session (${holder}) holds ${this.path}: give each worker pool its own workerId`,
        ),
      );
    }
  }
}

/** The live worker pools following `parent`, by id. */
export async function listWorkers(zk: Zk, parent: string): Promise<WorkerInfo[]> {
  assertValidPath('parent', parent);
  const registry = childPath(parent, WORKER_REGISTRY);
  const listing = await zk.tryGetChildren(registry);
  const infos = await Promise.all(
    (listing?.children ?? []).map(async (name) => {
      const node = await zk.tryGetData(childPath(registry, name));
      return node === undefined ? undefined : parseWorkerInfo(childPath(registry, name), node.data);
    }),
  );
  return infos
    .filter((info): info is WorkerInfo => info !== undefined)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
