/**
 * Review of the finishing writes (src/store/task-store.ts `finish`, `giveInput`). A value that looks
 * like a chunk header (`isHeaderLike`) is stored in chunked form, a header plus one chunk, however
 * small it is (`isStoredPlain` is false for it). `finish` decides on `encoded.length <= CHUNK_BYTES`
 * alone: it sends the result's header with `ready`'s deletion and the dependents' inputs, and the
 * chunk only after the header is answered, after `ready` is gone. `giveInput` does the same for
 * the input: the dep is deleted in the same round trip as the input's header, before its chunk.
 * A crash in between leaves a result or an input that reads as incomplete for ever: the dependent
 * never runs, and the plan stays open.
 */
import { describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CrashScheduler, Victim } from '../support/crash-scheduler.js';
import { FAST_BACKOFF, memoryProcess } from '../support/memory-plan.js';

const PARENT = '/header-like-crash';
/** A user value that is header-like: stored as a header plus one chunk. */
const HEADER_LIKE = { zkPlanChunked: 1, bytes: 1, chunks: 1, sha256: 'ab' } as const;

type Strike = (producer: string, dependent: string) => (op: string, path: string) => boolean;

describe('a producer whose small result is header-like, crashed while finishing', () => {
  it.each<[string, Strike]>([
    [
      "right before its result's chunk is created",
      (producer) => (op, path) => op === 'create' && path === `${producer}/result/chunk-0000000000`,
    ],
    [
      "right before the dependent's input chunk is created",
      (_producer, dependent) => (op, path) =>
        op === 'create' && path.startsWith(`${dependent}/arg-`) && path.includes('/chunk-'),
    ],
  ])(
    '%s: the next worker completes the plan, the dependent gets the value',
    async (_title, strike) => {
      const scheduler = new CrashScheduler();
      const server = new MemoryZooKeeper({ scheduler });
      const inputs: unknown[] = [];
      const functions = new FunctionRegistry()
        .register('headerLike', () => ({ ...HEADER_LIKE }))
        .register('take', (_ctx: TaskContext<unknown[]>, input: unknown) => {
          inputs.push(input);
          return 'done';
        });
      const setup = memoryProcess(server, 'setup', functions);
      const plan = await setup.zkPlan.createPlan(PARENT);
      const producer = await setup.zkPlan.addTask(plan, call('headerLike'));
      const dependent = await setup.zkPlan.addTask(plan, call('take'), [producer]);
      await setup.zkPlan.markAsReady(plan);

      const doomed = memoryProcess(server, 'doomed', functions);
      const victim = new Victim(server, doomed.zk, 0, strike(producer, dependent));
      scheduler.victim = victim;
      doomed.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, workerId: 'doomed' });
      const point = await victim.crashed;
      expect(point.op).toBe('create');

      const survivor = memoryProcess(server, 'survivor', functions);
      const pool = survivor.zkPlan.startWorkers(PARENT, {
        count: 2,
        backoff: FAST_BACKOFF,
        workerId: 'survivor',
      });
      let error: unknown;
      try {
        await survivor.zkPlan.waitForCompletion(plan, { timeoutMs: 5_000 });
      } catch (caught) {
        error = caught;
      }
      const left = server.dump(plan);
      await pool.stop();
      expect({ error: error === undefined ? undefined : String(error), inputs }, left).toEqual({
        error: undefined,
        inputs: [HEADER_LIKE],
      });
      await Promise.all([setup.zkPlan.close(), survivor.zkPlan.close()]);
    },
    20_000,
  );
});
