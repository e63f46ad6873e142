/**
 * TryLog's ordering with a store whose writes the test answers: `finish` must wait for a write
 * already in flight (which took every line) and then write once more with `finishedAt`, so that a
 * completion recorded after `finish` never overtakes the try's last lines. Found by the simulation
 * (seed 374 of sim-2: the flush timer fired just before the function returned).
 */
import { describe, expect, it } from 'vitest';
import type { TaskLogAttempt } from '../../src/logs/attempt-log-record.js';
import type { TaskLogStore } from '../../src/logs/task-log-store.js';
import { TryLog } from '../../src/logs/try-log.js';
import { ZkError } from '../../src/errors/zk-error.js';

interface PendingWrite {
  readonly record: TaskLogAttempt;
  readonly answer: (outcome: 'written' | Error) => void;
}

function controlledStore(): { store: TaskLogStore; writes: PendingWrite[] } {
  const writes: PendingWrite[] = [];
  const store = {
    reserve: async (_plan: string, bytes: number) => bytes,
    write: (_task: string, _tryName: string, record: TaskLogAttempt) =>
      new Promise<'written'>((resolve, reject) => {
        writes.push({
          record,
          answer: (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome)),
        });
      }),
  } as unknown as TaskLogStore;
  return { store, writes };
}

const IDENTITY = {
  plan: '/p/plan-0000000001',
  task: '/p/plan-0000000001/task-0000000001',
  attempt: 1,
  tryName: 'try-0001-abc',
  workerId: 'w',
};
const SETTINGS = { maxBytesPerAttempt: 8_192, maxBytesPerPlan: 1_000_000, flushIntervalMs: 10 };

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

describe('TryLog', () => {
  it('waits for a write in flight that took every line, then writes once more with finishedAt', async () => {
    const { store, writes } = controlledStore();
    const log = new TryLog({
      identity: IDENTITY,
      store,
      settings: SETTINGS,
      host: 'h',
      onError: () => undefined,
    });
    log.logger.info('one');
    log.logger.info('two');
    await until(() => writes.length === 1); // the timer's write is in flight with both lines
    let finished = false;
    const finishing = log.finish().then(() => {
      finished = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(finished).toBe(false); // not before the write in flight is answered
    writes[0]?.answer('written');
    await until(() => writes.length === 2);
    expect(writes[1]?.record.finishedAt).toBeInstanceOf(Date);
    expect(writes[1]?.record.lines.map(({ msg }) => msg)).toEqual(['one', 'two']);
    expect(finished).toBe(false);
    writes[1]?.answer('written');
    await finishing;
  });

  it('sends the last write again when it failed on the connection, and gives up on other errors', async () => {
    const { store, writes } = controlledStore();
    const errors: unknown[] = [];
    const log = new TryLog({
      identity: IDENTITY,
      store,
      settings: { ...SETTINGS, flushIntervalMs: 60_000 },
      host: 'h',
      onError: (error) => errors.push(error),
    });
    log.logger.warn('last words');
    const finishing = log.finish();
    await until(() => writes.length === 1);
    writes[0]?.answer(new ZkError('create', -112, IDENTITY.task)); // SESSION_EXPIRED
    await until(() => writes.length === 2);
    writes[1]?.answer('written');
    await finishing;
    expect(errors).toHaveLength(1);

    const other = controlledStore();
    const failing = new TryLog({
      identity: IDENTITY,
      store: other.store,
      settings: { ...SETTINGS, flushIntervalMs: 60_000 },
      host: 'h',
      onError: () => undefined,
    });
    failing.logger.info('x');
    const done = failing.finish();
    await until(() => other.writes.length === 1);
    other.writes[0]?.answer(new Error('malformed'));
    await done;
    expect(other.writes).toHaveLength(1);
  });

  it('writes nothing for a try that logged nothing', async () => {
    const { store, writes } = controlledStore();
    await new TryLog({
      identity: IDENTITY,
      store,
      settings: SETTINGS,
      host: 'h',
      onError: () => undefined,
    }).finish();
    expect(writes).toHaveLength(0);
  });
});
