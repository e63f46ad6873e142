/**
 * The command line speaks in its own commands: `zk-plan retry <plan>`, not `retryFailed(plan)`.
 * Every command's help, and what the CLI prints for the errors whose library message names an API
 * call (describeError, the one place that words them), name no API call.
 */
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { ExitCode, describeError, exitCodeFor } from '../../src/cli/exit-codes.js';
import { ZkPlanError } from '../../src/errors/base-error.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { assertPlanSnapshot } from '../../src/snapshot/plan-snapshot.js';
import { checkSpecForSubmit } from '../../src/spec/submit-plan.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { API_CALL } from '../support/api-call-names.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';

/** What `fn` threw (it must throw). */
async function thrownBy(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected it to throw');
}

describe('the CLI speaks in CLI commands', () => {
  it('no help text of any command names an API call', () => {
    const program = buildProgram();
    const commands = [
      program,
      ...program.commands,
      ...program.commands.flatMap((command) => command.commands),
    ];
    expect(commands.length).toBeGreaterThan(20);
    for (const command of commands) {
      let text = '';
      command.configureOutput({
        writeOut: (chunk) => (text += chunk),
        writeErr: (chunk) => (text += chunk),
      });
      command.outputHelp();
      expect(text.length).toBeGreaterThan(50);
      expect({
        command: command.name(),
        apiCalls: text.split('\n').filter((line) => API_CALL.test(line)),
      }).toEqual({ command: command.name(), apiCalls: [] });
    }
  });

  it('a plan that failed: its error says zk-plan retry <plan> to the CLI, retryFailed to a program', async () => {
    const server = new MemoryZooKeeper();
    const { zkPlan } = memoryProcess(
      server,
      'w',
      new FunctionRegistry().register('boom', () => {
        throw new Error('the disk is full');
      }),
    );
    const plan = await zkPlan.createPlan('/p', { maxAttempts: 1 });
    await zkPlan.addTask(plan, call('boom'));
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers('/p', { backoff: FAST_BACKOFF });
    const error = await thrownBy(() => zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }));
    await pool.stop();
    await zkPlan.close();
    expect((error as Error).message).toContain('retryFailed(plan)');
    const said = describeError(error);
    expect(said).not.toMatch(API_CALL);
    expect(said).toContain(`zk-plan retry ${plan} runs them again`);
    expect(said).toContain('the disk is full');
  });

  it('a wait that timed out: the CLI names zk-plan worker and zk-plan why, not startWorkers', async () => {
    const { zkPlan } = memoryProcess(new MemoryZooKeeper(), 'w');
    const plan = await zkPlan.createPlan('/q');
    await zkPlan.addTask(plan, call('nobody-runs-this'));
    await zkPlan.markAsReady(plan);
    const error = await thrownBy(() => zkPlan.waitForCompletion(plan, { timeoutMs: 50 }));
    await zkPlan.close();
    expect((error as Error).message).toContain('startWorkers');
    const said = describeError(error);
    expect(said).not.toMatch(API_CALL);
    expect(said).toContain(`zk-plan worker --parent /q --functions <module>`);
    expect(said).toContain(`zk-plan why ${plan}`);
  });

  it('a rerun of a plan built task by task, and a file that is no snapshot, are said in CLI commands', async () => {
    const { zkPlan } = memoryProcess(new MemoryZooKeeper(), 'w');
    const plan = await zkPlan.createPlan('/r');
    await zkPlan.addTask(plan, call('x'));
    await zkPlan.markAsReady(plan);
    const rerun = await thrownBy(() => zkPlan.snapshots.rerun(plan, { from: 'failed' }));
    await zkPlan.close();
    expect(rerun).toMatchObject({ code: 'RERUN_NO_SPEC' });
    expect((rerun as Error).message).toMatch(API_CALL);
    expect(describeError(rerun)).not.toMatch(API_CALL);
    expect(describeError(rerun)).toContain(`zk-plan export ${plan}`);

    const notSnapshot = await thrownBy(() => assertPlanSnapshot('hello'));
    expect((notSnapshot as Error).message).toMatch(API_CALL);
    expect(describeError(notSnapshot)).toBe(
      'expected a snapshot object, as zk-plan export writes it [SNAPSHOT_INVALID]',
    );
  });

  it.each<[string, unknown, RegExp]>([
    [
      'plan options not an object',
      { tasks: { a: { fn: 'f' } }, options: 3 },
      /"options" must be an object of plan options/,
    ],
    [
      'an unknown plan option',
      { tasks: { a: { fn: 'f' } }, options: { maxAtempts: 3 } },
      /unknown option of the plan \("options"\) \(did you mean maxAttempts\?\)/,
    ],
    [
      'task options not an object',
      { tasks: { a: { fn: 'f', options: 7 } } },
      /"options" must be an object of task options/,
    ],
    [
      'an unknown task option',
      { tasks: { a: { fn: 'f', options: { retries: 3 } } } },
      /task "a": Invalid retries: unknown option of the task \("options"\)/,
    ],
  ])(
    'a spec with %s is refused in the words of the spec, which both the API and the CLI take',
    async (_title, spec, wording) => {
      const error = await thrownBy(() =>
        checkSpecForSubmit(
          spec as never,
          new FunctionRegistry().register('f', () => 1),
          [],
          { allowUnknownFunctions: true },
        ),
      );
      expect(error).toBeInstanceOf(ZkPlanError);
      expect((error as Error).message).not.toMatch(API_CALL);
      expect(describeError(error)).toMatch(wording);
    },
  );

  it('a job worker disabled that is not live: the CLI names zk-plan workers --jobs, not workers(), and exits 5', async () => {
    const { zkPlan } = memoryProcess(new MemoryZooKeeper(), 'w');
    const error = await thrownBy(() => zkPlan.jobs('/jobs').disableWorker('gone-1a2b3c4d'));
    await zkPlan.close();
    expect(error).toMatchObject({ code: 'JOB_WORKER_NOT_LIVE' });
    expect((error as Error).message).toMatch(API_CALL);
    expect(describeError(error)).toBe(
      `no live job worker "gone-1a2b3c4d" under /jobs: only a live one can be disabled, and a worker's id changes with every start (zk-plan workers --jobs /jobs lists the live ones) [JOB_WORKER_NOT_LIVE]`,
    );
    expect(exitCodeFor(error)).toBe(ExitCode.notFound);
  });

  it('an error whose message names no API call is said as it is', () => {
    class Plain extends ZkPlanError {
      readonly code = 'PLAIN';
    }
    const error = new Plain('nothing to translate');
    expect(error.cliMessage).toBe('nothing to translate');
    expect(describeError(error)).toBe('nothing to translate [PLAIN]');
    expect(Object.keys(error)).not.toContain('cliMessage');
  });
});
