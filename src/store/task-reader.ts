import { MalformedNodeError } from '../errors/task-errors.js';
import { parseDefinition, type TaskDefinition } from '../exec/task-spec.js';
import { decodeValue } from '../serialization/codec.js';
import { planSettingsFrom, type PlanSettings } from '../config/plan-options.js';
import { parseTaskFailure, type AttemptRecord, type TaskFailure } from './failure-policy.js';
import { parseWaitingRecord, type WaitingRecord } from './waiting-record.js';
import { parseHistoryRecord, type TaskHistoryRecord } from './task-history.js';
import { parseFailedTries } from './task-tries.js';
import {
  ARG_PREFIX,
  ATTEMPTS,
  WAITING,
  CONTROL,
  DEP_PREFIX,
  FAILED,
  HISTORY,
  OWNER,
  PROV_PREFIX,
  READY,
  RESULT,
  TASK_PREFIX,
  childPath,
  hasSequentialName,
  keyClaimPath,
  sortBySerial,
  sortPlanNames,
} from '../zk/layout.js';
import { taskKeyProblem } from '../plan/names.js';
import { parseKeyClaim } from './key-claim.js';
import type { Zk } from '../zk/zk.js';
import { PrefetchError, type PrefetchedInputs } from './claim-prefetch.js';
import { readValue } from '../zk/chunked-value.js';
import { DEFAULTS } from '../config/defaults.js';

/** What the owner node records about its holder. */
/** A node as read before a write decided on it: the version to write over, and the node it is (its creation zxid). */
export interface MarkerRead {
  readonly version: number;
  readonly czxid: number;
}

export interface OwnerRecord {
  readonly workerId: string;
  readonly claimedAt: Date;
}

/** Stored in a task's definition by addTasks: the session that added it, and its batch. */
export interface BuilderStamp {
  readonly builder: string;
  readonly batch: string;
}

/** What readStamp tells of a task: its builder stamp, and its key when it has one (whose claim goes with an unfinished batch). */
export interface TaskStamp extends BuilderStamp {
  readonly key?: string;
}

/** A task node's children and child version, as read in one call. */
export interface TaskListing {
  readonly children: string[];
  readonly childVersion: number;
}

/** Plans whose settings a process remembers (least recently used go first); settings never change after createPlan. */
const SETTINGS_CACHE_SIZE = 1_000;

/** The ZooKeeper reads a worker makes on plans and tasks (a TaskStore holds one as `reads`, beside its writes). */
export class TaskReader {
  /** No watch stands behind an entry, so dropping one costs a read, never a leak. */
  private readonly settingsCache = new Map<string, PlanSettings>();

  /** Which plans' settings to keep: those followed by something that calls forgetPlan when they go. @defaultValue none */
  remembers: (plan: string) => boolean = () => false;

  /**
   * @param valueLimit The largest stored value (encoded bytes) this reader reads back when no other
   * limit is given: a chunked value whose header claims more is refused (MalformedNodeError, see
   * src/zk/chunked-value.ts). ZkPlan passes its `maxResultBytes`; a worker passes its own.
   */
  constructor(
    private readonly zk: Zk,
    readonly valueLimit: number = DEFAULTS.maxResultBytes,
  ) {}

  /** The stored value's encoded bytes at `path` (chunks joined); undefined when absent. Refuses a value over `maxBytes`. */
  async readStoredValue(
    path: string,
    maxBytes: number = this.valueLimit,
  ): Promise<Buffer | undefined> {
    return await readValue(this.zk, path, { maxBytes });
  }

  /**
   * Resolves when the plan and the task were made by this cluster, as far as their ACLs tell
   * (see Zk.assertOwnAcl); rejects with ForeignAclError before a task planted by an outsider runs.
   */
  async assertOwnAcls(
    plan: string,
    task: string,
    prefetchedTaskAcl?: Promise<void | PrefetchError>,
  ): Promise<void> {
    const checkTask = async (): Promise<void> => {
      // A prefetched check that failed is made again: it throws what it threw, or passes after a connection loss.
      if ((await prefetchedTaskAcl) instanceof PrefetchError || prefetchedTaskAcl === undefined)
        await this.zk.assertOwnAcl(task, 'the task');
    };
    await Promise.all([this.zk.assertOwnAcl(plan, 'the plan'), checkTask()]);
  }

