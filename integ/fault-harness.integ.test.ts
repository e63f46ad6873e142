/**
 * The fault harness when a run cannot be made: it throws a coded error saying what to do, and
 * leaves no process behind (its server and workers are stopped by pid on the way out).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultHarnessError, runFaultHarness } from '../src/testing/index.js';
import { TIMING } from './support/zk-test-env.js';

/** The live (not zombie) processes whose parent is this one. */
function liveChildren(): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces, so read after its closing parenthesis.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === process.pid && state !== 'Z') children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zk-plan-fault-harness-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('runFaultHarness when a run cannot be made', () => {
  it.runIf(process.platform === 'linux')(
    'a functions module that does not load: FAULT_HARNESS_WORKERS_FAILED quoting the worker, and no process left',
    { timeout: 120_000 * TIMING },
    async () => {
      const broken = join(dir, 'broken-functions.mjs');
      await writeFile(broken, "throw new Error('the database URL is not set');\n");
      const before = liveChildren();
      const failure = await runFaultHarness({
        functions: broken,
        plan: { tasks: { a: { fn: 'f' } } },
        faults: { killWorkers: true },
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(FaultHarnessError);
      const error = failure as FaultHarnessError;
      expect(error.code).toBe('FAULT_HARNESS_WORKERS_FAILED');
      expect(error.message).toContain(`zk-plan worker --functions ${broken}`);
      expect(error.message).toContain('the database URL is not set');
      expect(liveChildren().filter((pid) => !before.includes(pid))).toEqual([]);
    },
  );
});
