/**
 * What `/api/cluster` answers: the live workers, the concurrency limits, whether actions are on,
 * the schedules of a schedules' parent and the jobs of a jobs' parent (when the view was given
 * them), as the page shows them.
 */
import type { ZkPlan } from '../zk-plan.js';
import type { ScheduleSummary } from '../schedule/schedules.js';
import { readJobs } from './ui-jobs.js';
import { isPlanUnder, toJsonSafe } from './ui-model.js';
import type { UiCluster, UiSchedule } from './ui-wire.js';

export async function readCluster(
  zkPlan: ZkPlan,
  parent: string,
  actions: boolean,
  schedulesParent: string | undefined,
  jobsParent?: string,
): Promise<UiCluster> {
  const [workers, limits, schedules, jobs] = await Promise.all([
    zkPlan.listWorkers(parent),
    zkPlan.limits(parent).list(),
    schedulesParent === undefined ? [] : zkPlan.schedules(schedulesParent).list(),
    jobsParent === undefined ? { jobs: [], workers: [] } : readJobs(zkPlan, jobsParent),
  ]);
  // What the page shows, and nothing more (no session ids).
  const shown = workers.map(
    ({ id, host, pid, version, functions, loops, running, startedAt, updatedAt }) => ({
      id,
      host,
      pid,
      version,
      functions,
      loops,
      running,
      startedAt,
      updatedAt,
    }),
  );
  return toJsonSafe({
    actions,
    workers: shown,
    limits,
    ...(schedulesParent === undefined ? {} : { schedulesParent }),
    schedules: schedules.map((summary) => uiSchedule(summary, parent)),
    ...(jobsParent === undefined ? {} : { jobsParent }),
    jobs: jobs.jobs,
    jobWorkers: jobs.workers,
  }) as UiCluster;
}

/** What the page shows of a schedule: its runs link only to plans this view serves. */
function uiSchedule(
  { schedule, nextFireTimes, recentRuns }: ScheduleSummary,
  parent: string,
): UiSchedule {
  return {
    name: schedule.name,
    cron: schedule.cron,
    timezone: schedule.timezone,
    paused: schedule.paused,
    planParent: schedule.planParent,
    nextFireTimes,
    runs: recentRuns.map(({ firedAt, kind, state, plan, outcome, reason }) => ({
      firedAt,
      kind,
      state,
      plan,
      ...(outcome !== undefined || reason !== undefined ? { detail: outcome ?? reason } : {}),
      shown: isPlanUnder(parent, plan),
    })),
  };
}
