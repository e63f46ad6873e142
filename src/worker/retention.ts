import type { ResolvedRetention } from '../config/options.js';
import { isZkError } from '../errors/zk-error.js';
import { classifyTask } from '../store/task-state.js';
import type { TaskStore } from '../store/task-store.js';
import {
  CONTROL,
  FAILED,
  READY,
  RETENTION_LOCK,
  SUB_PLAN_SEPARATOR,
  TASK_PREFIX,
  childPath,
  hasSequentialName,
  nameOf,
  parentOf,
} from '../zk/layout.js';
import { parentTaskOf } from '../subplan/sub-plan-origin.js';
import { parseControlRecord } from '../control/control-record.js';
import { retryReleaseWhileSessionLives } from '../zk/retry-release.js';
import type { Zk } from '../zk/zk.js';
import type { ZkSession } from '../zk/zk-client-types.js';

/** A plan that has finished: no task left (completed), or failed with nothing left that can run. */
export interface FinishedPlan {
  readonly plan: string;
  /** When the plan was created (ms since the epoch, ZooKeeper's clock). */
  readonly createdAt: number;
}

/**
 * Which finished plans go (a pure decision): those created longer ago than `maxAgeMs`, and beyond
 * the newest `maxCount`, the older ones.
 */
export function plansToDelete(
  finished: readonly FinishedPlan[],
  now: number,
  retention: Pick<ResolvedRetention, 'maxAgeMs' | 'maxCount'>,
): string[] {
  const newestFirst = [...finished].sort(
    (a, b) => b.createdAt - a.createdAt || (a.plan < b.plan ? 1 : -1),
  );
  return newestFirst
    .filter(
      (entry, index) => index >= retention.maxCount || now - entry.createdAt > retention.maxAgeMs,
    )
    .map((entry) => entry.plan);
}

/**
 * Deletes the finished plans under a parent that its retention no longer keeps. One process of
 * the cluster sweeps at a time: it holds the ephemeral `<parent>/zk-plan-retention` while it does
 * (a process that dies holding it lets go at its session's end). Every step is a read or a
 * deletion that may be repeated, so a sweep cut short anywhere is finished by the next one.
 */
