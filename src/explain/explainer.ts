/**
 * The reads behind explainTask and explainPlan: the plan's view (every task with its state), its
 * control record, the task's owner and concurrency key, the key's limit, and the live workers of
 * the plan's parent. The decision itself is src/explain/explain-task.ts.
 */
import type { PlanControl } from '../control/plan-control.js';
import { PlanNotFoundError } from '../errors/plan-errors.js';
import type { ConcurrencyLimits } from '../limits/concurrency-limits.js';
import type { PlanDescriber } from '../plan/plan-describer.js';
import type { PlanView } from '../plan/plan-view.js';
import { listWorkers } from '../registry/worker-registry.js';
import type { TaskStore } from '../store/task-store.js';
import { TASK_PREFIX, assertSequentialPath, assertValidPath, parentOf } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import type { WorkerInfo } from '../registry/worker-info.js';
import type { PlanControlRecord } from '../control/control-record.js';
import { explainPlanFrom, explainTask, type Explanation, type PlanExplanation } from './explain-task.js';

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
    const context = await this.planContext(plan);
    return await this.explainIn(task, context);
  }

  async explainPlan(plan: string): Promise<PlanExplanation> {
    assertValidPath('plan', plan);
    const context = await this.planContext(plan);
    const unfinished = context.view.tasks.filter((task) => task.state !== 'done');
    const explanations = await Promise.all(unfinished.map((task) => this.explainIn(task.task, context)));
    return explainPlanFrom(context.view, explanations);
  }

  private async planContext(plan: string): Promise<{ view: PlanView; control: PlanControlRecord | undefined; workers: WorkerInfo[] }> {
    if ((await this.zk.exists(plan)) === undefined) throw new PlanNotFoundError(plan);
    const [view, control, workers] = await Promise.all([this.describer.describePlan(plan), this.control.read(plan), listWorkers(this.zk, parentOf(plan))]);
    return { view, control, workers };
  }

  private async explainIn(task: string, context: { view: PlanView; control: PlanControlRecord | undefined; workers: WorkerInfo[] }): Promise<Explanation> {
    const [owner, definition] = await Promise.all([this.store.readOwner(task).catch(() => undefined), this.store.readDefinition(task).catch(() => undefined)]);
    const concurrencyKey = definition?.concurrencyKey;
    const limit = concurrencyKey === undefined ? undefined : await this.limits.readLimit(parentOf(context.view.plan), concurrencyKey);
    return explainTask({ task, ...context, ownerSession: owner?.sessionId, concurrencyKey, limit, now: Date.now() });
  }
}
