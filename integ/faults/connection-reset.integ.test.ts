/**
 * A busy client process whose connection the server side resets again and again: every reset makes
 * its next send fail, and the native client closes its socket inside that call. The unpatched addon
 * left its poll handle on the closed descriptor and libuv aborted the whole process (SIGABRT, no
 * message): a scheduler frozen past its session timeout died of it when resumed. The process must
 * live through every reset, reconnect, and answer again.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TcpProxy } from '../../src/testing/fault-harness/tcp-proxy.js';
import { TIMING, useZooKeeper, waitFor } from '../support/zk-test-env.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(HERE, '..', '..');
const BUSY_CLIENT = join(HERE, '..', 'support', 'busy-client.ts');
const RESETS = 60;
const RESET_EVERY_MS = 100;

const env = useZooKeeper('connection-reset');
let proxy: TcpProxy | undefined;

beforeAll(async () => {
  proxy = await TcpProxy.start(Number(env.connectString.split(':')[1]));
});
afterAll(async () => {
  await proxy?.stop();
});

describe('a busy client under connection resets', () => {
  it(
    `lives through ${RESETS} resets ${RESET_EVERY_MS} ms apart with requests in flight from every turn, then answers again`,
    { timeout: 120_000 * TIMING },
    async () => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', BUSY_CLIENT, proxy!.connectString],
        { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += String(chunk)));
      child.stderr.on('data', (chunk: Buffer) => (output += String(chunk)));
      const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      try {
        await waitFor('the busy client to connect', () => output.includes('ready'), {
          timeoutMs: 30_000,
        });
        for (
          let reset = 0;
          reset < RESETS && child.exitCode === null && child.signalCode === null;
          reset++
        ) {
          proxy!.reset();
          await new Promise((resolveWait) => setTimeout(resolveWait, RESET_EVERY_MS));
        }
        expect(
          child.signalCode,
          `the busy client died during the resets:\n${output.slice(-2_000)}`,
        ).toBeNull();
        child.kill('SIGTERM');
        const [code, signal] = await exited;
        expect({ code, signal }, output.slice(-2_000)).toEqual({ code: 0, signal: null });
        expect(output).toMatch(/answered \d+ of \d+ requests/);
        console.log(
          `connection reset: ${RESETS} resets; busy client ${/answered \d+ of \d+ requests/.exec(output)?.[0]}`,
        );
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
  );
});
