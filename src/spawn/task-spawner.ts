/**
 * `ctx.spawn`: a running task adds tasks to its own plan, exactly once however often it runs.
 *
 * There is no multi-op, so the call is made safe to repeat by a record under the spawning task,
 * `<task>/spawn-<n>` for its n-th call (src/spawn/spawn-record.ts), written before anything else:
 *
 * 1. The record `{ batch, fns }` is created, naming the addTasks batch that will make the tasks.
 * 2. The batch is written (task nodes, links, key claims) and committed by its `batch-<id>` marker,
 *    which holds the tasks' paths.
 * 3. The record gets the paths (`{ batch, fns, tasks }`), then the tasks are made ready.
 *
 * Every write is fenced by the claim's session, so once it has expired nothing more of this run
 * lands, and the task, its owner gone, is run again elsewhere. That run finds the record and:
 * - with its tasks: returns them (made ready, should the crash have come before that);
 * - without them, but with the batch's marker: the batch was committed, takes the paths from the
 *   marker, records them and makes the tasks ready;
 * - without them and without a marker: the batch never committed and never will (its session is
 *   gone, and a worker that gives a task back waits for its spawn calls to settle first), so its
 *   unready tasks are deleted as every dead builder's are (settleOrphan), and this run records a
 *   batch of its own in the record (a versioned write: two runs never both take it over) and
 *   writes it.
 * A run that asks for other functions than the record names is refused (SPAWN_MISMATCH): a task's
 * spawn calls must not depend on anything but its params and inputs.
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { MalformedNodeError, OwnershipLostError } from '../errors/task-errors.js';
import { SpawnMismatchError } from '../errors/spawn-errors.js';
import { isZkError } from '../errors/zk-error.js';
import type { TaskToAdd } from '../config/task-options.js';
import type { PlanWriter } from '../plan/plan-writer.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import type { Claim } from '../store/task-store.js';
import type { TaskStore } from '../store/task-store.js';
import { classifyTask } from '../store/task-state.js';
import {
  CONTINUATION,
  CONTINUED_SERIAL,
  DEP_PREFIX,
  SPAWNED,
  TASK_PREFIX,
  batchMarkerName,
  childPath,
  spawnRecordPath,
} from '../zk/layout.js';
import type { WriteOptions } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import {
  MAX_SPAWNED_TASKS,
  MAX_RECORDED_FN_CHARS,
  MAX_SPAWN_RECORD_BYTES,
  decodeSpawnRecord,
  encodeSpawnRecord,
  isTaskList,
  type SpawnRecord,
} from './spawn-record.js';

/** How many times one call looks at its record again after another write changed it. */
const MAX_ROUNDS = 20;
/** How often, and how far apart, a committed batch whose writer failed is completed again. */
const COMPLETION_RETRIES = 10;
const COMPLETION_RETRY_MS = 500;

/** One recorded call: where its record is, how errors name it, and whether it is a hand-over. */
interface RecordedCall {
  readonly path: string;
  /** The call's number (`ctx.spawn`), or `'continuation'` (`ctx.continueWith`). */
  readonly call: number | 'continuation';
}

export class TaskSpawner {
  private batchSerial = 0;

  constructor(
    private readonly zk: Zk,
    private readonly store: TaskStore,
    private readonly writer: PlanWriter,
  ) {}

  /** The `call`-th spawn of the task `claim` holds: the paths of its tasks, in order. */
  async spawn(claim: Claim, call: number, entries: readonly TaskToAdd[]): Promise<string[]> {
    if (!Array.isArray(entries))
      throw new InvalidArgumentError('tasks', 'expected an array of { task, args?, key? }');
    if (entries.length > MAX_SPAWNED_TASKS)
      throw new InvalidArgumentError(
        'tasks',
        `at most ${MAX_SPAWNED_TASKS} tasks per ctx.spawn call, got ${entries.length}: spawn them in several calls`,
      );
    // Checked before anything is written: a bad entry leaves no record behind.
    const fns = this.writer.checkTasks(claim.plan, entries);
    if (entries.length === 0) return [];
    assertRecordFits(claim.plan, fns);
    assertRecordableNames(fns);
    // Spawned tasks keep their results: they may finish before the task that spawned them hands
    // over (or before its next run does, after a crash), and its continuation still takes them.
    const kept = entries.map((entry) => ({
      ...entry,
      options: { ...entry.options, keepResult: true },
    }));
    return await this.recorded(claim, { path: spawnRecordPath(claim.task, call), call }, kept, fns);
  }

  /** Checks tasks as a spawn or hand-over of the claimed task would, before anything is written (InvalidArgumentError). */
  check(claim: Claim, entries: readonly TaskToAdd[]): void {
    this.writer.checkTasks(claim.plan, entries);
  }

