/**
 * Review: `zk-plan jobs runs <job>` prints values read from run records (worker, error message,
 * log lines, failoverOf, item ids of the last failures, …) with `print`, which removes control
 * characters but keeps line feeds (src/cli/output.ts: "the values inside a table are made one line
 * by formatTable"). formatRuns (src/cli/commands/jobs.ts) does not use formatTable nor make the
 * values one line, so a record's string (written by anyone who may write under the jobs' parent,
 * or simply an error message with a line feed) starts lines of its own: it can forge a run line.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { ZkPlan } from '../../src/zk-plan.js';
import { jobNodes } from '../../src/zk/layout.js';
import { runNodeName, type JobRunRecord } from '../../src/jobs/job-run-record.js';
import { memoryProcess } from '../support/memory-plan.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('review: zk-plan jobs runs output', () => {
  it('keeps every value of a record on its own line (a line feed in a record cannot forge a run line)', async () => {
    const server = new MemoryZooKeeper();
    const admin = memoryProcess(server, 'admin', new FunctionRegistry());
    const jobs = admin.zkPlan.jobs('/jobs');
    await jobs.define({
      name: 'mail',
      fn: 'poll',
      workPool: { items: ['a'] },
      mode: { everyMs: 60_000 },
    });
    const forged =
      '  2026-01-01T00:00:00.000Z  succeeded    tick        1    5 ms      w-forged  a#1';
    const record: JobRunRecord = {
      job: 'mail',
      worker: 'w-1',
      items: [{ id: 'a', token: 7 }],
      cause: 'tick',
      attempt: 1,
      startedAt: '2026-01-01T00:00:01.000Z',
      finishedAt: '2026-01-01T00:00:02.000Z',
      outcome: 'failed',
      error: { type: 'Error', message: `mailbox down\n${forged}` },
    };
    const runs = jobNodes('/jobs', 'mail').runs;
    const name = runNodeName(Date.parse(record.startedAt), 'w-1', 1);
    const zk = server.connect({ name: 'writer' });
    // Written as anything with write access could: the parents, then the record.
    for (const path of ['/jobs/zk-plan-job-runs', runs])
      await zk.create(path, null, 'persistent').catch(() => undefined);
    await zk.create(`${runs}/${name}`, encodeValue(record, 'job run record'), 'persistent');

    vi.spyOn(ZkPlan, 'connect').mockResolvedValue(admin.zkPlan as unknown as ZkPlan);
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    const code = await runCli([
      'jobs',
      'runs',
      'mail',
      '--jobs',
      '/jobs',
      '--connect',
      'memory:2181',
    ]);
    vi.mocked(process.stdout.write).mockRestore();
    expect(code, out).toBe(0);
    const lines = out.split('\n');
    expect(
      lines.some((line) => line.includes('mailbox down')),
      out,
    ).toBe(true);
    expect(lines, 'a line forged by the error message').not.toContain(forged);
  });
});
