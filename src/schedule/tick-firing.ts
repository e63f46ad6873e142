/**
 * Firing one tick: exactly one plan per tick across the cluster, however many schedulers try and
 * whenever one dies.
 *
 * 1. The tick's record exists before any plan (whoever created it decided the tick; see
 *    scheduler.ts). It names the plan's path, fixed by the tick.
 * 2. A scheduler takes the tick's ephemeral lock, with a token of its own in it (a trigger and a
 *    scheduler's pass in one process share a session, so the session alone cannot tell them
 *    apart); every write from then on is fenced by the session that holds it, so once that
 *    session has expired (and the lock with it) none of its writes lands any more, even from a
 *    process that wakes up from a freeze and goes on.
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
import type { BackfillRecord } from '../backfill/backfill-record.js';
import type { BackfillStore } from '../backfill/backfill-store.js';
import { MalformedNodeError } from '../errors/task-errors.js';
import type { PlanState } from '../plan/plan-states.js';
import type { PlanWriter } from '../plan/plan-writer.js';
import type { WorkerInfo } from '../registry/worker-info.js';
import { fillPlan, checkSpecForSubmit, type SpecRegistry } from '../spec/submit-plan.js';
import { clearHalfBuilt } from '../spec/half-built-plan.js';
import { isZkError } from '../errors/zk-error.js';
import type { PlanOrigin } from '../spec/spec-record.js';
import { decodeValue } from '../serialization/codec.js';
import { READY } from '../zk/layout.js';
import { resolvePlanSettings } from '../config/plan-options.js';
import type { CheckedSpec } from '../spec/plan-spec.js';
import type { ZkSession } from '../zk/zk-client-types.js';
import type { Zk } from '../zk/zk.js';
import { startTickSpan, tracingLoading } from '../tracing/tracing.js';
import { ATTR_TICK_STATE } from '../tracing/attributes.js';
import type { StoredSchedule } from './schedule-definition.js';
import type { NodeRead, ScheduleStore } from './schedule-store.js';
import { overlapDecision, type PreviousRun } from './tick-decisions.js';
import {
  firedAfterEarlierRuns,
  isFinal,
  isManualTickId,
  type TickRecord,
  type TickState,
} from './tick-record.js';

/** What firing needs besides ZooKeeper: how to check a spec, how plans stand, how to cancel one. */
export interface FiringContext {
  readonly zk: Zk;
  readonly writer: PlanWriter;
  readonly store: ScheduleStore;
  /** The schedules' backfill records: a backfill's tick fires only while its backfill is not cancelled. */
  readonly backfills: BackfillStore;
  readonly functions: SpecRegistry;
  listWorkers(parent: string): Promise<WorkerInfo[]>;
  /** Whether a plan is finished (completed, failed, cancelled, or gone). */
  planFinished(plan: string): Promise<boolean>;
  /** How a plan stands (`deleted` when it is gone). */
  planState(plan: string): Promise<PlanState | 'deleted'>;
  cancelPlan(plan: string, reason: string): Promise<void>;
  /** Who fires (host:pid/…), recorded with the tick. */
  readonly identity: string;
}

/**
 * Where a try at a tick left it: a final or pending state, or why this process could not take it
 * (`held-elsewhere`: another process is firing it; `gone`: the tick or its schedule was removed).
 *
 * @category Schedules
 */
export type FireState = TickState | 'held-elsewhere' | 'gone';

/** What a try at a tick came to: its final state (`here`: this call made it final), or why it is not final yet. */
export type FireOutcome =
  | { readonly state: TickState; readonly here: boolean }
  | { readonly state: Exclude<FireState, TickState>; readonly here: false };

