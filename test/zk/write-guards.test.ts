/**
 * Holds the code to docs/design/writes.md: runs plans (with limits, failures, retries, pauses,
 * cancels, events, specs, imports, retention), schedules and jobs over the in-memory ZooKeeper,
 * records every create, setData and delete with the guards it was sent with, and fails when a write
 * is not in the table, or lacks a guard its row names (a fence, the node's incarnation, a
 * still-wanted check). Rows that name a guard must each be seen at least once.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { PermanentError } from '../../src/errors/task-errors.js';
import { skip } from '../../src/trigger/skip.js';
import type { JobContext } from '../../src/jobs/job-context.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
// The class itself, whose methods the recorder wraps (the entry point exports its type only).
import { MemoryZkClient } from '../../src/testing/memory-zk-client.js';
import type { CreateMode, WriteOptions } from '../../src/zk/zk-client-types.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';
import { PLANS, SCHEDULES, T0, TICK_SPEC, schedulerProcess } from '../schedule/schedule-harness.js';
import { FLAG_GRACE_MS, JOBS, World, sleep } from '../jobs/support/job-harness.js';
import { jobsNodes } from '../../src/zk/layout.js';

type Guard = 'fence' | 'incarnation' | 'still wanted';

interface Row {
  readonly node: string;
  readonly write: string;
  readonly guards: ReadonlySet<Guard>;
}

interface Recorded {
  readonly node: string | undefined;
  readonly write: string;
  readonly path: string;
  readonly guards: ReadonlySet<Guard>;
}

const TABLE = new URL('../../docs/design/writes.md', import.meta.url);

/** The table's rows: `| \`node\` | path | write | guard | why |`. */
function tableRows(): Row[] {
  const rows: Row[] = [];
  for (const line of readFileSync(TABLE, 'utf8').split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line.split('|').map((cell) => cell.trim());
    const [, node, , write, guard] = cells as [string, string, string, string, string];
    const guards = guard === 'none' ? [] : guard.split('+').map((part) => part.trim());
    for (const named of guards)
      if (!['fence', 'incarnation', 'still wanted'].includes(named))
        throw new Error(`unknown guard "${named}" in: ${line}`);
    rows.push({ node: node.replaceAll('`', ''), write, guards: new Set(guards as Guard[]) });
  }
  return rows;
}

const PLAN = String.raw`/plans/(?:plan-\d{10}|[A-Za-z0-9][\w.-]*@\d{8}T\d{6}\.\d{3}Z(?:-manual-[0-9a-f]{8})?)`;
const TASK = `${PLAN}/task-\\d{10}`;
const CHUNK = String.raw`chunk-\d{10}`;
const SCHEDULE = String.raw`/schedules/[A-Za-z0-9][\w.-]*`;
const TICKS = `${SCHEDULE}/ticks`;

