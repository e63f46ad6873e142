import { countPlanTasks } from '../../src/plan/plan-progress.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PlanNotFoundError } from '../../src/errors/plan-errors.js';
import { ZkError } from '../../src/errors/zk-error.js';
import type { PlanStatus } from '../../src/plan/plan-status.js';
import type { PlanSummary, PlanView, TaskView } from '../../src/plan/plan-view.js';
import type { TaskViewState } from '../../src/plan/plan-progress.js';
import type { WatchEvent, Watcher } from '../../src/zk/zk-client-types.js';
import type { ZkStat } from '../../src/zk/native-client.js';
import { CoalescingRunner } from '../../src/ui/coalescing-runner.js';
import {
  PlanFeed,
  PlansFeed,
  type PlanFeedMessage,
  type PlansFeedMessage,
} from '../../src/ui/plan-feed.js';
import { WatchSet } from '../../src/zk/recipes/watch-set.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { memoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const PLAN = '/plans/plan-0000000001';
const NO_NODE = -101;

/** Just enough of ZkClient: nodes that exist, and one-shot watches the test fires. */
class FakeZk {
  readonly existing = new Set<string>([
    PARENT,
    PLAN,
    `${PLAN}/history`,
    `${PLAN}/runnable`,
    `${PLAN}/task-0000000001`,
    `${PLAN}/task-0000000002`,
  ]);
  private readonly watches = new Map<string, Watcher[]>();

  watchCount(path: string): number {
    return this.watches.get(path)?.length ?? 0;
  }

  /** Fires (and so removes) the watches set on `path`. */
  fire(path: string, type: WatchEvent['type'] = 'child'): void {
    const watchers = this.watches.get(path) ?? [];
    this.watches.delete(path);
    for (const watcher of watchers) watcher({ type, path });
  }

  private watch(path: string, watcher: Watcher | undefined): void {
    if (watcher) this.watches.set(path, [...(this.watches.get(path) ?? []), watcher]);
  }

  async getChildren(
    path: string,
    watcher?: Watcher,
  ): Promise<{ children: string[]; stat: ZkStat }> {
    if (!this.existing.has(path)) throw new ZkError('getChildren', NO_NODE, path);
    this.watch(path, watcher);
    return { children: [], stat: {} as ZkStat };
  }

  async tryGetChildren(
    path: string,
    watcher?: Watcher,
  ): Promise<{ children: string[]; stat: ZkStat } | undefined> {
    if (!this.existing.has(path)) return undefined;
    return this.getChildren(path, watcher);
  }

  async getData(path: string, watcher?: Watcher): Promise<{ stat: ZkStat; data: Buffer | null }> {
    if (!this.existing.has(path)) throw new ZkError('getData', NO_NODE, path);
    this.watch(path, watcher);
    return { stat: {} as ZkStat, data: null };
  }

  async exists(path: string, watcher?: Watcher): Promise<ZkStat | undefined> {
    this.watch(path, watcher);
    return this.existing.has(path) ? ({} as ZkStat) : undefined;
  }
}

function task(serial: number, state: TaskViewState, inputs: number[] = []): TaskView {
  const name = `task-${String(serial).padStart(10, '0')}`;
  return {
    task: `${PLAN}/${name}`,
    name,
    state,
    fn: 'f',
    params: [],
    inputs: inputs.map((input) => `${PLAN}/task-${String(input).padStart(10, '0')}`),
    pendingInputs: 0,
    keepResult: false,
  };
}

function planView(tasks: TaskView[]): PlanView {
  const live = tasks.filter((entry) => entry.state !== 'done').length;
  const status: PlanStatus = {
    plan: PLAN,
    state: live === 0 ? 'completed' : 'running',
    failurePolicy: 'continue',
    priority: 0,
    counts: countPlanTasks(tasks),
    failed: [],
    blocked: [],
    retrying: [],
  };
  return { plan: PLAN, status, tasks, done: tasks.length - live, historyKept: true };
}

let zk: FakeZk;
let current: PlanView;
let describePlan: ReturnType<typeof vi.fn<(plan: string) => Promise<PlanView>>>;

beforeEach(() => {
  vi.useFakeTimers();
  zk = new FakeZk();
  current = planView([task(1, 'runnable'), task(2, 'waiting', [1])]);
  describePlan = vi.fn(async () => current);
});

afterEach(() => {
  vi.useRealTimers();
});

