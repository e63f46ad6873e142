import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { TaskStore } from '../../src/store/task-store.js';
import { Dispatcher } from '../../src/worker/dispatcher.js';
import { WakeUp } from '../../src/worker/wake-up.js';

/**
 * `ConnectOptions.fullScanIntervalMs` reaches the dispatcher: one caller of the process per parent
 * is told to scan the parent's plans in full at the first call, then once per interval, and no
 * more often.
 */
describe('the full scan interval of a process', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('makes a full scan due once per interval, first at the first call', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const zk = new MemoryZooKeeper().connect({ name: 'worker' });
    const dispatcher = new Dispatcher(zk, new TaskStore(zk), new WakeUp(), 250);
    expect(dispatcher.fullScanDue('/plans')).toBe(true);
    expect(dispatcher.fullScanDue('/plans')).toBe(false);
    vi.advanceTimersByTime(249);
    expect(dispatcher.fullScanDue('/plans')).toBe(false);
    vi.advanceTimersByTime(1);
    expect(dispatcher.fullScanDue('/plans')).toBe(true);
    expect(dispatcher.fullScanDue('/plans')).toBe(false);
  });

  it("counts per parent: one pool's loops never use up another parent's scans", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const zk = new MemoryZooKeeper().connect({ name: 'worker' });
    const dispatcher = new Dispatcher(zk, new TaskStore(zk), new WakeUp(), 250);
    expect(dispatcher.fullScanDue('/upstream')).toBe(true);
    expect(dispatcher.fullScanDue('/plans')).toBe(true);
    vi.advanceTimersByTime(100);
    expect(dispatcher.fullScanDue('/upstream')).toBe(false);
    expect(dispatcher.fullScanDue('/plans')).toBe(false);
  });
});
