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
 *
 * With `overlap: 'allow'` a backfill of 6 past ticks, 2 at a time, runs through the window too, and
 * a runner ends its runs by deleting their plans. Then, after every operation that lands: a
 * backfilled tick's plan never appears twice (built again after its run ended), and never more
 * than 2 of its plans are under way; at the end the backfill is completed with each of its ticks
 * fired and counted once.
 *
 * With `overlap: 'skip'` the schedulers also trigger manual runs now and then, and a runner ends
 * runs by deleting their plans (a plan that exists is a run not finished). Then each tick is
 * fired or skipped, and after every operation that lands: no cron plan appears while another
 * cron plan exists, nor while a manual run exists that was triggered before the cron tick's
 * firer took its lock (a manual run triggered later may overlap: it fires whatever the policy).
 */
import { untilTracingLoaded } from '../sim-harness/tracing-loaded.js';
import { ManualScheduler, MemoryZooKeeper } from '../../src/testing/index.js';
import type { SpecRecord } from '../../src/spec/spec-record.js';
import {
  cronTickId,
  isManualTickId,
  planPathForTick,
  type TickRecord,
} from '../../src/schedule/tick-record.js';
import type { BackfillRecord } from '../../src/backfill/backfill-record.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { scheduleNodes } from '../../src/zk/layout.js';
import { crashAndExpire, freezeAndExpire } from '../sim-harness/fault-schedule.js';
import { Prng } from '../sim-harness/prng.js';
import { seedsFromEnv } from '../sim-harness/seed-runner.js';
import { settleOperations } from '../sim-harness/settle-operations.js';
import type { SeedResult } from '../sim-harness/violation-report.js';
import {
  PLANS,
  SCHEDULES,
  T0,
  TICK_SPEC,
  plansOn,
  schedulerProcess,
  type SchedulerProcess,
} from './schedule-harness.js';

/**
 * The seeds its test and the self-tests of its mutants run (SCHEDULE_SIM_SEEDS, SCHEDULE_SIM_SEED):
 * with overlap 'allow'.
 */
export const SCHEDULE_SEEDS = seedsFromEnv('SCHEDULE_SIM', 400);
/** Run with overlap 'skip', manual triggers and runs that end: the first of SCHEDULE_SEEDS. */
export const SCHEDULE_SKIP_SEEDS: readonly number[] =
  (process.env['SCHEDULE_SIM_SEED'] ?? '') !== ''
    ? SCHEDULE_SEEDS
    : SCHEDULE_SEEDS.slice(0, Number(process.env['SCHEDULE_SIM_SKIP_SEEDS'] ?? 150));

const WINDOW_MS = 12_000;
const STEP_MS = 250;
const NAME = 'pulse';
/** The backfill of overlap 'allow' seeds: 6 ticks half a minute before the schedule, 2 at a time. */
const BACKFILL = { from: T0 - 30_000, to: T0 - 25_000, mode: 'parallel', concurrency: 2 } as const;
const BACKFILL_TICKS = 6;

interface SimScheduler {
  proc: SchedulerProcess;
  /** Its clock's offset from simulated time (jumps). */
  skew: number;
  state: 'running' | 'frozen' | 'dead';
  busy: Promise<unknown> | undefined;
  thawAt?: number;
}

export interface ScheduleSimOptions {
  readonly overlap: 'allow' | 'skip';
}

export interface ScheduleSimResult extends SeedResult {
  readonly faults: string[];
}

