import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../src/index.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('cli');
const children: ChildProcessWithoutNullStreams[] = [];
const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

function cli(args: string[], extraEnv: Record<string, string> = {}): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, ...extraEnv } });
  children.push(child);
  return child;
}

/** Resolves with what `stream` printed once it matches `pattern` (listening only: the stream stays open). */
function output(child: ChildProcessWithoutNullStreams, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += String(chunk);
      if (!pattern.test(text)) return;
      child[stream].off('data', onData);
      resolve(text);
    };
    child[stream].on('data', onData);
    child[stream].once('end', () => reject(new Error(`${stream} ended without ${pattern}: ${text}`)));
  });
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('the zk-plan command line', () => {
  it('worker runs the functions of a module on plans under a parent, and stops cleanly on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zk-plan-cli-'));
    const tasks = join(dir, 'tasks.mjs');
    await writeFile(tasks, 'export default { double: (_ctx, x) => x * 2, constant: (ctx) => ctx.params[0] };\n');
    const parent = env.root();
    const worker = cli(['worker', '--parent', parent, '--functions', tasks, '--workers', '2'], { ZOOKEEPER_CONNECT: env.connectString });
    const started = await output(worker, 'stdout', /2 loop\(s\)/);
    expect(started).toContain('functions: constant, double');
    const zkPlan = await env.zkPlan();
    const plan = await zkPlan.createPlan(parent);
    const input = await zkPlan.addTask(plan, call('constant', 21));
    const doubled = await zkPlan.addTask(plan, call('double'), [input], { keepResult: true });
    await zkPlan.markAsReady(plan);
    await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 });
    expect(await zkPlan.getResult(doubled)).toBe(42);
    worker.kill('SIGTERM');
    const [code] = (await once(worker, 'exit')) as [number | null];
    expect(code).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  it('says what is missing, with exit code 2, on a bad command line', async () => {
    const child = cli(['worker', '--functions', 'x.mjs'], { ZOOKEEPER_CONNECT: '' });
    const [text, [code]] = await Promise.all([output(child, 'stderr', /Usage/), once(child, 'exit') as Promise<[number | null]>]);
    expect(code).toBe(2);
    expect(text).toContain('--connect (or ZOOKEEPER_CONNECT) is required');
  });

  it('dev-server prints a loopback connect string and stops its server on SIGINT', async () => {
    const child = cli(['dev-server']);
    const connect = (await output(child, 'stdout', /\n/)).trim();
    expect(connect).toMatch(/^127\.0\.0\.1:\d+$/);
    const zkPlan = await env.zkPlan({ connect });
    expect(await zkPlan.createPlan('/dev')).toBe('/dev/plan-0000000000');
    await zkPlan.close();
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});