  /** The plan's failure policy and retry policy (read once per plan, then remembered). */
  async readPlanSettings(plan: string): Promise<PlanSettings> {
    const cached = this.settingsCache.get(plan);
    if (cached) {
      this.settingsCache.delete(plan);
      this.settingsCache.set(plan, cached);
      return cached;
    }
    const node = await this.zk.tryGetData(plan);
    let stored: unknown;
    try {
      stored = node?.data?.length ? decodeValue(plan, node.data) : undefined;
    } catch {
      stored = undefined; // a plan node written by another tool with a value of its own: defaults apply
    }
    const settings = planSettingsFrom(stored);
    // Remembered only for plans someone forgets again when they are deleted (the workers' dispatcher);
    // checked after the read, since the plan may have been deleted while it was under way.
    if (node === undefined || !this.remembers(plan)) return settings;
    this.settingsCache.set(plan, settings);
    for (const oldest of this.settingsCache.keys()) {
      if (this.settingsCache.size <= SETTINGS_CACHE_SIZE) break;
      this.settingsCache.delete(oldest);
    }
    return settings;
  }

  /** Forgets what is remembered of a plan that is gone. */
  forgetPlan(plan: string): void {
    this.settingsCache.delete(plan);
  }

  /** How many plans' settings are remembered (for leak checks). */
  get rememberedPlans(): number {
    return this.settingsCache.size;
  }

  /** The task's record of its function's "not yet" (`ctx.notYet`), if it said so. */
  async readWaiting(task: string): Promise<WaitingRecord | undefined> {
    const path = childPath(task, WAITING);
    const node = await this.zk.tryGetData(path);
    return node === undefined ? undefined : parseWaitingRecord(path, decodeValue(path, node.data));
  }

  /** The task's record of failed tries, if it has failed before. */
  async readAttempts(task: string): Promise<AttemptRecord | undefined> {
    const node = await this.zk.tryGetData(childPath(task, ATTEMPTS));
    if (node === undefined) return undefined;
    const value = decodeValue(
      childPath(task, ATTEMPTS),
      node.data,
    ) as Partial<AttemptRecord> | null;
    const lastFailure = parseTaskFailure(value?.lastFailure);
    if (
      typeof value?.failures !== 'number' ||
      !(value.notBefore instanceof Date) ||
      lastFailure === undefined
    ) {
      throw new MalformedNodeError(
        childPath(task, ATTEMPTS),
        'expected { failures, notBefore, lastFailure }',
      );
    }
    // A list that is not one zk-plan writes is left out: the count and the last failure still hold.
    const tries = parseFailedTries(value.tries);
    return {
      failures: value.failures,
      notBefore: value.notBefore,
      lastFailure,
      ...(tries === undefined ? {} : { tries }),
    };
  }

  /** The task's failure for good (`failed`); undefined when it has none, or one that is not a failure zk-plan writes. */
  async readFailure(task: string): Promise<TaskFailure | undefined> {
    const path = childPath(task, FAILED);
    const node = await this.zk.tryGetData(path);
    return node === undefined ? undefined : parseTaskFailure(decodeValue(path, node.data));
  }

  /** Plans under `parent`, oldest first; undefined when `parent` does not exist. */
  async listPlans(parent: string): Promise<string[] | undefined> {
    const listing = await this.zk.tryGetChildren(parent);
    if (listing === undefined) return undefined;
    return sortPlanNames(listing.children).map((name) => childPath(parent, name));
  }

  /** True when the plan carries the `failed` marker. */
  async isPlanFailed(plan: string): Promise<boolean> {
    return (await this.zk.exists(childPath(plan, FAILED))) !== undefined;
  }

  async isReady(path: string): Promise<boolean> {
    return (await this.zk.exists(childPath(path, READY))) !== undefined;
  }

