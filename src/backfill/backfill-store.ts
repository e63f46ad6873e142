/**
 * ZooKeeper I/O of backfill records (`<schedule>/backfills/<id>`, declared in src/zk/layout.ts).
 * Each write is a create-if-absent, a versioned set or a delete, so each is safe to repeat.
 */
import { isZkError } from '../errors/zk-error.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import { backfillNode, scheduleNodes } from '../zk/layout.js';
import type { WriteOptions } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import type { NodeRead } from '../schedule/schedule-store.js';
import { isBackfillId, parseBackfillRecord, type BackfillRecord } from './backfill-record.js';

/** A backfill's record and its node as read. */
export type BackfillRead = { readonly id: string; readonly record: BackfillRecord } & NodeRead;

export class BackfillStore {
  constructor(
    private readonly zk: Zk,
    readonly parent: string,
  ) {}

  /** The schedule's backfill ids, oldest first (other names left out). */
  async ids(name: string): Promise<string[]> {
    const listing = await this.zk.tryGetChildren(scheduleNodes(this.parent, name).backfills);
    return (listing?.children ?? []).filter(isBackfillId).sort();
  }

  /** The backfill's record, checked in full (MalformedNodeError otherwise); undefined when absent. */
  async read(name: string, id: string): Promise<BackfillRead | undefined> {
    const path = backfillNode(this.parent, name, id);
    const node = await this.zk.tryGetData(path);
    if (node === undefined) return undefined;
    return {
      id,
      record: parseBackfillRecord(path, decodeValue(path, node.data)),
      version: node.stat.version,
      czxid: node.stat.czxid,
    };
  }

  /**
   * Creates the record (the id is the caller's own, so a create whose reply was lost and that is
   * found on a repeat counts as made); false when the schedule's node is gone.
   */
  async create(name: string, id: string, record: BackfillRecord): Promise<boolean> {
    const path = backfillNode(this.parent, name, id);
    const encoded = encodeValue(record, 'backfill record', path);
    try {
      await this.zk.createIfAbsent(scheduleNodes(this.parent, name).backfills);
      await this.zk.createIfAbsent(path, encoded);
      return true;
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return false;
      throw error;
    }
  }

  /**
   * Writes over the record read (its version, its node); false when another write came first (or
   * the record went): the caller reads again. A resend after a lost reply is answered BAD_VERSION
   * though the first try landed; the next read shows it, so false is safe either way.
   */
  async update(
    name: string,
    read: BackfillRead,
    record: BackfillRecord,
    options: WriteOptions = {},
  ): Promise<boolean> {
    const path = backfillNode(this.parent, name, read.id);
    try {
      await this.zk.setData(path, encodeValue(record, 'backfill record', path), read.version, {
        ...options,
        incarnation: read.czxid,
      });
      return true;
    } catch (error) {
      if (isZkError(error, 'BAD_VERSION', 'NO_NODE', 'NODE_REPLACED')) return false;
      throw error;
    }
  }

  /** Deletes the record if it is still the one read. */
  async delete(name: string, read: BackfillRead): Promise<void> {
    try {
      await this.zk.deleteIfPresent(backfillNode(this.parent, name, read.id), read.version);
    } catch (error) {
      if (!isZkError(error, 'BAD_VERSION')) throw error; // moved on meanwhile: kept
    }
  }
}
