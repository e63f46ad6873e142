/**
 * The znode layout of zk-plan, in one place (the Clojure original's layout, so other tools can read it):
 *
 * ```
 * <parent>/zk-plan-retention      EPHEMERAL; held by the one process that deletes finished plans right now
 * <parent>/zk-plan-workers        the live worker pools following this parent
 *   <worker id>                   EPHEMERAL; { id, host, pid, version, functions, loops, running, startedAt, … }
 * <parent>/zk-plan-limits         concurrency limits of the tasks of the plans under this parent
 *   <key>                         { limit }
 *     slot-<i>                    EPHEMERAL; held by a running task with the key (i < limit): { task, workerId, at }
 * <parent>/plan-NNNNNNNNNN        persistent sequential
 *                                 value: its settings; a plan from snapshots.import or snapshots.rerun also names its snapshot (importOf)
 *   ready                         plan marked ready
 *   failed                        a task of the plan failed for good (value: { task, at })
 *   spec                          (plans from submitPlan) { spec, params, tasks: { key: path }, submittedAt, origin? }
 *   spawned                       present once a task of the plan spawned tasks or handed over (ctx.spawn, ctx.continueWith)
 *   keys                          (plans with tasks added with { key }) the keys taken in the plan
 *     key-<URI-encoded key>       { task }: the task that holds the key; made once the task exists, before it is
 *                                 ready; removed only when its unfinished batch is (the key is then free again)
 *   control                       present while the plan is paused or cancelled (value: { state, reason?, at, abortRunning })
 *   alerts                        events of the plan reported to alerts.subscribe listeners, once across the cluster
 *     <event id>                  { event, deliveredAt? | gaveUpAt? }
 *       lock                      EPHEMERAL; held by the process delivering the event
 *   history                       (every plan but those created with { history: false }) a record per ended task
 *     task-NNNNNNNNNN             { state: done|failed|cancelled|unstarted, fn, params, outputs, failedTries, workerId?, … }
 *                                 (src/store/task-history.ts): written before the task is deleted, never rewritten
 *   logs                          tasks' logs, kept past the task and the plan's end (value: { reservedBytes } of the plan's log budget)
 *     task-NNNNNNNNNN             one per task that logged a line
 *       try-<attempt>-<run id>    the last lines of one try: { attempt, workerId, startedAt, finishedAt?, dropped…, lines }
 *   runnable                      index of tasks believed runnable (an optimisation; plans without it still run)
 *     task-NNNNNNNNNN             empty; created when the task's last input arrives, deleted when it is done
 *   result-NNNNNNNNNN             kept result of task-NNNNNNNNNN (keepResult), survives the task
 *   builder-<session>             EPHEMERAL; a session adding tasks to the plan (tasks name it as their builder)
 *   batch-<id>                    a batch of tasks whose links are all in place: its tasks are made ready
 *   task-NNNNNNNNNN               persistent sequential; value = the task's definition: function, settings, key,
 *                                 and its builder's session and batch
 *     prov-NNNNNNNNNN             value = path of the matching dep node of a dependent task
 *     prov-9999999999             (a continuation) its link to the dep-9NNNNNNNNN of the task it continues
 *     dep-NNNNNNNNNN              one per unmet input
 *     dep-9NNNNNNNNN              (a task that handed over with ctx.continueWith) its continuation's result, awaited
 *     arg-NNNNNNNNNN              a propagated input; same serial as the dep it replaced
 *     spawn-<n>                   its n-th ctx.spawn call of a run: { batch, fns, tasks? } (src/spawn/)
 *     continuation                its ctx.continueWith hand-over: { batch, fns, link, tasks? } (src/spawn/)
 *     ready                       task fully defined
 *     owner                       EPHEMERAL; who runs it
 *     result                      the task's result
 *     attempts                    failed tries so far, when the next may start, the last failure
 *     failed                      the task failed for good (value: the failure); never taken again
 * ```
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';

/** Name prefix of a plan node under its parent (`plan-NNNNNNNNNN`, persistent sequential). */
export const PLAN_PREFIX = 'plan-';
/** Name prefix of a task node under its plan (`task-NNNNNNNNNN`), and of its history and log records. */
export const TASK_PREFIX = 'task-';
/** Name prefix of a task's provider links: each names the dep node of a dependent task its result feeds. */
export const PROV_PREFIX = 'prov-';
/** Name prefix of a task's unmet inputs, one node per input still missing. */
export const DEP_PREFIX = 'dep-';
/** Name prefix of a task's propagated inputs; an arg keeps the serial of the dep it replaced, which orders the arguments. */
export const ARG_PREFIX = 'arg-';
/** Name prefix of a plan's kept results (`result-NNNNNNNNNN`, for tasks added with `keepResult`), which outlive their tasks. */
export const KEPT_RESULT_PREFIX = 'result-';
/** The `ready` child: of a plan, marked ready; of a task, fully defined. */
export const READY = 'ready';
/** A task's `owner` child: the ephemeral node of the worker loop running it. */
export const OWNER = 'owner';
/** A task's `result` child: its result, until its dependents have it. */
export const RESULT = 'result';
/** A task's `attempts` child: its failed tries so far, when the next may start, and the last failure. */
export const ATTEMPTS = 'attempts';
/** A task's `waiting` child: why its function said "not yet" (`ctx.notYet`) and when it may run again (src/store/waiting-record.ts). */
export const WAITING = 'waiting';
/** A plan's `runnable` child: the index of its tasks believed runnable (an optimisation; a plan without it still runs). */
export const RUNNABLE_INDEX = 'runnable';
/** A plan's `history` child: one record per ended task (unless the plan was created with `{ history: false }`). */
export const HISTORY = 'history';
/** A plan's `logs` child: each task's log, a record per try. */
export const LOGS = 'logs';
/** Name prefix of a try's log record under a task's logs (`try-<attempt>-<run id>`). */
export const LOG_TRY_PREFIX = 'try-';
/** The `failed` child: of a plan, a task of it failed for good; of a task, it failed for good (the failure). */
export const FAILED = 'failed';
/** A plan's `control` child: present while the plan is paused or cancelled (PlanControlRecord). */
export const CONTROL = 'control';
/** A plan's `spec` child: the spec, params and task paths of a plan made by submitPlan, a schedule, an import or a rerun. */
export const SPEC_RECORD = 'spec';
/**
 * A plan's `spawned` child: present once one of its tasks spawned tasks or handed over (created
 * before the first spawn record). Its graph grew while it ran, so export, import and rerun refuse it.
 */
