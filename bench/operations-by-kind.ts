/**
 * `npm run bench:operations`: what every worker session sends per task, by operation and outcome,
 * when several sessions follow one plan (issue 26, scale-out). Each session is a ZkPlan with its
 * own pool, in this one process, so that one count covers them all; a refused create is a claim
 * lost to another worker (or a task already gone), and every refused write is logged and synced by
 * the server like any other.
 *
 *   npm run bench:operations                         (chain-200, 4 sessions × 8 loops)
 *   OPS_WORKLOAD=fanin-1000 OPS_SESSIONS=16 npm run bench:operations
 */
import { FunctionRegistry, ZkPlan, call, type TaskToAdd } from '../src/index.js';
import { startZooKeeper } from '../src/testing/index.js';
import { WORKLOADS } from './workloads.js';

const SESSIONS = Number(process.env['OPS_SESSIONS'] ?? 4);
const LOOPS = Number(process.env['OPS_LOOPS'] ?? 8);
const WORKLOAD = process.env['OPS_WORKLOAD'] ?? 'chain-200';
const PARENT = '/operations';

const workload = WORKLOADS.find((candidate) => candidate.name === WORKLOAD);
if (workload === undefined)
  throw new Error(
    `OPS_WORKLOAD=${WORKLOAD} is not a bench workload; use one of ${WORKLOADS.map((w) => w.name).join(', ')}`,
  );
const functions = new FunctionRegistry().register('step', (ctx) => ctx.params[0]);

/** Operations answered, by `<op> <outcome>`, over every worker session. */
const counts = new Map<string, number>();
/** Writes answered, by `<op> <node kind> <outcome>` (a node's kind is its name without digits). */
const writes = new Map<string, number>();
const add = (tally: Map<string, number>, key: string): void => {
  tally.set(key, (tally.get(key) ?? 0) + 1);
};

/** Counts a write's outcome by the kind of node it names, and passes its answer on. */
async function countedWrite<T>(op: string, path: string, write: () => Promise<T>): Promise<T> {
  const kind = (path.split('/').pop() ?? '').replace(/\d+/g, 'N');
  try {
    const answer = await write();
    add(writes, `${op} ${kind} ok`);
    return answer;
  } catch (error) {
    add(writes, `${op} ${kind} refused`);
    throw error;
  }
}

const server = await startZooKeeper({ fsync: true });
const sessions: ZkPlan[] = [];
try {
  for (let i = 0; i < SESSIONS; i++) {
    const zkPlan = await ZkPlan.connect({ connect: server.connectString, functions });
    const zk = zkPlan.zk;
    zk.onOperation = (op, _ms, ok) => add(counts, `${op} ${ok ? 'ok' : 'refused'}`);
    const create = zk.create.bind(zk);
    const remove = zk.delete.bind(zk);
    zk.create = (path, ...rest) => countedWrite('create', path, () => create(path, ...rest));
    zk.delete = (path, ...rest) => countedWrite('delete', path, () => remove(path, ...rest));
    sessions.push(zkPlan);
  }
  const pools = sessions.map((zkPlan) =>
    zkPlan.startWorkers(PARENT, { count: LOOPS, retention: false }),
  );
  const client = await ZkPlan.connect({ connect: server.connectString, functions });
  try {
    const args = workload.build();
    const plan = await client.createPlan(PARENT);
    const batch: TaskToAdd[] = args.map((inputs, i) => ({ task: call('step', i), args: inputs }));
    await client.addTasks(plan, batch);
    counts.clear(); // the pools' start-up is not the plan's cost
    writes.clear();
    const started = performance.now();
    await client.markAsReady(plan);
    await client.waitForCompletion(plan, { timeoutMs: 600_000 });
    const ms = performance.now() - started;
    console.log(
      `${WORKLOAD}, ${SESSIONS} sessions × ${LOOPS} loops: ${ms.toFixed(0)} ms, ${((args.length / ms) * 1000).toFixed(0)} tasks/s`,
    );
    const perTask = (tally: Map<string, number>): string[] =>
      [...tally]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, count]) => `  ${key.padEnd(32)} ${(count / args.length).toFixed(2)} per task`);
    console.log('operations answered, every worker session:');
    console.log(perTask(counts).join('\n'));
    console.log('writes by node kind:');
    console.log(perTask(writes).join('\n'));
  } finally {
    await Promise.all(pools.map((pool) => pool.stop()));
    await client.close();
  }
} finally {
  await Promise.all(sessions.map((zkPlan) => zkPlan.close()));
  await server.stop();
}
