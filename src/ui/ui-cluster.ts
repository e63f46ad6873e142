/**
 * What `/api/cluster` answers: the live workers, the concurrency limits, whether actions are on,
 * the schedules of a schedules' parent and the jobs of a jobs' parent (when the view was given
 * them), as the page shows them.
 */
import type { ZkPlan } from '../zk-plan.js';
import type { ScheduleSummary } from '../schedule/schedules.js';
import { readJobs } from './ui-jobs.js';
import { isPlanUnder, toJsonSafe } from './ui-model.js';
import type { UiCluster, UiSchedule, UiSchedules } from './ui-wire.js';

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
    readSchedules(zkPlan, parent, schedulesParent),
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
    ...schedules,
    ...(jobsParent === undefined ? {} : { jobsParent }),
    jobs: jobs.jobs,
    jobWorkers: jobs.workers,
  }) as UiCluster;
}

/** The schedules of a schedules' parent, as `/api/schedules` answers them; none without one. */
export async function readSchedules(
  zkPlan: ZkPlan,
  parent: string,
  schedulesParent: string | undefined,
): Promise<UiSchedules> {
  if (schedulesParent === undefined) return { schedules: [] };
  const summaries = await zkPlan.schedules(schedulesParent).list();
  return toJsonSafe({
    schedulesParent,
    schedules: summaries.map((summary) => uiSchedule(summary, parent)),
  }) as UiSchedules;
}

/** What the page shows of a schedule: its runs link only to plans this view serves. */
function uiSchedule(
  { schedule, nextFireTimes, recentRuns, backfills }: ScheduleSummary,
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
    backfills: backfills.map((backfill) => ({
      id: backfill.id,
      from: backfill.from,
      to: backfill.to,
      mode: backfill.mode,
      state: backfill.state,
      total: backfill.total,
      started: backfill.started,
      completed: backfill.completed,
      failed: backfill.failed,
      notRun: backfill.notRun,
      ...(backfill.reason === undefined ? {} : { reason: backfill.reason }),
      createdAt: backfill.createdAt,
    })),
  };
}
