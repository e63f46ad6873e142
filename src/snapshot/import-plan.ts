/**
 * `importPlan`: a snapshot recreated as a new plan that goes on where the snapshot stood. Pending
 * tasks run; failed ones are recreated failed, with their failure (retryFailed runs them again);
 * done ones are not run again: a done task that a task to run needs as an input, or whose result
 * was kept, is recreated without inputs and with its result already stored, so the first worker to
 * take it hands that result on (and keeps it) without calling the function. Done tasks nobody
 * needs are not recreated.
 *
 * Built like submitPlan: one addTasks batch, the spec record, `ready` last. A crash part-way
 * leaves a plan that is not ready and runs nothing (delete it); importing again makes a new plan.
 */
import { SnapshotError } from '../errors/snapshot-errors.js';
import { call } from '../exec/task-spec.js';
import type { PlanWriter, TaskPreset } from '../plan/plan-writer.js';
import type { TaskToAdd } from '../plan/task-options.js';
import type { WorkerInfo } from '../registry/worker-info.js';
import { encodeValue } from '../serialization/codec.js';
import { checkSpecForSubmit, type SpecRegistry, type SubmittedPlan } from '../spec/submit-plan.js';
import { writeSpecRecord, type SpecRecord } from '../spec/spec-record.js';
import type { TaskStore } from '../store/task-store.js';
import { assertValidPath } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { assertPlanSnapshot, type PlanSnapshot, type SnapshotTask } from './plan-snapshot.js';

export interface ImportContext {
  readonly zk: Zk;
  readonly writer: PlanWriter;
  readonly store: TaskStore;
  readonly functions: SpecRegistry;
  listWorkers(parent: string): Promise<WorkerInfo[]>;
}

export async function importSnapshot(
  context: ImportContext,
  parent: string,
  snapshot: unknown,
  continues?: { readonly rerunFrom: string },
): Promise<SubmittedPlan> {
  assertValidPath('parent', parent);
  assertPlanSnapshot(snapshot);
  const checked = await checkSpecForSubmit(snapshot.spec, context.functions, await context.listWorkers(parent), { params: snapshot.params });
  const state = (key: string): SnapshotTask => snapshot.tasks[key] as SnapshotTask;
  const entry = (key: string): NonNullable<ReturnType<typeof checked.tasks.get>> => checked.tasks.get(key) as NonNullable<ReturnType<typeof checked.tasks.get>>;
  const created = new Set(checked.order.filter((key) => state(key).state !== 'done'));
  for (const key of checked.order) {
    const task = state(key);
    if (task.state !== 'done') continue;
    const neededBy = [...created].find((user) => entry(user).inputs.includes(key));
    if (neededBy !== undefined && !task.hasResult)
      throw new SnapshotError('SNAPSHOT_RESULT_MISSING', key, `is done but its result is stored nowhere, and "${neededBy}" still needs it as an input`);
    if (neededBy !== undefined || (task.hasResult && entry(key).options.keepResult !== false)) created.add(key);
  }
  const order = checked.order.filter((key) => created.has(key));
  const index = new Map(order.map((key, position) => [key, position]));
  const presets = new Map<number, TaskPreset>();
  const toAdd: TaskToAdd[] = order.map((key, position) => {
    const { fn, params, inputs, options } = entry(key);
    const task = state(key);
    if (task.state === 'done') {
      presets.set(position, { result: encodeValue(task.result, `the result of task "${key}"`, undefined, Number.MAX_SAFE_INTEGER) });
      return { task: call(fn, ...params), args: [], options: { ...options, keepResult: true } };
    }
    if (task.state === 'failed') presets.set(position, { failure: encodeValue(task.failure, `the failure of task "${key}"`) });
    return { task: call(fn, ...params), args: inputs.map((input) => index.get(input) as number), options: { keepResult: true, ...options } };
  });
  const plan = await context.writer.createPlan(parent, checked.options);
  const paths = await context.writer.addTasks(plan, toAdd, undefined, presets);
  const tasks = Object.fromEntries(order.map((key, position) => [key, paths[position] as string]));
  const failed = order.find((key) => state(key).state === 'failed');
  if (failed !== undefined) {
    const { failure } = state(failed) as Extract<SnapshotTask, { state: 'failed' }>;
    await context.store.markPlanFailed(plan, tasks[failed] as string, new Date(failure.at));
  }
  const record: SpecRecord = {
    spec: snapshot.spec,
    params: snapshot.params,
    tasks,
    submittedAt: new Date().toISOString(),
    continues: { plan: snapshot.plan, exportedAt: snapshot.exportedAt, ...(continues ?? {}) },
  };
  await writeSpecRecord(context.zk, plan, record, {});
  await context.writer.markAsReady(plan);
  return { plan, tasks };
}