/** The node names of the table, by path (the test's parents: /plans, /schedules, /jobs). */
const NODES: readonly (readonly [RegExp, string])[] = (
  [
    [String.raw`/|/plans|/schedules|/jobs`, 'parent'],
    ['/plans/zk-plan-retention', 'retention lock'],
    ['/plans/zk-plan-workers', 'worker records'],
    ['/plans/zk-plan-workers/[^/]+', 'worker record'],
    ['/plans/zk-plan-limits', 'limits'],
    ['/plans/zk-plan-limits/[^/]+', 'limit'],
    [String.raw`/plans/zk-plan-limits/[^/]+/slot-\d+`, 'slot'],
    [String.raw`/plans/plan-\d{10}`, 'plan'],
    [PLAN, 'tick plan'],
    [`${PLAN}/ready`, 'plan ready'],
    [`${PLAN}/failed`, 'plan failed marker'],
    [`${PLAN}/spec`, 'spec record'],
    [`${PLAN}/spec/${CHUNK}`, 'spec record chunk'],
    [`${PLAN}/keys`, 'task keys'],
    [`${PLAN}/keys/key-[^/]+`, 'key claim'],
    [`${PLAN}/control`, 'control'],
    [`${PLAN}/alerts`, 'plan events'],
    [`${PLAN}/alerts/[^/]+`, 'plan event'],
    [`${PLAN}/alerts/[^/]+/lock`, 'event lock'],
    [`${PLAN}/history`, 'history'],
    [String.raw`${PLAN}/history/task-\d{10}`, 'history entry'],
    [`${PLAN}/runnable`, 'runnable index'],
    [String.raw`${PLAN}/runnable/task-\d{10}`, 'runnable entry'],
    [String.raw`${PLAN}/result-\d{10}`, 'kept result'],
    [String.raw`${PLAN}/result-\d{10}/${CHUNK}`, 'kept result chunk'],
    [`${PLAN}/builder-[0-9a-f]+`, 'builder'],
    [`${PLAN}/batch-[0-9a-f]+-(?:spawn-)?\\d+`, 'batch marker'],
    [`${PLAN}/spawned`, 'spawned mark'],
    [TASK, 'task'],
    [String.raw`${TASK}/prov-\d{10}`, 'task prov'],
    [String.raw`${TASK}/dep-\d{10}`, 'task dep'],
    [String.raw`${TASK}/arg-\d{10}`, 'task arg'],
    [String.raw`${TASK}/arg-\d{10}/${CHUNK}`, 'task arg chunk'],
    [`${TASK}/ready`, 'task ready'],
    [`${TASK}/owner`, 'task owner'],
    [`${TASK}/result`, 'task result'],
    [`${TASK}/result/${CHUNK}`, 'task result chunk'],
    [`${TASK}/attempts`, 'task attempts'],
    [`${TASK}/failed`, 'task failed'],
    [`${TASK}/waiting`, 'task waiting'],
    [String.raw`${TASK}/spawn-\d+`, 'spawn record'],
    [`${TASK}/continuation`, 'hand-over record'],
    [SCHEDULE, 'schedule'],
    [TICKS, 'ticks'],
    [`${SCHEDULE}/cursor`, 'cursor'],
    [`${SCHEDULE}/backfills`, 'backfills'],
    [String.raw`${SCHEDULE}/backfills/backfill-\d{15}-[0-9a-f]{8}`, 'backfill record'],
    [String.raw`${TICKS}/tick-\d{15}`, 'tick record'],
    [String.raw`${TICKS}/manual-\d{15}-[0-9a-f]{8}`, 'manual tick record'],
    [String.raw`${TICKS}/(?:tick-\d{15}|manual-\d{15}-[0-9a-f]{8})/lock`, 'tick lock'],
    ['/jobs/zk-plan-job-workers', 'job workers'],
    ['/jobs/zk-plan-job-workers/[^/]+', 'job worker'],
    ['/jobs/zk-plan-job-manager', 'job manager'],
    [String.raw`/jobs/zk-plan-job-manager/latch-.*\d{10}`, 'latch node'],
    ['/jobs/zk-plan-job-assignment', 'assignment'],
    ['/jobs/zk-plan-job-leases(?:/[^/]+)?', 'job leases'],
    ['/jobs/zk-plan-job-leases/[^/]+/[^/]+', 'lease'],
    ['/jobs/zk-plan-job-runs(?:/[^/]+)?', 'job runs'],
    [String.raw`/jobs/zk-plan-job-runs/[^/]+/run-\d{13}-[^/]+-\d+`, 'run record'],
    ['/jobs/zk-plan-job-failures(?:/[^/]+)?', 'job failures'],
    ['/jobs/zk-plan-job-failures/[^/]+/[^/]+', 'item failure'],
    ['/jobs/zk-plan-job-disabled-workers', 'disabled workers'],
    ['/jobs/zk-plan-job-disabled-workers/[^/]+', 'disabled worker'],
    ['/jobs/(?!zk-plan-)[^/]+', 'job'],
    ['/jobs/(?!zk-plan-)[^/]+/trigger', 'job trigger'],
  ] as const
).map(([pattern, node]) => [new RegExp(`^(?:${pattern})$`), node] as const);

function nodeOf(path: string): string | undefined {
  // The first match wins: `plan` (plan-N) comes before `tick plan`, which matches any plan name.
  return NODES.find(([pattern]) => pattern.test(path))?.[1];
}

/** Records every write of every MemoryZkClient while the test runs. */
class WriteRecorder {
  readonly writes: Recorded[] = [];
  /** Roots of the deleteRecursive calls under way: deletes below them belong to them. */
  private readonly recursiveRoots = new Map<string, number>();

