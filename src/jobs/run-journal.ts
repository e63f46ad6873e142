/**
 * A job worker's side of the run history: it writes a run's record before the job function starts
 * and again when it ends, keeps each item's last failure, prunes the job's oldest runs beyond its
 * `keepRuns`, and gives the function its log: each line on the worker's log, in the task log store
 * under the run's node (flushed while it runs, as a task's), and the last ones with the run's end. History is not what keeps items apart (the leases
 * are), so a record that cannot be written is reported and the run goes on: then the history
 * misses that run, and a failover cannot see that the run was interrupted (its items wait for
 * their next tick).
 */
import type { LogFields, TaskLogger } from '../logs/task-log-types.js';
import type { TaskLogs } from '../logs/task-logs.js';
import { JOB_RUN_LOG, childPath } from '../zk/layout.js';
import type { JobItem } from './job-context.js';
import type { StoredJob } from './job-definition.js';
import {
  MAX_RUN_LOG_LINES,
  keptLogLines,
  runError,
  runNodeName,
  type JobRunLogLine,
  type JobRunItem,
  type JobRunMisfire,
  type JobRunOutcome,
  type JobRunRecord,
} from './job-run-record.js';
import type { JobRunStore } from './job-run-store.js';
import type { RunRecorder, RunStart } from './job-runner.js';

/** What the journal tells its worker's events. */
export interface RunJournalEvents {
  runStarted(job: string, run: string, record: JobRunRecord): void;
  /** `final`: a failed run with no retry left (continuous jobs always restart: never final). */
  runEnded(
    job: string,
    run: string,
    record: JobRunRecord,
    durationMs: number,
    error: unknown,
    final: boolean,
  ): void;
  log(
    job: string,
    run: string,
    items: readonly JobRunItem[],
    level: 'debug' | 'info' | 'warn' | 'error',
    msg: string,
    fields: LogFields | undefined,
  ): void;
  error(error: unknown, job?: string): void;
}

export class RunJournal {
  /** Runs this worker started: with its id and the start time, it names each run's node. */
  private started = 0;

  constructor(
    private readonly store: JobRunStore,
    private readonly workerId: string,
    private readonly clock: { wall(): number; mono(): number },
    private readonly events: RunJournalEvents,
    /** The task log store the runs' `ctx.log` lines are kept in, flushed as they come; none in tests of the journal alone. */
    private readonly logs?: { readonly taskLogs: TaskLogs; sessionId(): string },
  ) {}

  /** Writes the run's first record and prunes the history; never rejects. */
  async start(job: StoredJob, start: RunStart): Promise<RunRecorder> {
    const startedAt = this.clock.wall();
    const startedMono = this.clock.mono();
    this.started += 1;
    const run = runNodeName(startedAt, this.workerId, this.started);
    const items = start.items.map(runItem);
    const record: JobRunRecord = {
      job: job.name,
      worker: this.workerId,
      items,
      cause: start.cause,
      attempt: start.attempt,
      ...(start.firedAt === undefined ? {} : { firedAt: start.firedAt.toISOString() }),
      startedAt: new Date(startedAt).toISOString(),
      ...(start.failoverOf === undefined ? {} : { failoverOf: start.failoverOf }),
    };
    try {
      await this.store.started(run, record);
      await this.store.prune(job.name, job.keepRuns, startedAt);
    } catch (error) {
      this.events.error(error, job.name);
    }
    this.events.runStarted(job.name, run, record);
    // The run's log in the task log store, under the run's node (a run pruned meanwhile stops it).
    const runPath = this.store.runPath(job.name, run);
    const kept = this.logs?.taskLogs.open({
      plan: runPath,
      task: childPath(runPath, JOB_RUN_LOG),
      planName: job.name,
      key: run,
      attempt: start.attempt,
      workerId: this.workerId,
      sessionId: this.logs.sessionId(),
    });
    // The newest lines, bounded as they come: a run that logs without end keeps a few hundred at most.
    const lines: JobRunLogLine[] = [];
    const line =
      (level: 'debug' | 'info' | 'warn' | 'error') =>
      (msg: string, fields?: LogFields): void => {
        const text = String(msg);
        lines.push({ at: new Date(this.clock.wall()).toISOString(), level, msg: text });
        kept?.logger[level](text, fields);
        if (lines.length > MAX_RUN_LOG_LINES * 10)
          lines.splice(0, lines.length - MAX_RUN_LOG_LINES);
        this.events.log(job.name, run, items, level, text, fields);
      };
    const log: TaskLogger = {
      debug: line('debug'),
      info: line('info'),
      warn: line('warn'),
      error: line('error'),
    };
    return {
      log,
      ended: async (
        outcome: JobRunOutcome,
        error: unknown,
        misfire: JobRunMisfire | undefined,
        final: boolean,
        endedAt: number,
      ) => {
        // Its last lines flushed before the end is written: a reader that sees the end sees them.
        await kept
          ?.finish()
          .catch((flushError: unknown) => this.events.error(flushError, job.name));
        const finishedAt = new Date(endedAt).toISOString();
        const ended: JobRunRecord = {
          ...record,
          finishedAt,
          outcome,
          ...(outcome === 'failed' ? { error: runError(error) } : {}),
          ...(misfire === undefined ? {} : { misfire }),
          ...(lines.length === 0 ? {} : { log: keptLogLines(lines) }),
        };
        try {
          await this.store.ended(run, ended);
          if (ended.error !== undefined)
            await this.store.failed(job.name, items, {
              run,
              worker: this.workerId,
              attempt: start.attempt,
              finishedAt,
              error: ended.error,
            });
        } catch (writeError) {
          this.events.error(writeError, job.name);
        }
        this.events.runEnded(job.name, run, ended, this.clock.mono() - startedMono, error, final);
      },
    };
  }
}

function runItem(item: JobItem): JobRunItem {
  return { id: item.id, token: item.token };
}