export async function runScheduleSeed(
  seed: number,
  options: ScheduleSimOptions = { overlap: 'allow' },
): Promise<ScheduleSimResult> {
  await untilTracingLoaded();
  const skipMode = options.overlap === 'skip';
  const random = new Prng(seed);
  const manual = new ManualScheduler();
  const server = new MemoryZooKeeper({ scheduler: manual });
  const faults: string[] = [];
  let serial = 0;
  let now = T0;
  const spawn = (): SimScheduler => ({
    proc: schedulerProcess(server, `s${++serial}`, now),
    skew: 0,
    state: 'running',
    busy: undefined,
  });
  const schedulers = [spawn(), spawn(), spawn()];
  const frozenClients = new Set<string>();
  const runner = server.connect({ name: 'runner' });
  const deleted = new Set<string>();
  const overlaps = skipMode ? new OverlapWatch(server, deleted) : undefined;
  const backfillWatch = skipMode ? undefined : new BackfillWatch(server, deleted);
  let overlapViolation: string | undefined;
  const closeAll = async (): Promise<void> => {
    for (const s of schedulers) if (s.state !== 'dead') s.proc.zk.crash();
    runner.crash();
  };

  // Lets the operations of the running clients land in a seeded order until none is waiting.
  const settle = (faultRate: number): Promise<void> =>
    settleOperations({
      manual,
      server,
      random,
      pending: () => manual.pending().filter((name) => !frozenClients.has(name)),
      faultRate,
      inject: injectFault,
      afterStep: () => {
        overlapViolation ??= overlaps?.observe() ?? backfillWatch?.observe();
      },
      lookAgainWhenQuiet: false,
      maxSteps: 20_000,
    });

  const injectFault = (client: string): void => {
    const target = schedulers.find((s) => s.proc.name === client && s.state === 'running');
    if (target === undefined) return;
    const kind = random.pick(['crash', 'freeze', 'lost-reply', 'clock'] as const);
    faults.push(`${now - T0} ms: ${kind} ${client}`);
    if (kind === 'crash') {
      crashAndExpire(server, target.proc.zk);
      target.state = 'dead';
    } else if (kind === 'freeze') {
      target.state = 'frozen';
      frozenClients.add(client);
      target.thawAt = now + random.int(1, 4) * 1_000;
      freezeAndExpire(server, target.proc.zk);
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
        s.proc.zk.thaw();
      }
      s.proc.clock.now = now + s.skew;
      if (s.state === 'running' && s.busy === undefined)
        s.busy = s.proc.scheduler.pass().then(
          () => (s.busy = undefined),
          () => (s.busy = undefined),
        );
      // Now and then a manual run, while the faults last (a trigger's outcome does not matter: a scheduler finishes its tick).
      if (skipMode && faultRate > 0 && s.state === 'running' && random.chance(0.04))
        void s.proc.schedules.trigger(NAME).catch(() => undefined);
    }
    // The runner ends runs: under 'skip' any plan, under 'allow' the backfill's (a live run's plan stays, for the final check).
    if (random.chance(0.3)) {
      const ready = plansOn(server).filter(
        (name) =>
          server.exists(`${PLANS}/${name}/ready`) &&
          !deleted.has(`${PLANS}/${name}`) &&
          (skipMode || BackfillWatch.isBackfilled(`${PLANS}/${name}`)),
      );
      if (ready.length > 0) {
        const plan = `${PLANS}/${random.pick(ready)}`;
        deleted.add(plan);
        void runner.deleteRecursive(plan).catch(() => undefined);
      }
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
      overlap: options.overlap,
    });
    await settle(0);
    const stored = await put;
    if (!skipMode) {
      const backfill = first.proc.schedules.backfill(NAME, BACKFILL);
      await settle(0);
      await backfill;
    }
    for (; now <= T0 + WINDOW_MS; now += STEP_MS) await tick(0.01);
    // Faults stop; clocks agree again; the schedulers settle.
    for (const s of schedulers) {
      s.skew = 0;
      if (s.state === 'frozen') s.thawAt = now;
    }
    const end = now + 3_000;
    for (; now <= end; now += STEP_MS) await tick(0);
    return {
      seed,
      violation:
        overlapViolation ??
        check(server, stored.activeSince, T0 + WINDOW_MS, skipMode ? deleted : undefined) ??
        backfillWatch?.check(),
      faults,
    };
  } catch (error) {
    return { seed, violation: `the driver threw: ${(error as Error).message}`, faults };
  } finally {
    await closeAll();
  }
}

/**
 * `deleted`: in skip mode, the plans the runner ended; then a tick may be skipped (or failed, a
 * manual one whose plan was ended before it was recorded fired) and a fired tick's plan may be gone.
 */