  /**
   * The plan's history records by task path (see src/store/task-history.ts); a node that holds no
   * record zk-plan writes is left out. Each record is checked for its size before it is decoded.
   */
  async readHistory(plan: string): Promise<Map<string, TaskHistoryRecord>> {
    const node = childPath(plan, HISTORY);
    const names = sortBySerial((await this.zk.tryGetChildren(node))?.children ?? [], TASK_PREFIX);
    const records = await Promise.all(
      names.map(async (name) => {
        const stored = await this.zk.tryGetData(childPath(node, name));
        return stored === undefined
          ? undefined
          : parseHistoryRecord(childPath(node, name), stored.data);
      }),
    );
    const entries = names.flatMap((name, index) => {
      const record = records[index];
      return record === undefined ? [] : [[childPath(plan, name), record] as const];
    });
    return new Map(entries);
  }

  /** The plan's task-* children, oldest first; undefined when the plan does not exist. */
  async listTasks(plan: string): Promise<string[] | undefined> {
    return (await this.listPlan(plan))?.tasks;
  }

  /** The plan's tasks (oldest first), its other children, and whether it is ready and carries the `failed` marker; undefined when the plan does not exist. */
  async listPlan(
    plan: string,
  ): Promise<{ tasks: string[]; children: string[]; ready: boolean; failed: boolean } | undefined> {
    const listing = await this.zk.tryGetChildren(plan);
    if (listing === undefined) return undefined;
    return {
      tasks: sortBySerial(listing.children, TASK_PREFIX).map((name) => childPath(plan, name)),
      children: listing.children,
      ready: listing.children.includes(READY),
      failed: listing.children.includes(FAILED),
    };
  }

  /** True while the plan node exists. */
  async planExists(plan: string): Promise<boolean> {
    return (await this.zk.exists(plan)) !== undefined;
  }

  /** True while the plan has a `control` node: paused or cancelled, so no task of it may start. */
  async isPlanHalted(plan: string): Promise<boolean> {
    return (await this.zk.exists(childPath(plan, CONTROL))) !== undefined;
  }

  /** The plan's `failed` marker as read (its data version and the node it is); undefined when there is none. */
  async planFailedMarker(plan: string): Promise<MarkerRead | undefined> {
    const stat = await this.zk.exists(childPath(plan, FAILED));
    return stat === undefined ? undefined : { version: stat.version, czxid: stat.czxid };
  }

  /** Who added the task and in which batch, and its key, from its definition; undefined for tasks written by other tools. */
  async readStamp(task: string): Promise<TaskStamp | undefined> {
    const node = await this.zk.tryGetData(task);
    if (node === undefined) return undefined;
    try {
      const value = decodeValue(task, node.data) as
        (Partial<BuilderStamp> & { key?: unknown }) | null;
      if (typeof value?.builder !== 'string' || typeof value.batch !== 'string') return undefined;
      return {
        builder: value.builder,
        batch: value.batch,
        ...(taskKeyProblem(value.key) === undefined ? { key: value.key as string } : {}),
      };
    } catch {
      return undefined; // a malformed definition: performTask reports it once the task is ready
    }
  }

  /**
   * The task that holds `key` in the plan by a claim (addTask's `{ key }`), and the claim's node as
   * read; undefined when no task claimed it. MalformedNodeError for a claim zk-plan does not write.
   */
  async readKeyClaim(
    plan: string,
    key: string,
  ): Promise<{ task: string; node: MarkerRead } | undefined> {
    const path = keyClaimPath(plan, key);
    const node = await this.zk.tryGetData(path);
    if (node === undefined) return undefined;
    return {
      task: parseKeyClaim(plan, path, node.data),
      node: { version: node.stat.version, czxid: node.stat.czxid },
    };
  }

  async inspectTask(task: string): Promise<TaskListing | undefined> {
    const listing = await this.zk.tryGetChildren(task);
    return listing && { children: listing.children, childVersion: listing.stat.cversion };
  }

  /** The session whose ephemeral owner node holds the task now; undefined when none does. */
  async ownerSessionOf(task: string): Promise<string | undefined> {
    return (await this.zk.exists(childPath(task, OWNER)))?.ephemeralOwner;
  }

