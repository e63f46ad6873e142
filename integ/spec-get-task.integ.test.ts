import { describe, expect, it } from 'vitest';
import { getTask, getTaskFromAnyPlan } from '../src/worker/find-task.js';
import { TaskStore } from '../src/store/task-store.js';
import { childrenOf, put, putTask } from './support/raw-nodes.js';
import { useZooKeeper } from './support/zk-test-env.js';

const env = useZooKeeper('spec-get-task');

function seeker(workerId = 'w1') {
  return { workerId, stop: new AbortController().signal, taskSignal: new AbortController().signal };
}

describe('get-task (spec behaviours on real znodes)', () => {
  it('returns nothing for an empty plan', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    expect(await getTask(new TaskStore(zk), plan, seeker())).toBeUndefined();
  });

  it('returns a task that has no dep-* or owner child, ignoring other children', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['task-2345', 'ready', 'quux']);
    const claim = await getTask(new TaskStore(zk), plan, seeker());
    expect(claim?.task).toBe(`${plan}/task-0000001234`);
  });

  it('does not return tasks that have dep-* children', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['ready', 'quux', 'dep-0000000001']);
    expect(await getTask(new TaskStore(zk), plan, seeker())).toBeUndefined();
  });

  it('does not return tasks that have an owner node', async () => {
    const zk = await env.client();
    const other = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['ready', 'quux']);
    await other.create(`${plan}/task-0000001234/owner`, null, 'ephemeral');
    expect(await getTask(new TaskStore(zk), plan, seeker())).toBeUndefined();
  });

  it('does not take tasks that are not marked ready', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['quux']);
    expect(await getTask(new TaskStore(zk), plan, seeker())).toBeUndefined();
    expect(await childrenOf(zk, `${plan}/task-0000001234`)).toEqual(['quux']);
  });

  it("takes ownership by adding an ephemeral 'owner' node of its own session", async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['ready']);
    const claim = await getTask(new TaskStore(zk), plan, seeker('worker-a'));
    const owner = await zk.exists(`${plan}/task-0000001234/owner`);
    expect(claim?.task).toBe(`${plan}/task-0000001234`);
    expect(owner?.ephemeralOwner).toBe(zk.session.id);
    expect((await new TaskStore(zk).reads.readOwner(`${plan}/task-0000001234`))?.workerId).toBe(
      'worker-a',
    );
  });

  it('moves to the next task when it loses the ownership race', async () => {
    const zk = await env.client();
    const rival = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['ready']);
    await putTask(zk, `${plan}/task-0000002345`, ['ready']);
    const rivalClaim = await new TaskStore(rival).claim(
      `${plan}/task-0000001234`,
      'rival',
      new AbortController().signal,
    );
    expect(rivalClaim).toBeDefined();
    const claim = await getTask(new TaskStore(zk), plan, seeker());
    expect(claim?.task).toBe(`${plan}/task-0000002345`);
  });

  it('only one of many concurrent claimers wins a task', async () => {
    const clients = await Promise.all(Array.from({ length: 5 }, () => env.client()));
    const plan = await put(clients[0]!, `${env.root()}/plan-0000000001`);
    await putTask(clients[0]!, `${plan}/task-0000000001`, ['ready']);
    const claims = await Promise.all(
      clients.map((zk, index) => getTask(new TaskStore(zk), plan, seeker(`w${index}`))),
    );
    expect(claims.filter((claim) => claim !== undefined)).toHaveLength(1);
  });

  it('looks children up lazily: stops at the first task it takes', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['ready']);
    await putTask(zk, `${plan}/task-0000002345`, ['ready']);
    await put(zk, `${plan}/bat`);
    const listed: string[] = [];
    const getChildren = zk.getChildren.bind(zk);
    zk.getChildren = (path, watcher) => {
      listed.push(path);
      return getChildren(path, watcher);
    };
    const claim = await getTask(new TaskStore(zk), plan, seeker());
    expect(claim?.task).toBe(`${plan}/task-0000001234`);
    expect(listed).not.toContain(`${plan}/task-0000002345`); // never looked at the second task
  });

  it('moves on when a task is removed before it is examined', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['ready']);
    await putTask(zk, `${plan}/task-0000002345`, ['ready']);
    const store = new TaskStore(zk);
    const listPlan = store.reads.listPlan.bind(store.reads);
    // The plan is listed with both tasks, then the first one disappears before its children are read.
    store.reads.listPlan = async (path) => {
      const listing = await listPlan(path);
      await zk.deleteRecursive(`${plan}/task-0000001234`);
      return listing;
    };
    const claim = await getTask(store, plan, seeker());
    expect(claim?.task).toBe(`${plan}/task-0000002345`);
  });

  it('removes a task left without children (a deletion stopped half-way) and moves on', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/task-0000001234`, ['ready']);
    await zk.delete(`${plan}/task-0000001234/ready`); // had children, has none now
    await putTask(zk, `${plan}/task-0000002345`, ['ready']);
    const claim = await getTask(new TaskStore(zk), plan, seeker());
    expect(claim?.task).toBe(`${plan}/task-0000002345`);
    expect(await zk.exists(`${plan}/task-0000001234`)).toBeUndefined();
  });

  it('never removes a task that is still being built (created, no child yet)', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await put(zk, `${plan}/ready`);
    await putTask(zk, `${plan}/task-0000001234`, []); // addTask has created the node, nothing else yet
    expect(await getTask(new TaskStore(zk), plan, seeker())).toBeUndefined();
    expect(await zk.exists(`${plan}/task-0000001234`)).toBeDefined();
  });

  it('ignores children of the plan that are not task-*', async () => {
    const zk = await env.client();
    const plan = await put(zk, `${env.root()}/plan-0000000001`);
    await putTask(zk, `${plan}/bar`, ['ready']);
    await putTask(zk, `${plan}/baz`, ['ready']);
    await put(zk, `${plan}/ready`);
    expect(await getTask(new TaskStore(zk), plan, seeker())).toBeUndefined();
    expect(await zk.exists(`${plan}/bar/owner`)).toBeUndefined();
  });

  it('returns nothing when the plan does not exist', async () => {
    const zk = await env.client();
    expect(
      await getTask(new TaskStore(zk), `${env.root()}/plan-0000000009`, seeker()),
    ).toBeUndefined();
  });
});

describe('get-task-from-any-plan (spec behaviours on real znodes)', () => {
  it('returns nothing when the parent has no plans', async () => {
    const zk = await env.client();
    const parent = await put(zk, env.root());
    expect(await getTaskFromAnyPlan(new TaskStore(zk), parent, seeker())).toBeUndefined();
  });

  it('returns nothing when the parent does not exist', async () => {
    const zk = await env.client();
    expect(
      await getTaskFromAnyPlan(new TaskStore(zk), `${env.root()}/missing`, seeker()),
    ).toBeUndefined();
  });

  it('takes a task from a ready plan', async () => {
    const zk = await env.client();
    const parent = env.root();
    await put(zk, `${parent}/plan-0000000001/ready`);
    await putTask(zk, `${parent}/plan-0000000001/task-0000000001`, ['ready']);
    const claim = await getTaskFromAnyPlan(new TaskStore(zk), parent, seeker());
    expect(claim?.task).toBe(`${parent}/plan-0000000001/task-0000000001`);
  });

  it('skips plans that are not ready', async () => {
    const zk = await env.client();
    const parent = env.root();
    await putTask(zk, `${parent}/plan-0000000001/task-0000000001`, ['ready']);
    await put(zk, `${parent}/plan-0000000002/ready`);
    await putTask(zk, `${parent}/plan-0000000002/task-0000000001`, ['ready']);
    const claim = await getTaskFromAnyPlan(new TaskStore(zk), parent, seeker());
    expect(claim?.task).toBe(`${parent}/plan-0000000002/task-0000000001`);
    expect(await zk.exists(`${parent}/plan-0000000001/task-0000000001/owner`)).toBeUndefined();
  });

  it('moves on to the next plan when one has no runnable task, and does not look at further plans', async () => {
    const zk = await env.client();
    const parent = env.root();
    await put(zk, `${parent}/plan-0000000001/ready`);
    await putTask(zk, `${parent}/plan-0000000001/task-0000000001`, ['ready', 'dep-0000000001']);
    await put(zk, `${parent}/plan-0000000002/ready`);
    await putTask(zk, `${parent}/plan-0000000002/task-0000000001`, ['ready']);
    await put(zk, `${parent}/plan-0000000003/ready`);
    await putTask(zk, `${parent}/plan-0000000003/task-0000000001`, ['ready']);
    const claim = await getTaskFromAnyPlan(new TaskStore(zk), parent, seeker());
    expect(claim?.task).toBe(`${parent}/plan-0000000002/task-0000000001`);
    expect(await zk.exists(`${parent}/plan-0000000003/task-0000000001/owner`)).toBeUndefined();
  });
});
