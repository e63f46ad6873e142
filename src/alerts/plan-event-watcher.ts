/**
 * alerts.subscribe: tells a listener when a task fails for good or a plan fails, is cancelled or
 * completes, once per event across the cluster however many processes listen. Every listening
 * process follows the plans under the parent by watches (on the parent's and each plan's
 * children, and on the `failed` and `control` nodes while they exist: only on nodes that exist,
 * so each watch fires, and is gone, at the latest when its plan is deleted) and derives the events
 * from the plan's status (src/alerts/plan-events.ts). An event is recorded as
 * `<plan>/alerts/<id>`; the process holding its ephemeral `lock` calls its listener, then marks it
 * delivered. A process that dies while delivering leaves the event undelivered and its lock goes
 * with its session: another process delivers it then. So each event is delivered at least once,
 * and exactly once unless a deliverer dies between its listener's end and the delivered mark.
 */
import type { PlanEventOptions } from '../config/options.js';
import { isZkError } from '../errors/zk-error.js';
import type { PlanStatus } from '../plan/plan-status.js';
import { decodeValue, encodeValue } from '../serialization/codec.js';
import { sleepUnless } from '../util/abort-signals.js';
import {
  ALERTS,
  CONTROL,
  FAILED,
  READY,
  TASK_PREFIX,
  assertValidPath,
  childPath,
  hasSequentialName,
  isPlanName,
} from '../zk/layout.js';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { TokenLock } from '../zk/recipes/token-lock.js';
import type { Zk } from '../zk/zk.js';
import { planEventsOf, type PlanEvent } from './plan-events.js';

/**
 * Called with each event of `onPlanEvent`; a listener that throws (or rejects) is called again with doubling pauses, up to `maxAttempts` times.
 *
 * @category Events and alerts
 */
export type PlanEventListener = (event: PlanEvent) => void | Promise<void>;

interface Delivery {
  readonly event: PlanEvent;
  readonly deliveredAt?: Date;
  readonly gaveUpAt?: Date;
}

/** Least time between two looks at one plan: a burst of changes costs one status read. */
const MIN_LOOK_INTERVAL_MS = 200;

/**
 * Starts a watcher delivering the plan events under `parent` to `listener`, kept in `running`
 * until the returned subscription's `close()` (or the owner closing everything in `running`).
 */
export function subscribePlanEvents(
  zk: Zk,
  planStatus: (plan: string) => Promise<PlanStatus>,
  parent: string,
  listener: PlanEventListener,
  options: ConstructorParameters<typeof PlanEventWatcher>[4],
  running: Set<PlanEventWatcher>,
): { close(): Promise<void> } {
  assertValidPath('parent', parent);
  if (typeof listener !== 'function')
    throw new InvalidArgumentError(
      'listener',
      'expected a function (event) => void | Promise<void>',
    );
  const watcher = new PlanEventWatcher(zk, planStatus, parent, listener, options);
  running.add(watcher);
  watcher.start();
  return {
    close: async () => {
      running.delete(watcher);
      await watcher.close();
    },
  };
}

export class PlanEventWatcher {
  private readonly plans = new Map<string, { looking: boolean; again: boolean }>();
  private readonly stop = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private readonly onSession = (): void => this.track(this.followParent());

  constructor(
    private readonly zk: Zk,
    private readonly statusOf: (plan: string) => Promise<PlanStatus>,
    private readonly parent: string,
    private readonly listener: PlanEventListener,
    private readonly options: Required<Pick<PlanEventOptions, 'maxAttempts' | 'retryDelayMs'>> &
      Pick<PlanEventOptions, 'onError'>,
  ) {}

  start(): void {
    this.zk.on('session:started', this.onSession); // a new session has none of the old one's watches
    this.track(this.followParent());
  }

  /** Stops following; resolves once deliveries under way have ended. */
  async close(): Promise<void> {
    this.stop.abort();
    this.zk.off('session:started', this.onSession);
    this.plans.clear();
    await Promise.all([...this.running]);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => {
      if (!this.stop.signal.aborted && !(isZkError(error) && error.isConnectionProblem))
        this.options.onError?.(asError(error));
    });
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  private async followParent(): Promise<void> {
    if (this.stop.signal.aborted) return;
    const listing = await this.zk.tryGetChildren(this.parent, () =>
      this.track(this.followParent()),
    );
    if (listing === undefined) {
      // No parent yet: the parent's creation shows as a change of its own parent's children.
      const created = await this.zk.exists(this.parent, () => this.track(this.followParent()));
      if (created !== undefined) await this.followParent();
      return;
    }
    const plans = new Set(
      listing.children.filter(isPlanName).map((name) => childPath(this.parent, name)),
    );
    for (const plan of this.plans.keys()) if (!plans.has(plan)) this.plans.delete(plan);
    for (const plan of plans) if (!this.plans.has(plan)) this.look(plan);
  }

