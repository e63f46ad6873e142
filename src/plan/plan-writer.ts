import { ArgTaskNotFoundError, ForeignArgTaskError, PlanNotFoundError } from '../errors/plan-errors.js';
import { UnknownFunctionError } from '../errors/task-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { FunctionRegistry } from '../exec/function-registry.js';
import { assertTaskSpec, toDefinition, type TaskSettings, type TaskSpec } from '../exec/task-spec.js';
import { assertPositiveNumber } from '../config/options.js';
import { DEFAULT_RETRY_POLICY, resolvePlanSettings, resolveRetryPolicy, type PlanOptions, type RetryPolicy } from '../config/plan-options.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import type { TaskStore } from '../worker/task-store.js';
import {
  ATTEMPTS,
  DEP_PREFIX,
  FAILED,
  PLAN_PREFIX,
  PROV_PREFIX,
  READY,
  RESULT,
  TASK_PREFIX,
  argPathForDep,
  assertSequentialPath,
  assertValidPath,
  childPath,
  keptResultPathFor,
  parentOf,
} from '../zk/layout.js';
import type { ZkClient } from '../zk/zk-client.js';
import { readValue } from '../zk/chunked-value.js';
import { IncompleteValueError } from '../errors/value-errors.js';

/** Options of `addTask`. */
export interface AddTaskOptions extends RetryPolicy {
  /** Keep the task's result in the plan after the task is done, for `getResult`. @defaultValue false */
  readonly keepResult?: boolean;
  /** Time limit of one run of the function, in ms: then its signal aborts and the try fails (TASK_TIMEOUT). @defaultValue none */
  readonly timeoutMs?: number;
}

/** The ZooKeeper writes that build plans: plan and task nodes, dependencies, ready markers. */
export class PlanWriter {
  constructor(
    private readonly zk: ZkClient,
    private readonly store: TaskStore,
    private readonly functions: FunctionRegistry,
  ) {}

  /** The spec's `create-plan`: a new persistent sequential `plan-` node under `parent` (created if missing). */
  async createPlan(parent: string, options: PlanOptions = {}): Promise<string> {
    assertValidPath('parent', parent);
    const settings = resolvePlanSettings(options);
    await this.zk.ensurePath(parent);
    return await this.zk.create(childPath(parent, PLAN_PREFIX), encodeValue(settings, 'plan settings'), 'persistent-sequential');
  }

