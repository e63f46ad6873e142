/**
 * The jobs of a jobs' parent (`zk-plan ui --jobs <path>`) as `/api/cluster` sends them: each job's
 * definition, problem and unassigned items, each worker's share of it with the fencing token of
 * every item it holds (from the items' leases), and its newest runs with counts of failures,
 * interruptions, misfires and failovers. Reads only: a parent that does not exist, or
 * has no job worker yet, is shown empty rather than created.
 */
import { describeMode, type WorkPool } from '../jobs/job-definition.js';
import type { JobRunHistory, JobSummary, JobWorkerSummary } from '../jobs/jobs.js';
import type { JobRun } from '../jobs/job-run-record.js';
import type { ZkPlan } from '../zk-plan.js';
import { jobsNodes } from '../zk/layout.js';
import type { UiJob, UiJobItem, UiJobRun, UiJobShare, UiJobWorker } from './ui-wire.js';

/** The jobs under `jobsParent`, by name, and its live job workers, by id. */
export async function readJobs(
  zkPlan: ZkPlan,
  jobsParent: string,
): Promise<{ readonly jobs: UiJob[]; readonly workers: UiJobWorker[] }> {
  if ((await zkPlan.zk.exists(jobsParent)) === undefined) return { jobs: [], workers: [] };
  const jobs = zkPlan.jobs(jobsParent);
  const [summaries, workers] = await Promise.all([
    jobs.list(),
    zkPlan.zk
      .exists(jobsNodes(jobsParent).workers)
      .then((stat) => (stat === undefined ? [] : jobs.workers())),
  ]);
  const histories = await Promise.all(
    summaries
      .slice(0, MAX_JOBS_WITH_RUNS)
      .map((summary) =>
        jobs.runs(summary.name, { limit: UI_JOB_RUNS, lastFailures: false }).catch(() => undefined),
      ),
  );
  return {
    jobs: summaries
      .map((summary, index) => uiJob(summary, workers, histories[index]))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    workers: workers.map(uiJobWorker).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  };
}

/** What the page shows of a job worker: no lease length, no session. */
function uiJobWorker({
  id,
  host,
  pid,
  jobFunctions,
  items,
  manager,
  disabled,
  startedAt,
}: JobWorkerSummary): UiJobWorker {
  return {
    id,
    host,
    pid,
    jobFunctions,
    items: Object.values(items).reduce((sum, held) => sum + held.length, 0),
    manager,
    disabled,
    startedAt,
  };
}

function poolSize(pool: WorkPool): number {
  return 'items' in pool ? pool.items.length : pool.shards;
}

/** The newest runs of each job the page shows. */
export const UI_JOB_RUNS = 10;
/** Jobs whose runs are read at each poll (the first by name); the others show none. */
const MAX_JOBS_WITH_RUNS = 50;
/** Items listed per run (the rest are counted). */
const ITEMS_PER_RUN = 8;
/** The last log lines shown per run (`zk-plan jobs runs --log` prints all it keeps). */
const LOG_LINES_PER_RUN = 3;

function uiRun(run: JobRun): UiJobRun {
  return {
    run: run.run,
    worker: run.worker,
    state: run.state,
    cause: run.cause,
    attempt: run.attempt,
    startedAt: run.startedAt,
    ...(run.finishedAt === undefined ? {} : { finishedAt: run.finishedAt }),
    items: run.items.slice(0, ITEMS_PER_RUN).map((item) => `${item.id}#${item.token}`),
    itemCount: run.items.length,
    ...(run.error === undefined ? {} : { error: `${run.error.type}: ${run.error.message}` }),
    ...(run.misfire === undefined
      ? {}
      : { misfire: `a tick came while it ran (${run.misfire.tick}): ${run.misfire.handling}` }),
    ...(run.failoverOf === undefined ? {} : { failoverOf: run.failoverOf }),
    ...(run.log === undefined || run.log.length === 0
      ? {}
      : {
          log: run.log
            .slice(-LOG_LINES_PER_RUN)
            .map((line) => `${line.level.toUpperCase()} ${line.msg}`),
        }),
  };
}

const NO_RUNS: UiJob['runCounts'] = {
  runs: 0,
  failed: 0,
  interrupted: 0,
  misfires: 0,
  caughtUp: 0,
  failovers: 0,
  retries: 0,
};

function uiJob(
  summary: JobSummary,
  workers: readonly JobWorkerSummary[],
  history: JobRunHistory | undefined,
): UiJob {
  const live = new Map(workers.map((worker) => [worker.id, worker]));
  const assignment: UiJobShare[] = Object.entries(summary.assignment)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([workerId, items]) => ({
      workerId,
      live: live.has(workerId),
      manager: live.get(workerId)?.manager === true,
      items: items.map((item) => uiItem(summary, workerId, item)),
    }));
  return {
    name: summary.name,
    fn: summary.fn,
    mode: describeMode(summary.mode),
    strategy: summary.strategy,
    disabled: summary.disabled,
    items: poolSize(summary.workPool),
    ...(summary.problem === undefined ? {} : { problem: summary.problem }),
    unassigned: [...summary.unassigned],
    assignment,
    runs: (history?.runs ?? []).map(uiRun),
    runCounts: history?.counts ?? NO_RUNS,
    failedItems: history?.failedItems ?? 0,
  };
}

/** An assigned item: its token when its lease is this worker's, or who else holds it still. */
function uiItem(summary: JobSummary, workerId: string, id: string): UiJobItem {
  const lease = summary.leases[id];
  if (lease === undefined || lease.released) return { id };
  return lease.holder === workerId ? { id, token: lease.token } : { id, heldBy: lease.holder };
}
