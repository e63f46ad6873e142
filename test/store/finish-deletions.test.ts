/**
 * How a finished task is deleted, seen at the ZooKeeper seam: which requests travel together
 * (sent before the first of them is answered) and which wait for the ones before them. The
 * session applies requests in the order they are sent, so requests sent together cost one round
 * trip, and a crash leaves a prefix of them applied; test/worker/crash-injection.test.ts crashes
 * the process before each of these writes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { CHUNK_BYTES } from '../../src/zk/chunked-value.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/finish-deletions';

/** Every delete and listing the process sends, and when each is answered, in order. */
function recordRequests(process: MemoryProcess): string[] {
  const log: string[] = [];
  const zk = process.zk;
  const trace = <T>(what: string, request: Promise<T>): Promise<T> => {
    log.push(`send ${what}`);
    request.then(
      () => log.push(`answer ${what}`),
      () => log.push(`answer ${what}`),
    );
    return request;
  };
  const deleteOriginal = zk.delete.bind(zk);
  zk.delete = (path, version, options) =>
    trace(`delete ${path}`, deleteOriginal(path, version, options));
  const listOriginal = zk.getChildren.bind(zk);
  zk.getChildren = (path, watcher) => trace(`list ${path}`, listOriginal(path, watcher));
  return log;
}

/** The position of `entry` in the log at or after `from`; fails the test when it is missing. */
function position(log: readonly string[], entry: string, from = 0): number {
  const found = log.indexOf(entry, from);
  expect(found, `${entry} in\n${log.join('\n')}`).toBeGreaterThanOrEqual(0);
  return found;
}

describe('deleting a finished task', () => {
  let process: MemoryProcess | undefined;
  afterEach(async () => {
    await process?.zkPlan.close();
    process = undefined;
  });

  /** Runs a plan of `build`'s tasks to completion on one pool, recording its requests. */
  async function run(
    functions: FunctionRegistry,
    build: (zkPlan: MemoryProcess['zkPlan'], plan: string) => Promise<string>,
  ): Promise<{ log: string[]; task: string }> {
    process = memoryProcess(new MemoryZooKeeper(), 'worker', functions);
    const { zkPlan } = process;
    const plan = await zkPlan.createPlan(PARENT);
    const task = await build(zkPlan, plan);
    const log = recordRequests(process);
    await zkPlan.markAsReady(plan);
    const pool = zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF });
    await zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    await pool.stop();
    return { log, task };
  }

  it('sends the task listing with the finishing writes, after `ready` is deleted', async () => {
    const { log, task } = await run(
      new FunctionRegistry().register('one', () => 1),
      (zkPlan, plan) => zkPlan.addTask(plan, call('one')),
    );
    const readyDeleted = position(log, `send delete ${task}/ready`);
    const listed = position(log, `send list ${task}`, readyDeleted);
    expect(listed).toBeLessThan(position(log, `answer delete ${task}/ready`));
  });

  it('sends the deletions of a plain result, the owner and the task node in one round trip, in that order', async () => {
    const { log, task } = await run(
      new FunctionRegistry().register('one', () => 1),
      (zkPlan, plan) => zkPlan.addTask(plan, call('one')),
    );
    const result = position(log, `send delete ${task}/result`);
    const owner = position(log, `send delete ${task}/owner`);
    const node = position(log, `send delete ${task}`);
    expect(result).toBeLessThan(owner);
    expect(owner).toBeLessThan(node);
    expect(node).toBeLessThan(position(log, `answer delete ${task}/result`));
  });

  it('deletes a chunked result, chunks first, before it sends the owner deletion', async () => {
    const big = 'x'.repeat(CHUNK_BYTES + 10);
    const { log, task } = await run(
      new FunctionRegistry().register('big', () => big),
      (zkPlan, plan) => zkPlan.addTask(plan, call('big')),
    );
    const chunk = position(log, `answer delete ${task}/result/chunk-0000000000`);
    const header = log.lastIndexOf(`answer delete ${task}/result`);
    expect(chunk).toBeLessThan(header);
    expect(header).toBeLessThan(position(log, `send delete ${task}/owner`));
  });

  it('sends the deletions of the links of a task that fed a dependent with those of its result, owner and node', async () => {
    const functions = new FunctionRegistry().register('one', () => 1).register('next', () => 2);
    let producer = '';
    const { log } = await run(functions, async (zkPlan, plan) => {
      producer = await zkPlan.addTask(plan, call('one'));
      return await zkPlan.addTask(plan, call('next'), [producer]);
    });
    const link = log.find((entry) => entry.startsWith(`send delete ${producer}/prov-`));
    expect(link, log.join('\n')).toBeDefined();
    const linkDeleted = position(log, link!.replace('send', 'answer'));
    expect(position(log, `send delete ${producer}/result`)).toBeLessThan(linkDeleted);
    expect(position(log, `send delete ${producer}`)).toBeLessThan(linkDeleted);
  });

  it('deletes the inputs of a task before it sends the deletion of its result', async () => {
    const functions = new FunctionRegistry().register('one', () => 1).register('next', () => 2);
    const { log, task } = await run(functions, async (zkPlan, plan) => {
      const first = await zkPlan.addTask(plan, call('one'));
      return await zkPlan.addTask(plan, call('next'), [first]);
    });
    const resultDeletion = position(log, `send delete ${task}/result`);
    const inputs = log
      .map((entry, index) => ({ entry, index }))
      .filter(({ entry }) => entry.startsWith(`answer delete ${task}/arg-`));
    expect(inputs).toHaveLength(1);
    expect(inputs[0]!.index).toBeLessThan(resultDeletion);
  });
});