function check(
  server: MemoryZooKeeper,
  activeSince: number,
  windowEnd: number,
  deleted?: ReadonlySet<string>,
): string | undefined {
  const ticks = server.children(scheduleNodes(SCHEDULES, NAME).ticks);
  const expected: string[] = [];
  for (let at = Math.floor(activeSince / 1000) * 1000 + 1000; at <= windowEnd; at += 1000)
    expected.push(cronTickId(at));
  for (const id of expected)
    if (!ticks.includes(id)) return `tick ${id} has no record (ticks: ${ticks.join(', ')})`;
  const plans = plansOn(server).map((name) => `${PLANS}/${name}`);
  const firedPlans = new Set<string>();
  for (const id of ticks) {
    const path = `${scheduleNodes(SCHEDULES, NAME).ticks}/${id}`;
    const record = decodeValue(path, server.getData(path)) as TickRecord;
    if (deleted !== undefined && record.state === 'skipped') continue;
    if (record.state !== 'fired')
      return `tick ${id} is ${record.state} (${JSON.stringify(record)})`;
    // A backfilled tick's plan was ended by the runner: BackfillWatch checks those.
    if (deleted?.has(record.plan) === true || record.kind === 'backfill') continue;
    firedPlans.add(record.plan);
  }
  for (const plan of plans)
    if (!firedPlans.has(plan) && deleted?.has(plan) !== true && !BackfillWatch.isBackfilled(plan))
      return `plan ${plan} belongs to no fired tick`;
  for (const plan of firedPlans) {
    if (!plans.includes(plan)) return `fired tick's plan ${plan} does not exist`;
    if (!server.exists(`${plan}/ready`)) return `plan ${plan} is not ready:\n${server.dump(plan)}`;
    const tasks = server.children(plan).filter((child) => child.startsWith('task-'));
    if (tasks.length !== 2)
      return `plan ${plan} has ${tasks.length} tasks, not 2:\n${server.dump(plan)}`;
    const record = decodeValue(`${plan}/spec`, server.getData(`${plan}/spec`)) as
      SpecRecord | undefined;
    const tick = record?.origin?.tick;
    if (tick === undefined || planPathForTick(PLANS, NAME, tick) !== plan)
      return `plan ${plan}'s spec record names tick ${tick}`;
    if (
      Object.values(record?.tasks ?? {}).some(
        (task) => !tasks.includes(task.slice(plan.length + 1)),
      )
    )
      return `plan ${plan}'s spec record names tasks it does not have`;
  }
  return undefined;
}

/**
 * Follows, operation by operation, when tick records and their locks appear and when plans appear
 * and go, and tells an overlap that 'skip' forbids as soon as the plan that makes it appears.
 */
class OverlapWatch {
  private step = 0;
  /** Tick id → the step its record was first seen. */
  private readonly recordSeen = new Map<string, number>();
  /** Tick id → the step its lock (its latest, by czxid) was first seen, and that czxid. */
  private readonly lockSeen = new Map<string, { step: number; czxid: string }>();
  /** Plan → its tick id and, for a cron tick, the step its firer's lock was taken (as seen when the plan appeared), while the plan exists. */
  private readonly live = new Map<string, { readonly tick: string; readonly decided: number }>();

  /** `ended`: plans whose deletion has begun, finished runs from then on (a plan being deleted reads as finished). */
  constructor(
    private readonly server: MemoryZooKeeper,
    private readonly ended: ReadonlySet<string>,
  ) {}

  observe(): string | undefined {
    this.step += 1;
    const ticks = scheduleNodes(SCHEDULES, NAME).ticks;
    for (const id of this.server.children(ticks)) {
      if (!this.recordSeen.has(id)) this.recordSeen.set(id, this.step);
      const lock = this.server.stat(`${ticks}/${id}/lock`);
      if (lock !== undefined && this.lockSeen.get(id)?.czxid !== String(lock.czxid))
        this.lockSeen.set(id, { step: this.step, czxid: String(lock.czxid) });
    }
    const plans = new Set(plansOn(this.server).map((name) => `${PLANS}/${name}`));
    for (const plan of this.live.keys()) if (!plans.has(plan)) this.live.delete(plan);
    for (const plan of plans) {
      if (this.live.has(plan)) continue;
      const { origin } = decodeValue(plan, this.server.getData(plan)) as {
        origin: { tick: string };
      };
      const violation = this.appeared(plan, origin.tick);
      this.live.set(plan, {
        tick: origin.tick,
        decided: this.lockSeen.get(origin.tick)?.step ?? 0,
      });
      if (violation !== undefined) return violation;
    }
    return undefined;
  }

