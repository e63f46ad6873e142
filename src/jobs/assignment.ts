/**
 * The manager's decision (pure): each enabled job's items spread over the live workers that
 * registered its function and are not disabled (`jobs.disableWorker`), by the job's strategy,
 * starting from the current assignment so that strategies that can keep items where they are do.
 * A job whose strategy is unknown here or fails keeps its current assignment (less the workers that
 * are gone or disabled), with the problem recorded.
 */
import { poolItems, type StoredJob } from './job-definition.js';
import type { AssignmentRecord, JobWorkerInfo } from './job-store.js';
import type { Assignment, StrategyRegistry } from './strategies.js';

export interface AssignmentDecision {
  readonly jobs: Record<string, Assignment>;
  readonly problems: Record<string, string>;
}

/** `disabled`: the ids of the disabled job workers (flags of workers that are gone change nothing). */
export function decideAssignment(
  jobs: readonly StoredJob[],
  workers: readonly JobWorkerInfo[],
  current: AssignmentRecord | undefined,
  strategies: StrategyRegistry,
  disabled: ReadonlySet<string>,
): AssignmentDecision {
  const result: Record<string, Assignment> = {};
  const problems: Record<string, string> = {};
  for (const job of jobs) {
    if (job.disabled) continue;
    const registered = workers.filter((worker) => worker.jobFunctions.includes(job.fn));
    const eligible = registered
      .filter((worker) => !disabled.has(worker.id))
      .map((worker) => worker.id);
    const items = poolItems(job.workPool).map((item) => item.id);
    const held = current?.jobs[job.name] ?? {};
    if (eligible.length === 0) {
      problems[job.name] = noWorkerProblem(job.fn, registered.length, items.length);
      continue;
    }
    if (!strategies.has(job.strategy)) {
      problems[job.name] =
        `strategy "${job.strategy}" is not registered on the manager: use evenly, rendezvous or evenlyRendezvous, or register it on every job worker (the job worker option strategies)`;
      result[job.name] = keepLive(held, eligible);
      continue;
    }
    try {
      result[job.name] = strategies.assign(job.strategy, {
        items,
        workers: eligible,
        current: held,
      });
    } catch (error) {
      problems[job.name] = (error as Error).message;
      result[job.name] = keepLive(held, eligible);
    }
  }
  return { jobs: result, problems };
}

/** Why a job has no worker to go to: none registered its function, or every one that did is disabled. */
function noWorkerProblem(fn: string, registered: number, items: number): string {
  const waiting = `its ${items} ${items === 1 ? 'item waits' : 'items wait'}`;
  if (registered === 0)
    return `no live job worker registered the function "${fn}": ${waiting} for one`;
  const who =
    registered === 1
      ? `the one live job worker that registered the function "${fn}" is`
      : `all ${registered} live job workers that registered the function "${fn}" are`;
  return `${who} disabled: ${waiting} until one is enabled (enableWorker, zk-plan jobs enable-worker)`;
}

/** What the assignment of all jobs may take in its one node, below ZooKeeper's 1 MB (jute.maxbuffer) with room to spare. */
export const ASSIGNMENT_BUDGET_BYTES = 900_000;

/**
 * A decision that fits in the assignment node: while it does not, the job with the most items is
 * left unassigned, with the problem recorded, so that the other jobs are still assigned.
 */
export function fitAssignment(
  decision: AssignmentDecision,
  budgetBytes: number,
): AssignmentDecision {
  const jobs = { ...decision.jobs };
  const problems = { ...decision.problems };
  const size = (): number => Buffer.byteLength(JSON.stringify({ jobs, problems }));
  const itemsOf = (job: string): number =>
    Object.values(jobs[job] ?? {}).reduce((sum, items) => sum + items.length, 0);
  while (size() > budgetBytes && Object.keys(jobs).length > 0) {
    const [largest] = Object.keys(jobs).sort(
      (a, b) => itemsOf(b) - itemsOf(a) || (a < b ? -1 : 1),
    ) as [string];
    problems[largest] =
      `left unassigned: the assignment of every job together would exceed ${budgetBytes} bytes, what one ZooKeeper node holds; make its pool (or others) smaller`;
    delete jobs[largest];
  }
  return { jobs, problems };
}

/** True when two decisions give every job the same items per worker and the same problems. */
export function sameAssignment(
  a: Pick<AssignmentRecord, 'jobs' | 'problems'>,
  b: AssignmentDecision,
): boolean {
  return canonical(a.jobs) === canonical(b.jobs) && canonical(a.problems) === canonical(b.problems);
}

function keepLive(
  held: Readonly<Record<string, readonly string[]>>,
  live: readonly string[],
): Assignment {
  return Object.fromEntries(live.map((worker) => [worker, [...(held[worker] ?? [])]]));
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === 'object' && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        )
      : inner,
  );
}
