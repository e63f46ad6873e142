/**
 * "Why isn't this task running?": the decision, from what was read (src/explain/explainer.ts).
 * Pure. The codes are a contract (docs/guide/control.md, `zk-plan why`, the web view): a stable code, a sentence,
 * and the data behind it.
 */
import type { PlanControlRecord } from '../control/control-record.js';
import type { SlotRecord } from '../limits/limit-record.js';
import type { PlanView, TaskView } from '../plan/plan-view.js';
import { isStale, type WorkerInfo } from '../registry/worker-info.js';
import { SHELL_FUNCTION } from '../shell/shell-params.js';
import { COLLECT_FUNCTION } from '../spawn/collect-function.js';
import { WAIT_FOR_PLAN_FUNCTION } from '../dependent/dependency-target.js';
import { SUB_PLAN_FUNCTION } from '../subplan/sub-plan-target.js';
import { nameOf } from '../zk/layout.js';

/**
 * The stable code of an explanation (`explainTask`, `zk-plan why`): what holds a task back, or that
 * it runs or is done. Branch on it; the message may change.
 *
 * @category Explain
 */
export type ExplanationCode =
  | 'PLAN_NOT_READY'
  | 'PLAN_PAUSED'
  | 'PLAN_CANCELLED'
  | 'PLAN_FAILED'
  | 'WAITING_FOR_INPUTS'
  | 'WAITING_FOR_CONTINUATION'
  | 'WAITING_FOR_CONDITION'
  | 'RETRY_BACKOFF'
  | 'FAILED'
  | 'BLOCKED'
  | 'CONCURRENCY_LIMIT'
  | 'OWNED'
  | 'OWNER_GONE'
  | 'NO_WORKER_FOR_FUNCTION'
  | 'WORKERS_BUSY'
  | 'RUNNABLE'
  | 'DONE';

/**
 * What lets the task go on, said twice: as a call of the API and as a `zk-plan` command.
 *
 * @category Explain
 */
export interface Remedy {
  readonly api: string;
  readonly cli: string;
}

/**
 * Why a task is not running (or that it is, or is done), as `explainTask` answers: a stable code, a
 * sentence, the remedy where one helps, and the data behind it.
 *
 * @category Explain
 */
export interface Explanation {
  readonly task: string;
  /** The key its plan's spec gave the task, when it has one. */
  readonly key?: string;
  readonly code: ExplanationCode;
  /** What holds the task, as a sentence (without the remedy). */
  readonly message: string;
  /** What lets it go on, where something would (FAILED, PLAN_PAUSED, PLAN_NOT_READY). */
  readonly remedy?: Remedy;
  readonly details: Readonly<Record<string, unknown>>;
}

/** What explaining one task needs, read at one moment. */
export interface TaskFacts {
  readonly task: string;
  readonly view: PlanView;
  readonly control: PlanControlRecord | undefined;
  /** Who holds the task's owner node (read after the view), when it has one. */
  readonly owner: TaskOwner | undefined;
  readonly concurrencyKey: string | undefined;
  /** The key's limit and its holders, when it has one. */
  readonly limit: { readonly limit: number; readonly holders: readonly SlotRecord[] } | undefined;
  /** The live worker pools following the plan's parent. */
  readonly workers: readonly WorkerInfo[];
  readonly now: number;
}

/** A task's owner node as read: the worker loop it names, and the session that holds it. */
export interface TaskOwner {
  readonly workerId: string;
  readonly session: string;
}

/** The registry record of the pool whose session holds the owner node, if any. */
export function ownerOf(owner: TaskOwner, workers: readonly WorkerInfo[]): WorkerInfo | undefined {
  return workers.find((candidate) => candidate.sessionId === owner.session);
}

