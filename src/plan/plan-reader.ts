import { once } from 'node:events';
import { PlanNotFoundError, ResultNotFoundError } from '../errors/plan-errors.js';
import { WaitTimeoutError } from '../errors/usage-errors.js';
import { isZkError } from '../errors/zk-error.js';
import { decodeValue } from '../serialization/codec.js';
import { TASK_PREFIX, assertSequentialPath, assertValidPath, keptResultPathFor, sortBySerial } from '../zk/layout.js';
import type { WatchEvent, ZkClient } from '../zk/zk-client.js';
import { assertPositiveNumber } from '../config/options.js';
import { sleepUnless } from '../worker/wake-up.js';

/** Pause before retrying a read that failed because the connection or session was lost. */
const RETRY_PAUSE_MS = 200;

/** The ZooKeeper reads that tell how far a plan is, and its kept results. */
export class PlanReader {
  constructor(private readonly zk: ZkClient) {}

  /** The spec's `plan-completed?`: true once the plan has no task-* child left. */
  async planCompleted(plan: string): Promise<boolean> {
    return (await this.remainingTasks(plan)) === 0;
  }

  /** Number of task-* children of the plan. */
  async remainingTasks(plan: string, watcher?: (event: WatchEvent) => void): Promise<number> {
    assertValidPath('plan', plan);
    try {
      const listing = await this.zk.getChildren(plan, watcher);
      return sortBySerial(listing.children, TASK_PREFIX).length;
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) throw new PlanNotFoundError(plan);
      throw error;
    }
  }

  /**
   * Resolves when the plan has no task left. Driven by a child watch on the plan (no polling);
   * re-arms the watch after every change and after a new session replaces an expired one.
   */
  async waitForCompletion(plan: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    assertValidPath('plan', plan);
    assertPositiveNumber('timeoutMs', timeoutMs);
    const deadline = AbortSignal.timeout(timeoutMs);
    const giveUp = signal ? AbortSignal.any([deadline, signal]) : deadline;
    let remaining = Number.NaN;
    while (!giveUp.aborted) {
      const changed = new AbortController();
      try {
        remaining = await this.remainingTasks(plan, () => changed.abort());
      } catch (error) {
        if (!isZkError(error) || !error.isConnectionProblem) throw error;
        await Promise.race([sleepUnless(RETRY_PAUSE_MS, giveUp), once(this.zk, 'session:started', { signal: giveUp }).catch(() => undefined)]);
        continue;
      }
      if (remaining === 0) return;
      await sleepUnless(timeoutMs, giveUp, changed.signal);
    }
    if (signal?.aborted) throw signal.reason;
    throw new WaitTimeoutError(plan, timeoutMs, remaining);
  }

  /** The kept result of a task added with `{ keepResult: true }`, once it completed. */
  async getResult(task: string): Promise<unknown> {
    assertSequentialPath('task', task, TASK_PREFIX);
    const resultPath = keptResultPathFor(task);
    const kept = await this.zk.tryGetData(resultPath);
    if (kept === undefined) throw new ResultNotFoundError(task, resultPath);
    return decodeValue(resultPath, kept.data);
  }
}
