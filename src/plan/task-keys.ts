/**
 * The keys a plan's spec gave its tasks (`<plan>/spec`'s `tasks`: key → task path), turned around
 * for people: `zk-plan show`, `why`, the web view. A spec record is written once, when the plan is
 * built, so the map is kept per plan and read again only when the record node is another one
 * (its creation zxid) or has changed (its version); at most MAX_PLANS plans are kept.
 */
import { readSpecRecord } from '../spec/spec-record.js';
import { SPEC_RECORD, childPath } from '../zk/layout.js';
import type { Zk } from '../zk/zk.js';

/** Plans whose keys are kept; the least recently read goes first. */
const MAX_PLANS = 1_000;

interface KeptKeys {
  readonly czxid: number;
  readonly version: number;
  readonly byTask: ReadonlyMap<string, string>;
}

const NO_KEYS: ReadonlyMap<string, string> = new Map();

export class TaskKeys {
  private readonly kept = new Map<string, KeptKeys>();

  constructor(private readonly zk: Zk) {}

  /** Each task's key, by task path; empty for a plan not built from a spec (no `spec` child in `planChildren`). */
  async of(plan: string, planChildren: readonly string[]): Promise<ReadonlyMap<string, string>> {
    if (!planChildren.includes(SPEC_RECORD)) return NO_KEYS;
    const stat = await this.zk.exists(childPath(plan, SPEC_RECORD));
    if (stat === undefined) return NO_KEYS;
    const kept = this.kept.get(plan);
    if (kept !== undefined && kept.czxid === stat.czxid && kept.version === stat.version) {
      this.kept.delete(plan); // most recently read last
      this.kept.set(plan, kept);
      return kept.byTask;
    }
    const record = await readSpecRecord(this.zk, plan).catch(() => undefined); // unreadable: no keys, the paths still show
    const byTask = new Map<string, string>();
    for (const [key, task] of Object.entries(record?.tasks ?? {})) if (typeof task === 'string') byTask.set(task, key);
    this.kept.delete(plan);
    this.kept.set(plan, { czxid: stat.czxid, version: stat.version, byTask });
    if (this.kept.size > MAX_PLANS) this.kept.delete(this.kept.keys().next().value as string);
    return byTask;
  }
}
