/**
 * The keys a plan's tasks are known by, turned around for people (`zk-plan show`, `why`, `wait`,
 * alerts, the web view) and looked up for them (`zk-plan why <plan> <key>`). Two sources:
 *
 * - the plan's spec record (`<plan>/spec`'s `tasks`: key → task path), for plans from a spec;
 * - the claims of keys given with `addTask(…, { key })` (`<plan>/keys/key-<encoded key>`, each
 *   `{ task }`), which outlive their tasks as the spec record does.
 *
 * Both are written once and never changed (a claim is only ever removed, with a batch that was
 * never finished), so each plan's map is kept: the spec record is read again only when its node is
 * another one (creation zxid) or has changed (version), and a claim only when it is new. At most
 * MAX_PLANS plans are kept; the least recently read goes first.
 */
import { MalformedNodeError } from '../errors/task-errors.js';
import { readSpecRecord } from '../spec/spec-record.js';
import { parseKeyClaim } from '../store/key-claim.js';
import { SPEC_RECORD, TASK_KEYS, childPath, keyClaimPath, keyOfClaimName } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';
import { taskKeyProblem } from './names.js';

/** Plans whose keys are kept; the least recently read goes first. */
const MAX_PLANS = 1_000;

interface SpecKeys {
  readonly czxid: number;
  readonly version: number;
  /** Task path → key. */
  readonly byTask: ReadonlyMap<string, string>;
  /** Key → task path. */
  readonly byKey: ReadonlyMap<string, string>;
}

const NO_KEYS: ReadonlyMap<string, string> = new Map();
const NO_SPEC_KEYS: SpecKeys = { czxid: -1, version: -1, byTask: NO_KEYS, byKey: NO_KEYS };

export class TaskKeys {
  private readonly specs = new Map<string, SpecKeys>();
  /** Per plan: the task each claim read so far names, by the claim's node name. */
  private readonly claims = new Map<string, Map<string, string>>();

  constructor(private readonly zk: Zk) {}

  /**
   * Each task's key, by task path: from the spec record and the key claims, read only when
   * `planChildren` (the plan's children, as listed by the caller) holds them. Empty for a plan
   * whose tasks have no keys.
   */
  async of(plan: string, planChildren: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const [spec, claimed] = await Promise.all([
      planChildren.includes(SPEC_RECORD) ? this.specKeys(plan) : NO_SPEC_KEYS,
      planChildren.includes(TASK_KEYS) ? this.claimedKeys(plan) : NO_KEYS,
    ]);
    if (claimed.size === 0) return spec.byTask;
    if (spec.byTask.size === 0) return claimed;
    return new Map([...claimed, ...spec.byTask]);
  }

  /** The task of the plan known by `key` (it may have finished since); undefined when no task has it. */
  async taskOf(plan: string, key: string): Promise<string | undefined> {
    if (taskKeyProblem(key) !== undefined) return undefined; // no task can have it
    const fromSpec = (await this.specKeys(plan)).byKey.get(key);
    if (fromSpec !== undefined) return fromSpec;
    const path = keyClaimPath(plan, key);
    const node = await this.zk.tryGetData(path);
    return node === undefined ? undefined : parseKeyClaim(plan, path, node.data);
  }

  /** The tasks the plan's spec record names, by key; empty for a plan not built from a spec. */
  async specTasks(plan: string): Promise<ReadonlyMap<string, string>> {
    return (await this.specKeys(plan)).byKey;
  }

  /** The spec record's keys, read again only when the record changed. */
  private async specKeys(plan: string): Promise<SpecKeys> {
    const stat = await this.zk.exists(childPath(plan, SPEC_RECORD));
    if (stat === undefined) return NO_SPEC_KEYS;
    const kept = this.specs.get(plan);
    if (kept !== undefined && kept.czxid === stat.czxid && kept.version === stat.version) {
      this.touch(plan, kept);
      return kept;
    }
    const record = await readSpecRecord(this.zk, plan).catch(() => undefined); // unreadable: no keys, the paths still show
    const byTask = new Map<string, string>();
    const byKey = new Map<string, string>();
    for (const [key, task] of Object.entries(record?.tasks ?? {})) {
      if (typeof task !== 'string') continue;
      byTask.set(task, key);
      byKey.set(key, task);
    }
    const keys: SpecKeys = { czxid: stat.czxid, version: stat.version, byTask, byKey };
    this.touch(plan, keys);
    return keys;
  }

  /** The claims' keys, by task path: the claims listed now, each one read once. */
  private async claimedKeys(plan: string): Promise<ReadonlyMap<string, string>> {
    const listing = await this.zk.tryGetChildren(childPath(plan, TASK_KEYS));
    if (listing === undefined) return NO_KEYS;
    const known = this.claims.get(plan) ?? new Map<string, string>();
    const current = new Map<string, string>();
    const fresh = listing.children.filter(
      (name) => !known.has(name) && keyOfClaimName(name) !== undefined,
    );
    const read = await Promise.all(fresh.map((name) => this.readClaim(plan, name)));
    fresh.forEach((name, index) => {
      const task = read[index];
      if (task !== undefined) known.set(name, task);
    });
    for (const name of listing.children) {
      const task = known.get(name);
      if (task !== undefined) current.set(name, task);
    }
    this.claims.delete(plan);
    this.claims.set(plan, current); // claims removed since (an unfinished batch deleted) drop out
    if (this.claims.size > MAX_PLANS) this.claims.delete(this.claims.keys().next().value as string);
    const byTask = new Map<string, string>();
    for (const [name, task] of current) byTask.set(task, keyOfClaimName(name) as string);
    return byTask;
  }

  /** The task a claim names; undefined when it is gone, or not one zk-plan wrote (its key is then not shown). */
  private async readClaim(plan: string, name: string): Promise<string | undefined> {
    const path = childPath(childPath(plan, TASK_KEYS), name);
    try {
      const node = await this.zk.tryGetData(path);
      return node === undefined ? undefined : parseKeyClaim(plan, path, node.data);
    } catch (error) {
      if (error instanceof MalformedNodeError) return undefined;
      throw error;
    }
  }

  private touch(plan: string, keys: SpecKeys): void {
    this.specs.delete(plan); // most recently read last
    this.specs.set(plan, keys);
    if (this.specs.size > MAX_PLANS) this.specs.delete(this.specs.keys().next().value as string);
  }
}
