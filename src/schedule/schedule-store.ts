/**
 * ZooKeeper I/O of schedules (the layout is in src/zk/layout.ts): definitions, cursors, tick
 * records and tick locks. Every write here is a create-if-absent, a versioned set or a delete,
 * so each is safe to repeat; those of a firing are fenced by the session that holds its lock.
 */
import { isZkError } from '../errors/zk-error.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import { isPlanName, scheduleNodes, tickNodes } from '../zk/layout.js';
import type { WriteOptions, ZkSession } from '../zk/zk-client-types.js';
import type { Watcher } from '../zk/zk-client-types.js';
import type { ZkStat } from '../zk/native-client.js';
import { TokenLock } from '../zk/recipes/token-lock.js';
import type { Zk } from '../zk/zk.js';
import {
  MAX_CATCH_UP_LIMIT,
  MAX_DEFINITION_BYTES,
  decodeStoredSchedule,
  type StoredSchedule,
} from './schedule-definition.js';
import { MAX_ON_TIME_TICKS } from './tick-decisions.js';
import {
  cronTickId,
  parseTickRecord,
  sortTickIds,
  timeOfTickId,
  type TickRecord,
} from './tick-record.js';
import { MalformedNodeError } from '../errors/task-errors.js';

/**
 * The newest tick handled, how many missed ticks were passed over so far, and the ticks the last
 * decision fires (`fire`): their records are created after the decision lands, by whoever gets there.
 */
export interface ScheduleCursor {
  readonly tick: number | undefined;
  readonly skipped: number;
  readonly fire: readonly number[];
  /**
   * The schedule node (its czxid) the decision was made for. A decision of a scheduler that still
   * acted on a schedule removed and put again since can land on the new one's cursor (at the same
   * version); it then names another node, and counts for nothing.
   */
  readonly scheduleNode?: number;
}

/** The most ticks one decision names: every missed tick `catchUpLimit` allows, and the on-time ones. */
const MAX_TICKS_PER_DECISION = MAX_CATCH_UP_LIMIT + MAX_ON_TIME_TICKS;

/** A node as read before a write decided on it: the version to write over, and the node it is (its creation zxid). */
export interface NodeRead {
  readonly version: number;
  readonly czxid: number;
}

/** Definitions validated by one store, kept by node: at most this many (then it starts again). */
const MAX_VALIDATED = 1_000;

export class ScheduleStore {
  /**
   * The last definition validated per schedule, with the node version it was read at: a node's
   * value at a version never changes (a write moves the version, a delete and create the czxid), so
   * the same version is not decoded and validated again at every pass and tick.
   */
  private readonly validated = new Map<
    string,
    { readonly czxid: number; readonly version: number; readonly schedule: StoredSchedule }
  >();

  constructor(
    private readonly zk: Zk,
    readonly parent: string,
  ) {}

  /** The schedules' names, sorted; `watcher` fires once when one is put or removed. */
  async names(watcher?: Watcher): Promise<string[]> {
    await this.zk.ensurePath(this.parent);
    const listing = await this.zk.tryGetChildren(this.parent, watcher);
    return (listing?.children ?? []).filter(isPlanName).sort();
  }

  /**
   * The schedule and its node as read; undefined when there is none. `watcher` fires once when it
   * changes or goes. A node that is not a valid schedule (validated in full, as `put` does) is
   * refused: MalformedNodeError naming it and what to do (the watch is set all the same).
   */
  async read(
    name: string,
    watcher?: Watcher,
  ): Promise<({ readonly schedule: StoredSchedule } & NodeRead) | undefined> {
    const { node } = scheduleNodes(this.parent, name);
    let read: { stat: ZkStat; data: Buffer | null };
    try {
      read = await this.zk.getData(node, watcher);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined;
      throw error;
    }
    const { version, czxid } = read.stat;
    const known = this.validated.get(name);
    if (known !== undefined && known.czxid === czxid && known.version === version)
      return { schedule: known.schedule, version, czxid };
    const schedule = decodeStoredSchedule(node, read.data); // refused: not kept, so refused again at every read
    if (this.validated.size >= MAX_VALIDATED) this.validated.clear();
    this.validated.set(name, { czxid, version, schedule });
    return { schedule, version, czxid };
  }

  /** The schedule's node as read, whatever it holds; undefined when there is none. */
  async node(name: string): Promise<NodeRead | undefined> {
    const stat = await this.zk.exists(scheduleNodes(this.parent, name).node);
    return stat === undefined ? undefined : { version: stat.version, czxid: stat.czxid };
  }

