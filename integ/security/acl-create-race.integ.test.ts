/**
 * Security finding 2: an unauthenticated client racing an authenticated builder. Before the fix the
 * native client created every node world-open and zk-plan set the ACL one round trip later; the
 * attacker, who needs no permission to call `exists` and so can tell the next `plan-N`, created
 * `ready` and a `task-9000000000` of its own under new plans in that window, which stayed
 * world-open for good and were run by the authorised workers. Now the ACL travels in the create
 * request: no node under a protected plan is ever world-open, and no planted task runs.
 */
import { describe, expect, it } from 'vitest';
import {
  FunctionRegistry,
  call,
  digestAcl,
  digestId,
  type AclEntry,
  type ZkAuth,
} from '../../src/index.js';
import { encodeValue } from '../../src/serialization/codec.js';
import type { ZkClient } from '../../src/testing/index.js';
import { TIMING, useZooKeeper } from '../support/zk-test-env.js';

const env = useZooKeeper('security-acl-create-race');

const aliceAuth: ZkAuth = { scheme: 'digest', id: 'alice:secret' };
const alice = { auth: aliceAuth, acl: [digestAcl('alice:secret')] };
const aliceOnly: AclEntry[] = [{ perms: 31, scheme: 'digest', id: digestId('alice:secret') }];
const PLANS = 30;
const PLANTED_TASK = 'task-9000000000';

/** Every node at and below `path`, as `reader` (who may read them all) lists them. */
async function subtree(reader: ZkClient, path: string): Promise<string[]> {
  const { children } = await reader.getChildren(path);
  const below = await Promise.all(children.map((name) => subtree(reader, `${path}/${name}`)));
  return [path, ...below.flat()];
}

/**
 * The attacker: reads the parent's stat (no permission needed), guesses the next plan names from
 * its cversion, and keeps creating a `ready` node and a planted task under them, many at a time,
 * until `done`. Returns the nodes it managed to create.
 */
async function plantUnderNextPlans(
  attacker: ZkClient,
  parent: string,
  done: () => boolean,
): Promise<string[]> {
  const planted: string[] = [];
  const payload = encodeValue({ fn: 'planted', params: ['attacker'] }, 'planted task');
  const attempt = async (path: string, data: Buffer | null): Promise<boolean> => {
    try {
      await attacker.create(path, data);
      planted.push(path);
      return true;
    } catch {
      return false; // NO_NODE before the plan exists, NO_AUTH once it is protected
    }
  };
  while (!done()) {
    const stat = await attacker.exists(parent);
    if (stat === undefined) continue;
    const guesses = [0, 1, 2].map(
      (ahead) => `${parent}/plan-${String(stat.cversion + ahead).padStart(10, '0')}`,
    );
    await Promise.all(
      guesses.map(async (plan) => {
        await attempt(`${plan}/ready`, null);
        if (await attempt(`${plan}/${PLANTED_TASK}`, payload))
          await attempt(`${plan}/${PLANTED_TASK}/ready`, null);
      }),
    );
  }
  return planted;
}

describe('security: creating a protected plan races an unauthenticated client', () => {
  it('no node under a protected plan is world-open and no planted task runs', async () => {
    const parent = env.root();
    const plantedRuns: unknown[] = [];
    const functions = new FunctionRegistry()
      .register('constant', (ctx) => ctx.params[0])
      .register('planted', (ctx) => {
        plantedRuns.push(ctx.params);
        return 'owned';
      });
    const builder = await env.zkPlan({ ...alice, functions });
    await builder.zk.ensurePath(parent);
    const attacker = await env.client();
    let building = true;
    const attack = plantUnderNextPlans(attacker, parent, () => !building);

    const plans: string[] = [];
    try {
      for (let index = 0; index < PLANS; index++) {
        const plan = await builder.createPlan(parent);
        await builder.addTask(plan, call('constant', index), [], { keepResult: true });
        plans.push(plan);
      }
    } finally {
      building = false;
    }
    const planted = await attack;

    // What the attacker could leave behind: nodes it made, and any node not under alice's ACL.
    const nodes = (await Promise.all(plans.map((plan) => subtree(builder.zk, plan)))).flat();
    const acls = await Promise.all(
      nodes.map(async (node) => ({ node, acl: (await builder.zk.getAcl(node)).acl })),
    );
    expect(acls.filter(({ acl }) => JSON.stringify(acl) !== JSON.stringify(aliceOnly))).toEqual([]);
    expect(planted).toEqual([]);

    // And what the authorised workers run: only alice's tasks.
    const pool = builder.startWorkers(parent, { count: 2, backoff: { initial: 10, max: 100 } });
    try {
      await Promise.all(plans.map((plan) => builder.markAsReady(plan)));
      for (const plan of plans)
        await builder.waitForCompletion(plan, { timeoutMs: 20_000 * TIMING });
    } finally {
      await pool.stop();
    }
    expect(plantedRuns).toEqual([]);
  });
});
