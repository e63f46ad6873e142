/**
 * The jobs of a jobs' parent (`zk-plan ui --jobs <path>`) as `/api/cluster` sends them: each job's
 * definition, problem and unassigned items, and each worker's share of it with the fencing token
 * of every item it holds (from the items' leases). Reads only: a parent that does not exist, or
 * has no job worker yet, is shown empty rather than created.
 */
import { describeMode, type WorkPool } from '../jobs/job-definition.js';
import type { JobSummary, JobWorkerSummary } from '../jobs/jobs.js';
import type { ZkPlan } from '../zk-plan.js';
import { jobsNodes } from '../zk/layout.js';
import type { UiJob, UiJobItem, UiJobShare, UiJobWorker } from './ui-wire.js';

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
  return {
    jobs: summaries
      .map((summary) => uiJob(summary, workers))
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
  startedAt,
}: JobWorkerSummary): UiJobWorker {
  return {
    id,
    host,
    pid,
    jobFunctions,
    items: Object.values(items).reduce((sum, held) => sum + held.length, 0),
    manager,
    startedAt,
  };
}

function poolSize(pool: WorkPool): number {
  return 'items' in pool ? pool.items.length : pool.shards;
}

function uiJob(summary: JobSummary, workers: readonly JobWorkerSummary[]): UiJob {
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
  };
}

/** An assigned item: its token when its lease is this worker's, or who else holds it still. */
function uiItem(summary: JobSummary, workerId: string, id: string): UiJobItem {
  const lease = summary.leases[id];
  if (lease === undefined || lease.released) return { id };
  return lease.holder === workerId ? { id, token: lease.token } : { id, heldBy: lease.holder };
}
