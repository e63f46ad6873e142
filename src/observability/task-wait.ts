/**
 * `zk_plan_task_wait_seconds`: how long a claimed task waited to be claimed once runnable, read
 * from the ctimes of its nodes (ZooKeeper's clock, so the workers' clocks do not matter).
 */
import type { Histogram } from 'prom-client';
import { OWNER, READY, childPath, runnableEntryFor } from '../zk/layout.js';
import type { ObservedZkClient } from './observed.js';

/** How many plans' `ready` times are remembered for `task_wait_seconds`. */
const PLAN_READY_CACHE_SIZE = 1_000;

/** Measures the wait of each claimed task into a histogram; remembers the plans' `ready` times, which never change. */
export class TaskWaitMeter {
  private readonly planReady = new Map<string, Date>();

  /** `isStopped` tells when the metrics are gone: an answer that comes after is not observed. */
  constructor(
    private readonly zk: ObservedZkClient,
    private readonly histogram: Histogram,
    private readonly isStopped: () => boolean,
  ) {}

  /** Reads the ctimes of the task's owner, its runnable entry and its plan's `ready`, and observes the wait. */
  async measure(task: string, taskPlan: string): Promise<void> {
    const zk = this.zk;
    const planReady = this.planReady;
    const exists = zk.exists?.bind(zk);
    if (exists === undefined) return;
    // Sent on the claiming session right after the claim, so before the worker can delete these nodes.
    const knownReady = planReady.get(taskPlan);
    const [owner, entry, ready] = await Promise.all([
      exists(childPath(task, OWNER)),
      exists(runnableEntryFor(task)),
      knownReady === undefined
        ? exists(childPath(taskPlan, READY)).then((stat) => stat?.ctime)
        : knownReady,
    ]);
    if (this.isStopped() || owner === undefined || entry === undefined || ready === undefined)
      return;
    if (knownReady === undefined) {
      planReady.set(taskPlan, ready);
      if (planReady.size > PLAN_READY_CACHE_SIZE)
        planReady.delete(planReady.keys().next().value as string);
    }
    const runnableSince = Math.max(entry.ctime.getTime(), ready.getTime());
    this.histogram.observe(Math.max(0, owner.ctime.getTime() - runnableSince) / 1000);
  }

  /** Forgets the plans' `ready` times. */
  clear(): void {
    this.planReady.clear();
  }
}