  /** Looks at a plan now, or once the look under way is over (changes meanwhile cost one more look). */
  private look(plan: string): void {
    let state = this.plans.get(plan);
    if (state === undefined) {
      state = { looking: false, again: false };
      this.plans.set(plan, state);
    }
    if (state.looking) {
      state.again = true;
      return;
    }
    state.looking = true;
    const current = state;
    this.track(
      (async () => {
        try {
          do {
            current.again = false;
            await this.lookOnce(plan);
            if (current.again) await sleepUnless(MIN_LOOK_INTERVAL_MS, this.stop.signal);
          } while (current.again && !this.stop.signal.aborted && this.plans.get(plan) === current);
        } finally {
          current.looking = false;
        }
      })(),
    );
  }

  private async lookOnce(plan: string): Promise<void> {
    if (this.stop.signal.aborted || !this.plans.has(plan)) return;
    const changed = (): void => {
      if (this.plans.has(plan)) this.look(plan);
    };
    const listing = await this.zk.tryGetChildren(plan, changed);
    if (listing === undefined) {
      this.plans.delete(plan); // deleted: its watches fired with it
      return;
    }
    const { children } = listing;
    // A further failure rewrites `failed`, a cancel rewrites `control`: data watches on them while they exist.
    if (children.includes(FAILED))
      await this.zk.getData(childPath(plan, FAILED), changed).catch(ignoreNoNode);
    if (children.includes(CONTROL))
      await this.zk.getData(childPath(plan, CONTROL), changed).catch(ignoreNoNode);
    const tasksLeft = children.some((name) => hasSequentialName(name, TASK_PREFIX));
    if (
      !children.includes(CONTROL) &&
      (!children.includes(READY) || (tasksLeft && !children.includes(FAILED)))
    )
      return; // nothing to report yet (an empty plan being built is not complete)
    const status = await this.statusOf(plan);
    for (const event of planEventsOf(status)) await this.deliver(plan, event, changed);
  }

  /** Records the event and delivers it unless another process did or does. */
  private async deliver(plan: string, event: PlanEvent, changed: () => void): Promise<void> {
    const alerts = childPath(plan, ALERTS);
    const path = childPath(alerts, encodeURIComponent(event.id));
    try {
      await this.zk.createIfAbsent(alerts); // NO_NODE once the plan is gone: nothing to deliver then
      await this.zk.createIfAbsent(
        path,
        encodeValue({ event } satisfies Delivery, 'plan event', path),
      );
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) return;
      throw error;
    }
    // A token lock: two listeners of one process share a session.
    const lock = new TokenLock(this.zk, childPath(path, 'lock'), this.zk.session);
    for (;;) {
      const attempt = await lock.take(changed); // another holder's end (done, or dead) brings us back
      if (attempt === 'taken') break;
      if (attempt === 'held') return;
      // Gone in between: its holder finished or died; take it now.
    }
    try {
      // Read under the lock: a delivery that ended before we took it is seen here.
      const recorded = await this.zk.tryGetData(path);
      const delivery = recorded?.data?.length
        ? (decodeValue(path, recorded.data) as Delivery)
        : undefined;
      if (
        recorded === undefined ||
        delivery === undefined ||
        delivery.deliveredAt !== undefined ||
        delivery.gaveUpAt !== undefined
      )
        return;
      const delivered = await this.callListener(delivery.event);
      const outcome: Delivery = {
        event: delivery.event,
        ...(delivered ? { deliveredAt: new Date() } : { gaveUpAt: new Date() }),
      };
      // Named by the record read: a resend never lands on the record of a plan deleted and made again at that path since.
      await this.zk
        .setData(path, encodeValue(outcome, 'plan event', path), recorded.stat.version, {
          incarnation: recorded.stat.czxid,
        })
        .catch(ignoreNoNode);
    } finally {
      await lock.release().catch(() => undefined); // else it goes with the session
    }
  }

  /** The listener, tried again after a throw with doubling pauses; false when it failed every time. */
  private async callListener(event: PlanEvent): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        // A listener that hangs must not hold up close(): the event stays undelivered, and its lock goes below.
        await Promise.race([
          Promise.resolve().then(() => this.listener(event)),
          rejectOnAbort(this.stop.signal),
        ]);
        return true;
      } catch (error) {
        if (this.stop.signal.aborted) throw error; // closed: leave the event to another process
        if (attempt >= this.options.maxAttempts || this.stop.signal.aborted) {
          this.options.onError?.(asError(error), event.id);
          return false;
        }
        await sleepUnless(this.options.retryDelayMs * 2 ** (attempt - 1), this.stop.signal);
      }
    }
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(new Error('closed'));
    else signal.addEventListener('abort', () => reject(new Error('closed')), { once: true });
  });
}

function ignoreNoNode(error: unknown): undefined {
  if (isZkError(error, 'NO_NODE', 'NODE_REPLACED')) return undefined;
  throw error;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
