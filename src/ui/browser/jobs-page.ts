/**
 * `/jobs.js`: the jobs page (`zk-plan ui --jobs <path>`). The jobs, their newest runs, the job
 * workers and each one's share with its fencing tokens, read from `/api/cluster` every 5 s; `?name=<job>` marks
 * the job and scrolls to it.
 */
import type { UiCluster } from '../ui-wire.js';
import { renderJobWorkers } from './cluster-view.js';
import { byId } from './dom.js';
import { renderJobs } from './jobs-view.js';
import { linkedName, markLinked, pollJson } from './list-page.js';

const tables = {
  jobs: byId('jobs'),
  jobAssignment: byId('job-assignment'),
  jobRuns: byId('job-runs'),
  jobsEmpty: byId('jobs-empty'),
  jobRunsEmpty: byId('job-runs-empty'),
};
const workers = { workers: byId('workers'), workersEmpty: byId('workers-empty') };
const linked = linkedName();
const scrolled = { done: false };

pollJson<UiCluster>(
  '/api/cluster',
  (cluster) => {
    renderJobs(cluster.jobs, cluster.jobsParent, tables);
    renderJobWorkers(cluster, workers);
    if (linked !== undefined && !markLinked(tables.jobs, 'job', linked, scrolled))
      tables.jobsEmpty.textContent = `No job named ${linked} is listed.`;
  },
  { note: byId('cluster-note'), live: byId('live') },
);
