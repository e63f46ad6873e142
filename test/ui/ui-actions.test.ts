/** The web view's write actions and cluster endpoints, over the in-memory ZooKeeper: who may act (own pages, token, read-only), methods, and what each action does. */
import { request } from 'node:http';
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
    readOnly?: boolean,
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
      ...(readOnly !== undefined ? { readOnly } : {}),
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
    const readOnly = await setUp(undefined, true);
    const refused = await fetch(
      `${readOnly.ui.url}api/actions/pause?path=${encodeURIComponent(readOnly.plan)}`,
      { method: 'POST', headers: { Origin: readOnly.ui.url.slice(0, -1) } },
    );
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

  it('on loopback without a token: the view’s own pages act; another Origin, Host, a form body or no Origin at all are refused and change nothing', async () => {
    const { ui, plan, proc } = await setUp();
    const own = ui.url.slice(0, -1); // http://127.0.0.1:<port>
    const port = new URL(ui.url).port;
    const refusals: [Record<string, string>, number, string][] = [
      [{ Origin: 'https://evil.example' }, 403, 'CROSS_ORIGIN'],
      [{ Origin: 'null' }, 403, 'CROSS_ORIGIN'],
      [{}, 403, 'ORIGIN_MISSING'],
      [{ 'Sec-Fetch-Site': 'cross-site' }, 403, 'ORIGIN_MISSING'],
      [{ Origin: own, 'Content-Type': 'application/x-www-form-urlencoded' }, 403, 'FORM_POST'],
      [{ Origin: own, 'Content-Type': 'text/plain' }, 403, 'FORM_POST'],
      [
        { Origin: `http://localhost.evil.example:${port}`, Host: `localhost.evil.example:${port}` },
        403,
        'HOST_MISMATCH',
      ],
      [
        { Origin: `http://127.0.0.1:${Number(port) + 1}`, Host: `127.0.0.1:${Number(port) + 1}` },
        403,
        'HOST_MISMATCH',
      ],
      [{ Origin: `http://[::1]:${port}`, Host: `[::1]:${port}` }, 403, 'HOST_MISMATCH'],
    ];
    for (const [headers, status, code] of refusals) {
      const answer = await rawPost(
        ui,
        `/api/actions/cancel?path=${encodeURIComponent(plan)}`,
        headers,
      );
      expect(answer.status, JSON.stringify(headers)).toBe(status);
      expect(JSON.parse(answer.body), JSON.stringify(headers)).toMatchObject({ error: { code } });
    }
    // GET never acts, whatever it carries.
    expect(
      (await fetch(`${ui.url}api/actions/cancel?path=${encodeURIComponent(plan)}`)).status,
    ).toBe(405);
    expect((await proc.zkPlan.plans.status(plan)).control).toBeUndefined();

    const paused = await rawPost(ui, `/api/actions/pause?path=${encodeURIComponent(plan)}`, {
      Origin: own,
    });
    expect(paused.status).toBe(200);
    expect((await proc.zkPlan.plans.status(plan)).control?.state).toBe('paused');
    const viaLocalhost = await rawPost(ui, `/api/actions/resume?path=${encodeURIComponent(plan)}`, {
      Host: `localhost:${port}`,
      Origin: `http://localhost:${port}`,
    });
    expect(viaLocalhost.status).toBe(200);
    const sameOrigin = await rawPost(ui, `/api/actions/pause?path=${encodeURIComponent(plan)}`, {
      'Sec-Fetch-Site': 'same-origin',
    });
    expect(sameOrigin.status).toBe(200);
    expect(await (await fetch(`${ui.url}api/actions`)).json()).toEqual({
      mode: 'same-origin',
      origins: [own, `http://localhost:${port}`],
      enable: `zk-plan ui ${PARENT} --port ${port} --allow-actions`,
    });
  });

  it('says which way actions are taken: with the token, and none on a read-only view (and how to start one with them)', async () => {
    const tokened = await setUp(TOKEN);
    const port = new URL(tokened.ui.url).port;
    expect(await (await fetch(`${tokened.ui.url}api/actions`)).json()).toEqual({
      mode: 'token',
      origins: [],
      enable: `zk-plan ui ${PARENT} --port ${port} --allow-actions`,
    });
    // With the token, the page's own Origin is not enough.
    expect(
      (
        await rawPost(tokened.ui, `/api/actions/pause?path=${encodeURIComponent(tokened.plan)}`, {
          Origin: tokened.ui.url.slice(0, -1),
        })
      ).status,
    ).toBe(401);
    const readOnly = await setUp(undefined, true);
    expect(await (await fetch(`${readOnly.ui.url}api/actions`)).json()).toEqual({
      mode: 'off',
      origins: [],
      enable: `zk-plan ui ${PARENT} --port ${new URL(readOnly.ui.url).port}`,
    });
    const error = await expectRejects(
      () =>
        startUiServer({
          zkPlan: readOnly.proc.zkPlan as unknown as ZkPlan,
          parent: PARENT,
          port: 0,
          readOnly: true,
          actionsToken: TOKEN,
        }),
      InvalidArgumentError,
    );
    expect(error.argument).toBe('actionsToken');
  });

  it('reruns a plan from a keyed task, and refuses a task without a key', async () => {
    const { ui, proc } = await setUp();
    const own = { Origin: ui.url.slice(0, -1) };
    const { plan, tasks } = await proc.zkPlan.submitPlan(PARENT, {
      tasks: { a: { fn: 'ok' }, b: { fn: 'ok', inputs: ['a'] } },
    });
    const answer = await rawPost(
      ui,
      `/api/actions/rerun?path=${encodeURIComponent(tasks['b'] as string)}`,
      own,
    );
    expect(answer.status).toBe(200);
    const rerun = JSON.parse(answer.body) as { plan: string; rerunOf: string; from: string };
    expect(rerun).toMatchObject({ rerunOf: plan, from: 'b' });
    expect(rerun.plan).not.toBe(plan);
    expect(
      (await proc.zkPlan.plans.describe(rerun.plan)).tasks.map((task) => task.key).sort(),
    ).toEqual(['a', 'b']);
    const unkeyedPlan = await setUpPlan(proc);
    const unkeyed = (await proc.zkPlan.plans.describe(unkeyedPlan)).tasks[0]?.task as string;
    const refused = await rawPost(
      ui,
      `/api/actions/rerun?path=${encodeURIComponent(unkeyed)}`,
      own,
    );
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'RERUN_NO_KEY' } });
    const outside = await rawPost(
      ui,
      `/api/actions/rerun?path=${encodeURIComponent('/elsewhere/plan-0000000001/task-0000000000')}`,
      own,
    );
    expect(outside.status).toBe(400);
  });

  it('triggers a schedule of --schedules; refuses it on a view without schedules and for an unknown one', async () => {
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
    const own = { Origin: ui.url.slice(0, -1) };
    await proc.zkPlan.schedules('/schedules').put({
      name: 'nightly',
      cron: '0 0 3 * * *',
      spec: { tasks: { a: { fn: 'ok' } } },
      planParent: PARENT,
      paused: true,
    });
    const fired = await rawPost(ui, '/api/actions/trigger?schedule=nightly', own);
    expect(fired.status).toBe(200);
    const answer = JSON.parse(fired.body) as { plan: string; state: string };
    expect(answer).toMatchObject({ schedule: 'nightly', state: 'fired' });
    expect((await proc.zkPlan.plans.status(answer.plan)).state).not.toBe('building');
    expect(
      JSON.parse((await rawPost(ui, '/api/actions/trigger?schedule=other', own)).body),
    ).toMatchObject({
      error: { code: 'SCHEDULE_NOT_FOUND' },
    });
    expect((await rawPost(ui, '/api/actions/trigger?schedule=..%2Fx', own)).status).toBe(400);
    const plain = await setUp();
    const none = await rawPost(plain.ui, '/api/actions/trigger?schedule=nightly', {
      Origin: plain.ui.url.slice(0, -1),
    });
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body)).toMatchObject({ error: { code: 'NO_SCHEDULES' } });
  });
});

/** A plan of one task without a key (addTask). */
async function setUpPlan(proc: MemoryProcess): Promise<string> {
  const plan = await proc.zkPlan.createPlan(PARENT);
  await proc.zkPlan.addTask(plan, call('ok'));
  await proc.zkPlan.markAsReady(plan);
  return plan;
}

/** A POST with exactly these headers (node:http: fetch would not send a Host of its own choosing), with the view's Host unless given. */
function rawPost(
  ui: UiServer,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const url = new URL(ui.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { Host: url.host, ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