  install(): void {
    const recorder = this;
    const proto = MemoryZkClient.prototype;
    const create = proto.create;
    const setData = proto.setData;
    const remove = proto.delete;
    const deleteRecursive = proto.deleteRecursive;
    vi.spyOn(proto, 'create').mockImplementation(function (
      this: MemoryZkClient,
      path: string,
      data?: Buffer | null,
      mode?: CreateMode,
      options?: WriteOptions,
    ) {
      // A sequential create names the prefix: classify it as the node it makes.
      recorder.record(
        'create',
        mode?.endsWith('sequential') === true ? `${path}0000000000` : path,
        -1,
        options,
      );
      return create.call(this, path, data, mode, options);
    });
    vi.spyOn(proto, 'setData').mockImplementation(function (
      this: MemoryZkClient,
      path: string,
      data: Buffer | null,
      version?: number,
      options?: WriteOptions,
    ) {
      recorder.record('setData', path, version ?? -1, options);
      return setData.call(this, path, data, version, options);
    });
    vi.spyOn(proto, 'delete').mockImplementation(function (
      this: MemoryZkClient,
      path: string,
      version?: number,
      options?: WriteOptions,
    ) {
      recorder.record('delete', path, version ?? -1, options);
      return remove.call(this, path, version, options);
    });
    vi.spyOn(proto, 'deleteRecursive').mockImplementation(async function (
      this: MemoryZkClient,
      path: string,
    ) {
      recorder.recursiveRoots.set(path, (recorder.recursiveRoots.get(path) ?? 0) + 1);
      try {
        await deleteRecursive.call(this, path);
      } finally {
        const left = (recorder.recursiveRoots.get(path) ?? 1) - 1;
        if (left === 0) recorder.recursiveRoots.delete(path);
        else recorder.recursiveRoots.set(path, left);
      }
    });
  }

  private record(
    op: 'create' | 'setData' | 'delete',
    path: string,
    version: number,
    options: WriteOptions = {},
  ): void {
    const guards = new Set<Guard>();
    if (options.fence !== undefined) guards.add('fence');
    if (options.incarnation !== undefined) guards.add('incarnation');
    if (options.stillWanted !== undefined) guards.add('still wanted');
    const root =
      op === 'delete'
        ? [...this.recursiveRoots.keys()].find(
            (root) => path === root || path.startsWith(`${root}/`),
          )
        : undefined;
    if (root !== undefined) {
      this.writes.push({ node: nodeOf(root), write: 'delete (subtree)', path, guards });
      return;
    }
    const write = op === 'create' || version < 0 ? op : `${op} (versioned)`;
    this.writes.push({ node: nodeOf(path), write, path, guards });
  }
}

/** Resolves once `condition()` holds (real time: the engine runs on real timers here). */
async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(5);
  }
}

