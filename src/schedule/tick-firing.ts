/**
 * Firing one tick: exactly one plan per tick across the cluster, however many schedulers try and
 * whenever one dies.
 *
 * 1. The tick's record exists before any plan (whoever created it decided the tick; see
 *    scheduler.ts). It names the plan's path, fixed by the tick.
 * 2. A scheduler takes the tick's ephemeral lock; every write from then on is fenced by the
 *    session that holds it, so once that session has expired (and the lock with it) none of its
 *    writes lands any more, even from a process that wakes up from a freeze and goes on.
 * 3. Holding the lock, it reads the record again (final: nothing to do), then the plan: ready
 *    means a holder before it got that far, so only the record is left to write; present but not
 *    ready means a holder died while building it: its tasks are deleted and the plan is filled
 *    again (task names never repeat under one plan node, so a late delete of the dead holder's
 *    cannot hit a new task); absent: the overlap policy decides, then the plan is built at its path
 *    (NODE_EXISTS cannot happen under the lock) and readied last.
 * 4. The record becomes final (fired, skipped, failed), then the lock goes.
 *
 * A crash at any step leaves a pending record whose lock goes with the session; the next
 * scheduler starts again at 2. A lost reply is repeated: each step is a create-if-absent, a
 * versioned write or a delete.
 */
import { PlanSpecError } from '../errors/spec-errors.js';
import type { PlanWriter } from '../plan/plan-writer.js';
import type { WorkerInfo } from '../registry/worker-info.js';
import { fillPlan, buildCheckedSpec, checkSpecForSubmit, type SpecRegistry } from '../spec/submit-plan.js';
import { readSpecRecord } from '../spec/spec-record.js';
import { IncompleteValueError } from '../errors/value-errors.js';
import { BATCH_PREFIX, READY, RUNNABLE_INDEX, SPEC_RECORD, TASK_PREFIX, childPath, hasSequentialName } from '../zk/layout.js';
import type { CheckedSpec } from '../spec/plan-spec.js';
import { deleteValue } from '../zk/chunked-value.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import { reintroducedScheduleDefects } from '../store/reintroduced-defects.js';
import type { StoredSchedule } from './schedule-definition.js';
import type { ScheduleStore } from './schedule-store.js';
import { overlapDecision, type PreviousRun } from './tick-decisions.js';
import { isFinal, type TickRecord, type TickState } from './tick-record.js';

/** What firing needs besides ZooKeeper: how to check a spec, how plans stand, how to cancel one. */
export interface FiringContext {
  readonly zk: Zk;
  readonly writer: PlanWriter;
  readonly store: ScheduleStore;
  readonly functions: SpecRegistry;
  listWorkers(parent: string): Promise<WorkerInfo[]>;
  /** Whether a plan is finished (completed, failed, cancelled, or gone). */
  planFinished(plan: string): Promise<boolean>;
  cancelPlan(plan: string, reason: string): Promise<void>;
  /** Who fires (host:pid/…), recorded with the tick. */
  readonly identity: string;
}

/** What a try at a tick came to: its final state (`here`: this call made it final), or why it is not final yet. */
export type FireOutcome = { readonly state: TickState; readonly here: boolean } | { readonly state: 'held-elsewhere' | 'gone'; readonly here: false };

export async function fireTick(context: FiringContext, schedule: StoredSchedule, id: string): Promise<FireOutcome> {
  const { store } = context;
  const session = context.zk.session;
  const first = await store.readTick(schedule.name, id);
  if (first === undefined) return { state: 'gone', here: false };
  if (isFinal(first.record.state)) return { state: first.record.state, here: false };
  if (!(await store.lock(schedule.name, id, session, context.identity)) && !reintroducedScheduleDefects.fireTickWithoutLock)
    return { state: 'held-elsewhere', here: false };
  try {
    const tick = await store.readTick(schedule.name, id);
    if (tick === undefined) return { state: 'gone', here: false };
    if (isFinal(tick.record.state)) return { state: tick.record.state, here: false };
    const outcome = await decideAndBuild(context, schedule, id, tick.record, session);
    const final: TickRecord = { ...tick.record, ...outcome, by: context.identity, updatedAt: new Date().toISOString() };
    await store.updateTick(schedule.name, id, final, tick.version, { fence: session });
    return { state: final.state, here: true };
  } finally {
    await store.unlock(schedule.name, id, session).catch(() => undefined); // else it goes with the session
  }
}

