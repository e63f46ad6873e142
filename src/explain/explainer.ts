/**
 * The reads behind explain.task and explain.plan: the plan's view (every task with its state), its
 * control record, the task's owner and concurrency key, the key's limit, and the live workers of
 * the plan's parent. The decision itself is src/explain/explain-task.ts.
 *
 * The reads are not one snapshot, so they are ordered and checked against each other: the owner
 * node is read after the view, and the registry after the owner node (a pool's registry node lives
 * as long as the session that holds its tasks' owner nodes, so a registry read after an owner read
 * names that owner unless its pool is gone or never registered). A task the view shows running
 * whose owner node is gone by the owner read has moved on meanwhile (finished, failed or given
 * back): everything is read again, up to MAX_READS times, rather than call a live owner gone.
 */
import type { PlanControl } from '../control/plan-control.js';
import { PlanNotFoundError } from '../errors/plan-errors.js';
import type { ConcurrencyLimits } from '../limits/concurrency-limits.js';
import type { PlanDescriber } from '../plan/plan-describer.js';
import type { PlanView } from '../plan/plan-view.js';
import { listWorkers } from '../registry/worker-registry.js';
import type { TaskStore } from '../store/task-store.js';
import {
  TASK_PREFIX,
  WORKER_REGISTRY,
  assertSequentialPath,
  assertValidPath,
  childPath,
  parentOf,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import type { WorkerInfo } from '../registry/worker-info.js';
import type { PlanControlRecord } from '../control/control-record.js';
import {
  explainPlanFrom,
  explainTask,
  ownerOf,
  type Explanation,
  type PlanExplanation,
  type TaskFacts,
  type TaskOwner,
} from './explain-task.js';

/** How many times a task is read in all when its reads disagree (the view says running, its owner node is gone). */
const MAX_READS = 3;

interface PlanContext {
  readonly view: PlanView;
  readonly control: PlanControlRecord | undefined;
}

/** What was read of one task after the plan's view. */
interface TaskReads {
  readonly owner: TaskOwner | undefined;
  readonly concurrencyKey: string | undefined;
  readonly limit: TaskFacts['limit'];
}

export class Explainer {
  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly describer: PlanDescriber,
    private readonly control: PlanControl,
    private readonly limits: ConcurrencyLimits,
  ) {}

  async explainTask(task: string): Promise<Explanation> {
    assertSequentialPath('task', task, TASK_PREFIX);
    const plan = parentOf(task);
    for (let read = 1; ; read++) {
      const context = await this.planContext(plan);
      const reads = await this.readTask(task, context);
      const workers = await this.readWorkers(plan, [reads.owner]);
      if (read >= MAX_READS || !movedOn(task, context.view, reads.owner))
        return explainTask(this.facts(task, context, reads, workers));
    }
  }

  async explainPlan(plan: string): Promise<PlanExplanation> {
    assertValidPath('plan', plan);
    const context = await this.planContext(plan);
    const unfinished = context.view.tasks.filter((task) => task.state !== 'done');
    const reads = await Promise.all(unfinished.map((task) => this.readTask(task.task, context)));
    const workers = await this.readWorkers(
      plan,
      reads.map((read) => read.owner),
    );
    const explanations = await Promise.all(
      unfinished.map((task, index) => {
        const read = reads[index] as TaskReads;
        // Moved on since the view was read: explained from reads of its own, made afresh.
        if (movedOn(task.task, context.view, read.owner)) return this.explainTask(task.task);
        return explainTask(this.facts(task.task, context, read, workers));
      }),
    );
    return explainPlanFrom(context.view, explanations);
  }

  private async planContext(plan: string): Promise<PlanContext> {
    if ((await this.zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
    const [view, control] = await Promise.all([
      this.describer.describePlan(plan),
      this.control.read(plan),
    ]);
    return { view, control };
  }

  /** The task's owner (read after the view), definition and limit. */
  private async readTask(task: string, context: PlanContext): Promise<TaskReads> {
    const [owner, definition] = await Promise.all([
      this.store.reads.readOwner(task).catch(() => undefined),
      this.store.reads.readDefinition(task).catch(() => undefined),
    ]);
    const concurrencyKey = definition?.concurrencyKey;
    const limit =
      concurrencyKey === undefined
        ? undefined
        : await this.limits.readLimit(parentOf(context.view.plan), concurrencyKey);
    return {
      owner: owner && { workerId: owner.workerId, session: owner.sessionId },
      concurrencyKey,
      limit,
    };
  }

  /**
   * The live workers, read after the owners. When an owner's session is in no record, the registry
   * is synced and read once more: a pool writes its record right after it starts (and after a new
   * session), and that write may still have been on its way.
   */
  private async readWorkers(
    plan: string,
    owners: readonly (TaskOwner | undefined)[],
  ): Promise<WorkerInfo[]> {
    const parent = parentOf(plan);
    const workers = await listWorkers(this.zk, parent);
    const unregistered = owners.some(
      (owner) => owner !== undefined && ownerOf(owner, workers) === undefined,
    );
    if (!unregistered) return workers;
    await this.zk.sync(childPath(parent, WORKER_REGISTRY));
    return await listWorkers(this.zk, parent);
  }

  private facts(
    task: string,
    context: PlanContext,
    reads: TaskReads,
    workers: readonly WorkerInfo[],
  ): TaskFacts {
    return { task, ...context, ...reads, workers, now: Date.now() };
  }
}

/** The view says the task runs, but its owner node, read after, is gone: it finished, failed or was given back meanwhile. */
function movedOn(task: string, view: PlanView, owner: TaskOwner | undefined): boolean {
  return (
    owner === undefined &&
    view.tasks.some((candidate) => candidate.task === task && candidate.state === 'running')
  );
}
