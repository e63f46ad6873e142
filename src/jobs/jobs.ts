/**
 * `zkPlan.jobs(parent)`: define, change, trigger, remove and read the jobs of a jobs' parent, and
 * disable or enable job workers. The job workers (`startJobWorker`) and their manager do the rest;
 * this only writes definitions and flags and reads what they wrote.
 */
import { hostname } from 'node:os';
import { DEFAULTS } from '../config/defaults.js';
import { assertDurationMs } from '../config/option-checks.js';
import { JobError, JobNotFoundError } from '../errors/job-errors.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { childPath, jobNodes } from '../zk/layout.js';
import {
  assertItems,
  assertJobName,
  poolItems,
  resolveJob,
  type JobDefinition,
  type StoredJob,
} from './job-definition.js';
import type { AssignmentRecord, JobStore, JobWorkerInfo } from './job-store.js';
import { isRunNodeName, runState, type JobRun } from './job-run-record.js';
import type { LogLine } from '../logs/task-log-types.js';
import type { JobItemFailure } from './job-run-store.js';

/**
 * A job's run history as `jobs.runs(name)` gives it.
 *
 * @category Jobs
 */
export interface JobRunHistory {
  readonly job: string;
  /** The runs kept (the job's `keepRuns` newest), newest first, at most `limit`. */
  readonly runs: readonly JobRun[];
  /** Each item's last failed run, kept however many runs follow (empty when asked without them). */
  readonly lastFailures: Readonly<Record<string, JobItemFailure>>;
  /** How many items have a last failure kept. */
  readonly failedItems: number;
  /** Counts over the runs given. */
  readonly counts: JobRunCounts;
}

/**
 * How many of the runs given failed, were interrupted, overran a tick (misfires), caught one up,
 * failed over, or were retries.
 *
 * @category Jobs
 */
export interface JobRunCounts {
  readonly runs: number;
  readonly failed: number;
  readonly interrupted: number;
  readonly misfires: number;
  readonly caughtUp: number;
  readonly failovers: number;
  readonly retries: number;
}

/** The most runs `jobs.runs` reads at once. */
export const MAX_RUNS_READ = 1_000;
import { assertJobWorkerId } from './job-worker.js';

/**
 * An item's lease as `list()` shows it.
 *
 * @category Jobs
 */
export interface ItemHolder {
  readonly holder: string;
  readonly token: number;
  readonly expiresAt: Date;
  readonly released: boolean;
}

/**
 * One job as `list()` gives it.
 *
 * @category Jobs
 */
export interface JobSummary extends StoredJob {
  /** Item ids by worker id, as the manager last assigned them. */
  readonly assignment: Readonly<Record<string, readonly string[]>>;
  /** Items of the pool the assignment gives nobody. */
  readonly unassigned: readonly string[];
  /** Why the manager could not assign the job, if it could not. */
  readonly problem?: string;
  /** Each leased item's holder and fencing token. */
  readonly leases: Readonly<Record<string, ItemHolder>>;
}

/**
 * A live job worker and the items the assignment gives it, by job.
 *
 * @category Jobs
 */
export interface JobWorkerSummary extends JobWorkerInfo {
  readonly items: Readonly<Record<string, readonly string[]>>;
  readonly manager: boolean;
  /** Taken out of every assignment by `disableWorker`: it runs on (and may manage), holding no item. */
  readonly disabled: boolean;
}

/**
 * The jobs under one parent, as `zkPlan.jobs(parent)` gives them: define a job (function, work
 * pool, mode, assignment strategy), change its pool, disable, enable, trigger or remove it, and
 * read each job with its assignment and leases, and the live job workers; disable or enable a job
 * worker.
 *
 * @category Jobs
 */
