/**
 * One check of a sub-plan task (the built-in `zk-plan:sub-plan`), under the task's claim. Every
 * write is fenced by the claim's session, and each is safe to repeat, so a check cut short
 * anywhere (a crash, a lost reply, an expired session) is finished by the next claim:
 *
 * 1. The plan's record of the task's child (`<plan>/sub-plans/task-N`, `created: false`), made
 *    before anything else, so that pause, cancel and retryFailed of the plan find the child.
 * 2. The child plan node, at a path fixed by the task (`<parent>/<plan name>~task-N`), naming the
 *    task in its `origin` from its first write on.
 * 3. The node's origin checked: a path another plan's child holds fails the task for good.
 * 4. The record marked `created`: from then on a child found missing is known to have been made,
 *    and is never made again.
 * 5. The plan's own control, applied to the child before its tasks are ready (a pause or cancel
 *    that listed the plan's children before the child existed), and the task's node read (gone: the
 *    plan was deleted, and so is the child).
 * 6. The child's tasks and spec record (one pipelined batch), then its `ready`. A child found not
 *    ready was left half-built by a dead check: what it holds is cleared and it is filled again.
 * 7. "Not yet".
 *
 * Then, and at every later check, the child's state: running or paused is a "not yet" (no worker
 * held), completed gives the result, failed or cancelled fails the task for good.
 */
import { PlanCancelledError, PlanFinishedError, PlanNotFoundError } from '../errors/plan-errors.js';
import { PlanSpecError } from '../errors/spec-errors.js';
import { SubPlanFailedError } from '../errors/sub-plan-errors.js';
import { TaskSkippedError } from '../errors/trigger-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { TaskContext } from '../exec/task-context.js';
import { resolvePlanSettings } from '../config/plan-options.js';
import type { PlanControlRecord } from '../control/control-record.js';
import type { PlanStatus } from '../plan/plan-status.js';
import type { PlanWriter } from '../plan/plan-writer.js';
import type { WorkerInfo } from '../registry/worker-info.js';
import { ScheduleStore } from '../schedule/schedule-store.js';
import { clearHalfBuilt } from '../spec/half-built-plan.js';
import type { CheckedSpec, PlanSpec } from '../spec/plan-spec.js';
import { readSpecRecord } from '../spec/spec-record.js';
import { checkSpecForSubmit, fillPlan, type SpecRegistry } from '../spec/submit-plan.js';
import { skip } from '../trigger/skip.js';
import {
  CONTROL,
  FAILED,
  MAX_SUB_PLAN_DEPTH,
  READY,
  TASK_PREFIX,
  hasSequentialName,
  parentOf,
  subPlanDepth,
  subPlanPath,
} from '../zk/layout.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import { decideSubPlan, type ChildSeen } from './sub-plan-decision.js';
import { parentTaskOf } from './sub-plan-origin.js';
import {
  createSubPlanRecord,
  markSubPlanCreated,
  readSubPlanRecord,
  type SubPlanRecord,
} from './sub-plan-record.js';
import { checkSubPlan, childParams, type CheckedSubPlan } from './sub-plan-target.js';

/**
 * What a sub-plan check needs of the process: ZooKeeper, how to build a plan, the functions and
 * workers a child spec is checked against, how plans stand, their results and their control.
 */
export interface SubPlanServices {
  readonly zk: Zk;
  readonly writer: PlanWriter;
  readonly functions: SpecRegistry;
  listWorkers(parent: string): Promise<WorkerInfo[]>;
  planStatus(plan: string): Promise<PlanStatus>;
  getResult(task: string): Promise<unknown>;
  readControl(plan: string): Promise<PlanControlRecord | undefined>;
  pause(plan: string): Promise<unknown>;
  resume(plan: string): Promise<void>;
  deletePlan(plan: string): Promise<void>;
  cancel(plan: string, reason: string): Promise<void>;
}

/** The part of a task's context a check uses. */
export type SubPlanContext = Pick<TaskContext, 'task' | 'plan' | 'notYet'>;

export class SubPlanRunner {
  constructor(private readonly services: SubPlanServices) {}

