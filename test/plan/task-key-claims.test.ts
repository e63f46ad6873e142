/**
 * addTask's `{ key }`: the key is stored in the task's definition, unique within the plan
 * (DuplicateTaskKeyError, TASK_KEY_TAKEN), shown by describePlan and `show` before and after the
 * task ran, and found by `taskOfKey`. The claim protocol (src/plan/task-key-claims.ts) over the
 * in-memory ZooKeeper: a lost reply, an add interrupted between its steps (a crash, an expired
 * session, a failed clean-up), a resend through a new session, two processes racing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderPlanView } from '../../src/cli/commands/show.js';
import { DuplicateTaskKeyError, TaskKeyNotFoundError } from '../../src/errors/task-key-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call, parseDefinition } from '../../src/exec/task-spec.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { READY, TASK_KEYS, TASK_PREFIX, childPath, keyClaimPath } from '../../src/zk/layout.js';
import { TaskStore } from '../../src/store/task-store.js';
import { expectRejects } from '../support/expect-error.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const processes: MemoryProcess[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function functions(): FunctionRegistry {
  return new FunctionRegistry()
    .register('load', (ctx) => String(ctx.params[0]))
    .register('join', (_ctx, ...inputs: string[]) => inputs.join('+'));
}

function process(server: MemoryZooKeeper, name: string): MemoryProcess {
  const proc = memoryProcess(server, name, functions());
  processes.push(proc);
  return proc;
}

const nameOfTask = (task: string): string => task.slice(task.lastIndexOf('/') + 1);

/** The plan's task nodes, by path. */
function tasksOf(server: MemoryZooKeeper, plan: string): string[] {
  return server
    .children(plan)
    .filter((name) => name.startsWith(TASK_PREFIX))
    .sort()
    .map((name) => childPath(plan, name));
}

/** The task the claim of `key` names, or undefined when the key is not claimed. */
function claimOf(server: MemoryZooKeeper, plan: string, key: string): string | undefined {
  const data = server.getData(keyClaimPath(plan, key));
  return data === undefined
    ? undefined
    : (decodeValue(keyClaimPath(plan, key), data) as { task: string }).task;
}

/**
 * `crashing` adds a task with the key `load-eu` to `plan` and dies as it sends the task's `ready`:
 * the task and the key's claim are written, the task is not ready. Its session lives on in the
 * server until the test expires it.
 */
async function addAndCrashBeforeReady(
  server: MemoryZooKeeper,
  crashing: MemoryProcess,
  plan: string,
): Promise<void> {
  const create = crashing.zk.create.bind(crashing.zk);
  vi.spyOn(crashing.zk, 'create').mockImplementation((path, data, mode, options) => {
    if (path.endsWith(`/${READY}`) && path.startsWith(`${plan}/${TASK_PREFIX}`)) {
      crashing.zk.crash();
      return new Promise(() => undefined);
    }
    return create(path, data, mode, options);
  });
  void crashing.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
  await vi.waitFor(() => expect(claimOf(server, plan, 'load-eu')).toBeDefined());
}