export async function fireTick(
  context: FiringContext,
  schedule: StoredSchedule,
  id: string,
): Promise<FireOutcome> {
  const { store } = context;
  const session = context.zk.session;
  const first = await store.readTick(schedule.name, id);
  if (first === undefined) return { state: 'gone', here: false };
  if (isFinal(first.record.state)) return { state: first.record.state, here: false };
  const lock = await store.lock(schedule.name, id, session, context.identity);
  if (lock === undefined) return { state: 'held-elsewhere', here: false };
  try {
    const tick = await store.readTick(schedule.name, id);
    if (tick === undefined) return { state: 'gone', here: false };
    if (isFinal(tick.record.state)) return { state: tick.record.state, here: false };
    // The definition again, under the lock: a removal marks it before deleting anything, so a record made
    // late by a scheduler that read an older cursor is never fired once the schedule is being removed.
    const current = await store.read(schedule.name);
    if (current === undefined || current.schedule.removing === true)
      return { state: 'gone', here: false };
    if (tick.record.scheduleNode !== undefined && tick.record.scheduleNode !== current.czxid) {
      const stray: TickRecord = {
        ...tick.record,
        state: 'skipped',
        reason: 'decided for an earlier schedule of this name, removed since',
        by: context.identity,
        updatedAt: new Date().toISOString(),
      };
      await writeTick(store, schedule.name, id, stray, tick, session);
      return { state: 'skipped', here: true };
    }
    const { node, ...outcome } = await tracedDecision(context, current.schedule, id, tick, session);
    const final: TickRecord = {
      ...tick.record,
      ...outcome,
      by: context.identity,
      updatedAt: new Date().toISOString(),
    };
    await writeTick(store, schedule.name, id, final, node, session);
    return { state: final.state, here: true };
  } finally {
    await lock.release().catch(() => undefined); // else it goes with the session
  }
}

/**
 * decideAndBuild inside the tick's span (with OpenTelemetry): the plan it creates is created under
 * it, so the plan's span, and its attempts', are the tick's descendants.
 */
async function tracedDecision(
  context: FiringContext,
  schedule: StoredSchedule,
  id: string,
  tick: { readonly record: TickRecord } & NodeRead,
  session: ZkSession,
): Promise<{ state: TickState; reason?: string; node: NodeRead }> {
  const loading = tracingLoading();
  if (loading !== undefined) await loading;
  const span = startTickSpan({
    schedules: context.store.parent,
    schedule: schedule.name,
    tick: id,
    kind: tick.record.kind,
    plan: tick.record.plan,
  });
  if (span === undefined) return await decideAndBuild(context, schedule, id, tick, session);
  try {
    const decided = await span.run(() => decideAndBuild(context, schedule, id, tick, session));
    span.set(ATTR_TICK_STATE, decided.state);
    if (decided.state === 'failed') span.failed(new Error(decided.reason ?? 'the tick failed'));
    else span.succeeded();
    return decided;
  } catch (error) {
    span.failed(error);
    throw error;
  }
}