/** Plans: limits, a kept and a chunked result, a failure for good and its retry, a retried try, pause, resume, cancel, events, a spec, an import, retention. */
async function runPlans(server: MemoryZooKeeper): Promise<void> {
  let permanentFailures = 1;
  let flaky = 2;
  let notThereYet = 2;
  let breaksChecks = 0;
  const functions = new FunctionRegistry()
    .register('value', (ctx) => ctx.params[0])
    .register('sum', (_ctx, ...inputs: unknown[]) =>
      inputs.reduce((sum: number, input) => sum + Number(input), 0),
    )
    .register('big', () => 'x'.repeat(1_500_000))
    .register('doomed', () => {
      throw new PermanentError('never works');
    })
    .register('skipper', () => skip('nothing to do'))
    .register('outcomes', (_ctx, ...outcomes: { status: string }[]) =>
      outcomes.map((outcome) => outcome.status).join(','),
    )
    .register('breaks', (ctx) => {
      // Not yet at first (a wait's record that retryFailed deletes), then broken until retried.
      if (breaksChecks++ === 0) return ctx.notYet('warming up', { afterMs: 10 });
      if (permanentFailures-- > 0) throw new PermanentError('broken until retried');
      return 'fixed';
    })
    .register('sensor', (ctx) =>
      notThereYet-- > 0 ? ctx.notYet('the file is not there yet', { afterMs: 10 }) : 'there',
    )
    .register('flaky', () => {
      if (flaky-- > 0) throw new Error('twice');
      return 'ok';
    })
    .register('slow', async () => {
      await pause(200);
      return 'slow';
    })
    .register('split', async (ctx: TaskContext<[number]>) => {
      const parts = await ctx.spawn(
        Array.from({ length: ctx.params[0] }, (_, item) => ({ task: call('value', item) })),
      );
      return ctx.continueWith(call('sum'), parts);
    })
    .register('items', (ctx: TaskContext<[number]>) =>
      Array.from({ length: ctx.params[0] }, (_, item) => item),
    );
  const admin = memoryProcess(server, 'admin', functions);
  const worker = memoryProcess(server, 'worker', functions);
  const processes: MemoryProcess[] = [admin, worker];
  try {
    const events: string[] = [];
    const listening = worker.zkPlan.alerts.subscribe(
      PLANS,
      (event) => void events.push(event.kind),
    );
    await admin.zkPlan.limits(PLANS).set('k', 1);
    const plan = await admin.zkPlan.createPlan(PLANS, {
      history: true,
      maxAttempts: 3,
      initialDelayMs: 1,
      failurePolicy: 'continue',
    });
    const [one, two] = await admin.zkPlan.addTasks(plan, [
      { task: call('value', 1), options: { keepResult: true, priority: 2 } },
      { task: call('value', 2), options: { concurrencyKey: 'k' } },
    ]);
    await admin.zkPlan.addTask(plan, call('sum'), [one as string, two as string], {
      keepResult: true,
    });
    await admin.zkPlan.addTasks(plan, [
      { task: call('big'), options: { keepResult: true } },
      { task: call('breaks') },
      { task: call('flaky') },
      { task: call('sensor') },
    ]);
    // Keys: one claimed, and a batch refused for a key already taken (the claim it made for its other task is freed).
    await admin.zkPlan.addTask(plan, call('value', 4), [], { key: 'four' });
    await admin.zkPlan
      .addTasks(plan, [
        { task: call('value', 5), options: { key: 'five' } },
        { task: call('value', 4), options: { key: 'four' } },
      ])
      .then(
        () => Promise.reject(new Error('a second task with the key "four" was added')),
        () => undefined,
      );
    await admin.zkPlan.markAsReady(plan);
    worker.zkPlan.startWorkers(PLANS, { count: 2, backoff: FAST_BACKOFF, retention: false });
    await until(
      async () => (await admin.zkPlan.plans.status(plan)).state === 'failed',
      'the plan to fail',
    );
    await admin.zkPlan.control.retryFailed(plan);
    await admin.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    // A dependency on a finished producer's kept result.
    const later = await admin.zkPlan.createPlan(PLANS);
    const keeper = await admin.zkPlan.addTask(later, call('value', 3), [], { keepResult: true });
    await admin.zkPlan.markAsReady(later);
    await admin.zkPlan.waitForCompletion(later, { timeoutMs: 10_000 });
    await admin.zkPlan.addTask(later, call('sum'), [keeper]);
    await admin.zkPlan.waitForCompletion(later, { timeoutMs: 10_000 });
    // A task that spawns and hands over, and a map without a reduce.
    const spawning = await admin.zkPlan.createPlan(PLANS);
    const split = await admin.zkPlan.addTask(spawning, call('split', 3), [], { keepResult: true });
    await admin.zkPlan.addTask(spawning, call('sum'), [split]);
    await admin.zkPlan.addTask(spawning, call('items', 3), [], { map: { fn: 'value' } });
    await admin.zkPlan.markAsReady(spawning);
    await admin.zkPlan.waitForCompletion(spawning, { timeoutMs: 10_000 });
    // Skip and trigger rules: a failure handed on through a blocked task, a skip, a late clean-up.
    const ruled = await admin.zkPlan.createPlan(PLANS, { maxAttempts: 1 });
    const doomed = await admin.zkPlan.addTask(ruled, call('doomed'));
    const blockedStep = await admin.zkPlan.addTask(ruled, call('value', 1), [doomed]);
    const skipper = await admin.zkPlan.addTask(ruled, call('skipper'));
    await admin.zkPlan.addTask(ruled, call('outcomes'), [doomed, blockedStep, skipper], {
      trigger: 'allDone',
    });
    await admin.zkPlan.markAsReady(ruled);
    await expect(admin.zkPlan.waitForCompletion(ruled, { timeoutMs: 10_000 })).rejects.toThrow();
    await admin.zkPlan.addTask(ruled, call('outcomes'), [doomed], { trigger: 'oneFailed' });
    await expect(admin.zkPlan.waitForCompletion(ruled, { timeoutMs: 10_000 })).rejects.toThrow();
    // Pause, resume, cancel.
    const controlled = await admin.zkPlan.createPlan(PLANS);
    await admin.zkPlan.addTasks(controlled, [{ task: call('slow') }, { task: call('slow') }]);
    await admin.zkPlan.control.pause(controlled);
    await admin.zkPlan.markAsReady(controlled);
    await admin.zkPlan.control.resume(controlled);
    await admin.zkPlan.control.pause(controlled);
    await admin.zkPlan.control.cancel(controlled, { reason: 'test' }); // over the pause: the control node is rewritten
    // A spec, its export and import.
    const submitted = await admin.zkPlan.submitPlan(PLANS, {
      tasks: { a: { fn: 'value', params: [5] }, b: { fn: 'sum', inputs: ['a'] } },
      options: { history: true },
    });
    await admin.zkPlan.waitForCompletion(submitted.plan, { timeoutMs: 10_000 });
    const imported = await admin.zkPlan.snapshots.import(
      PLANS,
      await admin.zkPlan.snapshots.export(submitted.plan),
    );
    await admin.zkPlan.waitForCompletion(imported.plan, { timeoutMs: 10_000 });
    await until(() => events.length > 0, 'a plan event');
    await admin.zkPlan.plans.delete(imported.plan);
    // Retention, once no plan is used any more: it deletes every finished plan.
    const sweeper = memoryProcess(server, 'sweeper', functions);
    processes.push(sweeper);
    sweeper.zkPlan.startWorkers(PLANS, {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: { maxAgeMs: 0, maxCount: 0, sweepIntervalMs: 50 },
    });
    await until(
      () => server.children(PLANS).filter((name) => !name.startsWith('zk-plan-')).length === 0,
      'retention to delete the finished plans',
    );
    await listening.close();
  } finally {
    await Promise.all(processes.map(({ zkPlan }) => zkPlan.close()));
  }
}