describe('addTask with a key', () => {
  it('stores the key in the definition; describePlan, show and taskOfKey know it before and after the task ran (no history kept)', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    const eu = await proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    const us = await proc.zkPlan.addTask(plan, call('load', 'us'), [], { key: 'load-us' });
    const report = await proc.zkPlan.addTask(plan, call('join'), [eu, us], {
      key: 'report',
      keepResult: true,
    });
    const unkeyed = await proc.zkPlan.addTask(plan, call('load', 'plain'));

    expect(parseDefinition(eu, decodeValue(eu, server.getData(eu) ?? null)).key).toBe('load-eu');
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.tasks.map((task) => [task.task, task.key])).toEqual([
      [eu, 'load-eu'],
      [us, 'load-us'],
      [report, 'report'],
      [unkeyed, undefined],
    ]);
    const table = renderPlanView(view, 200).split('\n');
    expect(table[1]).toMatch(/^KEY\s+TASK\s+STATE/);
    expect(table.slice(2).map((line) => line.split(/\s+/)[0])).toEqual([
      'load-eu',
      'load-us',
      'report',
      '-',
    ]);
    expect(await proc.zkPlan.plans.taskOfKey(plan, 'report')).toBe(report);

    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, {
      count: 2,
      backoff: FAST_BACKOFF,
      retention: false,
    });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    // The task nodes are gone; their claims stay, so the keys still name them.
    expect(await proc.zkPlan.plans.taskOfKey(plan, 'report')).toBe(report);
    expect(await proc.zkPlan.getResult(await proc.zkPlan.plans.taskOfKey(plan, 'report'))).toBe(
      'eu+us',
    );
    const error = await expectRejects(
      () => proc.zkPlan.addTask(plan, call('load', 'again'), [], { key: 'load-eu' }),
      DuplicateTaskKeyError,
    );
    expect(error.holder).toBe(eu);
  });

  it('describePlan names the finished tasks of a plan with history by their keys', async () => {
    const proc = process(new MemoryZooKeeper(), 'a');
    const plan = await proc.zkPlan.createPlan(PARENT, { history: true });
    await proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    await proc.zkPlan.markAsReady(plan);
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, retention: false });
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    const view = await proc.zkPlan.plans.describe(plan);
    expect(view.tasks.map((task) => [task.key, task.state])).toEqual([['load-eu', 'done']]);
  });

  it('refuses a key another task of the plan has, with TASK_KEY_TAKEN naming plan, key and holder; nothing of the refused task stays', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    const first = await proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    const error = await expectRejects(
      () => proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' }),
      DuplicateTaskKeyError,
    );
    expect(error.code).toBe('TASK_KEY_TAKEN');
    expect([error.plan, error.key, error.holder]).toEqual([plan, 'load-eu', first]);
    expect(error.message).toContain(plan);
    expect(error.message).toContain('"load-eu"');
    expect(tasksOf(server, plan)).toEqual([first]);
    expect(claimOf(server, plan, 'load-eu')).toBe(first);
  });

  it('refuses a batch that gives one key twice before writing anything', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    const error = await expectRejects(
      () =>
        proc.zkPlan.addTasks(plan, [
          { task: call('load', 'a'), options: { key: 'same' } },
          { task: call('load', 'b'), options: { key: 'same' } },
        ]),
      DuplicateTaskKeyError,
    );
    expect([error.key, error.holder]).toEqual(['same', undefined]);
    expect(tasksOf(server, plan)).toEqual([]);
    expect(server.exists(childPath(plan, TASK_KEYS))).toBe(false);
  });

  it('refuses a key the plan spec gave one of its tasks', async () => {
    const proc = process(new MemoryZooKeeper(), 'a');
    const { plan, tasks } = await proc.zkPlan.submitPlan(PARENT, {
      tasks: { eu: { fn: 'load', params: ['eu'] } },
    });
    const error = await expectRejects(
      () => proc.zkPlan.addTask(plan, call('load', 'x'), [], { key: 'eu' }),
      DuplicateTaskKeyError,
    );
    expect(error.holder).toBe(tasks['eu']);
    const extra = await proc.zkPlan.addTask(plan, call('load', 'x'), [], { key: 'extra' });
    expect(await proc.zkPlan.plans.taskOfKey(plan, 'eu')).toBe(tasks['eu']);
    expect(await proc.zkPlan.plans.taskOfKey(plan, 'extra')).toBe(extra);
  });

  it.each([
    ['an empty key', ''],
    ['a blank key', '   '],
    ['a key with a line break', 'a\nb'],
    ['a key with an escape', 'a\u001b[2Jb'],
    ['a key over 200 characters', 'k'.repeat(201)],
    ['a key that is not a string', 7],
  ])('refuses %s with INVALID_ARGUMENT naming the option', async (_name, key) => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    const error = await expectRejects(
      () => proc.zkPlan.addTask(plan, call('load', 'x'), [], { key: key as string }),
      InvalidArgumentError,
    );
    expect(error.argument).toBe('key');
    expect(tasksOf(server, plan)).toEqual([]);
  });

  it('takes keys such as ".", "a/b" and "ü ü" (the claim name is encoded)', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    for (const key of ['.', '..', 'a/b', 'ü ü', '%41']) {
      const task = await proc.zkPlan.addTask(plan, call('load', key), [], { key });
      expect(await proc.zkPlan.plans.taskOfKey(plan, key)).toBe(task);
    }
    expect(new Set((await proc.zkPlan.plans.describe(plan)).tasks.map((task) => task.key))).toEqual(
      new Set(['.', '..', 'a/b', 'ü ü', '%41']),
    );
  });

  it('an export keys its derived spec by the tasks’ keys, so the imported plan knows them too', async () => {
    const proc = process(new MemoryZooKeeper(), 'a');
    const plan = await proc.zkPlan.createPlan(PARENT, { history: true });
    const eu = await proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    await proc.zkPlan.addTask(plan, call('join'), [eu], { key: 'report' });
    const unkeyed = await proc.zkPlan.addTask(plan, call('load', 'plain'));
    const snapshot = await proc.zkPlan.snapshots.export(plan);
    expect(Object.keys(snapshot.spec.tasks).sort()).toEqual(
      ['load-eu', nameOfTask(unkeyed), 'report'].sort(),
    );
    expect(snapshot.spec.tasks['report']?.inputs).toEqual(['load-eu']);
    const imported = await proc.zkPlan.snapshots.import('/copies', snapshot);
    expect(await proc.zkPlan.plans.taskOfKey(imported.plan, 'report')).toBe(
      imported.tasks['report'],
    );
    const view = await proc.zkPlan.plans.describe(imported.plan);
    expect(view.tasks.map((task) => task.key).sort()).toEqual(
      ['load-eu', nameOfTask(unkeyed), 'report'].sort(),
    );
  });

  it('taskOfKey: TASK_KEY_NOT_FOUND for a key no task has', async () => {
    const proc = process(new MemoryZooKeeper(), 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    const error = await expectRejects(
      () => proc.zkPlan.plans.taskOfKey(plan, 'nope'),
      TaskKeyNotFoundError,
    );
    expect([error.code, error.plan, error.key]).toEqual(['TASK_KEY_NOT_FOUND', plan, 'nope']);
  });
});

