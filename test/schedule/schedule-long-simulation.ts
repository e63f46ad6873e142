/**
 * A seeded simulation of schedulers over hours of virtual time (the short one, schedule-simulation.ts,
 * covers seconds): three scheduler processes over the in-memory ZooKeeper (with lagging followers
 * for some seeds), a schedule whose cron, misfire and overlap policies are drawn per seed and edited
 * while it runs, paused and resumed, removed and put again; bursts of manual triggers; outages in
 * which no scheduler runs for up to an hour (catch-ups of over 50 ticks); a runner that ends runs by
 * deleting their plans; and faults: crashes, frozen processes (that learn of their expiry only when
 * they wake), lost replies and lost requests (sent again through the same session or, after an
 * expiry, the next one), and clocks that jump and run fast or slow.
 *
 * Invariants, after every operation that lands:
 * - a plan path is made at most once (a tick never builds its plan twice, even after its plan was
 *   deleted and its record pruned);
 * - a tick record is made at most once, and once final its state never changes.
 * At the end, once the faults stop and the schedulers settle: no record is left pending.
 */
import { untilTracingLoaded } from '../sim-harness/tracing-loaded.js';
import {
  ManualScheduler,
  MemoryZooKeeper,
  type AppliedOperation,
} from '../../src/testing/index.js';
import type { MisfirePolicy, OverlapPolicy } from '../../src/schedule/tick-decisions.js';
import type { TickRecord } from '../../src/schedule/tick-record.js';
import type { StoredSchedule } from '../../src/schedule/schedule-definition.js';
import { decodeValue } from '../../src/serialization/codec.js';
import { isPlanName, scheduleNodes } from '../../src/zk/layout.js';
import { crashAndExpire, freezeAndExpire } from '../sim-harness/fault-schedule.js';
import { type Prng, streamFor } from '../sim-harness/prng.js';
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

const HOUR = 3_600_000;
const NAME = 'nightly';
const TICKS = scheduleNodes(SCHEDULES, NAME).ticks;
const SCHEDULE_NODE = scheduleNodes(SCHEDULES, NAME).node;
const TICK_RECORD = new RegExp(`^${TICKS}/((?:tick|manual)-[^/]+)$`);

/** The seeds its test and the self-test of its mutant run (SCHEDULE_LONG_SIM_SEEDS, SCHEDULE_LONG_SIM_SEED). */
export const LONG_SCHEDULE_SEEDS = seedsFromEnv('SCHEDULE_LONG_SIM', 40);

interface LongScheduler {
  proc: SchedulerProcess;
  /** Its clock: simulated time plus an offset that jumps, and drifts at `rate`. */
  offset: number;
  rate: number;
  state: 'running' | 'frozen' | 'dead';
  busy: Promise<unknown> | undefined;
  wakeAt?: number;
}

/** The schedule as the driver sets it, drawn per seed and changed while it runs. */
interface Policy {
  cron: string;
  misfire: MisfirePolicy;
  overlap: OverlapPolicy;
  catchUpLimit: number;
  misfireGraceMs: number;
}

export interface LongScheduleSimResult extends SeedResult {
  readonly events: string[];
  readonly simulatedHours: number;
  /** The tick records and plans left at the end, by name: what a replay of the seed must make again. */
  readonly ticks: readonly string[];
  readonly plans: readonly string[];
}

function whatIsLeft(server: MemoryZooKeeper): Pick<LongScheduleSimResult, 'ticks' | 'plans'> {
  return {
    ticks: server.exists(TICKS) ? server.children(TICKS).sort() : [],
    plans: server.exists(PLANS) ? plansOn(server) : [],
  };
}

