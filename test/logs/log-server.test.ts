/**
 * The worker's log server: it serves the files its FileLogSink wrote (the URL each try's record
 * names), and nothing else: no path outside the sink's directory, no other kind of file.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileLogSink } from '../../src/logs/file-log-sink.js';
import { startLogServer, type LogServer } from '../../src/logs/log-server.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function served(): Promise<{ sink: FileLogSink; server: LogServer; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'zk-plan-log-server-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const sink = new FileLogSink({ dir: join(dir, 'logs') });
  const server = await startLogServer(sink, { port: 0 });
  cleanups.push(() => server.close());
  return { sink, server, dir };
}

describe('the task log server', () => {
  it("serves a try's whole log at the URL its sink names, and the sink names none once the server is closed", async () => {
    const { sink, server } = await served();
    const identity = {
      plan: '/plans/plan-0000000003',
      task: '/plans/plan-0000000003/task-0000000007',
      attempt: 2,
      tryName: 'try-0002-abc123',
      workerId: 'w',
    };
    const trySink = sink.open(identity);
    trySink.write({ time: new Date('2026-11-26T20:00:00Z'), level: 'info', msg: 'hello' });
    await trySink.close();
    expect(trySink.url).toBe(
      `${server.url}/logs/${encodeURIComponent(encodeURIComponent('/plans'))}/plan-0000000003/task-0000000007/try-0002-abc123.jsonl`,
    );
    const response = await fetch(trySink.url as string);
    expect(response.status).toBe(200);
    expect(JSON.parse((await response.text()).trim())).toEqual({
      time: '2026-11-26T20:00:00.000Z',
      level: 'info',
      msg: 'hello',
    });
    await server.close();
    expect(sink.open(identity).url).toBeUndefined();
  });

  it('serves nothing outside the sink directory, nothing but its .jsonl files, and only GET', async () => {
    const { server, dir } = await served();
    await writeFile(join(dir, 'secret.jsonl'), 'outside\n');
    await mkdir(join(dir, 'logs'), { recursive: true });
    await writeFile(join(dir, 'logs', 'notes.txt'), 'not a log\n');
    for (const path of [
      '/logs/..%2Fsecret.jsonl',
      '/logs/../secret.jsonl',
      '/logs/%2Fetc%2Fpasswd',
      '/logs/notes.txt',
      '/etc/passwd',
      '/logs/missing.jsonl',
    ]) {
      const response = await fetch(`${server.url}${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(await response.text()).not.toContain('outside');
    }
    expect((await fetch(`${server.url}/logs/x.jsonl`, { method: 'POST' })).status).toBe(405);
  });
});
