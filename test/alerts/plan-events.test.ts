/** onPlanEvent over the in-memory ZooKeeper: each event once across listening processes, retries, and a deliverer that dies. */
import { afterEach, describe, expect, it } from 'vitest';
import type { PlanEvent } from '../../src/alerts/plan-events.js';
import { webhookBody } from '../../src/alerts/webhook.js';
import { PermanentError } from '../../src/errors/task-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { FAST_BACKOFF, memoryProcess, pause, type MemoryProcess } from '../support/memory-plan.js';

const PARENT = '/plans';

const functions = (): FunctionRegistry =>
  new FunctionRegistry()
    .register('ok', () => 1)
    .register('fail', () => {
      throw new PermanentError('no such customer');
    });

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await pause(5);
  }
}

describe('onPlanEvent', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  it('three listening processes: each task failure, plan failure, cancel and completion is told once, to one of them', async () => {
    const server = new MemoryZooKeeper();
    const procs = ['a', 'b', 'c'].map((name) => memoryProcess(server, name, functions()));
    processes.push(...procs);
    const seen: { by: string; event: PlanEvent }[] = [];
    for (const proc of procs) {
      proc.zkPlan.alerts.subscribe(PARENT, (event) => void seen.push({ by: proc.name, event }));
      proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    }
    const [a] = procs as [MemoryProcess];
    const failing = await a.zkPlan.createPlan(PARENT, { maxAttempts: 1 });
    const [bad] = await a.zkPlan.addTasks(failing, [{ task: call('fail') }, { task: call('ok') }]);
    const fine = await a.zkPlan.createPlan(PARENT);
    await a.zkPlan.addTasks(fine, [{ task: call('ok') }, { task: call('ok') }]);
    const doomed = await a.zkPlan.createPlan(PARENT);
    await a.zkPlan.addTask(doomed, call('ok'));
    await a.zkPlan.control.cancel(doomed, { reason: 'not needed' });
    await Promise.all([failing, fine].map((plan) => a.zkPlan.markAsReady(plan)));
    await until(() => seen.length >= 4);
    await pause(300); // a negative check: no second delivery of any event follows
    const kinds = seen.map(({ event }) => `${event.kind} ${event.plan}`).sort();
    expect(kinds).toEqual(
      [
        `plan:cancelled ${doomed}`,
        `plan:completed ${fine}`,
        `plan:failed ${failing}`,
        `task:failed ${failing}`,
      ].sort(),
    );
    expect(seen.find(({ event }) => event.kind === 'task:failed')?.event).toMatchObject({
      task: bad,
      error: { code: 'PERMANENT', message: expect.stringContaining('no such customer') },
    });
    expect(seen.find(({ event }) => event.kind === 'plan:cancelled')?.event.reason).toBe(
      'not needed',
    );
  });

  it('events carry the plan name and the failed task key, in the listener and in the webhook body', async () => {
    const proc = memoryProcess(new MemoryZooKeeper(), 'a', functions());
    processes.push(proc);
    const seen: PlanEvent[] = [];
    proc.zkPlan.alerts.subscribe(PARENT, (event) => void seen.push(event));
    proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, retention: false });
    const plan = await proc.zkPlan.createPlan(PARENT, { maxAttempts: 1, name: 'nightly billing' });
    const bad = await proc.zkPlan.addTask(plan, call('fail'), [], { key: 'charge-eu' });
    await proc.zkPlan.markAsReady(plan);
    await until(() => seen.length >= 2);
    const taskFailed = seen.find((event) => event.kind === 'task:failed');
    expect(taskFailed).toMatchObject({
      plan,
      planName: 'nightly billing',
      task: bad,
      key: 'charge-eu',
    });
    expect(seen.find((event) => event.kind === 'plan:failed')).toMatchObject({
      plan,
      planName: 'nightly billing',
      key: 'charge-eu',
    });
    expect(webhookBody(taskFailed as PlanEvent)).toMatchObject({
      plan,
      planName: 'nightly billing',
      task: bad,
      key: 'charge-eu',
    });
  });

  it('two listeners in one process (one session): each event is told once, to one of them', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'a', functions());
    processes.push(proc);
    const seen: string[] = [];
    for (const listener of ['slack', 'pager'])
      proc.zkPlan.alerts.subscribe(PARENT, async (event) => {
        await pause(20); // a listener that takes a moment, as a webhook call does
        seen.push(`${event.kind} ${event.plan} to ${listener}`);
      });
    proc.zkPlan.startWorkers(PARENT, { count: 2, backoff: FAST_BACKOFF, retention: false });
    const plans: string[] = [];
    for (let index = 0; index < 5; index++) {
      const plan = await proc.zkPlan.createPlan(PARENT);
      await proc.zkPlan.addTask(plan, call('ok'));
      await proc.zkPlan.markAsReady(plan);
      plans.push(plan);
    }
    await until(() => seen.length >= 5);
    await pause(300); // a negative check: no second delivery of any event follows
    expect(seen.map((line) => line.replace(/ to \w+$/, '')).sort()).toEqual(
      plans.map((plan) => `plan:completed ${plan}`).sort(),
    );
  });

  it('a listener that throws is called again; the event is delivered once it succeeds', async () => {
    const server = new MemoryZooKeeper();
    const proc = memoryProcess(server, 'a', functions());
    processes.push(proc);
    let calls = 0;
    proc.zkPlan.alerts.subscribe(
      PARENT,
      () => {
        calls += 1;
        if (calls < 3) throw new Error('webhook down');
      },
      { retryDelayMs: 1 },
    );
    proc.zkPlan.startWorkers(PARENT, { count: 1, backoff: FAST_BACKOFF, retention: false });
    const plan = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(plan, call('ok'));
    await proc.zkPlan.markAsReady(plan);
    await until(() => calls === 3);
    await pause(100);
    expect(calls).toBe(3);
  });

  it('when the delivering process dies before its listener returns, another process delivers the event', async () => {
    const server = new MemoryZooKeeper();
    const [a, b] = ['a', 'b'].map((name) => memoryProcess(server, name, functions())) as [
      MemoryProcess,
      MemoryProcess,
    ];
    processes.push(a, b);
    const byA: PlanEvent[] = [];
    const byB: PlanEvent[] = [];
    a.zkPlan.alerts.subscribe(PARENT, (event) => {
      byA.push(event);
      return new Promise<void>(() => undefined); // hangs: its process dies meanwhile
    });
    const plan = await a.zkPlan.createPlan(PARENT);
    await a.zkPlan.addTask(plan, call('ok'));
    await a.zkPlan.markAsReady(plan);
    a.zkPlan.startWorkers(PARENT, {
      count: 1,
      backoff: FAST_BACKOFF,
      retention: false,
      drainTimeoutMs: 10,
    });
    await until(() => byA.length === 1);
    b.zkPlan.alerts.subscribe(PARENT, (event) => void byB.push(event));
    await pause(100);
    expect(byB).toEqual([]); // a holds the event's lock
    a.zk.crash(); // a dies: it does nothing more, and the server ends its session (and its lock) at the timeout
    a.zk.expireSessionOnServer();
    processes.splice(processes.indexOf(a), 1); // a dead process is not closed: its client answers nothing
    await until(() => byB.length === 1);
    expect(byB[0]).toMatchObject({ kind: 'plan:completed', plan });
  });
});
