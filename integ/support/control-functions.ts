/**
 * The task functions of the plan-control fault tests, loaded by real `zk-plan worker` processes
 * (`--functions integ/support/control-functions.ts`, run under tsx). Every call appends JSON lines
 * to the file named by ZK_PLAN_CONTROL_LOG (one appendFileSync per line, so lines of several
 * processes never mix): `{ event: 'start' | 'end' | 'aborted', label, task, pid, at }`.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { PermanentError, type TaskContext } from '../../src/index.js';

const LOG = process.env['ZK_PLAN_CONTROL_LOG'];
if (!LOG) throw new Error('ZK_PLAN_CONTROL_LOG is not set');
const logFile: string = LOG;

function record(ctx: TaskContext<unknown[]>, event: 'start' | 'end' | 'aborted'): void {
  appendFileSync(logFile, `${JSON.stringify({ event, label: String(ctx.params[0]), task: ctx.task, pid: process.pid, at: Date.now() })}\n`);
}

function startedBefore(task: string): boolean {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .some((line) => line !== '' && (JSON.parse(line) as { event: string; task: string }).event === 'start' && (JSON.parse(line) as { task: string }).task === task);
}

export default {
  /**
   * `step(label, ms, rerunMs?)`: takes `ms` (`rerunMs` when the log shows an earlier start of the
   * task: a first run can hang until it is killed while its rerun is quick), cut short by its
   * signal (then it throws the signal's reason); returns its label.
   */
  async step(ctx: TaskContext<unknown[]>): Promise<string> {
    const rerun = ctx.params[2] !== undefined && startedBefore(ctx.task);
    record(ctx, 'start');
    const aborted = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), Number(rerun ? ctx.params[2] : (ctx.params[1] ?? 0)));
      ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(true)), { once: true });
    });
    record(ctx, aborted ? 'aborted' : 'end');
    if (aborted) throw ctx.signal.reason;
    return String(ctx.params[0]);
  },
  /** Fails for good. */
  fail(ctx: TaskContext<unknown[]>): never {
    record(ctx, 'start');
    throw new PermanentError(`task ${String(ctx.params[0])} cannot succeed`);
  },
};