  /**
   * Creates the schedule (`read` undefined; false when it exists by then) or replaces the node read
   * (false when it changed, or was removed and perhaps put again, meanwhile): the caller reads again
   * and retries.
   */
  async write(schedule: StoredSchedule, read: NodeRead | undefined): Promise<boolean> {
    const { node, ticks } = scheduleNodes(this.parent, schedule.name);
    // One node: a definition (with its spec) must fit in ZooKeeper's 1 MB, which ValueTooLargeError says before anything is written.
    const encoded = encodeValue(
      schedule,
      `schedule "${schedule.name}"`,
      node,
      MAX_DEFINITION_BYTES,
    );
    await this.zk.ensurePath(this.parent);
    try {
      if (read === undefined) {
        if (!(await this.zk.createIfAbsent(node, encoded))) return false;
      } else await this.zk.setData(node, encoded, read.version, { incarnation: read.czxid });
    } catch (error) {
      if (isZkError(error, 'BAD_VERSION', 'NO_NODE', 'NODE_REPLACED')) return false;
      throw error;
    }
    await this.zk.createIfAbsent(ticks);
    return true;
  }

  /**
   * Removes the schedule and its tick records (repeatable; its plans stay). The definition is marked
   * `removing` first: a scheduler that read the schedule before may still make a record the delete
   * below has just removed (its records are made on its own read of the cursor), but it reads the
   * definition again under the tick's lock, sees the mark (written before anything was deleted), and
   * fires nothing. True when this call found the schedule (or what a removal cut short left of it).
   */
  async remove(name: string): Promise<boolean> {
    const { node } = scheduleNodes(this.parent, name);
    for (;;) {
      const read = await this.zk.tryGetData(node);
      if (read === undefined) return false;
      let stored: StoredSchedule | undefined;
      try {
        stored = decodeStoredSchedule(node, read.data);
      } catch {
        stored = undefined; // not a schedule zk-plan can read: nothing fires from it anyway
      }
      if (stored === undefined || stored.removing === true) break;
      const marked = encodeValue(
        { ...stored, removing: true },
        `schedule "${name}"`,
        node,
        MAX_DEFINITION_BYTES,
      );
      try {
        await this.zk.setData(node, marked, read.stat.version, { incarnation: read.stat.czxid });
        break;
      } catch (error) {
        if (isZkError(error, 'NO_NODE', 'NODE_REPLACED')) return true; // removed meanwhile, by another call
        if (!isZkError(error, 'BAD_VERSION')) throw error; // changed meanwhile: mark what it is now
      }
    }
    await this.zk.deleteRecursive(node);
    return true;
  }

  /** The cursor and its node as read (`node` undefined before the first decision). */
  async cursor(name: string): Promise<ScheduleCursor & { readonly node: NodeRead | undefined }> {
    const { cursor } = scheduleNodes(this.parent, name);
    const node = await this.zk.tryGetData(cursor);
    if (node === undefined) return { tick: undefined, skipped: 0, fire: [], node: undefined };
    const value = decodeValue(cursor, node.data) as Partial<ScheduleCursor> | null;
    // Every tick it names gets a record each pass: at most what one decision fires, each a time in ms.
    if (
      typeof value !== 'object' ||
      value === null ||
      (value.tick !== undefined && !Number.isSafeInteger(value.tick)) ||
      !Number.isSafeInteger(value.skipped) ||
      (value.fire !== undefined &&
        (!Array.isArray(value.fire) ||
          value.fire.length > MAX_TICKS_PER_DECISION ||
          !value.fire.every((tick) => Number.isSafeInteger(tick) && tick >= 0))) ||
      (value.scheduleNode !== undefined && typeof value.scheduleNode !== 'number')
    )
      throw new MalformedNodeError(
        cursor,
        `expected { tick, skipped, fire } naming at most ${MAX_TICKS_PER_DECISION} ticks (times in ms): no tick of the schedule fires until it is removed (zk-plan schedule rm ${name} --schedules ${this.parent}) and put again`,
      );
    return {
      tick: value.tick,
      skipped: value.skipped as number,
      fire: value.fire ?? [],
      ...(value.scheduleNode === undefined ? {} : { scheduleNode: value.scheduleNode }),
      node: { version: node.stat.version, czxid: node.stat.czxid },
    };
  }

  /**
   * Commits a decision: the cursor moves from the node read to `tick`, naming the ticks that fire.
   * A versioned write, so of two schedulers deciding from the same cursor only one lands (the other
   * reads again), and one that names its node, so a resend never lands on the cursor of a schedule
   * removed and put again since; false when it did not land.
   */
  async commitDecision(
    name: string,
    read: { readonly node: NodeRead | undefined; readonly skipped: number },
    tick: number,
    fire: readonly number[],
    skipped: number,
    scheduleNode: number,
  ): Promise<boolean> {
    const { cursor } = scheduleNodes(this.parent, name);
    const value = encodeValue(
      { tick, skipped: read.skipped + skipped, fire, scheduleNode, at: new Date().toISOString() },
      'schedule cursor',
      cursor,
    );
    try {
      if (read.node === undefined) return await this.zk.createIfAbsent(cursor, value);
      await this.zk.setData(cursor, value, read.node.version, { incarnation: read.node.czxid });
      return true;
    } catch (error) {
      if (isZkError(error, 'NO_NODE', 'BAD_VERSION', 'NODE_REPLACED')) return false; // removed, or decided by another
      throw error;
    }
  }