  private appeared(plan: string, tick: string): string | undefined {
    for (const [other, { tick: otherTick, decided: otherDecided }] of this.live) {
      if (this.ended.has(other)) continue;
      const [cron, earlier] = isManualTickId(tick) ? [otherTick, tick] : [tick, otherTick];
      if (isManualTickId(cron)) continue; // two manual runs may overlap
      if (!isManualTickId(earlier))
        return `cron plan ${plan} appeared at step ${this.step} while cron plan ${other} had not finished`;
      // A manual run overlaps a cron run only when it was triggered after the cron tick's firer took its lock (and so decided).
      const triggered = this.recordSeen.get(earlier) ?? this.step;
      const decided = cron === tick ? (this.lockSeen.get(cron)?.step ?? 0) : otherDecided;
      if (triggered < decided)
        return `plan ${plan} appeared at step ${this.step} beside ${other}: manual tick ${earlier} (triggered at step ${triggered}) and cron tick ${cron} (decided after step ${decided}) overlap`;
    }
    return undefined;
  }
}

/**
 * Follows, operation by operation, the plans of the backfill's ticks: each must appear once (a plan
 * that appears again after its run ended was built twice), and at most `concurrency` may be under
 * way (existing, their run not ended by the runner). At the end, the backfill must have completed
 * with each tick fired and counted once.
 */
class BackfillWatch {
  private readonly appeared = new Map<string, number>();
  private readonly present = new Set<string>();
  private step = 0;

  constructor(
    private readonly server: MemoryZooKeeper,
    private readonly ended: ReadonlySet<string>,
  ) {}

  /** True for the plan of a backfilled tick (one before the schedule was put). */
  static isBackfilled(plan: string): boolean {
    return BACKFILL_PLANS.includes(plan);
  }

  observe(): string | undefined {
    this.step += 1;
    const plans = new Set(plansOn(this.server).map((name) => `${PLANS}/${name}`));
    for (const plan of BACKFILL_PLANS) {
      if (!plans.has(plan)) {
        this.present.delete(plan);
        continue;
      }
      if (this.present.has(plan)) continue;
      this.present.add(plan);
      const times = (this.appeared.get(plan) ?? 0) + 1;
      this.appeared.set(plan, times);
      if (times > 1)
        return `backfilled plan ${plan} appeared again at step ${this.step}: its tick was built twice`;
    }
    const underWay = [...this.present].filter((plan) => !this.ended.has(plan));
    if (underWay.length > BACKFILL.concurrency)
      return `${underWay.length} backfilled plans under way at step ${this.step}, more than ${BACKFILL.concurrency}: ${underWay.join(', ')}`;
    return undefined;
  }

  check(): string | undefined {
    const backfills = scheduleNodes(SCHEDULES, NAME).backfills;
    const ids = this.server.children(backfills);
    if (ids.length !== 1) return `expected one backfill, found ${ids.length}`;
    const path = `${backfills}/${ids[0] ?? ''}`;
    const record = decodeValue(path, this.server.getData(path)) as BackfillRecord;
    const counted = record.completed + record.failed + record.notRun;
    if (
      record.state !== 'completed' ||
      record.started !== BACKFILL_TICKS ||
      counted !== BACKFILL_TICKS
    )
      return `the backfill did not complete with each of its ${BACKFILL_TICKS} ticks counted once: ${JSON.stringify(record)}`;
    for (const plan of BACKFILL_PLANS)
      if (this.appeared.get(plan) !== 1)
        return `backfilled plan ${plan} appeared ${this.appeared.get(plan) ?? 0} times`;
    return undefined;
  }
}

const BACKFILL_PLANS: readonly string[] = Array.from({ length: BACKFILL_TICKS }, (_, index) =>
  planPathForTick(PLANS, NAME, cronTickId(BACKFILL.from + index * 1_000)),
);