describe('the key claim under faults', () => {
  it('a lost reply of the claim: the resend finds its own claim, and the key is the task’s', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    proc.zk.loseNextReply((op, path) => op === 'create' && path === keyClaimPath(plan, 'load-eu'));
    const task = await proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    expect(claimOf(server, plan, 'load-eu')).toBe(task);
    expect(server.exists(childPath(task, READY))).toBe(true);
  });

  it('a claim whose reply was lost as the session expired: the add fails, leaves nothing, and the same add through the new session succeeds', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    proc.zk.loseNextReply((op, path) => op === 'create' && path === keyClaimPath(plan, 'load-eu'), {
      expireSession: true,
    });
    await expect(
      proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' }),
    ).rejects.toMatchObject({ code: 'SESSION_EXPIRED' });
    expect(tasksOf(server, plan)).toEqual([]);
    expect(claimOf(server, plan, 'load-eu')).toBeUndefined();
    const task = await proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    expect(tasksOf(server, plan)).toEqual([task]);
    expect(claimOf(server, plan, 'load-eu')).toBe(task);
  });

  it('an add interrupted after its claim (the builder crashed): the key stays taken while the builder lives, and is free once its session is gone', async () => {
    const server = new MemoryZooKeeper();
    const crashing = process(server, 'crashing');
    const other = process(server, 'other');
    const plan = await other.zkPlan.createPlan(PARENT);
    await addAndCrashBeforeReady(server, crashing, plan);
    const [orphan] = tasksOf(server, plan);
    expect(claimOf(server, plan, 'load-eu')).toBe(orphan);

    // Its session lives on (a crash is only noticed when it expires): the key is taken.
    const taken = await expectRejects(
      () => other.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' }),
      DuplicateTaskKeyError,
    );
    expect(taken.holder).toBe(orphan);
    expect(tasksOf(server, plan)).toEqual([orphan]);

    crashing.zk.expireSessionOnServer();
    const task = await other.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    expect(tasksOf(server, plan)).toEqual([task]);
    expect(claimOf(server, plan, 'load-eu')).toBe(task);
  });

  it('the workers delete a dead builder’s unfinished task and free its key with it', async () => {
    const server = new MemoryZooKeeper();
    const crashing = process(server, 'crashing');
    const worker = process(server, 'worker');
    const plan = await worker.zkPlan.createPlan(PARENT);
    await worker.zkPlan.markAsReady(plan);
    await addAndCrashBeforeReady(server, crashing, plan);
    crashing.zk.expireSessionOnServer();
    const pool = worker.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, retention: false });
    await vi.waitFor(() => expect(tasksOf(server, plan)).toEqual([]), { timeout: 5_000 });
    await pool.stop();
    expect(claimOf(server, plan, 'load-eu')).toBeUndefined();
  });

  it('an add that finds the key held by a dead builder’s task while a worker settles that task: it takes the key, not TASK_KEY_TAKEN', async () => {
    const server = new MemoryZooKeeper();
    const crashing = process(server, 'crashing');
    const adder = process(server, 'adder');
    const settler = process(server, 'settler');
    const plan = await adder.zkPlan.createPlan(PARENT);
    await addAndCrashBeforeReady(server, crashing, plan);
    const [orphan] = tasksOf(server, plan);
    crashing.zk.expireSessionOnServer();
    // The adder reads the claim, then the holder's stamp: just before that read a worker settles
    // the orphan (frees its key, deletes it), as a worker's scan of the plan does.
    const tryGetData = adder.zk.tryGetData.bind(adder.zk);
    let settled = false;
    vi.spyOn(adder.zk, 'tryGetData').mockImplementation(async (path) => {
      if (path === orphan && !settled) {
        settled = true;
        const store = new TaskStore(settler.zk);
        expect(await store.settleOrphan(orphan, server.children(plan))).toBe('deleted');
      }
      return tryGetData(path);
    });
    const task = await adder.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    expect(settled).toBe(true);
    expect(tasksOf(server, plan)).toEqual([task]);
    expect(claimOf(server, plan, 'load-eu')).toBe(task);
  });

  it('a failed add whose clean-up failed too: the same session takes the key again on the next add', async () => {
    const server = new MemoryZooKeeper();
    const proc = process(server, 'a');
    const plan = await proc.zkPlan.createPlan(PARENT);
    const create = proc.zk.create.bind(proc.zk);
    const remove = proc.zk.delete.bind(proc.zk);
    const removeRecursive = proc.zk.deleteRecursive.bind(proc.zk);
    const createSpy = vi
      .spyOn(proc.zk, 'create')
      .mockImplementation((path, data, mode, options) =>
        path.endsWith(`/${READY}`) && path.startsWith(`${plan}/${TASK_PREFIX}`)
          ? Promise.reject(new Error('ready refused'))
          : create(path, data, mode, options),
      );
    const deleteSpy = vi
      .spyOn(proc.zk, 'delete')
      .mockImplementation((path, version, options) =>
        path.includes(`/${TASK_KEYS}/`)
          ? Promise.reject(new Error('delete refused'))
          : remove(path, version, options),
      );
    const recursiveSpy = vi
      .spyOn(proc.zk, 'deleteRecursive')
      .mockImplementation(() => Promise.reject(new Error('delete refused')));
    await expect(
      proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' }),
    ).rejects.toThrow('ready refused');
    const [left] = tasksOf(server, plan);
    expect(claimOf(server, plan, 'load-eu')).toBe(left);

    createSpy.mockImplementation(create);
    deleteSpy.mockImplementation(remove);
    recursiveSpy.mockImplementation(removeRecursive);
    const task = await proc.zkPlan.addTask(plan, call('load', 'eu'), [], { key: 'load-eu' });
    expect(tasksOf(server, plan)).toEqual([task]);
    expect(claimOf(server, plan, 'load-eu')).toBe(task);
  });

  it('two processes racing for one key: exactly one gets it, the other is refused and leaves nothing', async () => {
    for (let round = 0; round < 20; round++) {
      const server = new MemoryZooKeeper();
      const [a, b] = [process(server, 'a'), process(server, 'b')];
      const plan = await a.zkPlan.createPlan(PARENT);
      const outcomes = await Promise.allSettled([
        a.zkPlan.addTasks(plan, [
          { task: call('load', 'a0') },
          { task: call('load', 'a'), options: { key: 'k' } },
        ]),
        b.zkPlan.addTask(plan, call('load', 'b'), [], { key: 'k' }),
      ]);
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const lost = outcomes.filter(
        (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
      );
      expect(won).toHaveLength(1);
      expect(lost[0]?.reason).toBeInstanceOf(DuplicateTaskKeyError);
      const holder = claimOf(server, plan, 'k');
      expect(tasksOf(server, plan)).toContain(holder);
      expect(tasksOf(server, plan)).toHaveLength(outcomes[0].status === 'fulfilled' ? 2 : 1);
      await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
    }
  });
});
