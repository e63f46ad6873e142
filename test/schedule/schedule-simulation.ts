/**
 * A seeded simulation of schedulers: three processes over the in-memory ZooKeeper, whose
 * operations land in an order a seeded PRNG picks (each client's own order kept), while the
 * driver moves simulated time on and injects faults: a crash (the process dies, its session
 * expires later), a freeze (its operations stop landing; its session expires; it wakes and goes
 * on, on a new session), a lost reply, and a clock that jumps by up to ±3 s. A dead process is
 * replaced. Then the faults stop and the schedulers settle.
 *
 * Invariants, checked at the end: every tick of the window is fired exactly once (fireAll), its
 * plan is the tick's path, ready, with exactly the spec's tasks and a spec record naming the
 * tick; no other plan exists; no record is left pending.
 */
import { ManualScheduler, MemoryZooKeeper } from '../../src/testing/index.js';
import type { SpecRecord } from '../../src/spec/spec-record.js';
import { cronTickId, planPathForTick, type TickRecord } from '../../src/schedule/tick-record.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { scheduleNodes } from '../../src/zk/layout.js';
import { Prng } from '../simulation/prng.js';
import { PLANS, SCHEDULES, T0, TICK_SPEC, plansOn, schedulerProcess, type SchedulerProcess } from './schedule-harness.js';

const realSetImmediate = globalThis.setImmediate;
const flush = (): Promise<void> => new Promise((resolve) => realSetImmediate(resolve));

const WINDOW_MS = 12_000;
const STEP_MS = 250;
const NAME = 'pulse';

interface SimScheduler {
  proc: SchedulerProcess;
  /** Its clock's offset from simulated time (jumps). */
  skew: number;
  state: 'running' | 'frozen' | 'dead';
  busy: Promise<unknown> | undefined;
  thawAt?: number;
}

export interface ScheduleSimResult {
  readonly seed: number;
  readonly violation: string | undefined;
  readonly faults: string[];
}

export async function runScheduleSeed(seed: number): Promise<ScheduleSimResult> {
  const random = new Prng(seed);
  const manual = new ManualScheduler();
  const server = new MemoryZooKeeper({ scheduler: manual });
  const faults: string[] = [];
  let serial = 0;
  let now = T0;
  const spawn = (): SimScheduler => ({ proc: schedulerProcess(server, `s${++serial}`, now), skew: 0, state: 'running', busy: undefined });
  const schedulers = [spawn(), spawn(), spawn()];
  const frozenClients = new Set<string>();
  const closeAll = async (): Promise<void> => {
    for (const s of schedulers) if (s.state !== 'dead') s.proc.zk.crash();
  };

  // Lets the operations of the running clients land in a seeded order until none is waiting.
  const settle = async (faultRate: number): Promise<void> => {
    for (let steps = 0; steps < 20_000; steps++) {
      await flush();
      const pending = manual.pending().filter((name) => !frozenClients.has(name));
      if (pending.length === 0) return;
      const client = random.pick(pending);
      if (faultRate > 0 && random.chance(faultRate)) injectFault(client);
      if (!manual.pending().includes(client) || frozenClients.has(client)) continue;
      manual.step(client);
    }
    throw new Error('operations still pending after 20 000 steps');
  };

  const injectFault = (client: string): void => {
    const target = schedulers.find((s) => s.proc.name === client && s.state === 'running');
    if (target === undefined) return;
    const kind = random.pick(['crash', 'freeze', 'lost-reply', 'clock'] as const);
    faults.push(`${now - T0} ms: ${kind} ${client}`);
    if (kind === 'crash') {
      const sessionId = target.proc.zk.sessionId;
      target.proc.zk.crash();
      target.state = 'dead';
      if (sessionId !== undefined) server.expireSession(sessionId);
    } else if (kind === 'freeze') {
      target.state = 'frozen';
      frozenClients.add(client);
      target.thawAt = now + random.int(1, 4) * 1_000;
      const sessionId = target.proc.zk.sessionId;
      if (sessionId !== undefined) server.expireSession(sessionId); // it only hears of it when it wakes, as a frozen process would
    } else if (kind === 'lost-reply') target.proc.zk.loseNextReply();
    else target.skew += random.int(-3_000, 3_000);
  };

  const tick = async (faultRate: number): Promise<void> => {
    for (const [index, s] of schedulers.entries()) {
      if (s.state === 'dead') {
        schedulers[index] = spawn();
        continue;
      }
      if (s.state === 'frozen' && now >= (s.thawAt ?? 0)) {
        s.state = 'running';
        frozenClients.delete(s.proc.name);
      }
      s.proc.clock.now = now + s.skew;
      if (s.state === 'running' && s.busy === undefined)
        s.busy = s.proc.scheduler.pass().then(
          () => (s.busy = undefined),
          () => (s.busy = undefined),
        );
    }
    await settle(faultRate);
  };

  try {
    const [first] = schedulers as [SimScheduler];
    const put = first.proc.schedules.put({
      name: NAME,
      cron: '* * * * * *',
      spec: TICK_SPEC,
      planParent: PLANS,
      misfire: 'fireAll',
      catchUpLimit: 1_000,
      misfireGraceMs: 500,
      overlap: 'allow',
    });
    await settle(0);
    const stored = await put;
    for (; now <= T0 + WINDOW_MS; now += STEP_MS) await tick(0.01);
    // Faults stop; clocks agree again; the schedulers settle.
    for (const s of schedulers) {
      s.skew = 0;
      if (s.state === 'frozen') s.thawAt = now;
    }
    const end = now + 3_000;
    for (; now <= end; now += STEP_MS) await tick(0);
    return { seed, violation: check(server, stored.activeSince, T0 + WINDOW_MS), faults };
  } catch (error) {
    return { seed, violation: `the driver threw: ${(error as Error).message}`, faults };
  } finally {
    await closeAll();
  }
}

