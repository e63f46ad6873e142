/**
 * The job function of the jobs fault tests, loaded by real `zk-plan worker --jobs` processes
 * (`--functions integ/support/job-functions.ts`, under tsx). `hold` is continuous: it logs a
 * `start` line per item of its share (with the item's fencing token), then a `tick` line per item
 * every TICK_MS for as long as `ctx.holding()` says the share is still held — the work whose
 * overlap the tests look for — and a `stop` line per item once its signal aborted. One
 * appendFileSync per line, to the file named by ZK_PLAN_JOB_LOG, all stamped with this machine's
 * wall clock (one clock for every process).
 */
import { appendFileSync } from 'node:fs';
import type { JobContext } from '../../src/index.js';

export const JOB_LOG_ENV = 'ZK_PLAN_JOB_LOG';
const TICK_MS = 50;

export interface JobLogLine {
  readonly pid: number;
  readonly worker: string;
  readonly job: string;
  readonly item: string;
  readonly token: number;
  readonly event: 'start' | 'tick' | 'stop';
  readonly at: number;
}

const logFile = process.env[JOB_LOG_ENV] ?? '';

function log(ctx: JobContext, event: JobLogLine['event']): void {
  if (logFile === '') throw new Error(`${JOB_LOG_ENV} is not set`);
  const at = Date.now();
  const lines = ctx.items.map((item) =>
    JSON.stringify({
      pid: process.pid,
      worker: ctx.workerId,
      job: ctx.job,
      item: item.id,
      token: item.token,
      event,
      at,
    }),
  );
  if (lines.length > 0) appendFileSync(logFile, `${lines.join('\n')}\n`);
}

export const jobs = {
  async hold(ctx: JobContext): Promise<void> {
    log(ctx, 'start');
    ctx.log.info(`holding ${ctx.items.map((item) => `${item.id}#${item.token}`).join(' ')}`);
    while (!ctx.signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, TICK_MS);
        ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), {
          once: true,
        });
      });
      if (!ctx.holding()) break; // checked right before the work: a frozen process's timers may fire before the runtime's
      log(ctx, 'tick');
    }
    log(ctx, 'stop');
  },
};