async function decideAndBuild(
  context: FiringContext,
  schedule: StoredSchedule,
  id: string,
  record: TickRecord,
  session: ZkSession,
): Promise<{ state: TickState; reason?: string }> {
  const { zk, writer } = context;
  const plan = record.plan;
  const existing = await zk.tryGetChildren(plan);
  if (existing?.children.includes(SPEC_RECORD)) {
    // The path is the tick's own unless another schedules' parent with a schedule of this name shares the plans' parent.
    // A record a dead firer left half-written is this tick's: it is cleared with the rest below.
    const record = await readSpecRecord(zk, plan).catch((error: unknown) => {
      if (error instanceof IncompleteValueError) return 'half-written' as const;
      throw error;
    });
    const origin = record === 'half-written' ? { schedules: context.store.parent, schedule: schedule.name, tick: id } : record?.origin;
    if (origin?.schedules !== context.store.parent || origin.tick !== id)
      return {
        state: 'failed',
        reason: `plan path ${plan} is taken by ${origin === undefined ? 'a plan of no schedule' : `${origin.schedules}/${origin.schedule} tick ${origin.tick}`}`,
      };
  }
  if (existing?.children.includes(READY)) return { state: 'fired' };
  if (existing === undefined && record.kind === 'cron') {
    if (schedule.paused) return { state: 'skipped', reason: 'the schedule is paused' };
    const decision = overlapDecision(schedule.overlap, await previousRun(context, schedule, record));
    if (decision.action === 'skip') return { state: 'skipped', reason: decision.reason };
    if (decision.action === 'cancelThenFire') await context.cancelPlan(decision.plan, `overlap: ${plan} fired by schedule "${schedule.name}"`);
  }
  const params = { ...schedule.params, firedAt: record.firedAt };
  let checked: CheckedSpec;
  try {
    checked = await checkSpecForSubmit(schedule.spec, context.functions, await context.listWorkers(schedule.planParent), { params });
  } catch (error) {
    if (error instanceof PlanSpecError) return { state: 'failed', reason: error.message };
    throw error;
  }
  const origin = { schedules: context.store.parent, schedule: schedule.name, tick: id, firedAt: record.firedAt };
  const target = { plan, fence: session, origin };
  if (existing === undefined) await buildCheckedSpec(writer, zk, checked, { spec: schedule.spec, params }, target);
  else {
    if (!reintroducedScheduleDefects.keepHalfBuiltTickPlan) await clearHalfBuilt(zk, plan, existing.children, session);
    await fillPlan(writer, zk, plan, checked, { spec: schedule.spec, params }, target);
  }
  return { state: 'fired' };
}

/**
 * Deletes what a dead holder left in a plan it did not ready: its tasks, batch markers, index
 * entries and spec record. The plan node stays, so new task names continue its sequence.
 */
async function clearHalfBuilt(zk: Zk, plan: string, children: readonly string[], session: ZkSession): Promise<void> {
  const index = childPath(plan, RUNNABLE_INDEX);
  const entries = (await zk.tryGetChildren(index))?.children ?? [];
  await Promise.all([
    ...children
      .filter((name) => hasSequentialName(name, TASK_PREFIX) || name.startsWith(BATCH_PREFIX))
      .map((name) => zk.deleteRecursive(childPath(plan, name))),
    ...entries.map((name) => zk.deleteIfPresent(childPath(index, name), -1, { fence: session })),
    // The one name a new holder writes again: fenced, so a late delete from a dead holder cannot take the new one.
    children.includes(SPEC_RECORD) ? deleteValue(zk, childPath(plan, SPEC_RECORD), { fence: session }) : undefined,
  ]);
}

/** The run of the newest fired tick before this one. */
async function previousRun(context: FiringContext, schedule: StoredSchedule, record: TickRecord): Promise<PreviousRun> {
  const ids = await context.store.tickIds(schedule.name);
  for (const id of ids.reverse()) {
    const tick = await context.store.readTick(schedule.name, id);
    if (tick === undefined || tick.record.tick > record.tick || tick.record.plan === record.plan || tick.record.state !== 'fired') continue;
    return { plan: tick.record.plan, finished: await context.planFinished(tick.record.plan) };
  }
  return undefined;
}
