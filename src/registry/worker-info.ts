/**
 * What a worker process tells the cluster about itself in its registry node
 * (`<parent>/zk-plan-workers/<id>`, src/zk/layout.ts). Pure: building and reading the record.
 */
import { decodeValue, encodeValue } from '../serialization/codec.js';

/**
 * One live worker pool, as `listWorkers` and `zk-plan workers` show it.
 *
 * @category Workers
 */
export interface WorkerInfo {
  /** The pool's worker id (its loops are `<id>/1`, `<id>/2`, …). */
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  /** zk-plan's version in that process. */
  readonly version: string;
  /** The functions it can run (empty: it takes any task and fails those it lacks). */
  readonly functions: readonly string[];
  /** Its worker loops. */
  readonly loops: number;
  /** The tasks it runs, as of `updatedAt` (refreshed at most once a second while they change). */
  readonly running: readonly string[];
  readonly startedAt: Date;
  readonly updatedAt: Date;
  /** Runs inline tasks. */
  readonly allowInline: boolean;
  /** Runs shell tasks (`call('shell', …)`); false in records of versions before it. */
  readonly allowShell: boolean;
  /** The ZooKeeper session that keeps its node (the node goes when that session ends). */
  readonly sessionId: string;
  /** That session's timeout: a silent worker's node and tasks stay this long after it last spoke. */
  readonly sessionTimeoutMs: number;
}

/** How often a live pool rewrites its record even when nothing changed (`updatedAt` then tells a frozen or cut-off worker). */
export const HEARTBEAT_MS = 5_000;

/** True when the record has not been rewritten for three heartbeats: its worker is frozen or cut off from ZooKeeper. */
export function isStale(info: WorkerInfo, now: number): boolean {
  return now - info.updatedAt.getTime() > 3 * HEARTBEAT_MS;
}

export function encodeWorkerInfo(info: WorkerInfo, path: string): Buffer {
  return encodeValue(info, 'worker registration', path);
}

/** A registry node's record; undefined when it is not one zk-plan wrote (listWorkers skips it). */
export function parseWorkerInfo(path: string, data: Buffer | null): WorkerInfo | undefined {
  let value: unknown;
  try {
    value = data?.length ? decodeValue(path, data) : undefined;
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const strings = (list: unknown): string[] | undefined =>
    Array.isArray(list) && list.every((item) => typeof item === 'string')
      ? (list as string[])
      : undefined;
  const functions = strings(record['functions']);
  const running = strings(record['running']);
  if (
    typeof record['id'] !== 'string' ||
    typeof record['host'] !== 'string' ||
    typeof record['pid'] !== 'number' ||
    typeof record['version'] !== 'string' ||
    typeof record['loops'] !== 'number' ||
    typeof record['sessionId'] !== 'string' ||
    typeof record['sessionTimeoutMs'] !== 'number' ||
    !(record['startedAt'] instanceof Date) ||
    !(record['updatedAt'] instanceof Date) ||
    functions === undefined ||
    running === undefined
  ) {
    return undefined;
  }
  return {
    id: record['id'],
    host: record['host'],
    pid: record['pid'],
    version: record['version'],
    functions,
    loops: record['loops'],
    running,
    startedAt: record['startedAt'],
    updatedAt: record['updatedAt'],
    allowInline: record['allowInline'] === true,
    allowShell: record['allowShell'] === true,
    sessionId: record['sessionId'],
    sessionTimeoutMs: record['sessionTimeoutMs'],
  };
}
