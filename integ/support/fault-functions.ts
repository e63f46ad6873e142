/**
 * The task functions of the fault tests, loaded by real `zk-plan worker` processes
 * (`--functions integ/support/fault-functions.ts`, run under tsx). Every run appends its `start`,
 * `aborted` (its signal fired) and `end` (it returned) to the execution log named by
 * ZK_PLAN_FAULT_LOG, one appendFileSync per line so lines of several processes never mix (the
 * format is in execution-log.ts).
 *
 * - `work({ label, ms, add })`: waits `ms` (cut short when the task's signal aborts) and returns
 *   `(add + sum(inputs)) % WORK_MODULUS`; deterministic, so any run gives the same value.
 * - `marked({ label, firstRunMs, rerunMs, lingerAfterAbortMs })`: returns `{ by: pid, run }`, `run`
 *   being 1 + the number of earlier starts of the task in the log; waits `firstRunMs` on the first
 *   run and `rerunMs` on the others, so a first run can hang until it is killed or aborted while a
 *   re-run is quick; once aborted it still takes `lingerAfterAbortMs` to return (a function that
 *   finishes its work anyway, so its late result meets the fence, not a missing session).
 * - `step(label, ms, rerunMs?)`: takes `ms` (`rerunMs` when the task started before), cut short by
 *   its signal, then throws the signal's reason (so an aborted run has no `end`); returns its label.
 * - `fail(label)`: fails for good (PermanentError).
 * - `skipping(label, ms)`: takes `ms`, then returns `skip(label)`.
 * - `outcomes({ label, ms })`: a task with a trigger rule; takes `ms` and returns the statuses of
 *   its inputs' outcomes, joined by commas (`failed,succeeded`), the outcomes in its log line.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { PermanentError, skip, type InputOutcome, type TaskContext } from '../../src/index.js';
import { FAULT_LOG_ENV, WORK_MODULUS, parseExecutionLog, type LogEntry } from './execution-log.js';

const logFile = process.env[FAULT_LOG_ENV] ?? '';
// A worker without its log would run tasks that no test can check: refuse to load instead.
if (logFile === '') throw new Error(`${FAULT_LOG_ENV} is not set`);

type Context = TaskContext<unknown[]>;
type RunIdentity = Pick<LogEntry, 'task' | 'label' | 'workerId' | 'run'>;
interface WorkParams {
  readonly label?: string;
  readonly ms?: number;
  readonly add?: number;
}
interface MarkedParams {
  readonly label?: string;
  readonly firstRunMs?: number;
  readonly rerunMs?: number;
  readonly lingerAfterAbortMs?: number;
}

let serial = 0;

function record(
  run: RunIdentity,
  entry: Pick<LogEntry, 'event'> & Partial<Pick<LogEntry, 'args' | 'result' | 'reason'>>,
): void {
  const line: LogEntry = { ...run, pid: process.pid, at: Date.now(), ...entry };
  appendFileSync(logFile, `${JSON.stringify(line)}\n`);
}

/** Waits `ms`; resolves false at once when `signal` aborts first (true when the whole time passed). */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(false);
      return;
    }
    const done = (full: boolean): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(full);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs `body`, recording `start`, `aborted` when the signal fires meanwhile, and `end` when it returns. */
async function execution<T>(
  ctx: Context,
  label: string | undefined,
  args: unknown[],
  body: () => Promise<T>,
): Promise<T> {
  const run: RunIdentity = {
    task: ctx.task,
    label,
    workerId: ctx.workerId,
    run: `${process.pid}:${++serial}`,
  };
  record(run, { event: 'start', args });
  const onAbort = (): void => {
    const reason: unknown = ctx.signal.reason;
    record(run, {
      event: 'aborted',
      reason: String(reason instanceof Error ? reason.message : reason),
    });
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await body();
    record(run, { event: 'end', args, result });
    return result;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/** Starts of `task` in the log so far (this run's own start is not written yet when it is asked). */
function earlierStarts(task: string): number {
  return parseExecutionLog(readFileSync(logFile, 'utf8')).filter(
    (entry) => entry.task === task && entry.event === 'start',
  ).length;
}

export default {
  async work(ctx: Context, ...inputs: number[]): Promise<number> {
    const { label, ms = 0, add = 0 } = (ctx.params[0] ?? {}) as WorkParams;
    return await execution(ctx, label, inputs, async () => {
      await pause(ms, ctx.signal);
      return (add + inputs.reduce((sum, x) => sum + x, 0)) % WORK_MODULUS;
    });
  },

  async marked(ctx: Context, ...inputs: unknown[]): Promise<{ by: number; run: number }> {
    const {
      label,
      firstRunMs = 0,
      rerunMs = 0,
      lingerAfterAbortMs = 0,
    } = (ctx.params[0] ?? {}) as MarkedParams;
    const run = earlierStarts(ctx.task) + 1;
    return await execution(ctx, label, inputs, async () => {
      const full = await pause(run === 1 ? firstRunMs : rerunMs, ctx.signal);
      if (!full && lingerAfterAbortMs > 0)
        await new Promise((resolve) => setTimeout(resolve, lingerAfterAbortMs)); // the run's own work, not a wait
      return { by: process.pid, run };
    });
  },

  async step(ctx: Context): Promise<string> {
    const [label, ms, rerunMs] = ctx.params;
    const rerun = rerunMs !== undefined && earlierStarts(ctx.task) > 0;
    return await execution(ctx, String(label), [], async () => {
      if (!(await pause(Number(rerun ? rerunMs : (ms ?? 0)), ctx.signal))) throw ctx.signal.reason;
      return String(label);
    });
  },

  async skipping(ctx: Context): Promise<unknown> {
    const [label, ms] = ctx.params;
    return await execution(ctx, String(label), [], async () => {
      if (!(await pause(Number(ms ?? 0), ctx.signal))) throw ctx.signal.reason;
      return skip(String(label));
    });
  },

  async outcomes(ctx: Context, ...inputs: InputOutcome[]): Promise<string> {
    const { label, ms = 0 } = (ctx.params[0] ?? {}) as WorkParams;
    return await execution(ctx, label, inputs, async () => {
      if (!(await pause(ms, ctx.signal))) throw ctx.signal.reason;
      return inputs.map((input) => input.status).join(',');
    });
  },

  async fail(ctx: Context): Promise<never> {
    return await execution(ctx, String(ctx.params[0]), [], () =>
      Promise.reject(new PermanentError(`task ${String(ctx.params[0])} cannot succeed`)),
    );
  },
};