  /** Who holds the task now, if anyone. */
  async readOwner(task: string): Promise<(OwnerRecord & { sessionId: string }) | undefined> {
    const owner = await this.zk.tryGetData(childPath(task, OWNER));
    if (owner === undefined) return undefined;
    const record = this.decodeOwner(task, owner.data);
    return record && { ...record, sessionId: owner.stat.ephemeralOwner };
  }

  async readDefinition(task: string): Promise<TaskDefinition | undefined> {
    const node = await this.zk.tryGetData(task);
    return node && parseDefinition(task, decodeValue(task, node.data));
  }

  /**
   * The task's propagated inputs in dependency order (arg-* by serial); undefined when the task
   * vanished. `maxBytes` is the reader's limit per input (a worker's maxResultBytes).
   */
  async readArgs(
    task: string,
    children: readonly string[],
    maxBytes: number = this.valueLimit,
    prefetched?: PrefetchedInputs['values'],
  ): Promise<unknown[] | undefined> {
    const names = sortBySerial(children, ARG_PREFIX);
    const paths = names.map((name) => childPath(task, name));
    const values = await Promise.all(
      names.map(async (name, index) => {
        const path = paths[index] as string;
        const early = await prefetched?.get(name);
        // A prefetched value is used as read; one that failed, or is over this reader's limit, is read again (to throw as the read does).
        if (early instanceof Buffer && early.length <= maxBytes) return early;
        if (early === undefined && prefetched?.has(name) === true) return undefined;
        return await this.readStoredValue(path, maxBytes);
      }),
    );
    if (values.some((value) => value === undefined)) return undefined;
    return values.map((value, index) => decodeValue(paths[index] ?? task, value));
  }

  /**
   * The stored result's encoded bytes; undefined when there is none; IncompleteValueError when a
   * write of it stopped half-way; MalformedNodeError when it is not a value a writer makes, or over
   * `maxBytes` (a worker's maxResultBytes).
   */
  async readEncodedResult(
    task: string,
    maxBytes: number = this.valueLimit,
  ): Promise<Buffer | undefined> {
    const path = childPath(task, RESULT);
    const stored = await this.readStoredValue(path, maxBytes);
    if (stored !== undefined) decodeValue(path, stored); // reject a malformed result before propagating it
    return stored;
  }

  /** The dep paths the task's prov-* nodes point at (prov name → dep path). */
  async readLinks(
    task: string,
    children: readonly string[],
    prefetched?: PrefetchedInputs['links'],
  ): Promise<Map<string, string>> {
    const provs = children.filter((name) => hasSequentialName(name, PROV_PREFIX));
    const deps = await Promise.all(
      provs.map(async (name) => {
        const early = await prefetched?.get(name);
        if (typeof early === 'string') return early;
        if (early === undefined && prefetched?.has(name) === true) return undefined;
        return await this.readLink(childPath(task, name));
      }),
    );
    return new Map(
      provs.flatMap((name, index) =>
        deps[index] === undefined ? [] : [[name, deps[index] as string] as const],
      ),
    );
  }

  /** The dep path a prov-* node holds; undefined when the prov is gone (already propagated and deleted). */
  async readLink(prov: string): Promise<string | undefined> {
    const node = await this.zk.tryGetData(prov);
    if (node === undefined) return undefined;
    const dep = decodeValue(prov, node.data);
    if (
      typeof dep !== 'string' ||
      !hasSequentialName(dep.slice(dep.lastIndexOf('/') + 1), DEP_PREFIX)
    ) {
      throw new MalformedNodeError(
        prov,
        `its value must be the path of a ${DEP_PREFIX}<serial> node of a dependent task, got ${JSON.stringify(dep)}`,
      );
    }
    return dep;
  }

  decodeOwner(task: string, data: Buffer | null): OwnerRecord | undefined {
    try {
      const value = decodeValue(childPath(task, OWNER), data);
      if (
        typeof value === 'object' &&
        value !== null &&
        typeof (value as OwnerRecord).workerId === 'string'
      )
        return value as OwnerRecord;
    } catch {
      // An owner node written by another tool: it is not ours either way.
    }
    return undefined;
  }
}