export const SPAWNED = 'spawned';
/**
 * A plan's `sub-plans` child: one record per sub-plan task of the plan (`sub-plans/task-N`), naming
 * the child plan it runs (src/subplan/). Written before the child is made, so that pause, resume,
 * cancel and retryFailed of the plan find every child that may exist.
 */
export const SUB_PLANS = 'sub-plans';
/** Between a parent plan's name and its sub-plan task's in a child plan's name: `plan-0000000012~task-0000000003`. */
export const SUB_PLAN_SEPARATOR = '~';
/** The deepest sub-plans nest: a child plan's name holds at most this many task names. */
export const MAX_SUB_PLAN_DEPTH = 16;
/** A plan's `keys` child: the task keys taken in the plan. */
export const TASK_KEYS = 'keys';
/** Name prefix of a key's claim under a plan's keys (`key-<URI-encoded key>`), naming the task that holds it. */
export const KEY_CLAIM_PREFIX = 'key-';
/** A plan's `alerts` child: the events reported to onPlanEvent listeners, each delivered once across the cluster. */
export const ALERTS = 'alerts';
/** Name prefix of the ephemeral node of a session adding tasks to a plan (`builder-<session>`). */
export const BUILDER_PREFIX = 'builder-';
/** Name prefix of a batch of tasks whose links are all in place (`batch-<id>`): its tasks are made ready. */
export const BATCH_PREFIX = 'batch-';
/**
 * Name prefix of a running task's record of one `ctx.spawn` call (`spawn-<n>`, n counting the
 * calls of a try from 0): the batch that makes its tasks, then their paths. A re-run of the task
 * finds the record and gets the same tasks back instead of making them again (src/spawn/).
 */
export const SPAWN_PREFIX = 'spawn-';
/**
 * A running task's record of its `ctx.continueWith` hand-over (a spawn record naming the one task
 * that continues it, and the serial of the input through which that task's result comes back).
 */
export const CONTINUATION = 'continuation';
/**
 * Serials from here up are never made by ZooKeeper (its sequence counter is a signed 32-bit
 * number, at most 2147483647): the input a continuation hands its result back through takes one,
 * so it can never collide with a dep-* or arg-* that addTasks made.
 */