function openFeed(timing = {}): {
  feed: PlanFeed;
  messages: PlanFeedMessage[];
  unsubscribe: () => void;
  idle: () => boolean;
} {
  let idle = false;
  const feed = new PlanFeed({ zk, plans: { describe: describePlan } }, PLAN, timing, () => {
    idle = true;
  });
  const messages: PlanFeedMessage[] = [];
  const unsubscribe = feed.subscribe((message) => messages.push(message));
  return { feed, messages, unsubscribe, idle: () => idle };
}

describe('PlanFeed', () => {
  it('reads at once and sends a snapshot, with watches on the plan, its history, its runnable index, and on the nodes above a failed marker and owners not there yet', async () => {
    const { messages } = openFeed();
    await vi.advanceTimersByTimeAsync(0);
    expect(describePlan).toHaveBeenCalledTimes(1);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      type: 'snapshot',
      model: { nodes: [{ state: 'runnable' }, { state: 'waiting' }] },
    });
    for (const path of [`${PLAN}/history`, `${PLAN}/runnable`, `${PLAN}/task-0000000001`])
      expect(zk.watchCount(path), path).toBe(1);
    expect(zk.watchCount(PLAN)).toBe(2); // its children, and the failed marker's appearance
    for (const path of [`${PLAN}/failed`, `${PLAN}/task-0000000001/owner`, `${PLAN}/sub-plans`])
      expect(zk.watchCount(path), path).toBe(0); // not there: never watched itself
    expect(zk.watchCount(`${PLAN}/task-0000000002`)).toBe(0); // waiting: no owner to expect yet
    zk.existing.add(`${PLAN}/failed`);
    zk.existing.add(`${PLAN}/task-0000000001/owner`);
    // A sub-plan task recorded its child: the plan's child watch fires, and its record is watched.
    zk.existing.add(`${PLAN}/sub-plans`);
    zk.fire(PLAN);
    zk.fire(`${PLAN}/task-0000000001`);
    await vi.advanceTimersByTimeAsync(300);
    for (const path of [`${PLAN}/failed`, `${PLAN}/task-0000000001/owner`, `${PLAN}/sub-plans`])
      expect(zk.watchCount(path), path).toBe(1); // there now: watched itself
    expect(zk.watchCount(`${PLAN}/task-0000000001`)).toBe(0);
  });

  it('coalesces a burst of watch events into one read per 250 ms, and re-arms each watch once', async () => {
    const { messages } = openFeed();
    await vi.advanceTimersByTimeAsync(0);
    current = planView([task(1, 'running'), task(2, 'waiting', [1])]);
    for (let i = 0; i < 20; i++) {
      zk.fire(PLAN);
      zk.fire(`${PLAN}/runnable`);
      zk.fire(`${PLAN}/task-0000000001`);
      await vi.advanceTimersByTimeAsync(10);
    }
    // 200 ms of events: the first read waits until 250 ms after the snapshot.
    expect(describePlan).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(60);
    expect(describePlan).toHaveBeenCalledTimes(2);
    expect(messages.at(-1)).toEqual({
      type: 'diff',
      diff: expect.objectContaining({
        changed: [['task-0000000001', 'running', false, 'f', false, '', '', 0, 0, 0, '']],
      }),
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(describePlan).toHaveBeenCalledTimes(2); // nothing fired since
    for (const path of [`${PLAN}/runnable`, `${PLAN}/task-0000000001`])
      expect(zk.watchCount(path), path).toBe(1);
    expect(zk.watchCount(PLAN)).toBe(2);
  });

  it('pushes nothing when a read shows no change', async () => {
    const { messages } = openFeed();
    await vi.advanceTimersByTimeAsync(0);
    zk.fire(`${PLAN}/history`);
    await vi.advanceTimersByTimeAsync(300);
    expect(describePlan).toHaveBeenCalledTimes(2);
    expect(messages).toHaveLength(1);
  });

  it('waits between reads as long as the last read took, when that is longer than the interval', async () => {
    describePlan.mockImplementation(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return current;
    });
    openFeed();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(describePlan).toHaveBeenCalledTimes(1);
    zk.fire(PLAN);
    await vi.advanceTimersByTimeAsync(900);
    expect(describePlan).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(describePlan).toHaveBeenCalledTimes(2);
  });

  it('refreshes slowly without events, as a safety net', async () => {
    openFeed();
    await vi.advanceTimersByTimeAsync(14_000);
    expect(describePlan).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1_100);
    expect(describePlan).toHaveBeenCalledTimes(2);
  });

  it('shares one feed between listeners, and stops when the last one leaves', async () => {
    const { feed, unsubscribe, idle } = openFeed();
    await vi.advanceTimersByTimeAsync(0);
    const second: PlanFeedMessage[] = [];
    const leave = feed.subscribe((message) => second.push(message));
    expect(second).toEqual([expect.objectContaining({ type: 'snapshot' })]); // the current state at once
    unsubscribe();
    expect(feed.isClosed).toBe(false);
    leave();
    expect(feed.isClosed).toBe(true);
    expect(idle()).toBe(true);
    zk.fire(PLAN);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(describePlan).toHaveBeenCalledTimes(1);
  });

  it('outlives its last listener for lingerMs without reading, and reads again for the next one', async () => {
    const { feed, unsubscribe, idle } = openFeed({ lingerMs: 5_000 });
    await vi.advanceTimersByTimeAsync(0);
    unsubscribe();
    zk.fire(PLAN);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(describePlan).toHaveBeenCalledTimes(1); // nobody listens: no read
    const again: PlanFeedMessage[] = [];
    const leave = feed.subscribe((message) => again.push(message));
    expect(again).toEqual([expect.objectContaining({ type: 'snapshot' })]);
    await vi.advanceTimersByTimeAsync(300);
    expect(describePlan).toHaveBeenCalledTimes(2);
    expect(zk.watchCount(PLAN)).toBe(2); // armed again, once each: its children, the failed marker's appearance
    leave();
    await vi.advanceTimersByTimeAsync(4_900);
    expect(feed.isClosed).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(feed.isClosed).toBe(true);
    expect(idle()).toBe(true);
  });

  it('says when the plan is gone, and closes', async () => {
    const { feed, messages } = openFeed();
    await vi.advanceTimersByTimeAsync(0);
    describePlan.mockRejectedValue(new PlanNotFoundError(PLAN));
    zk.fire(PLAN);
    await vi.advanceTimersByTimeAsync(300);
    expect(messages.at(-1)).toEqual({ type: 'gone', plan: PLAN });
    expect(feed.isClosed).toBe(true);
  });

  it('reports ZooKeeper trouble and reads again after a pause', async () => {
    describePlan.mockRejectedValueOnce(new ZkError('getChildren', -4, PLAN)); // CONNECTION_LOSS
    const { messages } = openFeed({ retryMs: 500 });
    await vi.advanceTimersByTimeAsync(0);
    expect(messages).toEqual([
      { type: 'problem', message: expect.stringContaining('CONNECTION_LOSS') },
    ]);
    await vi.advanceTimersByTimeAsync(600);
    expect(describePlan).toHaveBeenCalledTimes(2);
    expect(messages.at(-1)).toMatchObject({ type: 'snapshot' });
  });

  it('reads again when a task waiting for its next try may start (no ZooKeeper event marks it)', async () => {
    const retrying: TaskView = {
      ...task(1, 'retrying'),
      attempts: { failures: 1, nextTryAt: new Date(Date.now() + 2_000), lastError: 'boom' },
    };
    current = planView([retrying]);
    openFeed();
    await vi.advanceTimersByTimeAsync(0);
    current = planView([task(1, 'runnable')]);
    await vi.advanceTimersByTimeAsync(2_100);
    expect(describePlan).toHaveBeenCalledTimes(2);
  });
});

