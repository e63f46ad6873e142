import { describe, expect, it } from 'vitest';
import {
  DuplicateTaskKeyError,
  FunctionRegistry,
  call,
  type PlanView,
  type TaskToAdd,
} from '../src/index.js';
import { crashBeforeWrite } from './support/crash-before-write.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

/**
 * The key claims of addTasks on a real server: a builder whose process dies right before its N-th
 * write of a batch of keyed tasks (its session closed there; its ephemeral builder node goes when
 * the server hears the close, or when the session expires, as after a kill -9), for N = 1, 2, …
 * until the batch is written without a crash. Whatever the crash point, the batch is then either whole or gone: a second builder
 * adding the same keys is refused (TASK_KEY_TAKEN) exactly when the dead builder's batch was
 * committed, and succeeds when it was not; the plan then runs each key's task once, with the right
 * result, and its history names each key once. A batch committed by the dead builder but not made
 * ready is found by the workers' full scan (its tasks are not indexed yet): the survivor scans every
 * second (`fullScanIntervalMs`) rather than every 10 s, else each of those crash points takes 10–20 s.
 */
const env = useZooKeeper('key-claim-crashes');

const KEYS = ['load-eu', 'load-us', 'merge'] as const;
/** The doomed builder's session timeout (env.zkPlan's 10 s) with room for a loaded machine. */
const SESSION_EXPIRY_WAIT_MS = 30_000;
/** The survivor's full scan, which finds a batch the dead builder committed but did not index. */
const FULL_SCAN_INTERVAL_MS = 1_000;

interface Runs {
  readonly byKey: Map<string, number>;
  release: () => void;
}

function registry(runs: Runs, held: Promise<void>): FunctionRegistry {
  const count = (key: string): void => {
    runs.byKey.set(key, (runs.byKey.get(key) ?? 0) + 1);
  };
  return (
    new FunctionRegistry()
      // Keeps the plan running until the checks are done: a plan whose only batch was removed would
      // otherwise complete empty before the second builder adds its batch.
      .register('hold', async () => {
        await held;
        return 'held';
      })
      .register('load', (ctx) => {
        count(`load-${String(ctx.params[0])}`);
        return [String(ctx.params[0])];
      })
      .register('merge', (_ctx, ...parts: string[][]) => {
        count('merge');
        return parts.flat().join('+');
      })
  );
}

/** The keyed batch both builders add: two loads and the merge of their results. */
const BATCH: readonly TaskToAdd[] = [
  { task: call('load', 'eu'), options: { key: 'load-eu' } },
  { task: call('load', 'us'), options: { key: 'load-us' } },
  { task: call('merge'), args: [0, 1], options: { key: 'merge', keepResult: true } },
];

/** The keys the plan's tasks (live and in the history) carry, each as often as a task has it. */
function keysOf(view: PlanView): string[] {
  return view.tasks.flatMap((task) => (task.key === undefined ? [] : [task.key])).sort();
}

describe('a builder dying before any write of a batch of keyed tasks', () => {
  it(
    'leaves the batch whole or gone: a second builder gets the keys exactly when it is gone, and each key runs once',
    { timeout: 300_000 },
    async () => {
      const outcomes: string[] = [];
      for (let crashAt = 1; crashAt < 60; crashAt++) {
        let release = (): void => undefined;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        const runs: Runs = { byKey: new Map(), release };
        const functions = registry(runs, held);
        const parent = env.root();
        const survivor = await env.zkPlan({ functions, fullScanIntervalMs: FULL_SCAN_INTERVAL_MS });
        const plan = await survivor.createPlan(parent);
        await survivor.addTask(plan, call('hold'), [], { key: 'hold' });
        await survivor.markAsReady(plan);
        const pool = survivor.startWorkers(parent, { count: 3, backoff: { initial: 5, max: 20 } });

        const doomed = await env.zkPlan({ functions });
        const doomedBuilder = `builder-${doomed.zk.session.id}`;
        const hook = crashBeforeWrite(doomed.zk, crashAt);
        const first = await doomed.addTasks(plan, BATCH).then(
          (paths) => ({ paths }),
          (error: unknown) => ({ error }),
        );
        const crashed = hook.crashed();
        if ('error' in first && !crashed) throw first.error;

        // Its session was closed, but the close may not reach the server (the client is torn down
        // with requests still in flight), and then the session goes only when it expires, after
        // its timeout (10 s), as after a kill -9. Until its ephemeral builder node is gone the
        // builder counts as alive, and its unfinished batch keeps its keys: wait for that.
        const crashedAt = Date.now();
        if (crashed)
          await waitFor(
            "the dead builder's node to go",
            async () => {
              const children = (await survivor.zk.getChildren(plan)).children;
              return !children.includes(doomedBuilder);
            },
            { timeoutMs: SESSION_EXPIRY_WAIT_MS },
          );
        const builderGoneMs = Date.now() - crashedAt;
        // The dead builder's batch was committed exactly when a second add of the same keys is refused.
        const second = await survivor.addTasks(plan, BATCH).then(
          (paths) => ({ paths }),
          (error: unknown) => ({ error }),
        );
        let committed: boolean;
        if ('paths' in second) committed = false;
        else if (second.error instanceof DuplicateTaskKeyError) committed = true;
        else throw second.error;
        if (!crashed) expect(committed).toBe(true);

        runs.release();
        await survivor.waitForCompletion(plan, { timeoutMs: 40_000 });
        await pool.stop();
        const view = await survivor.plans.describe(plan);
        expect(keysOf(view)).toEqual([...KEYS, 'hold'].sort());
        expect(Object.fromEntries(runs.byKey)).toEqual({ 'load-eu': 1, 'load-us': 1, merge: 1 });
        const merge = view.tasks.find((task) => task.key === 'merge');
        expect(merge).toBeDefined();
        expect(await survivor.getResult(merge?.task ?? '')).toBe('eu+us');
        outcomes.push(
          `crash before write ${crashAt}: ${crashed ? 'crashed' : 'no crash'}, batch ${committed ? 'committed by the dead builder' : 'gone, added again'}, builder node gone after ${builderGoneMs} ms`,
        );
        await Promise.all([doomed.close(), survivor.close()]);
        if (!crashed) break;
      }
      console.log(outcomes.join('\n'));
      // Every write of the batch was a crash point: task nodes, key claims, links, the commit, the readies.
      expect(outcomes.length).toBeGreaterThan(8);
      expect(outcomes.some((line) => line.includes('committed by the dead builder'))).toBe(true);
      expect(outcomes.some((line) => line.includes('gone, added again'))).toBe(true);
    },
  );
});