const FIRST_CONTINUED_SERIAL = 9_000_000_000;
/** The first serial a task's hand-over uses; a run that takes over a dead run's unfinished hand-over uses the next one down. */
export const CONTINUED_SERIAL = 9_999_999_999;
/**
 * A continuation's link to the input of the task it continues: one per continuation, so a fixed
 * name, with a serial ZooKeeper never makes (a continuation's own dependents' links are sequential).
 */
export const CONTINUATION_LINK = `${PROV_PREFIX}${CONTINUED_SERIAL}`;

/** Whether `serial` is one of those that hand a continuation's result back (never made by ZooKeeper). */
export function isContinuedSerial(serial: string | undefined): boolean {
  return (
    serial !== undefined &&
    serial.length === 10 &&
    SERIAL_PATTERN.test(serial) &&
    Number(serial) >= FIRST_CONTINUED_SERIAL
  );
}

/** Children of a parent whose names start with this are zk-plan's own, never plans. */
export const RESERVED_PREFIX = 'zk-plan-';
/** Under a parent: the ephemeral node of the one process deleting finished plans past their retention. */
export const RETENTION_LOCK = `${RESERVED_PREFIX}retention`;
/** Under a parent: the live worker pools following it, one ephemeral node each (WorkerInfo). */
export const WORKER_REGISTRY = `${RESERVED_PREFIX}workers`;
/** Under a parent: the concurrency limits by key, each with the ephemeral slots its running tasks hold. */
export const LIMITS = `${RESERVED_PREFIX}limits`;

/** A schedule's `cursor` child: the newest tick handled. */
export const SCHEDULE_CURSOR = 'cursor';
/** A schedule's `ticks` child: a record per tick, with the plan it makes. */
export const SCHEDULE_TICKS = 'ticks';
/** A schedule's `backfills` child: a record per backfill (`schedules(parent).backfill`), each naming the ticks it has under way. */
export const SCHEDULE_BACKFILLS = 'backfills';
/** A tick's `lock` child: the ephemeral node of the process firing it (an alert's lock has the same name). */
export const TICK_LOCK = 'lock';

/**
 * Under a jobs' parent (`zkPlan.jobs(parent)`): the live job workers' ephemeral nodes, the
 * manager's latch, the one assignment node, the items' leases by job, and the flags of disabled
 * job workers. Leases live apart from the job's node, so removing a job (or defining it again)
 * never deletes a lease a worker may still hold: the manager prunes them once released or run out.
 */
export const JOB_WORKERS = `${RESERVED_PREFIX}job-workers`;
/** Under a jobs' parent: the manager election's latch nodes. */
export const JOB_MANAGER = `${RESERVED_PREFIX}job-manager`;
/** Under a jobs' parent: the one assignment node, items by worker for every job. */
export const JOB_ASSIGNMENT = `${RESERVED_PREFIX}job-assignment`;
/** Under a jobs' parent: the items' leases by job, apart from the jobs' nodes so that removing a job never deletes a lease still held. */
export const JOB_LEASES = `${RESERVED_PREFIX}job-leases`;
/**
 * Under a jobs' parent: the run history by job, `<runs>/<job>/run-<start ms>-<worker>-<n>`, each a
 * record of one run of the job function on one worker (started, then finished). Apart from the
 * job's node, like the leases, so that defining a job again keeps its history.
 */
export const JOB_RUNS = `${RESERVED_PREFIX}job-runs`;
/** Under a jobs' parent: the last failed run of each item, `<failures>/<job>/<item>`, kept however many runs follow. */
export const JOB_FAILURES = `${RESERVED_PREFIX}job-failures`;
/** Name prefix of a run record in a job's history. */
export const JOB_RUN_PREFIX = 'run-';
/**
 * What a run's log is kept as in the task log store: the run's node stands for a plan and this
 * child name for its task, so the log's nodes are `<run>/logs/log/try-…` and go with the run.
 */
export const JOB_RUN_LOG = 'log';
/**
 * Under a jobs' parent: one persistent node per disabled job worker, named by its id
 * (`jobs.disableWorker`). Persistent, so the flag outlives a session the worker replaces under the
 * same id; the manager deletes the flag of a worker gone for good (job-manager.ts).
 */
