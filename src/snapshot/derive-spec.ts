/**
 * The snapshot of a plan without a spec record (built with addTask): a spec derived from its task
 * graph, keyed by the keys its tasks were added with (`addTask(…, { key })`), else by task name
 * (`task-0000000003`).
 *
 * What is derived: every live task (function, params, options from its node; inputs in argument
 * order from its dep-N/arg-N slots, each traced to its producer by the producer's prov-* link or
 * history record), every finished task the plan's history records (function, params, and the
 * inputs it gave), and every kept result (`result-N`).
 *
 * What cannot be derived (listed in the snapshot's `gaps`): a task that finished and was deleted
 * in a plan without history leaves no function, params or inputs. What it left is carried: its
 * kept result as a done task under its name, and an input a live task still holds as a done task
 * named after that input's node (`task-0000000007/arg-0000000012`); both get the function
 * `zk-plan:unknown`, which is never called. A live task still to run with an inline function (a
 * spec names registered functions only) or a malformed node cannot be exported
 * (SNAPSHOT_UNDERIVABLE); finished ones are carried as done.
 */
import type { PlanOptions } from '../config/plan-options.js';
import { SnapshotError } from '../errors/snapshot-errors.js';
import type { TaskDefinition } from '../exec/task-spec.js';
import type { AddTaskOptions } from '../config/task-options.js';
import { TaskKeys } from '../plan/task-keys.js';
import type { TaskSpecEntry } from '../spec/plan-spec.js';
import type { DoneRecord } from '../store/task-history.js';
import type { TaskStore } from '../store/task-store.js';
import type { TaskReader } from '../store/task-reader.js';
import {
  ARG_PREFIX,
  DEP_PREFIX,
  HISTORY,
  KEPT_RESULT_PREFIX,
  TASK_PREFIX,
  childPath,
  compareSerials,
  inputSlotSerials,
  nameOf,
  parentOf,
  serialOf,
  sortBySerial,
} from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { UNKNOWN_FUNCTION, type SnapshotBody, type SnapshotTask } from './plan-snapshot.js';
import {
  readComplete,
  readTaskStanding,
  resultFromOutputs,
  withHeldResult,
} from './task-standing.js';

/** One derived task before its inputs are known. */
interface Derived {
  readonly entry: Omit<TaskSpecEntry, 'inputs'>;
  standing: SnapshotTask;
  readonly children: readonly string[] | undefined;
}

const NO_HISTORY_GAP =
  'the plan keeps no history: a task that finished and was deleted is not in the spec; only what it left is (a kept result under its name, an input a live task holds as <task>/arg-N)';

