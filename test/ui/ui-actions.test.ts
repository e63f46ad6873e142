/** The web view's write actions and cluster endpoints, over the in-memory ZooKeeper: token, methods, and what each action does. */
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import type { ZkPlan } from '../../src/zk-plan.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import type { UiCluster } from '../../src/ui/ui-wire.js';
import { startUiServer, type UiServer } from '../../src/ui/ui-server.js';
import { expectRejects } from '../support/expect-error.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';
const TOKEN = 'sesame-123-open-sesame';

describe('web view actions', () => {
  const servers: UiServer[] = [];
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  async function setUp(
    actionsToken?: string,
  ): Promise<{ proc: MemoryProcess; ui: UiServer; plan: string }> {
    const proc = memoryProcess(
      new MemoryZooKeeper(),
      'a',
      new FunctionRegistry().register('ok', () => 1),
    );
    processes.push(proc);
    const ui = await startUiServer({
      zkPlan: proc.zkPlan as unknown as ZkPlan,
      parent: PARENT,
      port: 0,
      ...(actionsToken ? { actionsToken } : {}),
    });
    servers.push(ui);
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(plan, call('ok'));
    return { proc, ui, plan };
  }

  const post = (
    ui: UiServer,
    action: string,
    plan: string,
    token?: string,
    extra = '',
  ): Promise<Response> =>
    fetch(`${ui.url}api/actions/${action}?path=${encodeURIComponent(plan)}${extra}`, {
      method: 'POST',
      headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    });

  it('refuses every action without the token, with a wrong one, and on a read-only view', async () => {
    const { ui, plan, proc } = await setUp(TOKEN);
    expect((await post(ui, 'pause', plan)).status).toBe(401);
    expect((await post(ui, 'pause', plan, 'guess')).status).toBe(401);
    expect(
      (
        await fetch(`${ui.url}api/actions/pause?path=${plan}`, {
          headers: { Authorization: `Bearer ${TOKEN}` },
        })
      ).status,
    ).toBe(405);
    expect((await proc.zkPlan.plans.status(plan)).control).toBeUndefined(); // nothing happened
    const readOnly = await setUp();
    const refused = await post(readOnly.ui, 'pause', readOnly.plan, TOKEN);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'ACTIONS_DISABLED' } });
  });

  it('refuses a guessable token at start, and a request from another site’s page whatever it carries', async () => {
    const { proc, ui, plan } = await setUp(TOKEN);
    for (const weak of ['', 'x', '123456789012345']) {
      const error = await expectRejects(
        () =>
          startUiServer({
            zkPlan: proc.zkPlan as unknown as ZkPlan,
            parent: PARENT,
            port: 0,
            actionsToken: weak,
          }),
        InvalidArgumentError,
      );
      expect(error.argument).toBe('actionsToken');
    }
    const fromElsewhere = await fetch(
      `${ui.url}api/actions/cancel?path=${encodeURIComponent(plan)}`,
      {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, Origin: 'https://evil.example' },
      },
    );
    expect(fromElsewhere.status).toBe(403);
    expect(await fromElsewhere.json()).toMatchObject({ error: { code: 'CROSS_ORIGIN' } });
    expect((await proc.zkPlan.plans.status(plan)).control).toBeUndefined();
    const own = await fetch(`${ui.url}api/actions/pause?path=${encodeURIComponent(plan)}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, Origin: ui.url.slice(0, -1) },
    });
    expect(own.status).toBe(200);
    const long = await post(ui, 'cancel', plan, TOKEN, `&reason=${'x'.repeat(1_001)}`);
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
  });

  it('pause, resume, cancel and retry with the token; an action on a cancelled plan is a conflict', async () => {
    const { ui, plan, proc } = await setUp(TOKEN);
    const paused = await post(ui, 'pause', plan, TOKEN);
    expect(paused.status).toBe(200);
    expect(await paused.json()).toEqual({ plan, state: 'paused', running: [] });
    expect((await proc.zkPlan.plans.status(plan)).control?.state).toBe('paused');
    expect((await post(ui, 'resume', plan, TOKEN)).status).toBe(200);
    expect((await proc.zkPlan.plans.status(plan)).control).toBeUndefined();
    expect(await (await post(ui, 'retry', plan, TOKEN)).json()).toEqual({ plan, reset: [] });
    expect((await post(ui, 'cancel', plan, TOKEN, '&reason=from%20the%20view')).status).toBe(200);
    expect((await proc.zkPlan.plans.status(plan)).control).toMatchObject({
      state: 'cancelled',
      reason: 'from the view',
    });
    const conflict = await post(ui, 'resume', plan, TOKEN);
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toMatchObject({ error: { code: 'PLAN_CANCELLED' } });
    expect((await post(ui, 'pause', '/elsewhere/plan-0000000001', TOKEN)).status).toBe(400); // only plans under the view's parent
  });

  it('serves the live workers, whether actions are on, and why a task is not running', async () => {
    const { ui, plan, proc } = await setUp(TOKEN);
    proc.zkPlan.startWorkers(PARENT, {
      count: 2,
      backoff: FAST_BACKOFF,
      retention: false,
      workerId: 'view-pool',
    });
    await expect
      .poll(
        async () =>
          ((await (await fetch(`${ui.url}api/cluster`)).json()) as { workers: unknown[] }).workers
            .length,
      )
      .toBe(1);
    expect(await (await fetch(`${ui.url}api/cluster`)).json()).toMatchObject({
      actions: true,
      workers: [{ id: 'view-pool', loops: 2 }],
      limits: [],
    });
    const [worker] = (
      (await (await fetch(`${ui.url}api/cluster`)).json()) as { workers: Record<string, unknown>[] }
    ).workers;
    expect(Object.keys(worker ?? {}).sort()).toEqual([
      'functions',
      'host',
      'id',
      'loops',
      'pid',
      'running',
      'startedAt',
      'updatedAt',
      'version',
    ]);
    expect(typeof worker?.['startedAt']).toBe('string');
    const [task] = (await proc.zkPlan.plans.describe(plan)).tasks;
    const why = await (
      await fetch(`${ui.url}api/why?path=${encodeURIComponent(task?.task as string)}`)
    ).json();
    expect(why).toMatchObject({ task: task?.task, code: 'PLAN_NOT_READY' });
  });

  it('lists the schedules of --schedules with their next fire times and runs, marking the runs the view serves', async () => {
    const proc = memoryProcess(
      new MemoryZooKeeper(),
      'a',
      new FunctionRegistry().register('ok', () => 1),
    );
    processes.push(proc);
    const ui = await startUiServer({
      zkPlan: proc.zkPlan as unknown as ZkPlan,
      parent: PARENT,
      port: 0,
      schedules: '/schedules',
    });
    servers.push(ui);
    const schedules = proc.zkPlan.schedules('/schedules');
    await schedules.put({
      name: 'here',
      cron: '0 0 3 * * *',
      spec: { tasks: { a: { fn: 'ok' } } },
      planParent: PARENT,
    });
    await schedules.put({
      name: 'there',
      cron: '0 0 4 * * *',
      spec: { tasks: { a: { fn: 'ok' } } },
      planParent: '/elsewhere',
      paused: true,
    });
    const { plan } = await schedules.trigger('here');
    await schedules.trigger('there');
    const cluster = (await (await fetch(`${ui.url}api/cluster`)).json()) as UiCluster;
    expect(
      cluster.schedules.map(({ name, paused, nextFireTimes }) => [
        name,
        paused,
        nextFireTimes.length,
      ]),
    ).toEqual([
      ['here', false, 5],
      ['there', true, 0],
    ]);
    expect(cluster.schedules[0]?.runs).toMatchObject([
      { kind: 'manual', state: 'fired', plan, shown: true },
    ]);
    expect(cluster.schedules[1]?.runs).toMatchObject([
      { kind: 'manual', state: 'fired', shown: false },
    ]);
    const plain = await startUiServer({
      zkPlan: proc.zkPlan as unknown as ZkPlan,
      parent: PARENT,
      port: 0,
    });
    servers.push(plain);
    expect(
      ((await (await fetch(`${plain.url}api/cluster`)).json()) as UiCluster).schedules,
    ).toEqual([]);
  });
});