function check(server: MemoryZooKeeper, activeSince: number, windowEnd: number): string | undefined {
  const ticks = server.children(scheduleNodes(SCHEDULES, NAME).ticks);
  const expected: string[] = [];
  for (let at = Math.floor(activeSince / 1000) * 1000 + 1000; at <= windowEnd; at += 1000) expected.push(cronTickId(at));
  for (const id of expected) if (!ticks.includes(id)) return `tick ${id} has no record (ticks: ${ticks.join(', ')})`;
  const plans = plansOn(server).map((name) => `${PLANS}/${name}`);
  const firedPlans = new Set<string>();
  for (const id of ticks) {
    const path = `${scheduleNodes(SCHEDULES, NAME).ticks}/${id}`;
    const record = decodeValue(path, server.getData(path)) as TickRecord;
    if (record.state !== 'fired') return `tick ${id} is ${record.state} (${JSON.stringify(record)})`;
    firedPlans.add(record.plan);
  }
  for (const plan of plans) if (!firedPlans.has(plan)) return `plan ${plan} belongs to no fired tick`;
  for (const plan of firedPlans) {
    if (!plans.includes(plan)) return `fired tick's plan ${plan} does not exist`;
    if (!server.exists(`${plan}/ready`)) return `plan ${plan} is not ready:\n${server.dump(plan)}`;
    const tasks = server.children(plan).filter((child) => child.startsWith('task-'));
    if (tasks.length !== 2) return `plan ${plan} has ${tasks.length} tasks, not 2:\n${server.dump(plan)}`;
    const record = decodeValue(`${plan}/spec`, server.getData(`${plan}/spec`)) as SpecRecord | undefined;
    const tick = record?.origin?.tick;
    if (tick === undefined || planPathForTick(PLANS, NAME, tick) !== plan) return `plan ${plan}'s spec record names tick ${tick}`;
    if (Object.values(record?.tasks ?? {}).some((task) => !tasks.includes(task.slice(plan.length + 1))))
      return `plan ${plan}'s spec record names tasks it does not have`;
  }
  return undefined;
}
