/**
 * Failed job runs as alerts (src/alerts/job-run-alerts.ts): each failed run, retries included, is
 * POSTed to the webhook by the worker that ran it, with the run's id, cause, try, items and error,
 * and whether a retry is left; a webhook that fails is tried again with doubling pauses, then given
 * up and reported; runs that succeed send nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { forwardJobRunFailures, jobRunAlertOf } from '../../src/alerts/job-run-alerts.js';
import { jobRunWebhook, type JobRunWebhookBody } from '../../src/alerts/webhook.js';
import { FunctionRegistry, type ZkPlanEvents } from '../../src/index.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const open: MemoryProcess[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map(({ zkPlan }) => zkPlan.close()));
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

/** A webhook on 127.0.0.1 that answers `status(n)` to its n-th POST; resolves its URL and the bodies it got. */
async function webhook(
  status: (n: number) => number = () => 204,
): Promise<{ url: string; bodies: JobRunWebhookBody[]; keys: string[] }> {
  const bodies: JobRunWebhookBody[] = [];
  const keys: string[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += String(chunk)));
    request.on('end', () => {
      bodies.push(JSON.parse(text) as JobRunWebhookBody);
      keys.push(String(request.headers['idempotency-key']));
      response.statusCode = status(bodies.length);
      response.end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/s3cr3t`,
    bodies,
    keys,
  };
}

describe('failed job runs sent to the alert webhook', () => {
  it('POSTs each failed run of a job (the retries too, the last saying no retry is left), nothing for a run that succeeds', async () => {
    const hook = await webhook();
    let calls = 0;
    const functions = new FunctionRegistry().registerJob('poll', () => {
      calls += 1;
      if (calls <= 2) throw Object.assign(new Error('mailbox down'), { code: 'EHOSTDOWN' });
    });
    const worker = memoryProcess(new MemoryZooKeeper(), 'worker', functions);
    open.push(worker);
    const alerts = forwardJobRunFailures(worker.zkPlan, jobRunWebhook(hook.url, 2_000));
    const handle = worker.zkPlan.startJobWorker('/jobs', {
      leaseMs: 600,
      pollMs: 100,
      restartDelayMs: 20,
    });
    const jobs = worker.zkPlan.jobs('/jobs');
    await jobs.define({
      name: 'mail',
      fn: 'poll',
      workPool: { items: ['a'] },
      mode: { everyMs: 60_000 },
      retries: 1,
    });
    await expect.poll(() => handle.held()['mail']?.length ?? 0).toBe(1);
    await jobs.trigger('mail');
    await expect.poll(() => hook.bodies.length, { timeout: 5_000 }).toBe(2);
    await jobs.trigger('mail'); // succeeds: no POST
    await expect.poll(() => calls).toBe(3);
    await alerts.stop();
    expect(hook.bodies.map((body) => [body.cause, body.attempt, body.final])).toEqual([
      ['trigger', 1, false],
      ['retry', 2, true],
    ]);
    const [first] = hook.bodies as [JobRunWebhookBody];
    expect(first).toMatchObject({
      event: 'job:run-failed',
      jobs: '/jobs',
      job: 'mail',
      worker: handle.id,
      items: [{ id: 'a', token: expect.any(Number) as number }],
      error: { type: 'Error', message: 'mailbox down', code: 'EHOSTDOWN' },
    });
    const { runs } = await jobs.runs('mail');
    expect(hook.bodies.map((body) => body.id)).toEqual(
      runs
        .filter((run) => run.state === 'failed')
        .map((run) => run.run)
        .reverse(),
    );
    expect(hook.keys[0]).toBe(`/jobs/mail#${first.id}`);
  });

  it('tries a failing webhook again with doubling pauses, then gives the alert up and says so', async () => {
    const hook = await webhook(() => 503);
    const events = new EventEmitter<ZkPlanEvents>();
    const given: string[] = [];
    const alerts = forwardJobRunFailures(events, jobRunWebhook(hook.url, 2_000), {
      maxAttempts: 3,
      retryDelayMs: 20,
      onError: (error, runId) => given.push(`${runId}: ${error.message}`),
    });
    const ended = {
      jobs: '/jobs',
      job: 'mail',
      workerId: 'w',
      run: 'run-1795737600000-w-1',
      cause: 'tick' as const,
      attempt: 1,
      items: [],
      state: 'ended' as const,
    };
    events.emit('job:run', { ...ended, outcome: 'succeeded' });
    events.emit('job:run', { ...ended, outcome: 'failed', error: new Error('down'), final: true });
    await expect.poll(() => given.length, { timeout: 2_000 }).toBe(1);
    await alerts.stop();
    expect(hook.bodies).toHaveLength(3);
    expect(given[0]).toBe(
      `run-1795737600000-w-1: the webhook at ${new URL(hook.url).origin} answered 503 to failed run run-1795737600000-w-1 of job mail`,
    );
    expect(given[0]).not.toContain('s3cr3t');
  });

  it('makes an alert only of a failed run that ended', () => {
    const base = {
      jobs: '/jobs',
      job: 'mail',
      workerId: 'w',
      run: 'r',
      cause: 'tick' as const,
      attempt: 1,
      items: [],
    };
    const at = new Date(0);
    expect(jobRunAlertOf({ ...base, state: 'started' }, at)).toBeUndefined();
    expect(jobRunAlertOf({ ...base, state: 'ended', outcome: 'aborted' }, at)).toBeUndefined();
    expect(
      jobRunAlertOf({ ...base, state: 'ended', outcome: 'failed', error: new Error('x') }, at),
    ).toMatchObject({ final: false, error: { message: 'x' }, at: at.toISOString() });
  });
});