export const JOB_DISABLED_WORKERS = `${RESERVED_PREFIX}job-disabled-workers`;
/** A job's `trigger` child: a run requested now (`jobs.trigger`). */
export const JOB_TRIGGER = 'trigger';
/** Name prefix of a candidate's node in the job manager's election (`latch-NNNNNNNNNN`). */
export const LATCH_PREFIX = 'latch-';

/** Where a job's nodes are: its definition (the node's data), its trigger, its items' leases, its run history and its items' last failures. */
export function jobNodes(
  jobs: string,
  name: string,
): {
  readonly node: string;
  readonly leases: string;
  readonly trigger: string;
  readonly runs: string;
  readonly failures: string;
} {
  const node = childPath(jobs, name);
  return {
    node,
    leases: childPath(childPath(jobs, JOB_LEASES), name),
    trigger: childPath(node, JOB_TRIGGER),
    runs: childPath(childPath(jobs, JOB_RUNS), name),
    failures: childPath(childPath(jobs, JOB_FAILURES), name),
  };
}

/** Where the shared nodes of a jobs' parent are. */
export function jobsNodes(jobs: string): {
  readonly workers: string;
  readonly manager: string;
  readonly assignment: string;
  readonly leases: string;
  readonly disabledWorkers: string;
} {
  return {
    workers: childPath(jobs, JOB_WORKERS),
    manager: childPath(jobs, JOB_MANAGER),
    assignment: childPath(jobs, JOB_ASSIGNMENT),
    leases: childPath(jobs, JOB_LEASES),
    disabledWorkers: childPath(jobs, JOB_DISABLED_WORKERS),
  };
}

/** Where a schedule's nodes are. */
export function scheduleNodes(
  schedules: string,
  name: string,
): {
  readonly node: string;
  readonly cursor: string;
  readonly ticks: string;
  readonly backfills: string;
} {
  const node = childPath(schedules, name);
  return {
    node,
    cursor: childPath(node, SCHEDULE_CURSOR),
    ticks: childPath(node, SCHEDULE_TICKS),
    backfills: childPath(node, SCHEDULE_BACKFILLS),
  };
}

/** Where a backfill's record is. */
export function backfillNode(schedules: string, name: string, id: string): string {
  return childPath(scheduleNodes(schedules, name).backfills, id);
}

/** Where a tick's record and lock are. */
export function tickNodes(
  schedules: string,
  name: string,
  tick: string,
): { readonly record: string; readonly lock: string } {
  const record = childPath(scheduleNodes(schedules, name).ticks, tick);
  return { record, lock: childPath(record, TICK_LOCK) };
}

/** True for a child of a parent that is a plan: every name but zk-plan's own (plans written by other tools may be named freely). */
export function isPlanName(name: string): boolean {
  return !name.startsWith(RESERVED_PREFIX);
}

/** Sequential prefixes whose names end in ZooKeeper's 10-digit counter. */
export type SequentialPrefix =
  | typeof PLAN_PREFIX
  | typeof TASK_PREFIX
  | typeof PROV_PREFIX
  | typeof DEP_PREFIX
  | typeof ARG_PREFIX
  | typeof KEPT_RESULT_PREFIX;

const SERIAL_PATTERN = /^\d+$/;

/** The characters ZooKeeper's own path check (PathUtils.validatePath) refuses. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN_PATH_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/;

/** Joins a parent path and a child name without doubling the slash at the root. */
export function childPath(parent: string, child: string): string {
  return parent === '/' ? `/${child}` : `${parent}/${child}`;
}

/** The last segment of a path. */
export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The parent of a path (`/` for a top-level node). */
export function parentOf(path: string): string {
  const index = path.lastIndexOf('/');
  return index <= 0 ? '/' : path.slice(0, index);
}

/** True when `name` is `prefix` followed by a serial number (e.g. `task-0000000003`). */
export function hasSequentialName(name: string, prefix: SequentialPrefix): boolean {
  return name.startsWith(prefix) && SERIAL_PATTERN.test(name.slice(prefix.length));
}

/** The serial of a sequential name (`dep-0000000007` → `0000000007`), or undefined when it has none. */
export function serialOf(name: string, prefix: SequentialPrefix): string | undefined {
  return hasSequentialName(name, prefix) ? name.slice(prefix.length) : undefined;
}