async function decideAndBuild(
  context: FiringContext,
  schedule: StoredSchedule,
  id: string,
  tick: { readonly record: TickRecord } & NodeRead,
  session: ZkSession,
): Promise<{ state: TickState; reason?: string; node: NodeRead }> {
  const { zk, writer } = context;
  const { record } = tick;
  const read: NodeRead = { version: tick.version, czxid: tick.czxid };
  const plan = record.plan;
  // The node first, then its children: a plan deleted between the two reads reads as absent, never as another's.
  const node = await zk.tryGetData(plan);
  const existing = node === undefined ? undefined : await zk.tryGetChildren(plan);
  if (node !== undefined && existing !== undefined) {
    // The plan node names the tick that made it from its first write on. Another tick's (a schedule of the same name under
    // another schedules' parent, firing into the same plans' parent) is never adopted nor cleared.
    const origin = planOrigin(plan, node.data);
    if (
      origin?.schedules !== context.store.parent ||
      origin.schedule !== schedule.name ||
      origin.tick !== id
    )
      return {
        state: 'failed',
        reason: `plan path ${plan} is taken by ${origin === undefined ? 'a plan of no schedule' : `${origin.schedules}/${origin.schedule} tick ${origin.tick}`}`,
        node: read,
      };
  }
  if (existing?.children.includes(READY)) return { state: 'fired', node: read };
  // Made, readied, run and deleted (retention, a user) while its firer was dead: never built twice.
  if (existing === undefined && record.planCreated === true)
    return {
      state: 'fired',
      reason: 'its plan was deleted before the tick was recorded fired',
      node: read,
    };
  if (existing === undefined && record.kind === 'backfill') {
    // Under the lock, before a plan exists: a tick of a backfill cancelled meanwhile makes none. A
    // plan made before the cancel landed is cancelled by the backfill's next step.
    const stopped = await backfillStopped(context, schedule.name, record);
    if (stopped !== undefined) return { state: 'skipped', reason: stopped, node: read };
  }
  if (existing === undefined && record.kind === 'cron') {
    if (schedule.paused) return { state: 'skipped', reason: 'the schedule is paused', node: read };
    const decision =
      schedule.overlap === 'allow'
        ? { action: 'fire' as const }
        : overlapDecision(schedule.overlap, await previousRuns(context, schedule, id, record));
    if (decision.action === 'skip')
      return { state: 'skipped', reason: decision.reason, node: read };
    if (decision.action === 'cancelThenFire')
      for (const previous of decision.plans)
        await context.cancelPlan(previous, `overlap: ${plan} fired by schedule "${schedule.name}"`);
  }
  const params = { ...schedule.params, firedAt: record.firedAt };
  let checked: CheckedSpec;
  try {
    // A tick fires whether or not a worker is up yet (the schedule was checked when it was put;
    // workers started later run its plans), so a function nothing vouches for is no reason to skip it.
    checked = await checkSpecForSubmit(
      schedule.spec,
      context.functions,
      await context.listWorkers(schedule.planParent),
      {
        params,
        allowUnknownFunctions: true,
      },
    );
  } catch (error) {
    if (!(error instanceof PlanSpecError)) throw error;
    // A dead firer's half-built plan does not stay: this tick makes no plan. The record forgets the
    // plan first: a holder that dies right after the delete leaves a pending record without
    // `planCreated`, which the next holder decides afresh, never one that reads "made, then deleted".
    let current = read;
    if (existing !== undefined) {
      if (record.planCreated === true) {
        const { planCreated: _made, ...forgotten } = record;
        current = await writeTick(
          context.store,
          schedule.name,
          id,
          { ...forgotten, by: context.identity, updatedAt: new Date().toISOString() },
          read,
          session,
        );
      }
      await zk.deleteRecursive(plan);
    }
    return { state: 'failed', reason: error.message, node: current };
  }
  const origin = {
    schedules: context.store.parent,
    schedule: schedule.name,
    tick: id,
    firedAt: record.firedAt,
  };
  const target = { plan, fence: session, origin };
  let current = read;
  if (existing === undefined) {
    // A schedule's plans are named after it, unless its spec names them itself.
    await writer.createPlanAt(
      plan,
      { name: schedule.name, ...checked.options },
      { fence: session },
      origin,
    );
    const policy = record.kind === 'cron' ? { overlap: schedule.overlap } : {};
    const marked: TickRecord = {
      ...record,
      ...policy,
      planCreated: true,
      by: context.identity,
      updatedAt: new Date().toISOString(),
    };
    current = await writeTick(context.store, schedule.name, id, marked, read, session);
  } else {
    await clearHalfBuilt(
      zk,
      plan,
      existing.children,
      session,
      resolvePlanSettings(checked.options).history,
    );
  }
  await fillPlan(writer, zk, plan, checked, { spec: schedule.spec, params }, target);
  return { state: 'fired', node: current };
}

/**
 * Replaces the tick's record (the version read) under its lock; resolves the new version. A lost
 * reply is resent and answered BAD_VERSION though the write landed: nobody else writes it under
 * the lock, so a record that now reads as written is this write's.
 */