describe('PlansFeed', () => {
  it('lists plans, watching the parent and each plan, and pushes only changes', async () => {
    let summaries: PlanSummary[] = [
      { plan: PLAN, status: planView([task(1, 'running')]).status, done: 0 },
    ];
    const listPlans = vi.fn(async () => summaries);
    const feed = new PlansFeed({ zk, plans: { list: listPlans } }, PARENT, { minIntervalMs: 100 });
    const messages: PlansFeedMessage[] = [];
    feed.subscribe((message) => messages.push(message));
    await vi.advanceTimersByTimeAsync(0);
    expect(messages).toEqual([
      {
        type: 'plans',
        plans: [
          expect.objectContaining({
            plan: PLAN,
            name: 'plan-0000000001',
            state: 'running',
            historyKept: true,
          }),
        ],
      },
    ]);
    for (const path of [PARENT, `${PLAN}/history`]) expect(zk.watchCount(path), path).toBe(1);
    expect(zk.watchCount(PLAN)).toBe(2); // its children, and the failed marker's appearance
    zk.fire(PLAN);
    await vi.advanceTimersByTimeAsync(150);
    expect(listPlans).toHaveBeenCalledTimes(2);
    expect(messages).toHaveLength(1);
    summaries = [{ plan: PLAN, status: planView([task(1, 'done')]).status, done: 1 }];
    zk.fire(`${PLAN}/history`);
    await vi.advanceTimersByTimeAsync(150);
    expect(messages.at(-1)).toEqual({
      type: 'plans',
      plans: [expect.objectContaining({ state: 'completed', done: 1, total: 1 })],
    });
    feed.close();
  });

  it('shows no plans while the parent does not exist, and watches for it', async () => {
    zk.existing.delete(PARENT);
    const feed = new PlansFeed(
      { zk, plans: { list: vi.fn(async () => Promise.reject(new PlanNotFoundError(PARENT))) } },
      PARENT,
    );
    const messages: PlansFeedMessage[] = [];
    feed.subscribe((message) => messages.push(message));
    await vi.advanceTimersByTimeAsync(0);
    expect(messages).toEqual([{ type: 'plans', plans: [] }]);
    expect(zk.watchCount(PARENT)).toBe(1);
    feed.close();
  });
});