export async function deriveSnapshot(
  zk: Zk,
  store: TaskStore,
  plan: string,
  planChildren: readonly string[],
  history: ReadonlyMap<string, DoneRecord>,
): Promise<SnapshotBody> {
  const gaps: string[] = planChildren.includes(HISTORY) ? [] : [NO_HISTORY_GAP];
  const tasks = new Map<string, Derived>();
  const producers = new Map<string, string>(); // dep path → the key of the task that feeds it
  const liveNames = sortBySerial(planChildren, TASK_PREFIX);
  await Promise.all(
    liveNames.map(async (name) => {
      const task = childPath(plan, name);
      const reading = await readTaskStanding(zk, store, task, history.get(task));
      if (reading.children === undefined && !history.has(task)) return; // deleted meanwhile: its kept result or history below has it
      const definition = await store.reads.readDefinition(task).catch(() => undefined);
      const entry = entryOf(task, definition, history.get(task), reading.standing);
      for (const dep of (await store.reads.readLinks(task, reading.children ?? [])).values())
        producers.set(dep, name);
      tasks.set(name, { entry, standing: reading.standing, children: reading.children });
    }),
  );
  for (const [task, record] of history) {
    if (record.omitted)
      gaps.push(
        `${nameOf(task)}: its history record was too large for one znode, so its params and outputs were not kept; it is carried as a done task`,
      );
    for (const dep of record.outputs) producers.set(dep, nameOf(task));
    if (tasks.has(nameOf(task))) continue;
    const { standing } = await readTaskStanding(zk, store, task, record);
    tasks.set(nameOf(task), {
      entry: entryOf(task, undefined, record, standing),
      standing,
      children: undefined,
    });
  }
  for (const serial of planChildren
    .map((name) => serialOf(name, KEPT_RESULT_PREFIX))
    .filter((serial) => serial !== undefined)) {
    const name = `${TASK_PREFIX}${serial}`;
    if (tasks.has(name)) continue;
    const { standing } = await readTaskStanding(zk, store, childPath(plan, name), undefined);
    tasks.set(name, { entry: { fn: UNKNOWN_FUNCTION, params: [] }, standing, children: undefined });
  }
  // A done task's result, where no node of its own keeps it: an input it gave that a dependent still holds.
  for (const [name, task] of tasks) {
    const record = history.get(childPath(plan, name));
    if (task.standing.state !== 'done' || task.standing.hasResult || record === undefined) continue;
    const held = await resultFromOutputs(store.reads, record);
    if (held !== undefined) task.standing = withHeldResult(task.standing, held.value);
  }
  const inputs = await inputsOf(store, plan, tasks, producers, gaps);
  const keyOf = await keysByName(zk, plan, planChildren, [...tasks.keys()]);
  // Task names sort by serial (10 digits), and an input carried as its own task (task-N/arg-M) right after its task.
  const names = [...tasks.keys()].sort();
  const entries = names.map((name) => {
    const { entry } = tasks.get(name) as Derived;
    const taken = (inputs.get(name) ?? []).map(keyOf);
    return [keyOf(name), taken.length > 0 ? { ...entry, inputs: taken } : entry] as const;
  });
  const options = optionsOf(await store.reads.readPlanSettings(plan));
  const standings = names.map(
    (name) => [keyOf(name), (tasks.get(name) as Derived).standing] as const,
  );
  return {
    source: 'task-graph',
    spec: { tasks: Object.fromEntries(entries), options },
    params: {},
    options,
    tasks: Object.fromEntries(standings),
    gaps,
  };
}

/**
 * Each derived task's spec key: the key it was added with (`addTask(…, { key })`), else its name, so
 * that an import or rerun knows its tasks by the same keys. Names are kept for all when a key would
 * stand for two tasks (a key that is another task's name).
 */
async function keysByName(
  zk: Zk,
  plan: string,
  planChildren: readonly string[],
  names: readonly string[],
): Promise<(name: string) => string> {
  const byTask = await new TaskKeys(zk).of(plan, planChildren);
  const byName = new Map(
    names.flatMap((name) =>
      byTask.has(childPath(plan, name))
        ? [[name, byTask.get(childPath(plan, name)) as string] as const]
        : [],
    ),
  );
  const keyOf = (name: string): string => byName.get(name) ?? name;
  return new Set(names.map(keyOf)).size === names.length ? keyOf : (name) => name;
}

/** A task's spec entry: from its node, else its history record (one that kept its params); a done task whose call cannot be named gets UNKNOWN_FUNCTION. */
function entryOf(
  task: string,
  definition: TaskDefinition | undefined,
  record: DoneRecord | undefined,
  standing: SnapshotTask,
): Omit<TaskSpecEntry, 'inputs'> {
  if (definition !== undefined && 'fn' in definition)
    return {
      fn: definition.fn,
      params: definition.params,
      options: optionsOfTask(definition),
      ...(definition.trigger !== undefined ? { trigger: definition.trigger } : {}),
    };
  if (record?.params !== undefined)
    return { fn: record.fn, params: record.params, options: { keepResult: record.keepResult } };
  if (standing.state === 'done')
    return {
      fn: UNKNOWN_FUNCTION,
      params: [],
      ...(definition !== undefined ? { options: optionsOfTask(definition) } : {}),
    };
  throw new SnapshotError(
    'SNAPSHOT_UNDERIVABLE',
    nameOf(task),
    definition === undefined
      ? 'its node holds no readable task definition, so no spec can name its function'
      : 'runs an inline function, and a spec names registered functions only: let it finish first, or register the function and build the plan with submitPlan',
    task,
    definition === undefined
      ? undefined
      : 'runs an inline function, and a spec names registered functions only: let it finish first, or register the function and build the plan from a spec (zk-plan submit)',
  );
}