  /** One check: the child made (or finished) if it is not, then its state turned into the task's outcome. */
  async check(
    ctx: SubPlanContext,
    fence: ZkSession,
    params: readonly unknown[],
    inputs: readonly unknown[],
  ): Promise<unknown> {
    const { task, plan } = ctx;
    const definition = checkDefinition(task, params);
    if (subPlanDepth(plan) >= MAX_SUB_PLAN_DEPTH)
      throw new SubPlanFailedError(
        task,
        `sub-plans nest at most ${MAX_SUB_PLAN_DEPTH} deep, and its plan ${plan} is that deep already`,
      );
    const child = subPlanPath(definition.parent ?? parentOf(plan), task);
    const read = await readSubPlanRecord(this.services.zk, task);
    let record: SubPlanRecord = { child, created: false };
    if (read === undefined) {
      await createSubPlanRecord(this.services.zk, task, child, fence);
    } else if (read.record === undefined || read.record.child !== child) {
      throw new SubPlanFailedError(
        task,
        `its record ${parentOf(child)} names no child plan of this task (written by another tool?)`,
        child,
      );
    } else record = read.record;
    const step = decideSubPlan(child, record, await this.look(child, task));
    switch (step.kind) {
      case 'fail':
        throw new SubPlanFailedError(task, step.reason, child);
      case 'wait':
        return ctx.notYet(step.reason, { afterMs: definition.checkEveryMs });
      case 'done':
        return await this.resultOf(task, child, definition);
      case 'build':
      case 'refill': {
        const tasks = await this.build(
          { task, plan, child, fence },
          definition,
          inputs,
          step.kind === 'refill',
        );
        return ctx.notYet(`its child plan ${child} was started (${tasks} task(s))`, {
          afterMs: definition.checkEveryMs,
        });
      }
    }
  }

  /** How the child stands: its node's origin, its children, and (only when it may have failed) its status. */
  private async look(child: string, task: string): Promise<ChildSeen> {
    const { zk } = this.services;
    // The node first, then its children: a plan deleted between the two reads reads as absent.
    const node = await zk.tryGetData(child);
    const listing = node === undefined ? undefined : await zk.tryGetChildren(child);
    if (node === undefined || listing === undefined) return { exists: false };
    const madeBy = parentTaskOf(child, node.data);
    const { children } = listing;
    const control = children.includes(CONTROL)
      ? (await this.services.readControl(child))?.state
      : undefined;
    const failed = children.includes(FAILED) ? await this.failedOf(child) : undefined;
    return {
      exists: true,
      ours: madeBy === task,
      ...(madeBy === undefined ? {} : { madeBy: `sub-plan task ${madeBy}` }),
      ready: children.includes(READY),
      tasksLeft: children.filter((name) => hasSequentialName(name, TASK_PREFIX)).length,
      ...(control === undefined ? {} : { control }),
      ...(failed === undefined ? {} : { failed }),
    };
  }

  /** The child's failed tasks (by key) when it failed; undefined when its `failed` marker is stale. */
  private async failedOf(child: string): Promise<string[] | undefined> {
    const status = await this.services.planStatus(child);
    if (status.state !== 'failed') return undefined;
    return status.failed.map((failed) => failed.key ?? failed.task);
  }