export class RetentionSweeper {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sweeping: Promise<number> | undefined;
  private stopped = false;
  /** Plans this process has seen finished, with their creation time. */
  private readonly knownFinished = new Map<string, number>();

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly parent: string,
    private readonly retention: ResolvedRetention,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Sweeps every `sweepIntervalMs` until `stop()`. */
  start(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sweep()
        .catch((error: unknown) => this.onError(error))
        .finally(() => this.start());
    }, this.retention.sweepIntervalMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
  }

  /** One sweep, if no other process is sweeping; resolves the number of plans deleted. */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<number> {
    const lock = childPath(this.parent, RETENTION_LOCK);
    const session = this.zk.session;
    let held: boolean;
    try {
      held = await this.zk.createIfAbsent(lock, null, 'ephemeral', { fence: session });
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return 0; // no parent, no plans
      throw error;
    }
    // A lock of our own session left by a sweep whose release failed is ours to use.
    if (!held) held = (await this.zk.exists(lock))?.ephemeralOwner === session.id;
    if (!held) return 0;
    try {
      const plans = new Set((await this.store.reads.listPlans(this.parent)) ?? []);
      for (const plan of this.knownFinished.keys())
        if (!plans.has(plan)) this.knownFinished.delete(plan);
      let deleted = 0;
      // Plans seen finished before are not read again (a sweep costs no read per finished plan), only confirmed before they go.
      for (const plan of plans) {
        if (this.stopped || !this.zk.isCurrent(session)) return deleted;
        if ((await this.childHold(plan).catch(() => 'free' as const)) === 'orphan') {
          // A sub-plan task's child whose plan is gone (deleted while the task made it, or by a
          // tool that does not know sub-plans): nobody reads it any more, whatever it stands at.
          this.knownFinished.delete(plan);
          await this.deleteOrphan(plan);
          deleted += 1;
          continue;
        }
        if (this.knownFinished.has(plan)) continue;
        const entry = await this.finishedPlan(plan);
        if (entry !== undefined) this.knownFinished.set(plan, entry.createdAt);
      }
      const finished = [...this.knownFinished].map(([plan, createdAt]) => ({ plan, createdAt }));
      for (const plan of plansToDelete(finished, Date.now(), this.retention)) {
        if (this.stopped || !this.zk.isCurrent(session)) break; // the lock went with the session: another process takes over
        this.knownFinished.delete(plan);
        if ((await this.finishedPlan(plan)) === undefined) continue; // tasks were added, or it was retried, since
        await this.zk.deleteRecursive(plan);
        deleted += 1;
      }
      return deleted;
    } finally {
      await this.release(lock, session).catch(() =>
        retryReleaseWhileSessionLives(this.zk, session, () => this.release(lock, session)),
      );
    }
  }

  /** Deletes the lock if this session still holds it; a resend after a lost reply never takes another process's lock made since. */
  private async release(lock: string, session: ZkSession): Promise<void> {
    const stat = await this.zk.exists(lock);
    if (stat !== undefined && stat.ephemeralOwner === session.id)
      await this.zk.deleteIfPresent(lock, stat.version, {
        fence: session,
        incarnation: stat.czxid,
      });
  }

  /**
   * For a sub-plan task's child (src/subplan): `orphan` once the task's plan is gone, `held` while
   * the task is there (it has not taken the child's result yet: the child stays, finished or not),
   * `free` otherwise, and for every other plan (read only for names with a `~`).
   */
  private async childHold(plan: string): Promise<'orphan' | 'held' | 'free'> {
    if (!nameOf(plan).includes(SUB_PLAN_SEPARATOR)) return 'free';
    const node = await this.zk.tryGetData(plan);
    const task = node === undefined ? undefined : parentTaskOf(plan, node.data);
    if (task === undefined) return 'free';
    if ((await this.zk.exists(parentOf(task))) === undefined) return 'orphan';
    return (await this.zk.exists(task)) === undefined ? 'free' : 'held';
  }

  /** Deletes an orphaned child as plans.delete does: every task's `ready` first, so that none is taken again. */
  private async deleteOrphan(plan: string): Promise<void> {
    const tasks = (await this.store.reads.listTasks(plan)) ?? [];
    await Promise.all(tasks.map((task) => this.zk.deleteIfPresent(childPath(task, READY))));
    await this.zk.deleteRecursive(plan);
  }

  /** The plan as a finished one, or undefined while it can still move (or its sub-plan task has not read it yet). */
  private async finishedPlan(plan: string): Promise<FinishedPlan | undefined> {
    // A child whose hold cannot be read now is kept until a sweep can read it.
    if ((await this.childHold(plan).catch(() => 'held' as const)) === 'held') return undefined;
    const listing = await this.zk.tryGetChildren(plan);
    if (listing === undefined) return undefined;
    const createdAt =
      listing.stat.ctime instanceof Date
        ? listing.stat.ctime.getTime()
        : Number(listing.stat.ctime);
    const tasks = listing.children.filter((name) => hasSequentialName(name, TASK_PREFIX));
    if (listing.children.includes(CONTROL)) {
      // Cancelled is final (whatever a cancel cut short left of its tasks); paused is not finished.
      const control = await this.zk.tryGetData(childPath(plan, CONTROL));
      return control !== undefined &&
        parseControlRecord(childPath(plan, CONTROL), control.data).state === 'cancelled'
        ? { plan, createdAt }
        : undefined;
    }
    if (!listing.children.includes(READY)) return undefined; // still being built
    if (tasks.length === 0) return { plan, createdAt };
    if (!listing.children.includes(FAILED)) return undefined;
    // Failed: finished when nothing in it can move any more (every task failed or waiting behind a failure).
    for (const name of tasks) {
      const task = await this.store.reads.inspectTask(childPath(plan, name));
      if (task === undefined) continue;
      const state = classifyTask(task.children, task.childVersion);
      if (state !== 'failed' && state !== 'waiting') return undefined;
    }
    return { plan, createdAt };
  }
}
