/**
 * submitPlan: a spec checked in full (src/spec/plan-spec.ts), then built with one createPlan, one
 * addTasks batch (pipelined; a batch is never left half-built, see the Data model) and
 * markAsReady. Nothing is written before every check has passed.
 */
import { resolvePlanSettings } from '../config/plan-options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { PlanSpecError } from '../errors/spec-errors.js';
import { call } from '../exec/task-spec.js';
import { taskSettings, type TaskToAdd } from '../plan/task-options.js';
import { isStale, type WorkerInfo } from '../registry/worker-info.js';
import type { FunctionSchemas } from '../exec/standard-schema.js';
import { checkPlanSpec, type CheckedSpec, type PlanSpec } from './plan-spec.js';
import { checkSpecValues } from './typed-edges.js';

/** Options of `submitPlan`. */
export interface SubmitOptions {
  /** Values of the spec's `{ $param: name }` placeholders. @defaultValue none */
  readonly params?: Readonly<Record<string, unknown>>;
}

/** What `submitPlan` made: the plan and each task's path, by key. */
export interface SubmittedPlan {
  readonly plan: string;
  readonly tasks: Readonly<Record<string, string>>;
}

/** The ZkPlan calls submitting uses. */
export interface PlanBuilder {
  createPlan(parent: string, options: CheckedSpec['options']): Promise<string>;
  addTasks(plan: string, tasks: readonly TaskToAdd[]): Promise<string[]>;
  markAsReady(plan: string): Promise<void>;
}

/** What a spec is checked against of the submitting process's registry: its names, and the schemas of typed functions. */
export interface SpecRegistry {
  names(): string[];
  schemasOf(fn: string): FunctionSchemas | undefined;
}

/** Checks the spec against the registry (names, typed edges, params) and the live workers' functions; also the options each task and the plan carry. */
export async function checkSpecForSubmit(
  spec: PlanSpec,
  functions: SpecRegistry,
  workers: readonly WorkerInfo[],
  options: SubmitOptions,
): Promise<CheckedSpec> {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'expected { params? }');
  const params = options.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new InvalidArgumentError('params', 'expected an object of named values');
  const live = workers.filter((worker) => !isStale(worker, Date.now())).map((worker) => worker.functions);
  const schemasOf = (fn: string): FunctionSchemas | undefined => functions.schemasOf(fn);
  const checked = checkPlanSpec(spec, { registered: functions.names(), ...(live.length > 0 ? { live } : {}), params, schemasOf });
  asSpecError(undefined, () => resolvePlanSettings(checked.options));
  for (const key of checked.order) asSpecError(key, () => taskSettings(checked.tasks.get(key)?.options ?? {}));
  await checkSpecValues(checked.tasks, schemasOf);
  return checked;
}

export async function buildCheckedSpec(builder: PlanBuilder, parent: string, checked: CheckedSpec): Promise<SubmittedPlan> {
  const plan = await builder.createPlan(parent, checked.options);
  const index = new Map(checked.order.map((key, position) => [key, position]));
  const paths = await builder.addTasks(
    plan,
    checked.order.map((key) => {
      const task = checked.tasks.get(key) as NonNullable<ReturnType<CheckedSpec['tasks']['get']>>;
      return { task: call(task.fn, ...task.params), args: task.inputs.map((input) => index.get(input) as number), options: task.options };
    }),
  );
  await builder.markAsReady(plan);
  return { plan, tasks: Object.fromEntries(checked.order.map((key, position) => [key, paths[position] as string])) };
}

/** An option problem, reported as the spec's, naming the task. */
function asSpecError(key: string | undefined, check: () => unknown): void {
  try {
    check();
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new PlanSpecError('SPEC_INVALID', key, error.message);
    throw error;
  }
}
