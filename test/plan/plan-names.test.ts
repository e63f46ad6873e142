/**
 * Plans known by their names: `createPlan(parent, { name })`, a spec's `name`, a schedule's plans
 * named after it. The name is stored in the plan node's settings (`name`), shown by planStatus,
 * describePlan, listPlans, `zk-plan plans` and `show`, and kept by an export and import. A name is
 * checked (bounded, printable); one forged into a plan node is not shown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { planColumns } from '../../src/cli/commands/plans.js';
import { renderPlanView } from '../../src/cli/commands/show.js';
import { formatTable } from '../../src/cli/output.js';
import { PlanSpecError } from '../../src/errors/spec-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { decodeValue, encodeValue } from '../../src/serialization/codec.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { expectRejects } from '../support/expect-error.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';
import { PLANS, TICK_SPEC, schedulerProcess } from '../schedule/schedule-harness.js';

const PARENT = '/plans';
const processes: MemoryProcess[] = [];
afterEach(async () => {
  await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
});

function process(
  server: MemoryZooKeeper = new MemoryZooKeeper(),
): MemoryProcess & { server: MemoryZooKeeper } {
  const proc = memoryProcess(
    server,
    'a',
    new FunctionRegistry().register('load', (ctx) => String(ctx.params[0])),
  );
  processes.push(proc);
  return { ...proc, server };
}

describe('plan names', () => {
  it('createPlan { name } is stored in the settings and shown by planStatus, describePlan, listPlans, plans and show', async () => {
    const proc = process();
    const named = await proc.zkPlan.createPlan(PARENT, { name: 'nightly billing (eu)' });
    const unnamed = await proc.zkPlan.createPlan(PARENT);
    await proc.zkPlan.addTask(named, call('load', 'eu'));
    expect((decodeValue(named, proc.server.getData(named) ?? null) as { name?: string }).name).toBe(
      'nightly billing (eu)',
    );
    expect((await proc.zkPlan.plans.status(named)).name).toBe('nightly billing (eu)');
    expect(await proc.zkPlan.plans.status(unnamed)).not.toHaveProperty('name');
    const view = await proc.zkPlan.plans.describe(named);
    expect(view.status.name).toBe('nightly billing (eu)');
    expect(renderPlanView(view, 200).split('\n')[0]).toMatch(
      new RegExp(`^${named} \\(nightly billing \\(eu\\)\\): building, 1 task\\(s\\)`),
    );
    expect(renderPlanView(await proc.zkPlan.plans.describe(unnamed), 200).split('\n')[0]).toMatch(
      new RegExp(`^${unnamed}: `),
    );

    const plans = await proc.zkPlan.plans.list(PARENT);
    expect(plans.map((summary) => summary.status.name)).toEqual([
      'nightly billing (eu)',
      undefined,
    ]);
    const table = formatTable(plans, planColumns(plans), 200).split('\n');
    expect(table[0]).toMatch(/^PLAN\s+NAME\s+STATE\s+PROGRESS\s+FAILED$/);
    expect(table[1]).toMatch(new RegExp(`^${named}\\s+nightly billing \\(eu\\)\\s+building`));
    expect(table[2]).toMatch(new RegExp(`^${unnamed}\\s+-\\s+`));
    const unnamedOnly = plans.slice(1);
    expect(formatTable(unnamedOnly, planColumns(unnamedOnly), 200).split('\n')[0]).toMatch(
      /^PLAN\s+STATE\s+/,
    );
  });

  it('keeps the name when a task priority rewrites the settings', async () => {
    const proc = process();
    const plan = await proc.zkPlan.createPlan(PARENT, { name: 'ranked' });
    await proc.zkPlan.addTask(plan, call('load', 'x'), [], { priority: 5 });
    expect(decodeValue(plan, proc.server.getData(plan) ?? null)).toMatchObject({
      name: 'ranked',
      taskPriorities: true,
    });
  });

  it.each([
    ['an empty name', ''],
    ['a blank name', ' \t'],
    ['a name with a line break', 'a\nb'],
    ['a name with an escape sequence', '\u001b]0;owned\u0007'],
    ['a name over 200 characters', 'n'.repeat(201)],
    ['a name that is not a string', 42],
  ])('createPlan refuses %s with INVALID_ARGUMENT naming the option', async (_name, name) => {
    const proc = process();
    const error = await expectRejects(
      () => proc.zkPlan.createPlan(PARENT, { name: name as string }),
      InvalidArgumentError,
    );
    expect(error.argument).toBe('name');
    expect(proc.server.exists(PARENT) ? proc.server.children(PARENT) : []).toEqual([]);
  });

  it('a name forged into a plan node (control characters, or too long) is not shown; the plan keeps its other settings', async () => {
    const proc = process();
    const plan = await proc.zkPlan.createPlan(PARENT, { failurePolicy: 'failFast' });
    for (const forged of ['\u001b[2Jwiped', 'x'.repeat(10_000)]) {
      await proc.zk.setData(
        plan,
        encodeValue(
          { ...(decodeValue(plan, proc.server.getData(plan) ?? null) as object), name: forged },
          'plan',
        ),
      );
      const status = await proc.zkPlan.plans.status(plan);
      expect(status).not.toHaveProperty('name');
      expect(status.failurePolicy).toBe('failFast');
    }
  });

  it("a spec's name names its plan, and survives an export and import; a plan's name from createPlan survives too", async () => {
    const proc = process();
    const pool = proc.zkPlan.startWorkers(PARENT, { backoff: FAST_BACKOFF, retention: false });
    const { plan } = await proc.zkPlan.submitPlan(PARENT, {
      name: 'daily report',
      tasks: { eu: { fn: 'load', params: ['eu'] } },
    });
    expect((await proc.zkPlan.plans.status(plan)).name).toBe('daily report');
    await proc.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 });
    const imported = await proc.zkPlan.snapshots.import(
      '/elsewhere',
      await proc.zkPlan.snapshots.export(plan),
    );
    expect((await proc.zkPlan.plans.status(imported.plan)).name).toBe('daily report');

    const built = await proc.zkPlan.createPlan(PARENT, { name: 'by hand' });
    await proc.zkPlan.addTask(built, call('load', 'x'), [], { key: 'x', keepResult: true });
    const copy = await proc.zkPlan.snapshots.import(
      '/copies',
      await proc.zkPlan.snapshots.export(built),
    );
    expect((await proc.zkPlan.plans.status(copy.plan)).name).toBe('by hand');
    await pool.stop();
  });

  it.each([
    ['a name that is not a string', { name: 7 }, '"name": a plan name is a string'],
    [
      'a name with a line break',
      { name: 'a\nb' },
      '"name": a plan name must not hold control characters',
    ],
    ['a name given twice', { name: 'a', options: { name: 'b' } }, "the plan's name is given twice"],
    [
      'a task key with a line break',
      { tasks: { 'a\nb': { fn: 'load' } } },
      'the task key "a\\nb" cannot be used',
    ],
    [
      'a task key over 200 characters',
      { tasks: { ['k'.repeat(201)]: { fn: 'load' } } },
      'a task key has at most 200 characters',
    ],
    [
      'a task with options.key',
      { tasks: { a: { fn: 'load', options: { key: 'b' } } } },
      '"options.key" cannot be given',
    ],
  ])(
    'submitPlan refuses %s with SPEC_INVALID before writing anything',
    async (_name, spec, message) => {
      const proc = process();
      const error = await expectRejects(
        () =>
          proc.zkPlan.submitPlan(PARENT, { tasks: { a: { fn: 'load' } }, ...spec } as never, {
            allowUnknownFunctions: true,
          }),
        PlanSpecError,
      );
      expect(error.code).toBe('SPEC_INVALID');
      expect(error.message).toContain(message);
      expect(proc.server.exists(PARENT)).toBe(false);
    },
  );

  it("a schedule's plans are named after the schedule", async () => {
    const server = new MemoryZooKeeper();
    const scheduler = schedulerProcess(server, 'scheduler');
    processes.push(scheduler);
    await scheduler.schedules.put({
      name: 'pulse',
      cron: '0 0 * * * *',
      spec: TICK_SPEC,
      planParent: PLANS,
    });
    const { plan } = await scheduler.schedules.trigger('pulse');
    expect((await scheduler.zkPlan.plans.status(plan)).name).toBe('pulse');
    await scheduler.schedules.put({
      name: 'named',
      cron: '0 0 * * * *',
      spec: { ...TICK_SPEC, name: 'its own name' },
      planParent: PLANS,
    });
    expect(
      (await scheduler.zkPlan.plans.status((await scheduler.schedules.trigger('named')).plan)).name,
    ).toBe('its own name');
  });
});