  /** The schedule's tick ids, oldest first. */
  async tickIds(name: string): Promise<string[]> {
    return sortTickIds(
      (await this.zk.tryGetChildren(scheduleNodes(this.parent, name).ticks))?.children ?? [],
    );
  }

  /** The tick's record; `sync` first to see this session's own write whose reply was lost (the server may lag). */
  async readTick(
    name: string,
    id: string,
    options: { readonly sync?: boolean } = {},
  ): Promise<({ readonly record: TickRecord } & NodeRead) | undefined> {
    const { record } = tickNodes(this.parent, name, id);
    if (options.sync === true) await this.zk.sync(record);
    const node = await this.zk.tryGetData(record);
    return node === undefined
      ? undefined
      : {
          record: parseTickRecord(record, decodeValue(record, node.data)),
          version: node.stat.version,
          czxid: node.stat.czxid,
        };
  }

  /** Creates the tick's record unless it exists (whoever created it first decided what the tick is). */
  async createTick(
    name: string,
    id: string,
    record: TickRecord,
    options: WriteOptions = {},
  ): Promise<boolean> {
    const path = tickNodes(this.parent, name, id).record;
    const encoded = encodeValue(record, 'tick record', path);
    try {
      return await this.zk.createIfAbsent(path, encoded, 'persistent', options);
    } catch (error) {
      if (!isZkError(error, 'NO_NODE')) throw error;
    }
    // No `ticks` yet (a put cut short after the schedule's node): make it, unless the schedule is gone.
    try {
      await this.zk.createIfAbsent(
        scheduleNodes(this.parent, name).ticks,
        null,
        'persistent',
        options,
      );
      return await this.zk.createIfAbsent(path, encoded, 'persistent', options);
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return false;
      throw error;
    }
  }

  /** Replaces the record at `version` of the node read (`czxid`); throws BAD_VERSION when someone else changed it. */
  async updateTick(
    name: string,
    id: string,
    record: TickRecord,
    read: NodeRead,
    options: WriteOptions,
  ): Promise<ZkStat> {
    const path = tickNodes(this.parent, name, id).record;
    return await this.zk.setData(path, encodeValue(record, 'tick record', path), read.version, {
      ...options,
      incarnation: read.czxid,
    });
  }

  /**
   * Takes the tick's lock for one firing (ephemeral, so it goes with a process that dies; its
   * writes fenced by `session`): the lock when it is this firing's now (also when a reply was lost
   * and it already was), undefined when another firing holds it, of this process or another.
   */
  async lock(
    name: string,
    id: string,
    session: ZkSession,
    by: string,
  ): Promise<TokenLock | undefined> {
    const lock = new TokenLock(this.zk, tickNodes(this.parent, name, id).lock, session, {
      holder: by,
    });
    try {
      return (await lock.take()) === 'taken' ? lock : undefined;
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return undefined; // the record was pruned or the schedule removed
      throw error;
    }
  }

  /**
   * Deletes the final records among `prunable` that are beyond the newest `keep` of `ids`, at or
   * before the cursor and not named by it nor by a backfill (`backfillTicks`: every pass makes the
   * records the cursor and the backfills name if they are absent), unless `stillNeeded` says a
   * record is.
   */
  async prune(
    name: string,
    ids: readonly string[],
    prunable: readonly string[],
    keep: number,
    cursor: ScheduleCursor,
    backfillTicks: ReadonlySet<string>,
    stillNeeded: (record: TickRecord) => Promise<boolean>,
  ): Promise<number> {
    const cursorTick = cursor.tick;
    if (cursorTick === undefined) return 0;
    const named = new Set([...cursor.fire.map(cronTickId), ...backfillTicks]);
    const old = new Set(ids.slice(0, Math.max(0, ids.length - keep)));
    const candidates = prunable.filter(
      (id) => old.has(id) && !named.has(id) && (timeOfTickId(id) as number) <= cursorTick,
    );
    let pruned = 0;
    for (const id of candidates) {
      const tick = await this.readTick(name, id);
      if (tick === undefined || tick.record.state === 'pending' || (await stillNeeded(tick.record)))
        continue;
      await this.zk.deleteRecursive(tickNodes(this.parent, name, id).record);
      pruned += 1;
    }
    return pruned;
  }
}