  /**
   * `ctx.continueWith`: makes the one task that continues the claimed one, linked to a new input
   * of the claimed task (`dep-<link>`, created with the batch, before its commit), so that the
   * claimed task, once given back, waits for the continuation's result instead of running again.
   * Resolves the continuation's path; the same one in every run of the task.
   */
  async handOver(claim: Claim, entry: TaskToAdd): Promise<string> {
    const fns = this.writer.checkTasks(claim.plan, [entry]);
    assertRecordableNames(fns);
    const [continuation] = await this.recorded(
      claim,
      { path: childPath(claim.task, CONTINUATION), call: 'continuation' },
      [entry],
      fns,
    );
    return continuation as string;
  }

  /**
   * The tasks of one recorded call: made by this run, or by an earlier one whose record is found.
   * A hand-over's record also names the serial of its link (a continuation serial, one lower each
   * time a run takes over a dead run's uncommitted batch, whose link input may still be there).
   */
  private async recorded(
    claim: Claim,
    { path, call }: RecordedCall,
    entries: readonly TaskToAdd[],
    fns: readonly string[],
  ): Promise<string[]> {
    const mine = `${claim.session.id}-spawn-${++this.batchSerial}`;
    const handOver = call === 'continuation';
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const fence = fenceOf(claim);
      const stored = await this.readRecord(path);
      if (stored === undefined) {
        const first: SpawnRecord = handOver
          ? { batch: mine, fns, link: CONTINUED_SERIAL }
          : { batch: mine, fns };
        // The plan's mark first: a plan with a record under one of its tasks always has it.
        await this.zk.createIfAbsent(childPath(claim.plan, SPAWNED), null, 'persistent', fence);
        await this.zk.createIfAbsent(path, encodeSpawnRecord(first, path), 'persistent', fence);
        continue; // read what is there now: ours, or a record another run made first
      }
      const { record, version } = stored;
      if (record.fns.length !== fns.length || record.fns.some((fn, index) => fn !== fns[index]))
        throw new SpawnMismatchError(claim.task, call, record.fns, fns);
      if (handOver && record.link === undefined)
        throw new MalformedNodeError(path, 'a hand-over record without its link serial');
      if (record.tasks !== undefined) {
        await this.completeCommitted(record.tasks, fence);
        return [...record.tasks];
      }
      if (record.batch === mine)
        return await this.writeBatch(claim, path, record, version, entries);
      const committed = await this.committedTasks(claim.plan, record.batch);
      const next: SpawnRecord =
        committed !== undefined
          ? { ...record, tasks: committed }
          : record.link === undefined
            ? { batch: mine, fns }
            : { batch: mine, fns, link: record.link - 1 };
      if (!(await this.replaceRecord(path, next, version, fence))) continue;
      if (committed !== undefined) {
        await this.completeCommitted(committed, fence);
        return committed;
      }
      // What the dead batch made is deleted now rather than at the workers' next full scan.
      await this.writer.abandonBatch(claim.plan, record.batch);
    }
    throw new OwnershipLostError(
      claim.task,
      `its spawn record ${path} kept changing while the task was being run (${MAX_ROUNDS} looks)`,
    );
  }

  /**
   * Step 2 and 3: the batch, committed by its marker; the record gets the paths before anything
   * runs. A hand-over's batch also links its task to the claimed task's input `dep-<link>`.
   */
  private async writeBatch(
    claim: Claim,
    path: string,
    record: SpawnRecord,
    version: number,
    entries: readonly TaskToAdd[],
  ): Promise<string[]> {
    const { batch, link } = record;
    // From the commit on, the batch is completed whatever becomes of the claim: fenced by its
    // session only, not by its signal. A run that gave the task up after the commit would
    // otherwise leave a hand-over's continuation unready, and its task waiting for ever.
    const sessionFence = { fence: claim.session };
    try {
      return await this.writer.addTasks(claim.plan, entries, {
        claimSession: claim.session,
        spawn: {
          batch,
          ...(link === undefined
            ? {}
            : { continues: childPath(claim.task, `${DEP_PREFIX}${link}`) }),
          committed: async (paths) => {
            const recorded = await this.replaceRecord(
              path,
              { ...record, tasks: paths },
              version,
              sessionFence,
            );
            if (!recorded)
              throw new OwnershipLostError(
                claim.task,
                `its spawn record ${path} was changed by another run while this one wrote its batch`,
              );
          },
        },
      });
    } catch (error) {
      this.completeInBackground(claim, path, batch);
      throw error;
    }
  }

  /**
   * After a batch write that failed: if the batch committed, it is completed (its record gets the
   * paths, its tasks are made ready), tried again a few times while the claim's session lives.
   * Nothing else would: the workers complete a committed batch only once its builder's session is
   * gone, and a hand-over's task, waiting for its continuation, is never run again to do it.
   */
  private completeInBackground(claim: Claim, path: string, batch: string): void {
    const fence = { fence: claim.session };
    const attempt = async (): Promise<void> => {
      const tasks = await this.committedTasks(claim.plan, batch);
      if (tasks === undefined) return; // not committed: its tasks are deleted, and the next run makes them
      const stored = await this.readRecord(path);
      if (stored?.record.batch === batch && stored.record.tasks === undefined)
        await this.replaceRecord(path, { ...stored.record, tasks }, stored.version, fence);
      await this.completeCommitted(tasks, fence);
    };
    const retry = (left: number): void => {
      if (left === 0 || !this.zk.isCurrent(claim.session)) return;
      setTimeout(() => void attempt().catch(() => retry(left - 1)), COMPLETION_RETRY_MS).unref();
    };
    void attempt().catch(() => retry(COMPLETION_RETRIES));
  }

  /** The task's hand-over record, if an earlier run made one. */
  async readHandOver(task: string): Promise<SpawnRecord | undefined> {
    return (await this.readRecord(childPath(task, CONTINUATION)))?.record;
  }

  private async readRecord(
    path: string,
  ): Promise<{ readonly record: SpawnRecord; readonly version: number } | undefined> {
    const node = await this.zk.tryGetData(path);
    if (node === undefined) return undefined;
    return { record: decodeSpawnRecord(path, node.data), version: node.stat.version };
  }

  /**
   * A versioned write of the record: false when it changed meanwhile. A resend after a lost reply
   * finds the version moved on by its own first try; the caller's next look then finds its record.
   */
  private async replaceRecord(
    path: string,
    record: SpawnRecord,
    version: number,
    fence: WriteOptions,
  ): Promise<boolean> {
    try {
      await this.zk.setData(path, encodeSpawnRecord(record, path), version, fence);
      return true;
    } catch (error) {
      if (isZkError(error, 'BAD_VERSION')) return false;
      throw error;
    }
  }

  /** The tasks a committed batch made (its marker holds them), or undefined when it never committed. */
  async committedTasks(plan: string, batch: string): Promise<string[] | undefined> {
    const markerPath = childPath(plan, batchMarkerName(batch));
    const marker = await this.zk.tryGetData(markerPath);
    if (marker === undefined) return undefined;
    const value = decodeValue(markerPath, marker.data);
    const tasks =
      typeof value === 'object' && value !== null
        ? (value as { tasks?: unknown }).tasks
        : undefined;
    if (!isTaskList(tasks, plan)) return undefined; // not a spawn's marker: its tasks are not known here
    return tasks;
  }

  /**
   * Makes a committed batch's tasks ready and indexes the runnable ones, as its writer would have
   * (or as settleOrphan does for a dead builder's). A task already gone has run and finished.
   */
  private async completeCommitted(tasks: readonly string[], fence: WriteOptions): Promise<void> {
    await Promise.all(
      tasks.map(async (task) => {
        try {
          await this.store.makeReady(task, fence);
        } catch (error) {
          if (isZkError(error, 'NO_NODE')) return;
          throw error;
        }
        const listing = await this.store.reads.inspectTask(task);
        if (
          listing !== undefined &&
          classifyTask(listing.children, listing.childVersion) === 'runnable'
        )
          await this.store.markRunnable(task, fence);
      }),
    );
  }
}

