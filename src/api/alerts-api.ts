/**
 * `zkPlan.alerts`: a listener called once per plan event across the cluster (a task failed for good,
 * a plan failed, was cancelled or completed), however many processes listen.
 */
import type { PlanEventListener, PlanEventWatcher } from '../alerts/plan-event-watcher.js';
import { subscribePlanEvents } from '../alerts/plan-event-watcher.js';
import { resolvePlanEventOptions, type PlanEventOptions } from '../config/options.js';
import type { PlanStatus } from '../plan/plan-status.js';
import type { Zk } from '../zk/zk.js';
import type { FacadeState } from './facade-state.js';

/**
 * A subscription of `alerts.subscribe`; `close()` ends it.
 *
 * @category Sub-APIs
 */
export interface AlertSubscription {
  /** Ends the subscription; resolves once the work it had started (deliveries included) is done. */
  close(): Promise<void>;
}

/**
 * `zkPlan.alerts`: listeners called once per plan event across the cluster.
 *
 * @category Sub-APIs
 */
export class AlertsApi {
  /** @internal Made by ZkPlan; reach it as `zkPlan.alerts`. */
  constructor(
    private readonly facade: FacadeState,
    private readonly zk: Zk,
    private readonly planStatus: (plan: string) => Promise<PlanStatus>,
    /** The subscriptions open now: the ZkPlan closes them when it closes. */
    private readonly watchers: Set<PlanEventWatcher>,
  ) {}

  /**
   * Calls `listener` when a task under `parent` fails for good, or a plan fails, is cancelled or
   * completes: once per event across the cluster, however many processes listen (at least once if
   * a listening process dies while delivering). A listener that throws is called again with
   * doubling pauses, `maxAttempts` times.
   */
  subscribe(parent: string, listener: PlanEventListener, options: PlanEventOptions = {}): AlertSubscription {
    this.facade.assertOpen();
    return subscribePlanEvents(this.zk, this.planStatus, parent, listener, resolvePlanEventOptions(options), this.watchers);
  }
}