/**
 * Each task's inputs in argument order: its slots (dep-N or arg-N, one per input, by serial), each
 * traced to the key that feeds it. A slot whose producer is known nowhere becomes a done task of its
 * own holding the value (`<task>/arg-N`), or, when no value ever came (`<task>/dep-N`), one without a result.
 */
async function inputsOf(
  store: TaskStore,
  plan: string,
  tasks: Map<string, Derived>,
  producers: ReadonlyMap<string, string>,
  gaps: string[],
): Promise<Map<string, string[]>> {
  const inputs = new Map<string, { serial: string; key: string }[]>();
  // Edges of finished producers whose dependents are finished too: known from the producers' history records.
  for (const [dep, producer] of producers) {
    const dependent = nameOf(parentOf(dep));
    const serial = serialOf(nameOf(dep), DEP_PREFIX);
    if (
      serial === undefined ||
      !tasks.has(dependent) ||
      tasks.get(dependent)?.children !== undefined
    )
      continue;
    inputs.set(dependent, [...(inputs.get(dependent) ?? []), { serial, key: producer }]);
  }
  for (const [name, task] of [...tasks]) {
    if (task.children === undefined) continue;
    const slots: { serial: string; key: string }[] = [];
    for (const serial of inputSlotSerials(task.children)) {
      const known = producers.get(childPath(childPath(plan, name), `${DEP_PREFIX}${serial}`));
      slots.push({
        serial,
        key:
          known ?? (await unknownProducer(store, plan, name, serial, task.children, tasks, gaps)),
      });
    }
    inputs.set(name, slots);
  }
  return new Map(
    [...inputs].map(([name, slots]) => [
      name,
      [...slots].sort((a, b) => compareSerials(a.serial, b.serial)).map(({ key }) => key),
    ]),
  );
}

async function unknownProducer(
  store: TaskStore,
  plan: string,
  name: string,
  serial: string,
  children: readonly string[],
  tasks: Map<string, Derived>,
  gaps: string[],
): Promise<string> {
  const arg = `${ARG_PREFIX}${serial}`;
  const held = children.includes(arg)
    ? await readComplete(store.reads, childPath(childPath(plan, name), arg))
    : undefined;
  if (held !== undefined) {
    const key = `${name}/${arg}`;
    tasks.set(key, {
      entry: { fn: UNKNOWN_FUNCTION, params: [] },
      standing: { state: 'done', hasResult: true, result: held.value, resultFrom: 'input' },
      children: undefined,
    });
    return key;
  }
  const key = `${name}/${DEP_PREFIX}${serial}`;
  tasks.set(key, {
    entry: { fn: UNKNOWN_FUNCTION, params: [] },
    standing: { state: 'done', hasResult: false },
    children: undefined,
  });
  gaps.push(
    `${name} waits for an input (${DEP_PREFIX}${serial}) that no task of the plan feeds: it was blocked, and an import refuses it (SNAPSHOT_RESULT_MISSING)`,
  );
  return key;
}

function optionsOfTask(definition: TaskDefinition): AddTaskOptions {
  return {
    ...(definition.keepResult ? { keepResult: true } : {}),
    ...definition.retry,
    ...(definition.timeoutMs !== undefined ? { timeoutMs: definition.timeoutMs } : {}),
    ...(definition.priority !== undefined ? { priority: definition.priority } : {}),
    ...(definition.concurrencyKey !== undefined
      ? { concurrencyKey: definition.concurrencyKey }
      : {}),
  };
}

function optionsOf(settings: Awaited<ReturnType<TaskReader['readPlanSettings']>>): PlanOptions {
  return {
    failurePolicy: settings.failurePolicy,
    ...settings.retry,
    history: settings.history,
    priority: settings.priority,
    ...(settings.name !== undefined ? { name: settings.name } : {}),
  };
}
