/**
 * Shell tasks among workers, over the in-memory ZooKeeper: a pool without allowShell leaves them
 * to one that allows them, uncharged; adding and submitting them is checked like any task.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ShellDisabledError, ShellParamsError } from '../../src/errors/shell-errors.js';
import { PlanSpecError } from '../../src/errors/spec-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import type { ZkPlanEvents } from '../../src/worker/worker-events.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import { expectRejects } from '../support/expect-error.js';

const PARENT = '/plans';

type Failed = ZkPlanEvents['task:failed'][0];

const processes: MemoryProcess[] = [];

afterEach(async () => {
  await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function started(
  server: MemoryZooKeeper,
  name: string,
  functions = new FunctionRegistry().register('noop', () => null),
): MemoryProcess {
  const proc = memoryProcess(server, name, functions);
  processes.push(proc);
  return proc;
}

describe('shell tasks among workers', () => {
  it('a pool without allowShell gives one back uncharged (SHELL_DISABLED) and leaves it; a pool that allows shell tasks runs it', async () => {
    const server = new MemoryZooKeeper();
    const plain = started(server, 'plain');
    const failures: Failed[] = [];
    plain.zkPlan.on('task:failed', (event) => failures.push(event));
    plain.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    const plan = await plain.zkPlan.createPlan(PARENT);
    const task = await plain.zkPlan.addTask(
      plan,
      call('shell', { command: 'echo "from $0"' }),
      [],
      { keepResult: true },
    );
    await plain.zkPlan.markAsReady(plan);

    await vi.waitFor(() => expect(failures).toHaveLength(1));
    const [failure] = failures;
    expect(failure?.error).toBeInstanceOf(ShellDisabledError);
    expect(failure?.error.message).toContain(task);
    expect(failure?.error.message).toContain('zk-plan worker --allow-shell');
    expect(failure?.charged).toBe(false);
    expect(failure?.final).toBe(false);
    // New tasks list the plan's runnable index again, the shell task with it: the pool's loops leave it there, and it
    // does not keep them from taking the next new task (within moments, not at the next full scan, 10 s later).
    for (let round = 0; round < 2; round++) {
      const other = await plain.zkPlan.addTask(plan, call('noop'));
      await vi.waitFor(() => expect(server.exists(other)).toBe(false), { timeout: 3_000 });
    }
    await pause(300);
    expect(failures).toHaveLength(1);
    expect(server.exists(`${task}/attempts`)).toBe(false);
    expect(server.exists(`${task}/owner`)).toBe(false);
    const explanation = await plain.zkPlan.explain.task(task);
    expect(explanation.code).toBe('NO_WORKER_FOR_FUNCTION');
    expect(explanation.message).toContain('no live worker allows shell tasks');

    const shellWorker = started(server, 'shell');
    shellWorker.zkPlan.startWorkers(PARENT, {
      allowShell: true,
      backoff: FAST_BACKOFF,
      retention: false,
    });
    await plain.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await plain.zkPlan.getResult(task)).toEqual({ exitCode: 0, stdout: 'from /bin/sh\n' });
    expect(failures).toHaveLength(1);
  });

  it('addTask takes call("shell") with any registry, and refuses bad params with SHELL_INVALID_PARAMS naming the plan', async () => {
    const proc = started(new MemoryZooKeeper(), 'writer');
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(plan, call('shell', { command: 'true' }));
    const error = await expectRejects(
      () => proc.zkPlan.addTask(plan, call('shell', { command: 'ls', cwd: '' })),
      ShellParamsError,
    );
    expect(error.code).toBe('SHELL_INVALID_PARAMS');
    expect(error.message).toContain(`a task added to plan ${plan}`);
    expect(error.message).toContain('"cwd" must be a non-empty path');
  });

  it('submitPlan refuses a shell task while the live workers of the parent all run without allowShell', async () => {
    const server = new MemoryZooKeeper();
    const proc = started(server, 'plain');
    const plainPool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, retention: false });
    await vi.waitFor(async () => expect(await proc.zkPlan.listWorkers(PARENT)).toHaveLength(1));
    const spec = {
      tasks: {
        hello: { fn: 'shell', params: [{ command: 'echo hello' }], options: { keepResult: true } },
      },
    };
    const refused = await expectRejects(() => proc.zkPlan.submitPlan(PARENT, spec), PlanSpecError);
    expect(refused).toMatchObject({ code: 'SPEC_UNKNOWN_FUNCTION', key: 'hello' });
    await plainPool.stop();
    proc.zkPlan.startWorkers(PARENT, { allowShell: true, backoff: FAST_BACKOFF, retention: false });
    await vi.waitFor(async () =>
      expect((await proc.zkPlan.listWorkers(PARENT)).map((worker) => worker.allowShell)).toEqual([
        true,
      ]),
    );
    const { plan, tasks } = await proc.zkPlan.submitPlan(PARENT, spec);
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    expect(await proc.zkPlan.getResult(tasks['hello'] as string)).toEqual({
      exitCode: 0,
      stdout: 'hello\n',
    });
  });
});
