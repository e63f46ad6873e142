/**
 * The built-in shell task function on a fake task context: real commands, no ZooKeeper. Its
 * output in the log, its result, its failures, and its process group stopped with the task.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';
import {
  ShellExitError,
  ShellParamsError,
  ShellStartError,
} from '../../src/errors/shell-errors.js';
import { groupHasLiveMember, processIsRunning } from '../../src/shell/process-group.js';
import { runShell, type ShellContext } from '../../src/shell/run-shell.js';
import type { ShellParams } from '../../src/shell/shell-params.js';
import { expectRejects } from '../support/expect-error.js';
import { RecordingLogger } from './recording-logger.js';

const TASK = '/plans/plan-0000000001/task-0000000004';
const GRACE_MS = 300;

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zk-plan-shell-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function context(
  signal: AbortSignal = new AbortController().signal,
): ShellContext & { log: RecordingLogger } {
  return { task: TASK, signal, log: new RecordingLogger() };
}

function run(
  ctx: ShellContext,
  params: ShellParams,
  killGraceMs = GRACE_MS,
): ReturnType<typeof runShell> {
  return runShell(ctx, [params], { killGraceMs });
}

/** The pid a command wrote to `file`, once it has. */
async function pidWrittenTo(file: string): Promise<number> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (/^\d+\n$/.test(text)) return Number(text.trim());
    if (Date.now() > deadline) throw new Error(`no pid in ${file} after 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until the process has ended (a zombie has), failing after `ms`. */
async function gone(pid: number, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (await processIsRunning(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} still runs ${ms} ms later`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the shell task function', () => {
  it('exit 0: returns { exitCode: 0, stdout } and logs stdout lines at info, stderr lines at warn, each with its stream', async () => {
    const ctx = context();
    const result = await run(ctx, {
      command: "printf 'one\\ntwo\\n'; echo careful >&2; printf 'last without newline'",
    });
    expect(result).toEqual({ exitCode: 0, stdout: 'one\ntwo\nlast without newline' });
    expect(ctx.log.stream('stdout')).toEqual(['one', 'two', 'last without newline']);
    expect(ctx.log.stream('stderr')).toEqual(['careful']);
    expect(
      ctx.log.lines
        .filter((line) => line.fields?.['stream'] === 'stdout')
        .every((line) => line.level === 'info'),
    ).toBe(true);
    expect(ctx.log.lines.find((line) => line.msg === 'careful')?.level).toBe('warn');
    expect(ctx.log.lines.at(-1)?.msg).toMatch(/^exited with code 0 in \d+ ms$/);
  });

  it('exit 3: fails with SHELL_EXIT naming the task, the code and the last lines of stderr; the output is in the log', async () => {
    const ctx = context();
    const error = await expectRejects(
      () =>
        run(ctx, { command: 'echo partial; echo "disk full" >&2; echo "giving up" >&2; exit 3' }),
      ShellExitError,
    );
    expect(error.code).toBe('SHELL_EXIT');
    expect(error.charged).toBe(true);
    expect(error.retryable).toBe(true);
    expect(error.exitCode).toBe(3);
    expect(error.signal).toBeUndefined();
    expect(error.stderrTail).toEqual(['disk full', 'giving up']);
    expect(error.message).toContain(TASK);
    expect(error.message).toContain('exited with code 3');
    expect(error.message).toContain('disk full\ngiving up');
    expect(ctx.log.stream('stdout')).toEqual(['partial']);
    expect(ctx.log.stream('stderr')).toEqual(['disk full', 'giving up']);
    expect(ctx.log.lines.at(-1)).toMatchObject({
      level: 'error',
      msg: expect.stringMatching(/^exited with code 3 after \d+ ms$/) as string,
    });
  });

  it('quotes only the last 10 lines of stderr in the error, each cut at 500 characters', async () => {
    const error = await expectRejects(
      () =>
        run(context(), {
          command: `for i in $(seq 1 30); do echo "line $i" >&2; done; printf '%0600d\\n' 0 >&2; exit 1`,
        }),
      ShellExitError,
    );
    expect(error.stderrTail).toHaveLength(10);
    expect(error.stderrTail[0]).toBe('line 22');
    expect(error.stderrTail[9]).toBe(`${'0'.repeat(500)}…`);
  });

  it('a command killed by a signal zk-plan did not send fails with SHELL_EXIT naming the signal', async () => {
    const error = await expectRejects(
      () => run(context(), { command: 'kill -KILL $$' }),
      ShellExitError,
    );
    expect(error.signal).toBe('SIGKILL');
    expect(error.exitCode).toBeUndefined();
    expect(error.message).toContain('was killed by SIGKILL');
  });

  it('runs a program with args and no shell (nothing is expanded), or gives args to the shell as $1, $2', async () => {
    expect(await run(context(), { command: 'printf', args: ['%s|%s', 'a b', '$HOME'] })).toEqual({
      exitCode: 0,
      stdout: 'a b|$HOME',
    });
    expect(
      await run(context(), {
        command: 'printf "%s-%s" "$1" "$2"',
        args: ['x y', '$z'],
        shell: true,
      }),
    ).toEqual({ exitCode: 0, stdout: 'x y-$z' });
    expect(await run(context(), { command: 'echo "$0"', shell: '/bin/sh' })).toEqual({
      exitCode: 0,
      stdout: '/bin/sh\n',
    });
  });

  it('runs in cwd with env added to the worker’s environment', async () => {
    const result = await run(context(), {
      command: 'echo "$ZK_PLAN_SHELL_TEST:$PATH_SET"; pwd',
      cwd: dir,
      env: { ZK_PLAN_SHELL_TEST: 'on' },
    });
    expect(result.stdout).toBe(`on:\n${dir}\n`);
    expect((await run(context(), { command: 'test -n "$PATH" && echo has-path' })).stdout).toBe(
      'has-path\n',
    );
  });

  it('refuses params that are not { command, args?, cwd?, env?, shell? } with SHELL_INVALID_PARAMS naming the task, for good', async () => {
    const cases: [unknown[], string][] = [
      [[], 'expected one param'],
      [['ls'], 'must be an object'],
      [[{ command: '' }], '"command" must be a non-empty string'],
      [[{ command: 'ls', arg: ['-l'] }], 'unknown field "arg"'],
      [[{ command: 'ls', args: ['a\0b'] }], '"args"'],
      [[{ command: 'ls', env: { 'A=B': 'x' } }], '"env" has the name "A=B"'],
      [[{ command: 'ls', env: { A: 1 } }], '"env.A" must be a string'],
      [[{ command: 'ls', shell: '' }], '"shell" must be'],
      [[{ command: 'ls', cwd: 7 }], '"cwd"'],
    ];
    for (const [params, problem] of cases) {
      const error = await expectRejects(
        () => runShell(context(), params, { killGraceMs: GRACE_MS }),
        ShellParamsError,
      );
      expect(error.code).toBe('SHELL_INVALID_PARAMS');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(`task ${TASK}`);
      expect(error.message).toContain(problem);
    }
  });

  it('a program or working directory that does not exist fails with SHELL_START_FAILED', async () => {
    const missing = await expectRejects(
      () => run(context(), { command: join(dir, 'no-such-program'), shell: false }),
      ShellStartError,
    );
    expect(missing.code).toBe('SHELL_START_FAILED');
    expect(missing.message).toContain(TASK);
    expect(missing.message).toContain('does not exist');
    const noCwd = await expectRejects(
      () => run(context(), { command: 'true', cwd: join(dir, 'nowhere') }),
      ShellStartError,
    );
    expect(noCwd.message).toContain(join(dir, 'nowhere'));
  });

  it('keeps the first 64 KiB of stdout in the result (whole characters) and every line, each cut at 4000 characters, in the log', async () => {
    const ctx = context();
    // One ASCII byte, then 40 000 two-byte 'é' on one line: the 65 536-byte cap falls in the middle of a character.
    const result = await run(ctx, { command: "printf x; yes é | head -n 40000 | tr -d '\\n'" });
    const expectedChars = 1 + Math.floor((DEFAULTS.shell.maxStdoutBytes - 1) / 2);
    expect(Buffer.byteLength(result.stdout)).toBeLessThanOrEqual(DEFAULTS.shell.maxStdoutBytes);
    expect(result.stdout.startsWith('xé')).toBe(true);
    expect(result.stdout).not.toContain('\uFFFD');
    expect(result.stdout.length).toBe(expectedChars);
    const [line] = ctx.log.stream('stdout');
    expect(line?.startsWith('xéé')).toBe(true);
    expect(line).toBe(`x${'é'.repeat(3_999)}… (${40_001 - 4_000} more characters cut)`);
    const dropped = ctx.log.lines.find(
      (entry) => entry.fields?.['droppedFromResult'] !== undefined,
    );
    expect(dropped?.level).toBe('warn');
  });

  it('does not start when the task is already aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled before it started');
    controller.abort(reason);
    const ctx = context(controller.signal);
    await expect(run(ctx, { command: `touch ${join(dir, 'ran')}` })).rejects.toBe(reason);
    await expect(readFile(join(dir, 'ran'))).rejects.toThrow();
    expect(ctx.log.lines).toEqual([]);
  });
});

