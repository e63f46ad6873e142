/**
 * submitPlan: a spec checked in full (src/spec/plan-spec.ts), then built with one createPlan, one
 * addTasks batch (pipelined; a batch is never left half-built, see the Data model), the spec
 * record and markAsReady. Nothing is written before every check has passed.
 */
import { resolvePlanSettings } from '../config/plan-options.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { PlanSpecError } from '../errors/spec-errors.js';
import { call } from '../exec/task-spec.js';
import { taskSettings } from '../config/task-options.js';
import { isStale, type WorkerInfo } from '../registry/worker-info.js';
import type { FunctionSchemas } from '../exec/standard-schema.js';
import { checkPlanSpec, type CheckedSpec, type PlanSpec } from './plan-spec.js';
import { checkSpecValues } from './typed-edges.js';
import { writeSpecRecord, type PlanOrigin } from './spec-record.js';
import type { PlanWriter } from '../plan/plan-writer.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';

/**
 * Options of `submitPlan`.
 *
 * @category Specs
 */
export interface SubmitOptions {
  /** Values of the spec's `{ $param: name }` placeholders. @defaultValue none */
  readonly params?: Readonly<Record<string, unknown>>;
  /**
   * Submit even when nothing vouches for a function: this process registers none and no worker of
   * the parent is live (workers started later will run the plan). Without it such a spec is
   * refused with SPEC_UNKNOWN_FUNCTION, since a plan of functions nobody has waits for ever.
   * @defaultValue false
   */
  readonly allowUnknownFunctions?: boolean;
}

/**
 * What `submitPlan` made: the plan and each task's path, by key.
 *
 * @category Specs
 */
export interface SubmittedPlan {
  readonly plan: string;
  readonly tasks: Readonly<Record<string, string>>;
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
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', 'expected { params?, allowUnknownFunctions? }');
  if (
    options.allowUnknownFunctions !== undefined &&
    typeof options.allowUnknownFunctions !== 'boolean'
  )
    throw new InvalidArgumentError('allowUnknownFunctions', 'expected true or false');
  const params = options.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    throw new InvalidArgumentError('params', 'expected an object of named values');
  const liveWorkers = workers.filter((worker) => !isStale(worker, Date.now()));
  const live = liveWorkers.map((worker) => worker.functions);
  const schemasOf = (fn: string): FunctionSchemas | undefined => functions.schemasOf(fn);
  const checked = checkPlanSpec(spec, {
    registered: functions.names(),
    ...(live.length > 0
      ? { live, liveShell: liveWorkers.some((worker) => worker.allowShell) }
      : {}),
    params,
    schemasOf,
    requireKnown: options.allowUnknownFunctions !== true,
  });
  // Named after the spec's own fields: the same document goes to submitPlan and to zk-plan submit.
  asSpecError(undefined, () => resolvePlanSettings(checked.options, 'the plan ("options")'));
  for (const key of checked.order)
    asSpecError(key, () =>
      taskSettings(checked.tasks.get(key)?.options ?? {}, 'the task ("options")'),
    );
  await checkSpecValues(checked.tasks, schemasOf);
  return checked;
}

/**
 * Whose plan `fillPlan` fills: a submitted one (on this client's session), a schedule tick's (every
 * write fenced by the session holding the tick's lock, `origin` naming the tick), or a sub-plan
 * task's child (fenced by the task's claim).
 */
export type BuildTarget =
  | { readonly parent: string }
  | { readonly plan: string; readonly fence: ZkSession; readonly origin?: PlanOrigin };

/**
 * Builds a checked spec: a new plan under `parent`, one addTasks batch (pipelined), the spec
 * record, then `ready`. The plan is not ready before its spec record exists, so every ready plan
 * from a spec has one.
 */
export async function buildCheckedSpec(
  writer: PlanWriter,
  zk: Zk,
  checked: CheckedSpec,
  source: { readonly spec: PlanSpec; readonly params: Readonly<Record<string, unknown>> },
  parent: string,
): Promise<SubmittedPlan> {
  const plan = await writer.createPlan(parent, checked.options);
  return { plan, tasks: await fillPlan(writer, zk, plan, checked, source, { parent }) };
}

/** Adds a checked spec's tasks and spec record to an existing, unready, empty plan, then readies it; resolves each key's path. */
export async function fillPlan(
  writer: PlanWriter,
  zk: Zk,
  plan: string,
  checked: CheckedSpec,
  source: { readonly spec: PlanSpec; readonly params: Readonly<Record<string, unknown>> },
  target: BuildTarget,
): Promise<Record<string, string>> {
  const fenced = 'fence' in target ? { fence: target.fence } : {};
  const index = new Map(checked.order.map((key, position) => [key, position]));
  const paths = await writer.addTasks(
    plan,
    checked.order.map((key) => {
      const task = checked.tasks.get(key) as NonNullable<ReturnType<CheckedSpec['tasks']['get']>>;
      // Results are kept unless a task says otherwise: reruns and exports of the plan start from them.
      // The key goes into the task's definition, so that a worker (and anyone reading the task) knows it.
      const options = { keepResult: true, ...task.options, key };
      return {
        task: call(task.fn, ...task.params),
        args: task.inputs.map((input) => index.get(input) as number),
        options,
      };
    }),
    { ...('fence' in target ? { claimSession: target.fence } : {}), specKeys: true },
  );
  const tasks = Object.fromEntries(
    checked.order.map((key, position) => [key, paths[position] as string]),
  );
  const origin = 'origin' in target && target.origin !== undefined ? { origin: target.origin } : {};
  await writeSpecRecord(
    zk,
    plan,
    {
      spec: source.spec,
      params: source.params,
      tasks,
      submittedAt: new Date().toISOString(),
      ...origin,
    },
    fenced,
  );
  await writer.markAsReady(plan, fenced);
  return tasks;
}

/** An option problem, reported as the spec's, naming the task. */
function asSpecError(key: string | undefined, check: () => unknown): void {
  try {
    check();
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      throw new PlanSpecError('SPEC_INVALID', key, error.message);
    throw error;
  }
}