async function writeTick(
  store: ScheduleStore,
  name: string,
  id: string,
  record: TickRecord,
  read: NodeRead,
  session: ZkSession,
): Promise<NodeRead> {
  try {
    return {
      version: (await store.updateTick(name, id, record, read, { fence: session })).version,
      czxid: read.czxid,
    };
  } catch (error) {
    if (!isZkError(error, 'BAD_VERSION')) throw error;
    const stored = await store.readTick(name, id, { sync: true });
    if (
      stored === undefined ||
      stored.czxid !== read.czxid ||
      stored.record.state !== record.state ||
      stored.record.planCreated !== record.planCreated ||
      stored.record.updatedAt !== record.updatedAt
    )
      throw error;
    return { version: stored.version, czxid: read.czxid };
  }
}

/**
 * Why a backfill's tick must not make a plan; undefined when it must. It must while the backfill
 * that made its record runs, while another running backfill names it under way, or once the
 * schedule's cursor names it (the live scheduler decided to fire it). Otherwise (that backfill
 * cancelled, gone or unreadable) it makes none.
 */
async function backfillStopped(
  context: FiringContext,
  schedule: string,
  record: TickRecord,
): Promise<string | undefined> {
  const id = record.backfill ?? '';
  const maker = await readBackfill(context, schedule, id);
  if (maker?.state === 'running') return undefined;
  for (const other of await context.backfills.ids(schedule)) {
    if (other === id) continue;
    const backfill = await readBackfill(context, schedule, other);
    if (backfill?.state === 'running' && backfill.running.includes(record.tick)) return undefined;
  }
  if ((await context.store.cursor(schedule)).fire.includes(record.tick)) return undefined;
  if (maker === undefined) return `its backfill ${id} is gone (or not a valid record)`;
  return `its backfill ${id} was cancelled`;
}

/** A backfill's record; undefined when it is gone or not a valid record. */
async function readBackfill(
  context: FiringContext,
  schedule: string,
  id: string,
): Promise<BackfillRecord | undefined> {
  try {
    return (await context.backfills.read(schedule, id))?.record;
  } catch (error) {
    if (error instanceof MalformedNodeError) return undefined;
    throw error;
  }
}

/** The tick a plan node's value says made it; undefined for a plan of no schedule. */
function planOrigin(plan: string, data: Buffer | null): Partial<PlanOrigin> | undefined {
  if (data === null || data.length === 0) return undefined;
  try {
    const { origin } = decodeValue(plan, data) as { origin?: Partial<PlanOrigin> };
    return typeof origin === 'object' && origin !== null ? origin : undefined;
  } catch {
    return undefined; // another tool's plan value
  }
}

/**
 * The runs a cron tick may overlap: every manual tick triggered so far, before or after this
 * tick's time, fired or still being fired (manual ticks fire whatever the policy), and the fired
 * cron ticks before it, newest first, back to one made under 'skip' or 'cancelPrevious' (every
 * run before that one had finished when it fired; ticks fired under 'allow' are walked past). A
 * backfill's ticks are not among them.
 */
async function previousRuns(
  context: FiringContext,
  schedule: StoredSchedule,
  id: string,
  record: TickRecord,
): Promise<PreviousRun[]> {
  const runs: PreviousRun[] = [];
  let cronVouched = false;
  for (const earlier of (await context.store.tickIds(schedule.name)).reverse()) {
    const manual = isManualTickId(earlier);
    if (earlier === id || (!manual && cronVouched)) continue;
    const tick = await context.store.readTick(schedule.name, earlier);
    // A backfill's runs are bounded by its own concurrency, not by the live ticks' overlap policy.
    if (tick === undefined || tick.record.kind === 'backfill') continue;
    if (!manual && tick.record.tick > record.tick) continue;
    if (manual && tick.record.state === 'pending') {
      runs.push({ plan: tick.record.plan, finished: false, starting: true });
      continue;
    }
    if (tick.record.state !== 'fired') continue;
    cronVouched ||= firedAfterEarlierRuns(tick.record);
    runs.push({ plan: tick.record.plan, finished: await context.planFinished(tick.record.plan) });
  }
  return runs;
}
