/**
 * `zkPlan.limits(parent)`: concurrency limits shared by every worker and plan under one parent. At
 * most `limit` tasks added with `{ concurrencyKey: key }` run at once; a slot is an ephemeral node,
 * so a crashed worker frees its slot when its session expires.
 */
import type { ConcurrencyLimits } from '../limits/concurrency-limits.js';
import { assertConcurrencyKey, assertLimit, type SlotRecord } from '../limits/limit-record.js';
import type { FacadeState } from './facade-state.js';

/**
 * A key's limit and the tasks holding its slots now.
 *
 * @category Sub-APIs
 */
export interface LimitState {
  readonly limit: number;
  readonly holders: SlotRecord[];
}

/**
 * `zkPlan.limits(parent)`: the concurrency limits shared by every worker and plan under one parent.
 *
 * @category Sub-APIs
 */
export class LimitsApi {
  /** @internal Made by ZkPlan; reach it as `zkPlan.limits(parent)`. */
  constructor(
    private readonly facade: FacadeState,
    private readonly limits: ConcurrencyLimits,
    /** The parent of the plans the limits apply to. */
    readonly parent: string,
  ) {}

  /**
   * Sets the limit of `key`: changeable while tasks run (a lower limit takes effect as running tasks
   * finish).
   */
  async set(key: string, limit: number): Promise<void> {
    this.facade.assertOpen();
    assertConcurrencyKey('key', key);
    assertLimit('limit', limit);
    await this.limits.setLimit(this.parent, key, limit);
  }

  /** The limit of `key` and the tasks holding its slots now; undefined when the key has no limit. */
  get(key: string): Promise<LimitState | undefined> {
    this.facade.assertOpen();
    assertConcurrencyKey('key', key);
    return this.limits.readLimit(this.parent, key);
  }

  /** Every limit under the parent (sorted by key) with the tasks holding its slots now. */
  list(): Promise<({ key: string } & LimitState)[]> {
    this.facade.assertOpen();
    return this.limits.listLimits(this.parent);
  }
}