function drawPolicy(random: Prng): Policy {
  const drawn: Policy = {
    cron: random.pick(['0 * * * * *', '0 */2 * * * *', '0 */5 * * * *']),
    misfire: random.pick(['fireAll', 'fireOnce', 'skip'] as const),
    overlap: random.pick(['allow', 'skip', 'cancelPrevious'] as const),
    catchUpLimit: random.pick([5, 60, 120]),
    misfireGraceMs: random.pick([10_000, 60_000, 120_000]),
  };
  // One seed in three catches up on an hour of ticks every minute after an outage: more than the 50 records kept.
  return random.chance(0.35)
    ? { ...drawn, cron: '0 * * * * *', misfire: 'fireAll', catchUpLimit: 120 }
    : drawn;
}

/**
 * Follows every write that lands and says when one breaks an invariant. The records of a schedule
 * are forgotten once it is removed; while its removal is under way (its definition marked), a
 * scheduler that read the cursor before may make a record again, which nothing fires.
 */
class RecordWatch {
  violation: string | undefined;
  private readonly planCreations = new Map<string, number>();
  private readonly recordCreations = new Map<string, number>();
  /** The final state of each record, once it has one. */
  private readonly finalState = new Map<string, string>();
  private removing = false;

  readonly onApplied = (event: AppliedOperation): void => {
    if (!event.ok || this.violation !== undefined) return;
    if (event.path === SCHEDULE_NODE) {
      if (event.op === 'delete') {
        this.recordCreations.clear();
        this.finalState.clear();
      }
      if (event.op === 'create' || event.op === 'delete') this.removing = false;
      if (event.op === 'setData')
        this.removing =
          (decodeValue(event.path, event.data ?? null) as StoredSchedule).removing === true;
      return;
    }
    if (
      event.op === 'create' &&
      event.path.startsWith(`${PLANS}/`) &&
      event.path.split('/').length === 3 &&
      isPlanName(event.path.slice(PLANS.length + 1))
    ) {
      const made = (this.planCreations.get(event.path) ?? 0) + 1;
      this.planCreations.set(event.path, made);
      if (made > 1)
        this.violation = `plan ${event.path} made ${made} times (by ${event.clientName})`;
      return;
    }
    const id = TICK_RECORD.exec(event.path)?.[1];
    if (id === undefined || (event.op !== 'create' && event.op !== 'setData')) return;
    if (event.op === 'create') {
      const made = (this.recordCreations.get(id) ?? 0) + 1;
      this.recordCreations.set(id, made);
      if (made > 1 && !this.removing) {
        this.violation = `tick record ${id} made ${made} times (by ${event.clientName}): a pruned record came back`;
        return;
      }
    }
    const record = decodeValue(event.path, event.data ?? null) as TickRecord;
    const final = this.finalState.get(id);
    if (final !== undefined && record.state !== final)
      this.violation = `tick record ${id} was ${final} and became ${record.state} (by ${event.clientName})`;
    else if (record.state !== 'pending') this.finalState.set(id, record.state);
  };
}