/**
 * Schedules: put, ticks fired over time (records pruned), 22 backfills stepped and cancelled
 * (finished ones beyond the newest 20 pruned), a manual trigger, a change, removal.
 */
async function runSchedules(server: MemoryZooKeeper): Promise<void> {
  const proc = schedulerProcess(server, 'scheduler');
  try {
    await proc.schedules.put({
      name: 'pulse',
      cron: '*/10 * * * * *',
      spec: TICK_SPEC,
      planParent: PLANS,
      misfire: 'fireAll',
      misfireGraceMs: 60_000,
    });
    for (let at = 10_000; at <= 80 * 10_000; at += 10_000) {
      proc.clock.now = T0 + at + 20;
      await proc.scheduler.pass();
    }
    proc.clock.now += 11 * 60_000;
    await proc.scheduler.pass();
    await proc.scheduler.pass();
    // No worker runs here, so a backfill ends by its cancel (which cancels its plans under way).
    const range = {
      from: T0 - 600_000,
      to: T0 - 570_000,
      mode: 'parallel',
      concurrency: 2,
    } as const;
    for (let backfill = 0; backfill < 22; backfill++) {
      const { id } = await proc.schedules.backfill('pulse', range);
      await proc.scheduler.pass();
      await proc.schedules.cancelBackfill('pulse', id);
    }
    for (let pass = 0; pass < 3; pass++) await proc.scheduler.pass();
    const backfills = await proc.schedules.backfills('pulse');
    expect(backfills.map((backfill) => backfill.state)).toEqual(Array(20).fill('cancelled'));
    await proc.schedules.trigger('pulse');
    await proc.schedules.pause('pulse');
    await proc.schedules.remove('pulse');
  } finally {
    await proc.zkPlan.close();
  }
  expect(server.children(SCHEDULES)).toEqual([]);
}

/**
 * Jobs: define, take, renew, runs recorded (failed ones too) and pruned, a pool change (leases
 * pruned), a trigger, a worker disabled and enabled, a disabled worker's clean stop (its flag
 * pruned once the grace is over), removal.
 */
