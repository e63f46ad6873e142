/**
 * A cron-timed plan (`npm run demo` runs it after the pipeline): a schedule fires every 2 seconds,
 * three schedulers (three sessions, as three processes would be) race for each tick, and exactly
 * one plan is built per tick, with the tick's time bound as `firedAt`. A worker pool runs the plans.
 * The example waits for three ticks' plans to complete, then backfills the ten minutes before the
 * schedule existed (five ticks, two at a time), prints `list()` and the backfill's progress, and
 * removes the schedule.
 *
 *   npx tsx examples/schedule.ts            (ZOOKEEPER_CONNECT=host:port to use a running ZooKeeper)
 */
import { FunctionRegistry, ZkPlan, type TaskContext } from '../src/index.js';
import { runMain, withZooKeeper } from './local-zookeeper.js';

const SCHEDULES = '/demo/schedules';
const PLANS = '/demo/scheduled-plans';
const TICKS = 3;

const functions = new FunctionRegistry()
  .register('snapshot', (ctx: TaskContext<[string]>) => ({
    at: ctx.params[0],
    queueDepth: ctx.params[0].length % 7,
  }))
  .register(
    'alertIfDeep',
    (_ctx: TaskContext, depth: { at: string; queueDepth: number }) =>
      `${depth.at}: depth ${depth.queueDepth}${depth.queueDepth > 5 ? ' ALERT' : ''}`,
  );

async function main(): Promise<void> {
  await withZooKeeper(async (connect) => {
    const processes = await Promise.all(
      [1, 2, 3].map(() => ZkPlan.connect({ connect, functions })),
    );
    try {
      const [admin] = processes as [ZkPlan, ...ZkPlan[]];
      const pool = admin.startWorkers(PLANS, { count: 2 });
      const schedule = await admin.schedules(SCHEDULES).put({
        name: 'queue-check',
        cron: '*/2 * * * * *', // every 2 s (seconds first)
        timezone: 'Europe/Berlin',
        planParent: PLANS,
        overlap: 'skip',
        misfire: 'fireOnce',
        spec: {
          tasks: {
            depth: { fn: 'snapshot', params: [{ $param: 'firedAt' }] },
            check: { fn: 'alertIfDeep', inputs: ['depth'], options: { keepResult: true } },
          },
        },
      });
      console.log(
        `schedule ${schedule.name}: "${schedule.cron}" in ${schedule.timezone}; three schedulers start`,
      );
      const fired: string[] = [];
      for (const zkPlan of processes)
        zkPlan.on('schedule:tick', ({ state, plan }) => state === 'fired' && fired.push(plan));
      const schedulers = processes.map((zkPlan) => zkPlan.startScheduler(SCHEDULES));
      const deadline = Date.now() + 30_000;
      while (fired.length < TICKS && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      if (fired.length < TICKS) throw new Error(`only ${fired.length} tick(s) fired in 30 s`);
      if (new Set(fired).size !== fired.length)
        throw new Error(`a tick fired twice: ${fired.join(', ')}`);
      for (const plan of fired) await admin.waitForCompletion(plan, { timeoutMs: 30_000 });

      // A backfill: the schedule's ticks in ten seconds of the past, before it existed, two plans at a
      // time. The running schedulers fire them, beside the live ticks.
      const start = Math.floor(schedule.activeSince / 2_000) * 2_000 - 600_000;
      const backfill = await admin.schedules(SCHEDULES).backfill('queue-check', {
        from: start,
        to: start + 9_999,
        mode: 'parallel',
        concurrency: 2,
      });
      console.log(
        `backfill ${backfill.id}: ${backfill.total} past ticks from ${backfill.from}, 2 at a time`,
      );
      let progress = backfill;
      while (progress.state === 'running' && Date.now() < deadline + 30_000) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        progress =
          (await admin.schedules(SCHEDULES).backfills('queue-check')).find(
            (status) => status.id === backfill.id,
          ) ?? progress;
      }
      await Promise.all(schedulers.map((scheduler) => scheduler.stop()));
      if (progress.state !== 'completed' || progress.completed !== backfill.total)
        throw new Error(`the backfill did not complete: ${JSON.stringify(progress)}`);
      console.log(
        `  backfill ${progress.state}: ${progress.completed} of ${progress.total} tick plans completed`,
      );
      const [summary] = await admin.schedules(SCHEDULES).list();
      for (const run of summary?.recentRuns ?? [])
        console.log(
          `  ${run.firedAt}  ${run.kind.padEnd(8)}  ${run.state}  ${run.outcome ?? ''}  ${run.plan}`,
        );
      console.log(`  next: ${summary?.nextFireTimes.slice(0, 2).join(', ') ?? '—'}`);
      await admin.schedules(SCHEDULES).remove('queue-check');
      await pool.stop();
      console.log(
        `schedule: verified (${fired.length} ticks, ${backfill.total} of them backfilled, one plan each, all completed)`,
      );
    } finally {
      await Promise.all(processes.map((zkPlan) => zkPlan.close()));
    }
  });
}

await runMain('schedule', main);