/** Sorts sequential child names by serial: ZooKeeper returns children in no particular order. */
export function sortBySerial(names: readonly string[], prefix: SequentialPrefix): string[] {
  return names
    .filter((name) => hasSequentialName(name, prefix))
    .sort((a, b) => compareSerials(a.slice(prefix.length), b.slice(prefix.length)));
}

/**
 * The serials of a task's input slots, in input order: dep-N until its input arrives, then arg-N
 * (both for a moment, one input), created in argument order so their serials follow it.
 */
export function inputSlotSerials(children: readonly string[]): string[] {
  const serials = new Set(
    children
      .map((name) => serialOf(name, DEP_PREFIX) ?? serialOf(name, ARG_PREFIX))
      .filter((serial) => serial !== undefined),
  );
  return [...serials].sort(compareSerials);
}

/** Compares serials numerically; ZooKeeper pads to 10 digits but counters past 2^31 wrap to a minus sign. */
export function compareSerials(a: string, b: string): number {
  return a.length === b.length ? (a < b ? -1 : a > b ? 1 : 0) : a.length - b.length;
}

/** `/plan/task-0000000007/dep-0000000012` → `/plan/task-0000000007/arg-0000000012`: where a propagated input goes. */
export function argPathForDep(depPath: string): string {
  const dependent = parentOf(depPath);
  const serial = serialOf(nameOf(depPath), DEP_PREFIX);
  if (serial === undefined) {
    throw new InvalidArgumentError(
      'dependency path',
      `${depPath} does not end in ${DEP_PREFIX}<serial>`,
      depPath,
    );
  }
  return childPath(dependent, `${ARG_PREFIX}${serial}`);
}

/** Where a plan keeps the result of a `keepResult` task after the task node is gone. */
export function keptResultPathFor(taskPath: string): string {
  const serial = serialOf(nameOf(taskPath), TASK_PREFIX);
  if (serial === undefined) {
    throw new InvalidArgumentError(
      'task path',
      `${taskPath} does not end in ${TASK_PREFIX}<serial>`,
      taskPath,
    );
  }
  return childPath(parentOf(taskPath), `${KEPT_RESULT_PREFIX}${serial}`);
}

/** Where a task's entry in its plan's runnable index goes. */
export function runnableEntryFor(taskPath: string): string {
  return childPath(childPath(parentOf(taskPath), RUNNABLE_INDEX), nameOf(taskPath));
}

/** The name of the ephemeral node by which a session that adds tasks to a plan shows it is alive. */
export function builderNodeName(sessionId: string): string {
  return `${BUILDER_PREFIX}${sessionId}`;
}

/** Where a task records its `n`-th `ctx.spawn` call: `<task>/spawn-<n>`. */
export function spawnRecordPath(task: string, call: number): string {
  return `${task}/${SPAWN_PREFIX}${call}`;
}

/** The marker of an addTasks batch that is committed (every link in place): its tasks are to be made ready. */
export function batchMarkerName(batch: string): string {
  return `${BATCH_PREFIX}${batch}`;
}

/**
 * Where the claim of a task key goes: `<plan>/keys/key-<URI-encoded key>`. The prefix keeps a key
 * such as `.` or `..` from making a name ZooKeeper refuses; the encoding, one with `/`.
 */
export function keyClaimPath(plan: string, key: string): string {
  return childPath(childPath(plan, TASK_KEYS), `${KEY_CLAIM_PREFIX}${encodeURIComponent(key)}`);
}

/** The key a claim's node name stands for; undefined for a name keyClaimPath cannot have made. */
export function keyOfClaimName(name: string): string | undefined {
  if (!name.startsWith(KEY_CLAIM_PREFIX)) return undefined;
  const encoded = name.slice(KEY_CLAIM_PREFIX.length);
  try {
    const key = decodeURIComponent(encoded);
    return encodeURIComponent(key) === encoded ? key : undefined;
  } catch {
    return undefined; // a malformed escape: not a node of ours
  }
}

/** Where a finished task's record goes in its plan's history. */
export function historyEntryFor(taskPath: string): string {
  return childPath(childPath(parentOf(taskPath), HISTORY), nameOf(taskPath));
}

/** The plan a task belongs to. */
export function planOfTask(taskPath: string): string {
  return parentOf(taskPath);
}

