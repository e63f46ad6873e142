import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PortInUseError, startZooKeeper } from '../src/testing/index.js';
import { ServerExitedEarlyError, waitUntilServing } from '../src/local-zookeeper/server-config.js';
import { ServerProcess } from '../src/local-zookeeper/server-process.js';
import { expectRejects } from '../test/support/expect-error.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

const env = useZooKeeper('dev-server');
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const portOf = (connect: string): number => Number(connect.slice(connect.lastIndexOf(':') + 1));

/** Runs `zk-plan dev-server` with its own TMPDIR, so what it leaves behind can be seen. */
async function devServer(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string; leftBehind: string[] }> {
  const temp = await mkdtemp(join(tmpdir(), 'zk-plan-devserver-test-'));
  dirs.push(temp);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'dev-server', ...args],
    { env: { ...process.env, TMPDIR: temp } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return {
    code,
    stdout,
    stderr,
    leftBehind: (await readdir(temp)).filter((name) => name.startsWith('zk-plan-zk-')),
  };
}

describe('zk-plan dev-server --port on a port already in use', () => {
  it('says the port is in use and what to do, exits 2, prints no connect string and leaves no data dir (another ZooKeeper there)', async () => {
    const port = portOf(env.connectString);
    const run = await devServer(['--port', String(port)]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`zk-plan: --port ${port}: 127.0.0.1:${port} is already in use`);
    expect(run.stderr).toContain('choose another --port, or leave --port out');
    expect(run.stderr).not.toContain('serving');
    expect(run.leftBehind).toEqual([]);
  });

  it('the same when any other program holds the port', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) =>
      holder.listen({ host: '127.0.0.1', port: 0 }, () => resolve()),
    );
    const port = (holder.address() as { port: number }).port;
    try {
      const run = await devServer(['--port', String(port)]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`127.0.0.1:${port} is already in use`);
      expect(run.leftBehind).toEqual([]);
    } finally {
      holder.close();
    }
  });
});

describe('zk-plan dev-server without --port', () => {
  it('picks a free port, prints its connect string and a ready-to-paste export line, and stops on SIGTERM leaving nothing behind', async () => {
    const temp = await mkdtemp(join(tmpdir(), 'zk-plan-devserver-test-'));
    dirs.push(temp);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'dev-server'], {
      env: { ...process.env, TMPDIR: temp },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    const closed = once(child, 'close') as Promise<[number | null]>;
    try {
      await waitFor('the export line', () => stderr.includes('export ZOOKEEPER_CONNECT='), {
        timeoutMs: 60_000,
      });
      const connect = stdout.trim();
      expect(connect).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(stderr).toContain(`\n  export ZOOKEEPER_CONNECT=${connect}\n`);
    } finally {
      child.kill('SIGTERM');
    }
    expect((await closed)[0]).toBe(0);
    expect((await readdir(temp)).filter((name) => name.startsWith('zk-plan-zk-'))).toEqual([]);
  });

  it('--help says a free port is the default, and shows the export line', async () => {
    const help = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'dev-server',
        '--help',
      ]);
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += String(chunk)));
      child.on('close', () => resolve(text));
    });
    expect(help.replace(/\s+/g, ' ')).toContain(
      'without it: a free port, picked at start and printed',
    ); // wrapped to the terminal's width
    expect(help).toContain('export ZOOKEEPER_CONNECT=127.0.0.1:<port>');
  });
});

describe('startZooKeeper checks the server that answers is its own', () => {
  it('refuses a taken port with PortInUseError before creating anything', async () => {
    const error = await expectRejects(
      () => startZooKeeper({ port: portOf(env.connectString) }),
      PortInUseError,
    );
    expect(error.code).toBe('PORT_IN_USE');
  });

  it("does not take another server's answer on the port for its own: it waits until its process exits", async () => {
    const notZooKeeper = new ServerProcess(spawn('sleep', ['1']));
    const started = Date.now();
    await expectRejects(
      () =>
        waitUntilServing(
          notZooKeeper,
          portOf(env.connectString),
          ['standalone'],
          Date.now() + 20_000,
          '/not/our/data/dir',
        ),
      ServerExitedEarlyError,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});