/**
 * Refuses a call whose record would not fit in one znode once it names its tasks (their paths are
 * as long as the plan's path makes them), before anything is written.
 */
function assertRecordFits(plan: string, fns: readonly string[]): void {
  const longest = childPath(plan, `${TASK_PREFIX}${'9'.repeat(10)}`);
  const record = {
    batch: 'b'.repeat(64),
    fns,
    tasks: fns.map(() => longest),
    link: CONTINUED_SERIAL,
  };
  const bytes = encodeValue(record, 'spawn record', plan, Number.POSITIVE_INFINITY).length;
  if (bytes <= MAX_SPAWN_RECORD_BYTES) return;
  const fit = Math.max(1, Math.floor((fns.length * MAX_SPAWN_RECORD_BYTES) / bytes));
  throw new InvalidArgumentError(
    'tasks',
    `a record of these ${fns.length} tasks would take ${bytes} bytes under ${plan}, more than the ${MAX_SPAWN_RECORD_BYTES} one znode holds: spawn them in calls of at most ${fit}`,
  );
}

/** Refuses a function name longer than a record keeps (a record read back with one is malformed). */
function assertRecordableNames(fns: readonly string[]): void {
  const long = fns.find((fn) => fn.length > MAX_RECORDED_FN_CHARS);
  if (long !== undefined)
    throw new InvalidArgumentError(
      'task',
      `function names of spawned tasks have at most ${MAX_RECORDED_FN_CHARS} characters, got one of ${long.length}`,
    );
}

/** The claim's fence for a write, or OwnershipLostError once the worker gave the task up. */
function fenceOf(claim: Claim): WriteOptions {
  if (claim.progress.phase === 'released' || claim.signal.aborted)
    throw new OwnershipLostError(claim.task, 'the worker gave it up while it was spawning tasks');
  return { fence: claim.session };
}