  /**
   * Makes the child (or fills again one a dead check left half-built), then readies it; resolves
   * how many tasks it has. The child's origin is checked before the record is marked `created`,
   * and the plan's control reaches the child before its tasks are ready: a crash anywhere before
   * `ready` is followed by a refill that does it again.
   */
  private async build(
    where: { task: string; plan: string; child: string; fence: ZkSession },
    definition: CheckedSubPlan,
    inputs: readonly unknown[],
    halfBuilt: boolean,
  ): Promise<number> {
    const { zk, writer } = this.services;
    const { task, plan, child, fence } = where;
    const { spec, defaults } = await this.specOf(task, definition);
    const params = {
      ...defaults,
      ...asFailure(task, child, () => childParams(definition, inputs, task)),
    };
    const checked = await this.checkChildSpec(task, child, spec, params, definition);
    if (!halfBuilt) {
      try {
        await writer.createPlanAt(child, checked.options, { fence }, { parentTask: task });
      } catch (error) {
        // A resend of a create whose first try landed, or a plan another task made: looked at below.
        if (!isZkError(error, 'NODE_EXISTS')) throw error;
      }
    }
    const node = await zk.tryGetData(child);
    const listing = node === undefined ? undefined : await zk.tryGetChildren(child);
    if (node === undefined || listing === undefined)
      throw new SubPlanFailedError(
        task,
        `its child plan ${child} was deleted while it was made`,
        child,
      );
    if (parentTaskOf(child, node.data) !== task)
      throw new SubPlanFailedError(
        task,
        `the path of its child plan, ${child}, is taken by another plan`,
        child,
      );
    try {
      return await this.finishChild(where, checked, { spec, params }, listing.children);
    } catch (error) {
      // Whatever stopped it (a record deleted under its versioned write, a fill into a plan being
      // deleted): a child whose plan went meanwhile must not outlive it.
      if (!(await this.planIsGone(plan, task, fence).catch(() => false))) throw error;
      await this.abandon(child, task);
      throw new SubPlanFailedError(task, `its plan was deleted while it made ${child}`, child);
    }
  }

  /** Steps 4–6 for a child whose node names this task: `created`, the plan's control, the tasks and `ready`. */
  private async finishChild(
    where: { task: string; plan: string; child: string; fence: ZkSession },
    checked: CheckedSpec,
    source: { spec: PlanSpec; params: Readonly<Record<string, unknown>> },
    children: readonly string[],
  ): Promise<number> {
    const { zk, writer } = this.services;
    const { task, plan, child, fence } = where;
    const read = await readSubPlanRecord(zk, task);
    if (read?.record === undefined) throw new SubPlanFailedError(task, 'its record is gone', child);
    if (!read.record.created) await markSubPlanCreated(zk, task, child, read.stat, fence);
    if ((await this.followPlanControl(plan, child)) === 'cancelled')
      throw new PlanCancelledError(plan, `it was cancelled while task ${task} made ${child}`);
    // Its plan was deleted after the delete listed the plan's children (the task went first).
    if ((await zk.exists(task)) === undefined)
      throw new SubPlanFailedError(task, 'its task node is gone', child);
    if (children.includes(READY)) return checked.order.length;
    await clearHalfBuilt(zk, child, children, fence, resolvePlanSettings(checked.options).history);
    await fillPlan(writer, zk, child, checked, source, { plan: child, fence });
    return checked.order.length;
  }

  /**
   * Whether the task is gone with its plan (deleted), not by a cancel (whose record stays; the child
   * followed it). Only while the claim's session lives: then no other worker can have finished the
   * task, so a task gone is a task deleted.
   */
  private async planIsGone(plan: string, task: string, fence: ZkSession): Promise<boolean> {
    const { zk } = this.services;
    if (!zk.isCurrent(fence) || (await zk.exists(task)) !== undefined) return false;
    return (await this.services.readControl(plan))?.state !== 'cancelled';
  }

  /** Deletes a child whose plan is gone, if it is still this task's (a plan made since at its path is another's). */
  private async abandon(child: string, task: string): Promise<void> {
    const node = await this.services.zk.tryGetData(child);
    if (node === undefined || parentTaskOf(child, node.data) !== task) return;
    await this.services.deletePlan(child).catch((error: unknown) => {
      if (!(error instanceof PlanNotFoundError)) throw error;
    });
  }

  /**
   * The child's spec: the definition's own, or its schedule's as stored now, with the schedule's
   * params as defaults (the sub-plan's params and inputs win over them).
   */
  private async specOf(
    task: string,
    definition: CheckedSubPlan,
  ): Promise<{ spec: PlanSpec; defaults: Readonly<Record<string, unknown>> }> {
    const { source } = definition;
    if (source.kind === 'spec') return { spec: source.spec, defaults: {} };
    const read = await new ScheduleStore(this.services.zk, source.schedules).read(source.schedule);
    if (read === undefined || read.schedule.removing === true)
      throw new SubPlanFailedError(
        task,
        `schedule "${source.schedule}" (under ${source.schedules}), whose spec it runs, does not exist`,
      );
    return { spec: read.schedule.spec, defaults: read.schedule.params };
  }