async function runJobs(): Promise<{ server: MemoryZooKeeper }> {
  const world = new World();
  const runs: string[] = [];
  const work = {
    hold: (ctx: JobContext) => {
      runs.push(...ctx.items.map((item) => item.id));
      if (runs.length <= 2) throw new Error('the first runs fail: their items keep a last failure');
    },
  };
  const a = world.spawn('a', work);
  const b = world.spawn('b', work);
  const rounds = async (count: number): Promise<void> => {
    for (let round = 0; round < count; round++) {
      for (const proc of [a, b]) await proc.worker.pass().catch(() => undefined);
      for (const proc of [a, b]) await proc.manager.pass().catch(() => undefined);
      world.advance(400);
      await sleep(5);
    }
  };
  await world.jobs.define({
    name: 'mail',
    fn: 'hold',
    workPool: { items: ['m1', 'm2', 'm3'] },
    mode: { everyMs: 200 },
    keepRuns: 2, // the history's prune deletes runs
  });
  await rounds(3);
  await world.jobs.trigger('mail'); // a run that fails: its items keep a last failure
  await rounds(2);
  // The items leave the pool: the manager prunes their leases and their last failures.
  await world.jobs.setWorkPool('mail', ['m4']);
  await rounds(3);
  await world.jobs.trigger('mail');
  await rounds(1);
  await world.jobs.disableWorker('b');
  await rounds(2);
  await world.jobs.enableWorker('b');
  await world.jobs.disableWorker('a');
  await rounds(2);
  await a.worker.stop();
  await a.manager.leave();
  await rounds(2);
  world.advance(FLAG_GRACE_MS);
  await rounds(1);
  expect(world.server.children(jobsNodes(JOBS).disabledWorkers)).toEqual([]);
  // Removal waits for the workers to give the items back: their passes go on meanwhile.
  const removing = world.jobs.remove('mail', { timeoutMs: 10_000 });
  let removed = false;
  void removing.finally(() => (removed = true)).catch(() => undefined);
  while (!removed) await rounds(1);
  await removing;
  expect(runs.length).toBeGreaterThan(0);
  await b.worker.stop();
  return { server: world.server };
}

describe('every write is in docs/design/writes.md, with the guards its row names', () => {
  const recorder = new WriteRecorder();
  beforeEach(() => recorder.install());
  afterEach(() => vi.restoreAllMocks());

  it('plans, schedules and jobs', { timeout: 60_000 }, async () => {
    await runPlans(new MemoryZooKeeper());
    await runSchedules(new MemoryZooKeeper());
    await runJobs();

    const rows = tableRows();
    const rowOf = (write: Recorded): Row | undefined =>
      rows.find((row) => row.node === write.node && row.write === write.write);
    const unknown = [
      ...new Set(
        recorder.writes
          .filter((write) => write.node === undefined)
          .map((write) => `${write.write} ${write.path}`),
      ),
    ];
    expect(unknown, 'writes to nodes the table does not name').toEqual([]);
    const missing = [
      ...new Set(
        recorder.writes
          .filter((write) => rowOf(write) === undefined)
          .map((write) => `${write.node}: ${write.write} (${write.path})`),
      ),
    ];
    expect(missing, 'writes without a row in docs/design/writes.md').toEqual([]);
    const unguarded = [
      ...new Set(
        recorder.writes.flatMap((write) => {
          const row = rowOf(write) as Row;
          const lacking = [...row.guards].filter((guard) => !write.guards.has(guard));
          return lacking.length === 0
            ? []
            : [`${write.node}: ${write.write} of ${write.path} without ${lacking.join(' + ')}`];
        }),
      ),
    ];
    expect(unguarded, 'writes without a guard their row names').toEqual([]);
    const seen = new Set(recorder.writes.map((write) => `${write.node}\u0000${write.write}`));
    const unexercised = rows
      .filter((row) => row.guards.size > 0 && !seen.has(`${row.node}\u0000${row.write}`))
      .map((row) => `${row.node}: ${row.write}`);
    expect(unexercised, 'guarded rows no write exercised').toEqual([]);
  });

  it('a write the classifier cannot place is reported, and a guard a row names is checked (the test can fail)', () => {
    expect(nodeOf('/plans/plan-0000000001/task-0000000002/owner')).toBe('task owner');
    expect(nodeOf('/plans/pulse@20261125T020010.000Z')).toBe('tick plan');
    expect(nodeOf('/plans/plan-0000000001/somewhere-else')).toBeUndefined();
    const row = tableRows().find(
      (candidate) => candidate.node === 'slot' && candidate.write === 'delete (versioned)',
    );
    expect(row?.guards).toEqual(new Set(['fence', 'incarnation']));
  });
});