export function explainTask(facts: TaskFacts): Explanation {
  const { task, view, control } = facts;
  const subject = view.tasks.find((candidate) => candidate.task === task);
  const key = subject?.key;
  const make = (
    code: ExplanationCode,
    message: string,
    details: Record<string, unknown> = {},
    remedy?: Remedy,
  ): Explanation => ({
    task,
    ...(key !== undefined ? { key } : {}),
    code,
    message,
    ...(remedy !== undefined ? { remedy } : {}),
    details,
  });
  if (control?.state === 'cancelled')
    return make(
      'PLAN_CANCELLED',
      `its plan ${view.plan} was cancelled${control.reason ? `: ${control.reason}` : ''}; it never runs`,
      {
        reason: control.reason,
        at: control.at,
      },
    );
  if (subject?.state === 'skipped')
    return make(
      'DONE',
      `it is done, skipped without a result: ${subject.skipped ?? 'no reason recorded'}`,
      {
        skipped: subject.skipped,
        ...(subject.finishedAt ? { finishedAt: subject.finishedAt } : {}),
      },
    );
  if (subject === undefined || subject.state === 'done') {
    return make(
      'DONE',
      subject?.finishedAt
        ? `it is done (finished ${subject.finishedAt.toISOString()} by ${subject.workerId ?? 'a worker'})`
        : 'it is done: its node is gone, as a finished task’s is',
      {
        ...(subject?.finishedAt
          ? { finishedAt: subject.finishedAt, workerId: subject.workerId }
          : {}),
      },
    );
  }
  if (subject.state === 'failed')
    return make(
      'FAILED',
      `it failed for good: ${subject.failure?.message ?? 'see its failure'}`,
      { failure: subject.failure },
      {
        api: `retryFailed(${view.plan}) runs it again`,
        cli: `zk-plan retry ${view.plan} runs it again`,
      },
    );
  if (view.status.state === 'failed' && view.status.failurePolicy === 'failFast') {
    return make(
      'PLAN_FAILED',
      `its failFast plan failed (${view.status.failed.map((failed) => failed.key ?? failed.task).join(', ')}): nothing of it starts any more`,
      {
        failed: view.status.failed,
      },
    );
  }
  if (subject.state === 'blocked')
    return make(
      'BLOCKED',
      `it can never run: ${subject.blockedReason ?? 'an input comes from a failed task'}`,
      { reason: subject.blockedReason },
    );
  if (control?.state === 'paused')
    return make(
      'PLAN_PAUSED',
      `its plan is paused (since ${control.at.toISOString()})`,
      { at: control.at, abortRunning: control.abortRunning },
      {
        api: `control.resume(${view.plan}) lets it run`,
        cli: `zk-plan resume ${view.plan} lets it run`,
      },
    );
  if (subject.state === 'building' || view.status.state === 'building') {
    if (subject.state === 'building')
      return make('PLAN_NOT_READY', 'it is still being written (its `ready` node is missing)');
    return make(
      'PLAN_NOT_READY',
      'its plan is not ready: the program building it has not marked it ready',
      {},
      {
        api: `markAsReady(${view.plan}) lets workers take its tasks`,
        cli: `the program building it marks it ready when done (zk-plan submit does so itself); zk-plan rm ${view.plan} removes a plan whose builder died`,
      },
    );
  }
  if (subject.state === 'waiting') return waitingForInputs(subject, view, make);
  if (subject.state === 'running' || subject.state === 'finishing')
    return owned(subject, facts, make);
  return runnable(subject, facts, make);
}

type Make = (
  code: ExplanationCode,
  message: string,
  details?: Record<string, unknown>,
  remedy?: Remedy,
) => Explanation;

function waitingForInputs(subject: TaskView, view: PlanView, make: Make): Explanation {
  const byTask = new Map(view.tasks.map((task) => [task.task, task]));
  const continuation =
    subject.continuedBy === undefined ? undefined : byTask.get(subject.continuedBy);
  if (subject.continuedBy !== undefined && subject.pendingInputs === 0) {
    const name = continuation?.key ?? nameOf(subject.continuedBy);
    return make(
      'WAITING_FOR_CONTINUATION',
      `it handed over to ${name} (ctx.continueWith) and completes with its result: ${name} is ${continuation?.state ?? 'not found'}`,
      { continuation: subject.continuedBy, state: continuation?.state },
    );
  }
  const pending = subject.inputs
    .filter((input) => byTask.has(input) && byTask.get(input)?.state !== 'done')
    .map((input) => ({
      task: input,
      ...(byTask.get(input)?.key !== undefined ? { key: byTask.get(input)?.key } : {}),
      state: byTask.get(input)?.state,
    }));
  // Inputs are named by their keys where they have one, as the task itself is.
  const list = pending
    .map(
      ({ task, key, state }) => `${key ?? task.slice(task.lastIndexOf('/') + 1)} (${state ?? '?'})`,
    )
    .join(', ');
  return make(
    'WAITING_FOR_INPUTS',
    `it waits for ${subject.pendingInputs} input(s)${list ? `: ${list}` : ''}`,
    {
      pendingInputs: subject.pendingInputs,
      inputs: pending,
    },
  );
}

