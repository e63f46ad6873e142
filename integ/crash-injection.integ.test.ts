import { describe, expect, it } from 'vitest';
import { FunctionRegistry, call, type ZkPlan } from '../src/index.js';
import { crashBeforeWrite } from './support/crash-before-write.js';
import { useZooKeeper, waitFor } from './support/zk-test-env.js';

/**
 * A worker that crashes between any two of its writes while performing a task (and handing its
 * result on): the crash is injected by a hook on the doomed worker's client, which closes its
 * session right before its N-th write, for N = 1, 2, … until the task completes without a crash.
 * A second worker then finishes the plan; the plan's outcome must be as if the task ran once.
 */
const env = useZooKeeper('crash-injection');

interface Counts {
  produce: number;
  consume: number;
}

function registry(counts: Counts): FunctionRegistry {
  return new FunctionRegistry()
    .register('produce', () => {
      counts.produce += 1;
      return { value: 42, at: new Date(1_000) };
    })
    .register('consume', (ctx, input: { value: number; at: Date }) => {
      counts.consume += 1;
      return input.value + (ctx.params[0] as number) + input.at.getTime();
    });
}

async function buildPlan(
  zkPlan: ZkPlan,
  parent: string,
): Promise<{ plan: string; producer: string; consumers: string[] }> {
  const plan = await zkPlan.createPlan(parent);
  const producer = await zkPlan.addTask(plan, call('produce'), [], { keepResult: true });
  const consumers = [
    await zkPlan.addTask(plan, call('consume', 1), [producer], { keepResult: true }),
    await zkPlan.addTask(plan, call('consume', 2), [producer], { keepResult: true }),
  ];
  return { plan, producer, consumers };
}

async function survivorView(zkPlan: ZkPlan, plan: string): Promise<string> {
  const tasks = ((await zkPlan.zk.tryGetChildren(plan))?.children ?? []).sort();
  const rows = await Promise.all(
    tasks.map(
      async (name) =>
        `${name}: ${((await zkPlan.zk.tryGetChildren(`${plan}/${name}`))?.children ?? []).sort().join(',')}`,
    ),
  );
  return rows.join(' | ');
}

describe('a crash between any two writes of performing a task', () => {
  it('is finished by the next worker with the outcome of a single run, for every crash point', async () => {
    const outcomes: string[] = [];
    for (let crashAt = 1; crashAt < 40; crashAt++) {
      const counts: Counts = { produce: 0, consume: 0 };
      const builder = await env.zkPlan({ functions: registry(counts) });
      const parent = env.root();
      const { plan, producer, consumers } = await buildPlan(builder, parent);
      const doomed = await env.zkPlan({ functions: registry(counts) });
      const hook = crashBeforeWrite(doomed.zk, crashAt);
      await builder.markAsReady(plan);
      // The doomed worker performs the producer (the only runnable task) and stops right after it, or crashes.
      const stop = new AbortController();
      let producerDone = false;
      doomed.on('task:completed', (event) => {
        producerDone = event.task === producer;
        stop.abort();
      });
      const doomedLoop = doomed.worker(parent, { backoff: { initial: 5, max: 20 } }, stop.signal);
      await waitFor(
        'the doomed worker to crash or finish the producer',
        () => hook.crashed() || producerDone,
        { intervalMs: 5 },
      );
      stop.abort();
      await doomedLoop;
      const completedWithoutCrash = !hook.crashed();
      if (process.env['CRASH_INJECTION_DEBUG'])
        console.log(
          `crash point ${crashAt}: crashed=${hook.crashed()}`,
          await survivorView(builder, plan),
        );
      const survivor = await env.zkPlan({ functions: registry(counts) });
      const pool = survivor.startWorkers(parent, { backoff: { initial: 5, max: 20 } });
      await survivor.waitForCompletion(plan, { timeoutMs: 20_000 });
      await pool.stop();
      expect(await survivor.getResult(producer)).toEqual({ value: 42, at: new Date(1_000) });
      expect(await Promise.all(consumers.map((task) => survivor.getResult(task)))).toEqual([
        1_043, 1_044,
      ]);
      expect(counts.consume).toBe(2); // each dependent ran once: its input was handed over exactly once
      expect(counts.produce).toBeGreaterThanOrEqual(1);
      outcomes.push(
        `crash before write ${crashAt}: producer ran ${counts.produce}×, consumers ran ${counts.consume}×`,
      );
      await Promise.all([builder.close(), doomed.close(), survivor.close()]);
      if (completedWithoutCrash) break;
    }
    console.log(outcomes.join('\n'));
    expect(outcomes.length).toBeGreaterThan(10); // every write of the producer's run, propagation and deletion was a crash point
  });
});
