/**
 * What a task costs ZooKeeper: writes (creates, setData, deletes applied) and bytes written (node
 * data of creates and setData) per task, and what stays stored per task after the plan completed,
 * for plans with and without history and with tasks that log nothing, a few lines or a lot.
 * Counted on the in-memory ZooKeeper, which applies the same operations as a real server (the
 * contract suite holds it to that); bytes are node data only, without ZooKeeper's own overhead.
 *
 *   npx tsx bench/zk-cost.ts [--tasks 200]
 */
import { parseArgs } from 'node:util';
import { rootContainer } from '../src/di/container.js';
import { FunctionRegistry } from '../src/exec/function-registry.js';
import type { TaskContext } from '../src/exec/task-context.js';
import { call } from '../src/exec/task-spec.js';
import { ZkPlan } from '../src/zk-plan.js';
import { MemoryZooKeeper } from '../src/testing/index.js';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '200' } } });
const TASKS = Number(values.tasks);
const PARENT = '/plans';

interface Workload {
  readonly name: string;
  readonly history: boolean;
  /** Lines each task logs, and their length. */
  readonly lines: number;
  readonly lineChars: number;
}

const WORKLOADS: readonly Workload[] = [
  { name: 'quiet, history off', history: false, lines: 0, lineChars: 0 },
  { name: 'quiet, history on', history: true, lines: 0, lineChars: 0 },
  { name: '5 lines of 60 chars, history off', history: false, lines: 5, lineChars: 60 },
  { name: '5 lines of 60 chars, history on', history: true, lines: 5, lineChars: 60 },
  { name: '200 lines of 100 chars, history on', history: true, lines: 200, lineChars: 100 },
];

async function measure(
  workload: Workload,
): Promise<{ writes: number; bytes: number; stored: number }> {
  const server = new MemoryZooKeeper();
  let writes = 0;
  let bytes = 0;
  let counting = false;
  server.onApplied = (event) => {
    if (!counting || !event.ok || !['create', 'setData', 'delete'].includes(event.op)) return;
    writes += 1;
    bytes += event.data?.length ?? 0;
  };
  const functions = new FunctionRegistry().register(
    'work',
    (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => {
      for (let i = 0; i < workload.lines; i++)
        ctx.log.info(`${i} ${'x'.repeat(workload.lineChars)}`);
      return inputs.length;
    },
  );
  const zk = server.connect({ name: 'cost' });
  const zkPlan = new ZkPlan(zk, functions, { container: rootContainer.createChildContainer() });
  const plan = await zkPlan.createPlan(PARENT, { history: workload.history });
  // A chain of pairs: every task but the first has one input, as in most pipelines.
  await zkPlan.addTasks(
    plan,
    Array.from({ length: TASKS }, (_, i) => ({ task: call('work'), args: i === 0 ? [] : [i - 1] })),
  );
  await zkPlan.markAsReady(plan);
  counting = true;
  const pool = zkPlan.startWorkers(PARENT, {
    count: 4,
    backoff: { initial: 1, max: 5 },
    retention: false,
    taskLogs: { echo: false, sink: false },
  });
  await zkPlan.waitForCompletion(plan, { timeoutMs: 120_000 });
  await pool.stop();
  counting = false;
  const stored = storedBytes(server, plan);
  await zkPlan.close();
  return { writes: writes / TASKS, bytes: bytes / TASKS, stored: stored / TASKS };
}

/** Bytes of node data left under the plan once it completed. */
function storedBytes(server: MemoryZooKeeper, path: string): number {
  return (
    (server.getData(path)?.length ?? 0) +
    server.children(path).reduce((sum, child) => sum + storedBytes(server, `${path}/${child}`), 0)
  );
}

console.log(
  `${TASKS} tasks in a chain, 4 loops, per task (running the plan; building it not counted):`,
);
console.log(
  'workload'.padEnd(38),
  'writes'.padStart(7),
  'bytes written'.padStart(14),
  'bytes kept'.padStart(11),
);
for (const workload of WORKLOADS) {
  const cost = await measure(workload);
  console.log(
    workload.name.padEnd(38),
    cost.writes.toFixed(1).padStart(7),
    cost.bytes.toFixed(0).padStart(14),
    cost.stored.toFixed(0).padStart(11),
  );
}