  /** The child spec, checked as a schedule's tick checks its own (a function no live worker has yet is no reason to fail). */
  private async checkChildSpec(
    task: string,
    child: string,
    spec: PlanSpec,
    params: Readonly<Record<string, unknown>>,
    definition: CheckedSubPlan,
  ): Promise<CheckedSpec> {
    let checked: CheckedSpec;
    try {
      checked = await checkSpecForSubmit(
        spec,
        this.services.functions,
        await this.services.listWorkers(parentOf(child)),
        { params, allowUnknownFunctions: true },
      );
    } catch (error) {
      if (!(error instanceof PlanSpecError || error instanceof InvalidArgumentError)) throw error;
      throw new SubPlanFailedError(task, `its child spec is invalid: ${error.message}`, child);
    }
    if (definition.result !== undefined && !checked.tasks.has(definition.result))
      throw new SubPlanFailedError(
        task,
        `its result names task "${definition.result}", which the child spec does not have`,
        child,
      );
    return checked;
  }

  /**
   * A pause or cancel of the plan that listed the plan's children before the child existed: the
   * child follows it here, before its tasks are ready. After a pause the plan's control is
   * read again: a resume that listed the children before this pause landed did not resume the
   * child, so the child is resumed here, and the plan read once more. Resolves how the plan stood
   * last.
   */
  private async followPlanControl(
    plan: string,
    child: string,
  ): Promise<'running' | 'paused' | 'cancelled'> {
    let pausedHere = false;
    for (;;) {
      const control = await this.services.readControl(plan);
      if (control?.state === 'cancelled') {
        await this.services
          .cancel(child, `its parent plan ${plan} was cancelled`)
          .catch(ignoreEnded);
        return 'cancelled';
      }
      if (control === undefined) {
        if (pausedHere) await this.services.resume(child).catch(ignoreEnded);
        return 'running';
      }
      if (pausedHere) return 'paused'; // still paused after this pause landed: a later resume lists the child
      await this.services.pause(child).catch(ignoreEnded);
      pausedHere = true;
    }
  }

  /** The task's result once the child completed: the named task's kept result, or the child's path and state. */
  private async resultOf(
    task: string,
    child: string,
    definition: CheckedSubPlan,
  ): Promise<unknown> {
    if (definition.result === undefined) return { plan: child, state: 'completed' };
    const record = await readSpecRecord(this.services.zk, child);
    const path = record?.tasks[definition.result];
    if (typeof path !== 'string' || parentOf(path) !== child)
      throw new SubPlanFailedError(
        task,
        `its child plan ${child} has no task "${definition.result}" in its spec record`,
        child,
      );
    try {
      return await this.services.getResult(path);
    } catch (error) {
      if (error instanceof TaskSkippedError)
        return skip(`the child's task "${definition.result}" was skipped: ${error.reason}`);
      if (error instanceof InvalidArgumentError || isNotFound(error))
        throw new SubPlanFailedError(
          task,
          `the child's task "${definition.result}" kept no result (give it keepResult: true)`,
          child,
        );
      throw error;
    }
  }
}

/** A child that finished, is gone or was cancelled meanwhile: the next check reads how it ended. */
function ignoreEnded(error: unknown): void {
  if (
    error instanceof PlanFinishedError ||
    error instanceof PlanNotFoundError ||
    error instanceof PlanCancelledError
  )
    return;
  throw error;
}

function checkDefinition(task: string, params: readonly unknown[]): CheckedSubPlan {
  try {
    return checkSubPlan(params[0], `task ${task}`);
  } catch (error) {
    // Checked when the task was added; a task another tool wrote may hold anything. No try can pass.
    if (!(error instanceof InvalidArgumentError)) throw error;
    throw new SubPlanFailedError(task, `its sub-plan is invalid: ${error.message}`);
  }
}

/** `compute`, with an InvalidArgumentError as the task's failure for good. */
function asFailure<T>(task: string, child: string, compute: () => T): T {
  try {
    return compute();
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    throw new SubPlanFailedError(task, error.message, child);
  }
}

function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'RESULT_NOT_FOUND';
}