export class Jobs {
  /**
   * Made by `zkPlan.jobs(parent)` on the ZkPlan's session; the job store it takes is not public API.
   *
   * @internal
   */
  constructor(
    private readonly store: JobStore,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The parent the jobs live under. */
  get parent(): string {
    return this.store.parent;
  }

  /** Creates or replaces a job (validated in full first); the manager assigns its items to the live workers. */
  async define(definition: JobDefinition): Promise<StoredJob> {
    const job = resolveJob(definition, new Date(this.now()));
    for (;;) if (await this.store.write(job, await this.store.node(job.name))) return job; // a malformed node is replaced too
  }

  /** Replaces the named work items of a job defined with `{ items }`. */
  async setWorkPool(name: string, items: readonly string[]): Promise<StoredJob> {
    assertJobName(name);
    assertItems(name, items);
    return this.change(name, (job) => {
      if (!('items' in job.workPool))
        throw new JobError(
          'JOB_POOL_IS_SHARDS',
          `Job "${name}" has ${job.workPool.shards} shards, not named items: define it again to change its pool`,
          jobNodes(this.parent, name).node,
        );
      return { ...job, workPool: { items: [...items] } };
    });
  }

  /** No item of the job is assigned (running ones stop and are given back) until `enable`. */
  async disable(name: string): Promise<StoredJob> {
    return this.change(name, (job) => ({ ...job, disabled: true }));
  }

  /** Lets the job's items be assigned again after `disable`. Safe to repeat. */
  async enable(name: string): Promise<StoredJob> {
    return this.change(name, (job) => ({ ...job, disabled: false }));
  }

  /** A run now on every worker holding items of the job (`everyMs` and cron jobs; a continuous one runs all the time). */
  async trigger(name: string): Promise<void> {
    const job = await this.get(name);
    if (job.mode === 'continuous')
      throw new JobError(
        'JOB_CONTINUOUS',
        `Job "${name}" is continuous: it runs all the time, so there is nothing to trigger`,
        jobNodes(this.parent, name).node,
      );
    await this.store.trigger(name);
  }

  /**
   * Disables the job, waits until every item's lease is released or has run out (no holder is
   * left running it), then deletes it (its leases stay until the manager prunes them, so a job
   * defined again under the name waits for any holder it missed). JobError JOB_STILL_HELD after `timeoutMs`.
   */
  async remove(name: string, options: { readonly timeoutMs?: number } = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? DEFAULTS.waitTimeoutMs;
    assertDurationMs('timeoutMs', timeoutMs);
    await this.disable(name);
    const until = this.now() + timeoutMs;
    for (;;) {
      const live = Object.entries(await this.leases(name)).filter(
        ([, lease]) =>
          !lease.released && lease.expiresAt.getTime() + DEFAULTS.jobs.driftMs >= this.now(),
      );
      if (live.length === 0) break;
      if (this.now() >= until)
        throw new JobError(
          'JOB_STILL_HELD',
          `Job "${name}" is disabled but items ${live.map(([item]) => item).join(', ')} are still held after ${timeoutMs} ms: are its workers running? Try again later`,
          jobNodes(this.parent, name).node,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await this.store.remove(name);
    await this.store.runs.remove(name);
  }

  /**
   * The job's run history, newest first (at most `limit`, default 100): each run's worker, items
   * and tokens, cause, try, start, end, outcome and error, with its state (`running` while its
   * worker lives, `interrupted` once the worker is gone without ending it); each item's last
   * failure (unless `lastFailures: false`: then only how many there are); and counts.
   * JobNotFoundError when the job is not defined.
   */
  async runs(
    name: string,
    options: { readonly limit?: number; readonly lastFailures?: boolean } = {},
  ): Promise<JobRunHistory> {
    const limit = options.limit ?? DEFAULTS.jobs.keepRuns;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RUNS_READ)
      throw new InvalidArgumentError(
        'limit',
        `expected a whole number of runs from 1 to ${MAX_RUNS_READ}, got ${JSON.stringify(limit)}`,
      );
    await this.get(name);
    const { runs: store } = this.store;
    const [names, workers, lastFailures, failedItems] = await Promise.all([
      store.names(name),
      this.store.workers(),
      options.lastFailures === false ? {} : store.lastFailures(name),
      store.failureCount(name),
    ]);
    const live = new Set(workers.map((worker) => worker.id));
    const newest = names.reverse().slice(0, limit);
    const records = await Promise.all(newest.map((run) => store.read(name, run)));
    const runs = records.flatMap((record, index) =>
      record === undefined
        ? []
        : [
            {
              ...record,
              run: newest[index] as string,
              state: runState(record, live.has(record.worker)),
            },
          ],
    );
    return { job: name, runs, lastFailures, failedItems, counts: countRuns(runs) };
  }

  /**
   * Takes a live job worker out of every job's assignment without stopping it: the manager gives its
   * items to the other workers, and it gives each back (its lease written released) once its run of
   * the item has ended, so no item ever has two holders. The flag is a persistent node of its own: it
   * holds while the worker replaces an expired session under the same id, until `enableWorker`, or
   * until the manager deletes it once the worker has been gone for good (10 minutes without a live
   * node). Resolves true when this call disabled it, false when it already was.
   *
   * JobError JOB_WORKER_NOT_LIVE when no live worker has the id and none is flagged: an id changes
   * with every start, so a flag for another id would never match a worker (`workers()` lists the
   * live ones).
   */
  async disableWorker(id: string): Promise<boolean> {
    assertJobWorkerId(id);
    if (!(await this.store.isWorkerLive(id))) {
      if (await this.store.isWorkerDisabled(id)) return false; // disabled, then gone: a repeat changes nothing
      throw new JobError(
        'JOB_WORKER_NOT_LIVE',
        `No live job worker "${id}" under ${this.parent}: only a live one can be disabled, and a worker's id changes with every start (jobs(parent).workers() lists the live ones)`,
        childPath(this.store.nodes.workers, id),
        `no live job worker "${id}" under ${this.parent}: only a live one can be disabled, and a worker's id changes with every start (zk-plan workers --jobs ${this.parent} lists the live ones)`,
      );
    }
    return this.store.disableWorker(id, {
      disabledAt: new Date(this.now()).toISOString(),
      by: `${hostname()}:${process.pid}`,
    });
  }

  /**
   * Lets the manager assign items to the job worker again after `disableWorker` (its flag deleted).
   * Safe to repeat, and for a worker that is gone. Resolves true when this call enabled it, false
   * when it was not disabled.
   */
  async enableWorker(id: string): Promise<boolean> {
    assertJobWorkerId(id);
    return this.store.enableWorker(id);
  }

  /**
   * The lines a run's function wrote with `ctx.log` (`run` as `runs(name)` names it), kept in the
   * task log store under the run's node and flushed while it ran: also those of a run whose worker
   * died. Empty for a run that wrote none, or that left the history.
   */
  async runLog(name: string, run: string): Promise<readonly LogLine[]> {
    await this.get(name);
    if (!isRunNodeName(run))
      throw new InvalidArgumentError(
        'run',
        `expected a run's name as jobs.runs("${name}") gives it (run-<start ms>-<worker>-<n>), got ${JSON.stringify(run)}`,
      );
    return this.store.runs.runLog(name, run);
  }

  /** The job as stored; JobNotFoundError when there is none. */
  async get(name: string): Promise<StoredJob> {
    assertJobName(name);
    const read = await this.store.read(name);
    if (read === undefined) throw new JobNotFoundError(jobNodes(this.parent, name).node);
    return read.job;
  }

  /** Item ids by worker id, as the manager last assigned the job. */
  async assignment(name: string): Promise<Record<string, string[]>> {
    await this.get(name);
    const current = await this.store.readAssignment();
    return Object.fromEntries(
      Object.entries(current?.record.jobs[name] ?? {}).map(([worker, items]) => [
        worker,
        [...items],
      ]),
    );
  }

  /** Every job with its assignment, unassigned items, problem and leases. */
  async list(): Promise<JobSummary[]> {
    const [names, current] = await Promise.all([this.store.names(), this.store.readAssignment()]);
    const jobs = await Promise.all(
      names.map((name) => this.store.read(name).catch(() => undefined)),
    );
    return Promise.all(
      jobs
        .flatMap((read) => (read === undefined ? [] : [read.job]))
        .map(async (job) => this.summary(job, current?.record, await this.leases(job.name))),
    );
  }

  /** The live job workers, each with its items by job, whether it manages and whether it is disabled. */
  async workers(): Promise<JobWorkerSummary[]> {
    const [workers, current, flags] = await Promise.all([
      this.store.workers(),
      this.store.readAssignment(),
      this.store.disabledWorkers(),
    ]);
    const disabled = new Set(flags);
    return workers.map((worker) => ({
      ...worker,
      manager: current?.record.manager === worker.id,
      disabled: disabled.has(worker.id),
      items: Object.fromEntries(
        Object.entries(current?.record.jobs ?? {}).flatMap(([job, byWorker]) =>
          (byWorker[worker.id]?.length ?? 0) > 0 ? [[job, byWorker[worker.id] ?? []]] : [],
        ),
      ),
    }));
  }

  private summary(
    job: StoredJob,
    current: AssignmentRecord | undefined,
    leases: Record<string, ItemHolder>,
  ): JobSummary {
    const assignment = current?.jobs[job.name] ?? {};
    const assigned = new Set(Object.values(assignment).flat());
    const problem = current?.problems[job.name];
    return {
      ...job,
      assignment,
      unassigned: job.disabled
        ? []
        : poolItems(job.workPool)
            .map((item) => item.id)
            .filter((item) => !assigned.has(item)),
      ...(problem === undefined ? {} : { problem }),
      leases,
    };
  }

  private async leases(name: string): Promise<Record<string, ItemHolder>> {
    const items = await this.store.leasedItems(name);
    const read = await Promise.all(
      items.map((item) => this.store.readLease(name, item).catch(() => undefined)),
    );
    return Object.fromEntries(
      read.flatMap((lease, index) =>
        lease === undefined || lease.record.holder === ''
          ? []
          : [
              [
                items[index] as string,
                {
                  holder: lease.record.holder,
                  token: lease.record.token,
                  expiresAt: new Date(lease.record.expiresAt),
                  released: lease.record.released === true,
                },
              ],
            ],
      ),
    );
  }

  private async change(name: string, edit: (job: StoredJob) => StoredJob): Promise<StoredJob> {
    assertJobName(name);
    for (;;) {
      const read = await this.store.read(name);
      if (read === undefined) throw new JobNotFoundError(jobNodes(this.parent, name).node);
      const job = { ...edit(read.job), updatedAt: new Date(this.now()).toISOString() };
      if (await this.store.write(job, read)) return job;
    }
  }
}

function countRuns(runs: readonly JobRun[]): JobRunCounts {
  const count = (test: (run: JobRun) => boolean): number => runs.filter(test).length;
  return {
    runs: runs.length,
    failed: count((run) => run.state === 'failed'),
    interrupted: count((run) => run.state === 'interrupted'),
    misfires: count((run) => run.misfire !== undefined),
    caughtUp: count((run) => run.cause === 'misfire'),
    failovers: count((run) => run.cause === 'failover'),
    retries: count((run) => run.cause === 'retry'),
  };
}
