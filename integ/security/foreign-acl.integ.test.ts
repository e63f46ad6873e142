/**
 * Security finding 3 and its defence in depth: with an `acl` configured, zk-plan refuses a parent
 * that is wider than that ACL (created world-open by the CLI or another tool, or squatted), and
 * workers refuse plans and tasks whose ACL is not the configured one, instead of running what an
 * outsider may have planted there.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { FunctionRegistry, call, digestAcl, type ZkAuth } from '../../src/index.js';
import { encodeValue } from '../../src/serialization/codec.js';
import { TIMING, useZooKeeper } from '../support/zk-test-env.js';

const env = useZooKeeper('security-foreign-acl');

const aliceAuth: ZkAuth = { scheme: 'digest', id: 'alice:secret' };
const alice = { auth: aliceAuth, acl: [digestAcl('alice:secret')] };

function registry(runs: unknown[]): FunctionRegistry {
  return new FunctionRegistry()
    .register('constant', (ctx) => ctx.params[0])
    .register('planted', (ctx) => {
      runs.push(ctx.params);
      return 'owned';
    });
}

describe('security: nodes wider than the configured acl are refused', () => {
  it('a world-open parent: no plan is created under it and no worker runs what was squatted there', async () => {
    const parent = env.root();
    const squatter = await env.client();
    await squatter.create(parent);
    const squatted = `${parent}/plan-0000000000`;
    await squatter.create(squatted);
    await squatter.create(`${squatted}/ready`);
    const task = await squatter.create(
      `${squatted}/task-0000000000`,
      encodeValue({ fn: 'planted', params: ['squatter'] }, 'planted task'),
    );
    await squatter.create(`${task}/ready`);

    const runs: unknown[] = [];
    const zkPlan = await env.zkPlan({ ...alice, functions: registry(runs) });
    await expect(zkPlan.createPlan(parent)).rejects.toMatchObject({
      code: 'FOREIGN_ACL',
      path: parent,
    });

    const refused = once(zkPlan, 'worker:error');
    const pool = zkPlan.startWorkers(parent, { count: 1, backoff: { initial: 10, max: 50 } });
    try {
      const [{ error }] = (await refused) as [{ error: { code: string; message: string } }];
      expect(error).toMatchObject({ code: 'FOREIGN_ACL' });
      expect(error.message).toContain(
        `the parent of plans ${parent} has the ACL world:anyone:cdrwa`,
      );
      // Several more rounds of the worker loop: still nothing of the squatted plan runs.
      for (let round = 0; round < 3; round++) await once(zkPlan, 'worker:error');
    } finally {
      await pool.stop();
    }
    expect(runs).toEqual([]);
    expect(await squatter.exists(`${task}/owner`)).toBeUndefined();
  });

  it('a task that is world-open under a protected plan fails for good, unrun, while its neighbours run', async () => {
    const parent = env.root();
    const runs: unknown[] = [];
    const zkPlan = await env.zkPlan({ ...alice, functions: registry(runs) });
    const plan = await zkPlan.createPlan(parent);
    // As an older zk-plan or another tool would have left it: a task open to anyone.
    const foreign = await zkPlan.addTask(plan, call('planted', 'made world-open'));
    await zkPlan.zk.setAcl(foreign, [{ perms: 31, scheme: 'world', id: 'anyone' }]);
    const fine = await zkPlan.addTask(plan, call('constant', 7), [], { keepResult: true });

    const failures: { task: string; error: { code: string } }[] = [];
    zkPlan.on('task:failed', (event) => failures.push(event as never));
    const pool = zkPlan.startWorkers(parent, { count: 1, backoff: { initial: 10, max: 50 } });
    try {
      await zkPlan.markAsReady(plan);
      await zkPlan.waitForCompletion(plan, { timeoutMs: 20_000 * TIMING }).catch(() => undefined);
    } finally {
      await pool.stop();
    }
    expect(runs).toEqual([]);
    expect(failures.map(({ task, error }) => ({ task, code: error.code }))).toContainEqual({
      task: foreign,
      code: 'FOREIGN_ACL',
    });
    expect(await zkPlan.getResult(fine)).toBe(7);
  });
});