/**
 * Validates an absolute ZooKeeper path (ZooKeeper's own rules: leading slash, no empty,
 * `.` or `..` segments, no trailing slash except the root, no control characters).
 */
export function assertValidPath(argument: string, path: unknown): asserts path is string {
  if (typeof path !== 'string' || path.length === 0) {
    throw new InvalidArgumentError(
      argument,
      `expected an absolute znode path such as "/plans", got ${describe(path)}`,
    );
  }
  if (!path.startsWith('/')) {
    throw new InvalidArgumentError(argument, `"${path}" must start with "/"`, path);
  }
  if (path === '/') return;
  if (path.endsWith('/')) {
    throw new InvalidArgumentError(argument, `"${path}" must not end with "/"`, path);
  }
  for (const segment of path.slice(1).split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new InvalidArgumentError(argument, `"${path}" has an empty, "." or ".." segment`, path);
    }
  }
  if (FORBIDDEN_PATH_CHARACTERS.test(path)) {
    throw new InvalidArgumentError(
      argument,
      `"${path}" contains a character ZooKeeper refuses (control, surrogate or private-use)`,
      path,
    );
  }
}

/** Plan names among a parent's children: `plan-N` (createPlan) by serial, then named plans (a schedule's, another tool's) by name. */
export function sortPlanNames(names: readonly string[]): string[] {
  const named = names
    .filter((name) => !hasSequentialName(name, PLAN_PREFIX) && isPlanName(name))
    .sort();
  return [...sortBySerial(names, PLAN_PREFIX), ...named];
}

/** A schedule tick's plan: `<schedule>@20261125T013000.000Z`, or `…-manual-<nonce>` for a trigger. */
const TICK_PLAN_NAME =
  /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}@\d{8}T\d{6}\.\d{3}Z(-manual-[0-9a-f]{8})?$/;

/** The name of a plan zk-plan makes: `plan-N` (createPlan), a schedule tick's `<schedule>@<time>`, or a sub-plan's `<plan name>~task-N`. */
export function isZkPlanPlanName(name: string): boolean {
  const [root, ...tasks] = name.split(SUB_PLAN_SEPARATOR);
  return (
    root !== undefined &&
    (hasSequentialName(root, PLAN_PREFIX) || TICK_PLAN_NAME.test(root)) &&
    tasks.length <= MAX_SUB_PLAN_DEPTH &&
    tasks.every((task) => hasSequentialName(task, TASK_PREFIX))
  );
}

/** The child plan a sub-plan task runs, under `parent`: named after the task's plan and the task (`plan-0000000012~task-0000000003`). */
export function subPlanPath(parent: string, task: string): string {
  return childPath(parent, `${nameOf(parentOf(task))}${SUB_PLAN_SEPARATOR}${nameOf(task)}`);
}

/** How many sub-plan levels a plan's name holds (0 for a plan made by createPlan or a schedule). */
export function subPlanDepth(plan: string): number {
  return nameOf(plan).split(SUB_PLAN_SEPARATOR).length - 1;
}

/** Where a plan records the child plan of its sub-plan task `task`. */
export function subPlanRecordPath(task: string): string {
  return childPath(childPath(parentOf(task), SUB_PLANS), nameOf(task));
}

/** Validates a plan path: `<parent>/plan-N`, a schedule tick's `<parent>/<schedule>@<time>`, or a sub-plan's `<parent>/<plan name>~task-N`. */
export function assertPlanPath(argument: string, path: unknown): asserts path is string {
  assertValidPath(argument, path);
  if (!isZkPlanPlanName(nameOf(path)))
    throw new InvalidArgumentError(
      argument,
      `"${path}" is not a plan path (<parent>/plan-N, a schedule's <parent>/<name>@<time>, or a sub-plan's <parent>/<plan name>~task-N)`,
      path,
    );
}

/** Validates a path whose last segment must be a sequential name with the given prefix. */
export function assertSequentialPath(
  argument: string,
  path: unknown,
  prefix: SequentialPrefix,
): asserts path is string {
  assertValidPath(argument, path);
  if (!hasSequentialName(nameOf(path), prefix)) {
    throw new InvalidArgumentError(
      argument,
      `"${path}" is not a ${prefix}<serial> node (use the path returned by zk-plan)`,
      path,
    );
  }
}

function describe(value: unknown): string {
  return value === null ? 'null' : typeof value === 'string' ? `"${value}"` : typeof value;
}