export async function runLongScheduleSeed(seed: number, hours = 3): Promise<LongScheduleSimResult> {
  await untilTracingLoaded();
  const random = streamFor(seed, 'long-schedule');
  const manual = new ManualScheduler();
  const server = new MemoryZooKeeper({ scheduler: manual, followers: random.pick([0, 0, 1, 2]) });
  const watch = new RecordWatch();
  server.onApplied = watch.onApplied;
  const events: string[] = [];
  let now = T0;
  let serial = 0;
  const note = (what: string): void =>
    void events.push(`${Math.round((now - T0) / 1000)} s: ${what}`);
  const spawn = (): LongScheduler => ({
    proc: schedulerProcess(server, `s${++serial}`, now),
    offset: 0,
    rate: 1,
    state: 'running',
    busy: undefined,
  });
  const schedulers = [spawn(), spawn(), spawn()];
  const frozen = new Set<string>();
  /** Clients cut off by a fault, and the virtual time they reconnect at. */
  const cutOff = new Map<
    string,
    { readonly client: SchedulerProcess['zk']; readonly at: number }
  >();
  /** The admin call under way (one at a time), and what it changes once it went through. */
  let adminCall: Promise<void> | undefined;
  const runner = server.connect({ name: 'runner' });
  let policy = drawPolicy(random);
  const stored = (): StoredSchedule | undefined => {
    const data = server.getData(SCHEDULE_NODE);
    return data === undefined ? undefined : (decodeValue(SCHEDULE_NODE, data) as StoredSchedule);
  };

  const pending = (): string[] => manual.pending().filter((name) => !frozen.has(name));
  const settle = (faultRate: number): Promise<void> =>
    settleOperations({
      manual,
      server,
      random,
      pending,
      faultRate,
      inject: injectFault,
      stop: () => watch.violation !== undefined,
    });

  const injectFault = (client: string): void => {
    const target = schedulers.find((s) => s.proc.name === client && s.state === 'running');
    if (target === undefined) return;
    const kind = random.pick([
      'crash',
      'freeze',
      'lost-reply',
      'lost-reply-expired',
      'lost-send',
      'clock',
    ] as const);
    note(`${kind} ${client}`);
    const { zk } = target.proc;
    if (kind === 'crash') {
      crashAndExpire(server, zk);
      target.state = 'dead';
    } else if (kind === 'freeze') {
      target.state = 'frozen';
      frozen.add(client);
      target.wakeAt = now + random.int(1, 60) * 1_000;
      freezeAndExpire(server, zk);
    } else if (kind === 'lost-reply' || kind === 'lost-reply-expired' || kind === 'lost-send') {
      // Cut off until a later step (others go on meanwhile); the driver reconnects it then.
      cutOff.set(client, { client: zk, at: now + random.int(1, 60) * 1_000 });
      const options = {
        expireSession:
          kind === 'lost-reply-expired' || (kind === 'lost-send' && random.chance(0.5)),
        reconnect: false,
      };
      if (kind === 'lost-send') zk.failNextSend(undefined, options);
      else zk.loseNextReply(undefined, options);
    } else {
      target.offset += random.int(-3_000, 3_000);
      target.rate = 1 + random.int(-20, 20) / 1_000; // up to 2 % fast or slow
    }
  };

  /** Starts an admin call on a running scheduler's client; `then` runs once it went through (a fault may keep it from ever doing so). */
  const admin = (
    what: string,
    call: (proc: SchedulerProcess) => Promise<unknown>,
    then: () => void = () => undefined,
  ): void => {
    const by = schedulers.find((s) => s.state === 'running');
    if (by === undefined || adminCall !== undefined) return;
    note(what);
    adminCall = call(by.proc)
      .then(then, () => undefined)
      .finally(() => (adminCall = undefined));
  };

  const step = async (stepMs: number, faultRate: number, outage: boolean): Promise<void> => {
    for (const [name, { client, at }] of [...cutOff]) {
      if (at > now) continue;
      cutOff.delete(name);
      client.reconnect();
    }
    for (const [index, s] of schedulers.entries()) {
      if (s.state === 'dead') {
        schedulers[index] = spawn();
        continue;
      }
      s.offset += (s.rate - 1) * stepMs;
      if (Math.abs(s.offset) > 5_000) s.offset = Math.sign(s.offset) * 5_000; // the clock is set again (NTP)
      if (s.state === 'frozen' && now >= (s.wakeAt ?? 0)) {
        s.state = 'running';
        frozen.delete(s.proc.name);
        s.proc.zk.thaw();
      }
      s.proc.clock.now = now + Math.round(s.offset);
      if (!outage && s.state === 'running' && s.busy === undefined)
        s.busy = s.proc.scheduler.pass().then(
          () => (s.busy = undefined),
          () => (s.busy = undefined), // a pass that fails (a fault) is reported by the scheduler's loop in real use
        );
    }
    if (random.chance(0.3)) {
      const ready = plansOn(server).filter((name) => server.exists(`${PLANS}/${name}/ready`));
      if (ready.length > 0)
        void runner.deleteRecursive(`${PLANS}/${random.pick(ready)}`).catch(() => undefined);
    }
    await settle(faultRate);
  };

  try {
    note(`followers ${server.followerCount}, put ${JSON.stringify(policy)}`);
    const first = schedulers[0] as LongScheduler;
    const put = first.proc.schedules.put({
      name: NAME,
      spec: TICK_SPEC,
      planParent: PLANS,
      ...policy,
    });
    await settle(0);
    await put;
    const end = T0 + hours * HOUR;
    let outageUntil = 0;
    while (now < end && watch.violation === undefined) {
      const stepMs = random.int(5, 40) * 1_000;
      now += stepMs;
      const outage = now < outageUntil;
      if (!outage && random.chance(0.008)) {
        outageUntil = now + random.int(40, 100) * 60_000;
        note(`no scheduler runs until ${Math.round((outageUntil - T0) / 1000)} s`);
      }
      if (!outage && adminCall === undefined && random.chance(0.02)) {
        const change = random.pick(['policy', 'pause', 'resume', 'remove', 'triggers'] as const);
        // What the driver does next depends on the schedule as it is (a call cut off by a fault may have gone through or not).
        const current = stored();
        const present = current !== undefined && current.removing !== true;
        const paused = current?.paused === true;
        const input = (): Parameters<SchedulerProcess['schedules']['put']>[0] => ({
          name: NAME,
          spec: TICK_SPEC,
          planParent: PLANS,
          paused,
          ...policy,
        });
        if (change === 'policy' && present) {
          const next = { ...policy, ...drawPolicy(random) };
          admin(
            `put ${JSON.stringify(next)}`,
            (proc) => proc.schedules.put({ ...input(), ...next }),
            () => (policy = next),
          );
        } else if (change === 'pause' && present && !paused)
          admin('pause', (proc) => proc.schedules.pause(NAME));
        else if (change === 'resume' && present && paused)
          admin('resume', (proc) => proc.schedules.resume(NAME));
        else if (change === 'remove' && present)
          admin('remove', (proc) => proc.schedules.remove(NAME));
        else if (change === 'remove') admin('put again', (proc) => proc.schedules.put(input()));
        else if (change === 'triggers' && present) {
          const count = random.int(20, 80);
          admin(`${count} manual triggers`, async (proc) => {
            for (let trigger = 0; trigger < count; trigger++)
              await proc.schedules.trigger(NAME).catch(() => undefined);
          });
        }
      }
      await step(stepMs, outage ? 0 : 0.003, outage);
    }
    // Faults stop, every process wakes and is connected, clocks agree; the schedulers settle.
    for (const entry of cutOff.values()) entry.client.reconnect();
    cutOff.clear();
    for (const s of schedulers) {
      s.offset = 0;
      s.rate = 1;
      if (s.state === 'frozen') s.wakeAt = now;
    }
    for (let round = 0; round < 10 && watch.violation === undefined; round++)
      await step(10_000, 0, false);
    for (let round = 0; round < 100 && adminCall !== undefined; round++)
      await step(10_000, 0, false);
    const left = server
      .children(TICKS)
      .filter(
        (id) =>
          (decodeValue(`${TICKS}/${id}`, server.getData(`${TICKS}/${id}`) ?? null) as TickRecord)
            .state === 'pending',
      );
    const errors = schedulers.flatMap((s) =>
      s.proc.errors.slice(-3).map((error) => `${s.proc.name}: ${(error as Error).message}`),
    );
    const violation =
      watch.violation ??
      (left.length > 0
        ? `tick records left pending after settling: ${left.map((id) => server.dump(`${TICKS}/${id}`)).join(', ')}; last errors: ${errors.join(' | ') || 'none'}`
        : undefined);
    return { seed, violation, events, simulatedHours: (now - T0) / HOUR, ...whatIsLeft(server) };
  } catch (error) {
    const violation =
      watch.violation ?? `the driver threw: ${(error as Error).stack ?? String(error)}`;
    return { seed, violation, events, simulatedHours: (now - T0) / HOUR, ...whatIsLeft(server) };
  } finally {
    for (const s of schedulers) if (s.state !== 'dead') s.proc.zk.crash();
    runner.crash();
  }
}