function owned(subject: TaskView, facts: TaskFacts, make: Make): Explanation {
  const { owner } = facts;
  if (owner === undefined) {
    // Nobody holds it: its result is stored and the worker that ran it stopped while handing it on,
    // or (after reads that kept disagreeing) its owner let go of it while it was being read.
    return make(
      'RUNNABLE',
      subject.state === 'finishing'
        ? 'its result is stored and no worker holds it (the worker that ran it stopped while handing it on): the next worker that looks hands it on'
        : 'its owner let go of it while it was being read (it finished, failed or was given back): ask again',
      { finishing: subject.state === 'finishing' },
    );
  }
  const worker = ownerOf(owner, facts.workers);
  const since = subject.owner?.claimedAt;
  const details = { workerId: owner.workerId, session: owner.session, since };
  if (worker !== undefined && !isStale(worker, facts.now)) {
    return make(
      'OWNED',
      `it is running on ${owner.workerId} (${worker.host}, pid ${worker.pid})${since ? ` since ${since.toISOString()}` : ''}`,
      {
        ...details,
        host: worker.host,
        pid: worker.pid,
      },
    );
  }
  if (worker !== undefined) {
    // Its session still holds the owner node: the server ends it at most a session timeout after the worker last spoke.
    const expiresBy = new Date(worker.updatedAt.getTime() + worker.sessionTimeoutMs);
    return make(
      'OWNER_GONE',
      `its owner ${owner.workerId} (${worker.host}, pid ${worker.pid}) has not rewritten its registry record since ${worker.updatedAt.toISOString()}: ` +
        `it is frozen or cut off from ZooKeeper; another worker takes the task when its session ends, by ${expiresBy.toISOString()}`,
      { ...details, lastSeen: worker.updatedAt, expiresBy },
    );
  }
  // The registry was read after the owner node: a pool's record lives as long as the session that holds the owner node.
  return make(
    'OWNER_GONE',
    `its owner ${owner.workerId} (session ${owner.session}) is in no live worker pool's registry record ` +
      `(a worker of another tool, or a single worker loop started through the API, does not register); another worker takes it when that session ends (within its session timeout)`,
    { ...details, registered: false },
  );
}