describe('the shell task’s process group', () => {
  it('on abort: SIGTERM to the whole group, a grandchild included; rejects with the abort’s reason, no process left', async () => {
    const controller = new AbortController();
    const ctx = context(controller.signal);
    const pidFile = join(dir, 'grandchild');
    const running = run(ctx, { command: `sleep 30 & echo $! > ${pidFile}; wait` });
    const grandchild = await pidWrittenTo(pidFile);
    expect(await processIsRunning(grandchild)).toBe(true);
    const reason = new Error('plan cancelled');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    await gone(grandchild);
    expect(await groupHasLiveMember(ctx.log.startedPid())).toBe(false);
    expect(
      ctx.log.lines.some(
        (line) =>
          line.level === 'warn' &&
          line.msg.startsWith('stopping the command: plan cancelled; SIGTERM'),
      ),
    ).toBe(true);
    expect(ctx.log.lines.some((line) => line.msg.includes('SIGKILL'))).toBe(false);
  });

  it('a group that ignores SIGTERM gets SIGKILL after the grace period', async () => {
    const controller = new AbortController();
    const ctx = context(controller.signal);
    const pidFile = join(dir, 'stubborn');
    const running = run(
      ctx,
      { command: `trap '' TERM; sleep 30 & echo $! > ${pidFile}; wait; wait` },
      GRACE_MS,
    );
    const grandchild = await pidWrittenTo(pidFile);
    const abortedAt = performance.now();
    controller.abort(new Error('timed out'));
    await expect(running).rejects.toThrow('timed out');
    expect(performance.now() - abortedAt).toBeGreaterThanOrEqual(GRACE_MS - 20);
    await gone(grandchild);
    expect(
      ctx.log.lines.some((line) =>
        line.msg.includes(`outlived SIGTERM by ${GRACE_MS} ms (shellKillGraceMs): SIGKILL`),
      ),
    ).toBe(true);
  });

  it('what a command leaves running in its group when it exits is stopped too, and the result is kept', async () => {
    const ctx = context();
    const pidFile = join(dir, 'leftover');
    const result = await run(ctx, {
      command: `sleep 30 >/dev/null 2>&1 & echo $! > ${pidFile}; echo done`,
    });
    expect(result).toEqual({ exitCode: 0, stdout: 'done\n' });
    await gone(await pidWrittenTo(pidFile));
    expect(
      ctx.log.lines.some(
        (line) =>
          line.level === 'warn' && line.msg.includes('left processes running in its process group'),
      ),
    ).toBe(true);
  });

  it('does not wait for a pipe held by a process that left the group (setsid): it stops reading after a moment', async () => {
    const ctx = context();
    const pidFile = join(dir, 'escaped');
    const started = performance.now();
    // The command waits for the pid file: by then the escaped process has left the group, so the group's stop cannot reach it.
    const result = await run(ctx, {
      command: `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 30' & while [ ! -s ${pidFile} ]; do sleep 0.05; done; echo parent-done`,
    });
    expect(result.stdout).toBe('parent-done\n');
    expect(performance.now() - started).toBeLessThan(10_000);
    const escaped = await pidWrittenTo(pidFile);
    process.kill(escaped, 'SIGKILL'); // it left the group on purpose: not the task's to stop, but the test's to clean up
    expect(
      ctx.log.lines.some((line) => line.msg.includes('left the command’s process group')),
    ).toBe(true);
  });
});