describe('CoalescingRunner', () => {
  it('never runs twice at once and folds triggers during a run into one more run', async () => {
    let active = 0;
    let most = 0;
    const runner = new CoalescingRunner(
      async () => {
        active += 1;
        most = Math.max(most, active);
        await new Promise((resolve) => setTimeout(resolve, 100));
        active -= 1;
      },
      50,
      60_000,
    );
    runner.start();
    await vi.advanceTimersByTimeAsync(10);
    for (let i = 0; i < 5; i++) runner.trigger();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runner.runs).toBe(2);
    expect(most).toBe(1);
    runner.close();
  });
});

describe('WatchSet', () => {
  it('arms a key once until its watch fires, and forgets a key whose arming failed', async () => {
    const fired: string[] = [];
    const watches = new WatchSet((key) => fired.push(key));
    let set: Watcher | undefined;
    const arm = vi.fn(async (watcher: Watcher) => {
      set = watcher;
    });
    await watches.arm('a', arm);
    await watches.arm('a', arm);
    expect(arm).toHaveBeenCalledTimes(1);
    set?.({ type: 'child', path: '/a' });
    set?.({ type: 'child', path: '/a' });
    expect(fired).toEqual(['a']);
    expect(watches.has('a')).toBe(false);
    await expect(watches.arm('b', async () => Promise.reject(new Error('no')))).rejects.toThrow(
      'no',
    );
    expect(watches.has('b')).toBe(false);
  });
});

describe('the feeds over the in-memory ZooKeeper', () => {
  it('leave no watch on a plan once it is deleted: nodes not there yet (failed marker, history, owners) are watched through the nodes above them', async () => {
    vi.useRealTimers();
    const server = new MemoryZooKeeper();
    const { zk, zkPlan } = memoryProcess(server, 'ui');
    const plan = await zkPlan.createPlan(PARENT);
    const [first] = await zkPlan.addTasks(plan, [{ task: call('f') }, { task: call('f') }]);
    await zkPlan.addTask(plan, call('f'), [first!]);
    await zkPlan.markAsReady(plan);
    const timing = { minIntervalMs: 10 };
    const planFeed = new PlanFeed({ zk, plans: zkPlan.plans }, plan, timing);
    const plansFeed = new PlansFeed({ zk, plans: zkPlan.plans }, PARENT, timing);
    const planMessages: PlanFeedMessage[] = [];
    const plansMessages: PlansFeedMessage[] = [];
    planFeed.subscribe((message) => planMessages.push(message));
    const unsubscribePlans = plansFeed.subscribe((message) => plansMessages.push(message));
    await expect.poll(() => planMessages.length + plansMessages.length).toBeGreaterThanOrEqual(2);
    const onPlan = (): string[] =>
      server
        .watches()
        .flatMap((watch) =>
          watch.path === plan || watch.path.startsWith(`${plan}/`)
            ? [`${watch.kind} ${watch.path}`]
            : [],
        );
    expect(onPlan().length).toBeGreaterThan(0);
    expect(onPlan().filter((watch) => watch.startsWith('exists'))).toEqual([]);

    await zkPlan.plans.delete(plan);
    await expect.poll(() => planFeed.isClosed).toBe(true);
    expect(planMessages.at(-1)).toEqual({ type: 'gone', plan });
    await expect.poll(() => plansMessages.at(-1)).toEqual({ type: 'plans', plans: [] });
    expect(onPlan()).toEqual([]);
    unsubscribePlans();
    zk.close();
  });
});
