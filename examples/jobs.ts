/**
 * A sharded job (`npm run demo` runs it last): 12 tenants' mailboxes, each polled every 2 seconds,
 * spread evenly over however many job workers run. Three start (three sessions, as three processes
 * would be); a fourth joins and the mailboxes are spread over four; one leaves cleanly and its
 * mailboxes move at once. Every poll is logged with the worker and the mailbox's fencing token,
 * and the example checks that no mailbox was ever polled by two workers in the same round.
 *
 *   npx tsx examples/jobs.ts            (ZOOKEEPER_CONNECT=host:port to use a running ZooKeeper)
 */
import { FunctionRegistry, ZkPlan, type JobContext, type JobWorkerHandle } from '../src/index.js';
import { runMain, withZooKeeper } from './local-zookeeper.js';

const JOBS = '/demo/jobs';
const TENANTS = Array.from(
  { length: 12 },
  (_, index) => `tenant-${String(index + 1).padStart(2, '0')}`,
);

/** Every poll: which worker, which mailbox, with which token, when. */
const polls: { worker: string; mailbox: string; token: number; at: number }[] = [];

const functions = new FunctionRegistry().registerJob('pollMailbox', (ctx: JobContext) => {
  for (const mailbox of ctx.items) {
    if (!ctx.holding()) return; // the share was taken away meanwhile: stop before touching the next mailbox
    polls.push({ worker: ctx.workerId, mailbox: mailbox.id, token: mailbox.token, at: Date.now() });
  }
});

async function main(): Promise<void> {
  await withZooKeeper(async (connect) => {
    const processes = await Promise.all(
      [1, 2, 3, 4].map(() => ZkPlan.connect({ connect, functions })),
    );
    const [admin] = processes as [ZkPlan, ...ZkPlan[]];
    try {
      const jobs = admin.jobs(JOBS);
      await jobs.define({
        name: 'mailboxes',
        fn: 'pollMailbox',
        workPool: { items: TENANTS },
        mode: { everyMs: 2_000 },
        strategy: 'evenly',
      });
      const start = (zkPlan: ZkPlan, name: string): JobWorkerHandle =>
        zkPlan.startJobWorker(JOBS, { name, leaseMs: 3_000 });
      const handles = processes
        .slice(0, 3)
        .map((zkPlan, index) => start(zkPlan, `worker-${index + 1}`));
      const spread = async (count: number): Promise<void> => {
        for (
          const deadline = Date.now() + 20_000;
          Date.now() < deadline;
          await new Promise((resolve) => setTimeout(resolve, 100))
        ) {
          const held = handles.map((handle) => handle.held()['mailboxes'] ?? []);
          if (
            held.filter((items) => items.length > 0).length === count &&
            held.flat().length === TENANTS.length
          ) {
            console.log(
              `  ${count} workers: ${held.map((items) => items.length).join(' / ')} mailboxes`,
            );
            return;
          }
        }
        throw new Error(`the mailboxes were not spread over ${count} workers in 20 s`);
      };
      console.log(`job mailboxes: ${TENANTS.length} mailboxes polled every 2 s`);
      await spread(3);
      handles.push(start(processes[3] as ZkPlan, 'worker-4'));
      await spread(4);
      await new Promise((resolve) => setTimeout(resolve, 2_500)); // a round of polls on four workers
      await (handles.shift() as JobWorkerHandle).stop(); // leaves cleanly: gives its leases back
      await spread(3);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const [summary] = await jobs.list();
      for (const [worker, mailboxes] of Object.entries(summary?.assignment ?? {}))
        console.log(
          `  ${worker}: ${mailboxes.map((mailbox) => `${mailbox}#${summary?.leases[mailbox]?.token ?? '?'}`).join(' ')}`,
        );
      checkPolls();
      // The job's run history (zk-plan jobs runs mailboxes): one record per run of each worker's share.
      const { runs, counts } = await jobs.runs('mailboxes');
      const workers = new Set(runs.map((run) => run.worker));
      console.log(
        `  run history: ${counts.runs} runs on ${workers.size} workers, ${counts.failed} failed, ${counts.interrupted} interrupted, ${counts.misfires} misfire(s)`,
      );
      if (counts.runs === 0 || counts.failed > 0)
        throw new Error(`the run history shows ${counts.runs} runs, ${counts.failed} failed`);
      await Promise.all(handles.map((handle) => handle.stop()));
      await jobs.remove('mailboxes');
      console.log(
        `jobs: verified (${polls.length} polls, every mailbox polled, none by two workers within a round)`,
      );
    } finally {
      await Promise.all(processes.map((zkPlan) => zkPlan.close()));
    }
  });
}

/** Every mailbox polled; a mailbox polled twice within 1.5 s (less than a round) only by the same worker. */
function checkPolls(): void {
  for (const tenant of TENANTS) {
    const own = polls.filter((poll) => poll.mailbox === tenant);
    if (own.length === 0) throw new Error(`${tenant} was never polled`);
    for (let index = 1; index < own.length; index++) {
      const [before, after] = [own[index - 1], own[index]] as const;
      if (before && after && after.worker !== before.worker && after.at - before.at < 1_500)
        throw new Error(
          `${tenant} polled by ${before.worker} and ${after.worker} ${after.at - before.at} ms apart`,
        );
      if (before && after && after.worker !== before.worker && after.token <= before.token)
        throw new Error(
          `${tenant}: ${after.worker}'s token ${after.token} is not greater than ${before.worker}'s ${before.token}`,
        );
    }
  }
}

await runMain('jobs', main);
