import { ArgTaskNotFoundError, ForeignArgTaskError, PlanNotFoundError } from '../errors/plan-errors.js';
import { UnknownFunctionError } from '../errors/task-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { FunctionRegistry } from '../exec/function-registry.js';
import { assertTaskSpec, toDefinition, type TaskSettings, type TaskSpec } from '../exec/task-spec.js';
import { assertPositiveNumber } from '../config/options.js';
import { DEFAULT_RETRY_POLICY, resolvePlanSettings, resolveRetryPolicy, type PlanOptions, type RetryPolicy } from '../config/plan-options.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import type { TaskStore } from '../store/task-store.js';
import { classifyTask } from '../store/task-state.js';
import {
  ATTEMPTS,
  DEP_PREFIX,
  FAILED,
  PLAN_PREFIX,
  PROV_PREFIX,
  READY,
  RESULT,
  RUNNABLE_INDEX,
  HISTORY,
  TASK_PREFIX,
  assertSequentialPath,
  assertValidPath,
  childPath,
  keptResultPathFor,
  parentOf,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { readValue } from '../zk/chunked-value.js';
import { IncompleteValueError } from '../errors/value-errors.js';

/** One task of an `addTasks` batch: its args are task paths, or indices of earlier tasks of the batch. */
export interface TaskToAdd {
  readonly task: TaskSpec;
  readonly args?: readonly (string | number)[];
  readonly options?: AddTaskOptions;
}

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
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly functions: FunctionRegistry,
  ) {}

  /** The spec's `create-plan`: a new persistent sequential `plan-` node under `parent` (created if missing). */
  async createPlan(parent: string, options: PlanOptions = {}): Promise<string> {
    assertValidPath('parent', parent);
    const settings = resolvePlanSettings(options);
    await this.zk.ensurePath(parent);
    const plan = await this.zk.create(childPath(parent, PLAN_PREFIX), encodeValue(settings, 'plan settings'), 'persistent-sequential');
    await Promise.all([this.zk.create(childPath(plan, RUNNABLE_INDEX)), settings.history ? this.zk.create(childPath(plan, HISTORY)) : undefined]);
    return plan;
  }

  /**
   * The spec's `add-task`: a sequential `task-` node holding the task's definition, one
   * dependency per arg task (in order: their results become the function's arguments in that
   * order), then `ready`. On failure nothing half-built is left that a worker could run.
   */
  async addTask(plan: string, spec: TaskSpec, argTasks: readonly string[] = [], options: AddTaskOptions = {}): Promise<string> {
    this.assertArgTasks(plan, argTasks);
    const [task] = await this.addTasks(plan, [{ task: spec, args: argTasks, options }]);
    return task as string;
  }

  /**
   * Adds many tasks at pipelined speed: every phase (task nodes, dep-*, prov-*, ready, runnable
   * index) is sent at once on the session, which keeps ZooKeeper's order. An arg is the path of an
   * existing task of the plan, or the index of an earlier task of this batch. Returns the paths, in order.
   */
  async addTasks(plan: string, tasks: readonly TaskToAdd[]): Promise<string[]> {
    assertValidPath('plan', plan);
    if (!Array.isArray(tasks)) throw new InvalidArgumentError('tasks', 'expected an array of { task, args?, options? }');
    const prepared = tasks.map((entry, index) => this.prepare(plan, entry, index));
    const external = [...new Set(prepared.flatMap(({ args }) => args.filter((arg): arg is string => typeof arg === 'string')))];
    await Promise.all(external.map((arg) => this.assertArgTaskExists(arg)));

    let paths: string[];
    try {
      paths = await Promise.all(prepared.map(({ definition }) => this.zk.create(childPath(plan, TASK_PREFIX), definition, 'persistent-sequential')));
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) throw new PlanNotFoundError(plan);
      throw error;
    }
    try {
      const links = prepared.flatMap(({ args }, index) =>
        args.map((arg) => ({ dependent: paths[index] as string, producer: typeof arg === 'string' ? arg : (paths[arg] as string) })),
      );
      // dep-* of one task are created in arg order (the session keeps order), so arg serials follow argTasks.
      const deps = await Promise.all(links.map(({ dependent }) => this.zk.create(childPath(dependent, DEP_PREFIX), null, 'persistent-sequential')));
      const batch = new Set(paths);
      const satisfied = await Promise.all(links.map(({ producer }, index) => this.linkProducer(producer, deps[index] as string, batch)));
      await Promise.all(paths.map((task) => this.zk.create(childPath(task, READY))));
      const unmet = new Map<string, number>();
      links.forEach(({ dependent }, index) => {
        if (!satisfied[index]) unmet.set(dependent, (unmet.get(dependent) ?? 0) + 1);
      });
      await Promise.all(paths.filter((task) => !unmet.has(task)).map((task) => this.store.markRunnable(task)));
    } catch (error) {
      // Not ready yet, so no worker runs them meanwhile.
      await Promise.all(paths.map((task) => this.zk.deleteRecursive(task).catch(() => undefined)));
      throw error;
    }
    return paths;
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
   * The spec's `add-dependency`, after `dep` was created under the dependent: `prov-M` under the
   * producer holding the dep's path. A producer of this batch is not ready yet, so it will see the
   * prov. Another producer may be finishing at this very moment: it lists prov-* only after removing
   * its `ready`, so if `ready` is still there after our prov-M exists, the producer will see it; if
   * not, we hand its result over ourselves. Resolves true when the dep was satisfied here.
   */
  private async linkProducer(producer: string, dep: string, batch: ReadonlySet<string>): Promise<boolean> {
    let prov: string;
    try {
      prov = await this.zk.create(childPath(producer, PROV_PREFIX), encodeValue(dep, 'dependency link'), 'persistent-sequential');
    } catch (error) {
      if (!isZkError(error, 'NO_NODE')) throw error;
      await this.takeKeptResult(producer, dep); // the producer completed and is gone
      return true;
    }
    if (batch.has(producer) || (await this.store.isReady(producer))) return false;
    const finishing = await readValue(this.zk, childPath(producer, RESULT)).catch((error: unknown) => {
      if (error instanceof IncompleteValueError) return undefined; // being deleted: fall back to the kept result
      throw error;
    });
    if (finishing !== undefined) {
      decodeValue(childPath(producer, RESULT), finishing);
      await this.store.propagate(prov, finishing);
      return true;
    }
    await this.zk.deleteIfPresent(prov);
    await this.takeKeptResult(producer, dep);
    return true;
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
      const listing = await this.store.inspectTask(task);
      if (listing && classifyTask(listing.children, listing.childVersion) === 'runnable') await this.store.markRunnable(task);
    }));
    await this.zk.deleteIfPresent(childPath(plan, FAILED));
    return failed;
  }

  private prepare(plan: string, entry: TaskToAdd, index: number): { definition: Buffer; args: readonly (string | number)[] } {
    if (typeof entry !== 'object' || entry === null) throw new InvalidArgumentError(`tasks[${index}]`, 'expected { task, args?, options? }');
    assertTaskSpec(entry.task);
    const args = entry.args ?? [];
    if (!Array.isArray(args)) throw new InvalidArgumentError(`tasks[${index}].args`, 'expected an array of task paths or earlier batch indices');
    args.forEach((arg: unknown, position) => {
      if (typeof arg === 'number') {
        if (!Number.isInteger(arg) || arg < 0 || arg >= index) {
          throw new InvalidArgumentError(`tasks[${index}].args[${position}]`, `a batch index must point at an earlier task of the batch (0…${index - 1}), got ${arg}`);
        }
        return;
      }
      assertSequentialPath(`tasks[${index}].args[${position}]`, arg, TASK_PREFIX);
      if (parentOf(arg) !== plan) throw new ForeignArgTaskError(arg, plan);
    });
    const spec = entry.task;
    if (spec.kind === 'call' && this.functions.size > 0 && !this.functions.has(spec.fn)) {
      throw new UnknownFunctionError(spec.fn, undefined, this.functions.names());
    }
    const definition = encodeValue(toDefinition(spec, taskSettings(entry.options ?? {})), `The task definition for plan ${plan}`, plan);
    return { definition, args };
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