  /**
   * The spec's `add-task`: a sequential `task-` node holding the task's definition, one
   * dependency per arg task (in order: their results become the function's arguments in that
   * order), then `ready`. On failure nothing half-built is left that a worker could run.
   */
  async addTask(plan: string, spec: TaskSpec, argTasks: readonly string[] = [], options: AddTaskOptions = {}): Promise<string> {
    assertValidPath('plan', plan);
    assertTaskSpec(spec);
    this.assertArgTasks(plan, argTasks);
    const settings = taskSettings(options);
    if (spec.kind === 'call' && this.functions.size > 0 && !this.functions.has(spec.fn)) {
      throw new UnknownFunctionError(spec.fn, undefined, this.functions.names());
    }
    const definition = encodeValue(toDefinition(spec, settings), `The task definition for plan ${plan}`, plan);
    await Promise.all([...new Set(argTasks)].map((arg) => this.assertArgTaskExists(arg)));

    let task: string;
    try {
      task = await this.zk.create(childPath(plan, TASK_PREFIX), definition, 'persistent-sequential');
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) throw new PlanNotFoundError(plan);
      throw error;
    }
    try {
      for (const arg of argTasks) await this.addDependency(arg, task);
      await this.zk.create(childPath(task, READY));
    } catch (error) {
      await this.zk.deleteRecursive(task).catch(() => undefined); // not ready, so no worker runs it meanwhile
      throw error;
    }
    return task;
  }

  /** The spec's `mark-as-ready`: creates `ready` under a plan (or task); idempotent. */
  async markAsReady(path: string): Promise<void> {
    assertValidPath('plan', path);
    try {
      await this.zk.createIfAbsent(childPath(path, READY));
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) throw new PlanNotFoundError(path);
      throw error;
    }
  }

  /**
   * The spec's `add-dependency`: `dep-N` under the dependent, then `prov-M` under the producer
   * holding the dep's path. The producer may be finishing at this very moment: it lists prov-*
   * only after removing its `ready`, so if `ready` is still there after our prov-M exists, the
   * producer will see it; if not, we hand its result over ourselves.
   */
  private async addDependency(producer: string, dependent: string): Promise<void> {
    const dep = await this.zk.create(childPath(dependent, DEP_PREFIX), null, 'persistent-sequential');
    let prov: string;
    try {
      prov = await this.zk.create(childPath(producer, PROV_PREFIX), encodeValue(dep, 'dependency link'), 'persistent-sequential');
    } catch (error) {
      if (!isZkError(error, 'NO_NODE')) throw error;
      return await this.takeKeptResult(producer, dep); // the producer completed and is gone
    }
    if (await this.store.isReady(producer)) return;
    const finishing = await readValue(this.zk, childPath(producer, RESULT)).catch((error: unknown) => {
      if (error instanceof IncompleteValueError) return undefined; // being deleted: fall back to the kept result
      throw error;
    });
    if (finishing !== undefined) {
      decodeValue(childPath(producer, RESULT), finishing);
      await this.store.propagate(prov, finishing);
      return;
    }
    await this.zk.deleteIfPresent(prov);
    await this.takeKeptResult(producer, dep);
  }

  /** Satisfies `dep` from the producer's kept result, or fails saying why the producer cannot serve as an input. */
  private async takeKeptResult(producer: string, dep: string): Promise<void> {
    const kept = await readValue(this.zk, keptResultPathFor(producer));
    if (kept === undefined) {
      throw new ArgTaskNotFoundError(
        producer,
        'has already completed and its result was not kept (add it with { keepResult: true } to depend on it later), or another client has not finished adding it',
      );
    }
    decodeValue(keptResultPathFor(producer), kept);
    await this.store.giveInput(dep, kept);
  }

  /**
   * Lets the plan's failed tasks be tried again from scratch (their attempts reset), and so their
   * dependents after them, like "rerun from the failed node". Returns the tasks reset.
   */
  async retryFailed(plan: string): Promise<string[]> {
    assertValidPath('plan', plan);
    const tasks = await this.store.listTasks(plan);
    if (tasks === undefined) throw new PlanNotFoundError(plan);
    const listings = await Promise.all(tasks.map(async (task) => ({ task, listing: await this.store.inspectTask(task) })));
    const failed = listings.filter(({ listing }) => listing?.children.includes(FAILED)).map(({ task }) => task);
    // attempts first: a crash in between leaves the task failed, and a second retryFailed finishes the job.
    await Promise.all(failed.map(async (task) => {
      await this.zk.deleteIfPresent(childPath(task, ATTEMPTS));
      await this.zk.deleteIfPresent(childPath(task, FAILED));
    }));
    await this.zk.deleteIfPresent(childPath(plan, FAILED));
    return failed;
  }

  private assertArgTasks(plan: string, argTasks: readonly string[]): void {
    if (!Array.isArray(argTasks)) throw new InvalidArgumentError('argTasks', 'expected an array of task paths returned by addTask');
    argTasks.forEach((arg: unknown, index) => {
      assertSequentialPath(`argTasks[${index}]`, arg, TASK_PREFIX);
      if (parentOf(arg) !== plan) throw new ForeignArgTaskError(arg, plan);
    });
  }

  private async assertArgTaskExists(arg: string): Promise<void> {
    if (await this.zk.exists(arg)) return;
    if (await this.zk.exists(keptResultPathFor(arg))) return;
    throw new ArgTaskNotFoundError(
      arg,
      'does not exist: pass paths returned by addTask for this plan (a task that already completed can be an input only if it was added with { keepResult: true })',
    );
  }
}

function taskSettings(options: AddTaskOptions): TaskSettings {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'expected an object');
  const { keepResult = false, timeoutMs, maxAttempts, initialDelayMs, multiplier, maxDelayMs } = options;
  if (typeof keepResult !== 'boolean') throw new InvalidArgumentError('keepResult', `expected a boolean, got ${typeof keepResult}`);
  if (timeoutMs !== undefined) assertPositiveNumber('timeoutMs', timeoutMs);
  const retry = Object.fromEntries(
    Object.entries({ maxAttempts, initialDelayMs, multiplier, maxDelayMs }).filter(([, value]) => value !== undefined),
  ) as RetryPolicy;
  resolveRetryPolicy(retry, DEFAULT_RETRY_POLICY); // validates
  return { keepResult, retry, ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
}