/** A task that may start (or will, after its retry delay): the first thing that holds it back, else who will take it. */
function runnable(subject: TaskView, facts: TaskFacts, make: Make): Explanation {
  const { limit, concurrencyKey } = facts;
  const live = facts.workers.filter((worker) => !isStale(worker, facts.now));
  const able = live.filter((worker) => canRun(worker, subject.fn));
  // The root cause even while a retry delay runs: workers without the function fail it (UNKNOWN_FUNCTION) until its tries are used up.
  if (able.length === 0) {
    const shell = subject.fn === SHELL_FUNCTION && live.length > 0;
    return make(
      'NO_WORKER_FOR_FUNCTION',
      live.length === 0
        ? `no live worker follows ${parentOfPlan(facts.view.plan)}`
        : shell
          ? 'no live worker allows shell tasks (each leaves them to one that does)'
          : `no live worker can run ${subject.fn === 'inline' ? 'inline tasks (none allows inline functions: zk-plan worker --allow-inline, the worker option allowInline)' : `"${subject.fn}"`}`,
      {
        fn: subject.fn,
        workers: live.map((worker) => ({
          id: worker.id,
          functions: worker.functions,
          ...(shell ? { allowShell: worker.allowShell } : {}),
        })),
        ...(subject.attempts ? { attempts: subject.attempts } : {}),
      },
      shell
        ? {
            api: `startWorkers('${parentOfPlan(facts.view.plan)}', { allowShell: true }) starts workers that run it`,
            cli: `zk-plan worker --parent ${parentOfPlan(facts.view.plan)} --functions <module> --allow-shell starts a worker that runs it`,
          }
        : undefined,
    );
  }
  if (subject.waiting !== undefined && subject.waiting.nextCheckAt.getTime() > facts.now) {
    const { reason, since, checks, nextCheckAt } = subject.waiting;
    return make(
      'WAITING_FOR_CONDITION',
      `it waits: ${reason} (checked ${checks} time(s) since ${since.toISOString()}; next check at ${nextCheckAt.toISOString()})`,
      { reason, since, checks, nextCheckAt },
    );
  }
  if (subject.attempts !== undefined && subject.attempts.nextTryAt.getTime() > facts.now) {
    return make(
      'RETRY_BACKOFF',
      `try ${subject.attempts.failures} failed (${subject.attempts.lastError}); the next may start at ${subject.attempts.nextTryAt.toISOString()}`,
      {
        failures: subject.attempts.failures,
        nextTryAt: subject.attempts.nextTryAt,
        lastError: subject.attempts.lastError,
      },
    );
  }
  if (concurrencyKey !== undefined && limit !== undefined && limit.holders.length >= limit.limit) {
    return make(
      'CONCURRENCY_LIMIT',
      `every slot of its concurrency key "${concurrencyKey}" is held (${limit.holders.length}/${limit.limit})`,
      {
        key: concurrencyKey,
        limit: limit.limit,
        holders: limit.holders,
      },
    );
  }
  const loops = able.reduce((sum, worker) => sum + worker.loops, 0);
  const busy = able.reduce((sum, worker) => sum + Math.min(worker.loops, worker.running.length), 0);
  if (busy >= loops)
    return make(
      'WORKERS_BUSY',
      `every loop that can run it is busy (${busy}/${loops} on ${able.length} worker(s))`,
      {
        loops,
        busy,
        workers: able.map((worker) => worker.id),
      },
    );
  return make(
    'RUNNABLE',
    `it can run now: ${loops - busy} of ${loops} loop(s) that can run it are free, so one takes it within moments`,
    { loops, busy },
  );
}

/** Whether a live worker runs tasks of `fn`: inline and shell tasks only when allowed, a registered function when it has it (or has none: it takes any). */
function canRun(worker: WorkerInfo, fn: string): boolean {
  if (fn === 'inline') return worker.allowInline;
  if (fn === SHELL_FUNCTION) return worker.allowShell;
  // Built into every worker.
  if (fn === COLLECT_FUNCTION || fn === WAIT_FOR_PLAN_FUNCTION || fn === SUB_PLAN_FUNCTION)
    return true;
  return worker.functions.length === 0 || worker.functions.includes(fn);
}

function parentOfPlan(plan: string): string {
  return plan.slice(0, plan.lastIndexOf('/')) || '/';
}

/**
 * What explain.plan says: the plan's state and, for each reason its unfinished tasks have, which tasks.
 *
 * @category Explain
 */
export interface PlanExplanation {
  readonly plan: string;
  readonly state: PlanView['status']['state'];
  readonly message: string;
  readonly reasons: readonly {
    readonly code: ExplanationCode;
    readonly message: string;
    readonly remedy?: Remedy;
    readonly tasks: readonly string[];
  }[];
}

/** Sums up why a plan is not progressing from its unfinished tasks' explanations (most tasks first). */
export function explainPlanFrom(
  view: PlanView,
  explanations: readonly Explanation[],
): PlanExplanation {
  const byCode = new Map<ExplanationCode, Explanation[]>();
  for (const explanation of explanations) {
    if (explanation.code === 'DONE') continue;
    byCode.set(explanation.code, [...(byCode.get(explanation.code) ?? []), explanation]);
  }
  const reasons = [...byCode.entries()]
    .sort((a, b) => b[1].length - a[1].length)
    .map(([code, list]) => {
      const first = list[0] as Explanation;
      return {
        code,
        message: first.message,
        ...(first.remedy ? { remedy: first.remedy } : {}),
        tasks: list.map((explanation) => explanation.task),
      };
    });
  const state = view.status.state;
  const message =
    state === 'completed'
      ? 'it completed'
      : reasons.length === 0
        ? `it is ${state} with no task left to explain`
        : `it is ${state}: ${reasons.map((reason) => `${reason.tasks.length} task(s) ${reason.code}`).join(', ')}`;
  return { plan: view.plan, state, message, reasons };
}
