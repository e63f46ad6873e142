/**
 * runFaultHarness: a user's plan run twice on a local ZooKeeper by worker processes that record
 * every execution, once without faults and once under the faults asked for, and the report of the
 * two (fault-report.ts). Every process it starts (the server, the workers) and every proxy is
 * stopped by the end, also when the run fails.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FaultHarnessError } from '../../errors/fault-harness-errors.js';
import { FunctionRegistry } from '../../exec/function-registry.js';
import { startZooKeeper, type ZooKeeperServer } from '../../local-zookeeper/zookeeper-server.js';
import { ZkPlan } from '../../zk-plan.js';
import { CleanupStack } from './cleanup-stack.js';
import {
  HARNESS_FUNCTIONS_ENV,
  HARNESS_LOG_ENV,
  previewOf,
  readExecutionRecords,
  valueHash,
} from './execution-record.js';
import { FaultInjector, type WorkerSlot } from './fault-injector.js';
import {
  buildFaultReport,
  type FaultReport,
  type InjectedFault,
  type ObservedTask,
  type RunObservation,
} from './fault-report.js';
import {
  resolveFaultHarnessOptions,
  type FaultHarnessOptions,
  type ResolvedFaultHarnessOptions,
} from './harness-options.js';
import { pauseUntil } from './pause.js';
import { seededRandom } from './seeded-random.js';
import { TcpProxy } from './tcp-proxy.js';
import { WorkerFleet, siblingModule } from './worker-process.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The functions module the harness's workers load: the user's, recording (recording-functions.ts). */
const RECORDING_FUNCTIONS = siblingModule(HERE, 'recording-functions');
/** The parent of the plans under test. */
const PARENT = '/zk-plan-fault-harness';
/** How often a run's plan is checked for its end. */
const POLL_MS = 100;
/** Plan states in which a plan has ended. */
const ENDED_PLAN_STATES = new Set(['completed', 'failed', 'cancelled']);

/**
 * Runs a plan without faults, then under the faults asked for, on a local ZooKeeper server and
 * worker processes of its own, and resolves the report: each task's executions and re-executions,
 * whether the final results equal the fault-free run's, and which functions are not idempotent.
 * Pass it to `expectFaultTolerant` in a test, or print it with `formatFaultReport`.
 *
 * Throws InvalidArgumentError for bad options, FaultHarnessError when a run cannot be made (the
 * plan cannot be built, the workers do not start, the fault-free run does not finish), and the
 * local server's errors (ZooKeeperNotFoundError: install ZooKeeper). A plan that does not hold up
 * under faults is not an error: the report says so.
 *
 * @category Fault harness
 */
export async function runFaultHarness(options: FaultHarnessOptions): Promise<FaultReport> {
  const resolved = resolveFaultHarnessOptions(options);
  const cleanup = new CleanupStack();
  let report: FaultReport;
  try {
    report = await runBoth(resolved, cleanup);
  } catch (error) {
    await cleanup.run().catch(() => undefined); // the run's own error is the one to see
    throw error;
  }
  await cleanup.run();
  return report;
}

/** The harness's own client, closed while the server restarts (a JVM started meanwhile must not inherit its socket). */
class HarnessClient {
  private client: ZkPlan | undefined;

  constructor(private readonly connect: string) {}

  get current(): ZkPlan | undefined {
    return this.client;
  }

  async open(): Promise<ZkPlan> {
    this.client = await ZkPlan.connect({
      connect: this.connect,
      sessionTimeoutMs: 10_000,
      functions: new FunctionRegistry(),
    });
    return this.client;
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.close();
  }

  /** The open client; throws when the server is restarting. */
  get zkPlan(): ZkPlan {
    if (this.client === undefined)
      throw new Error('the harness client is closed while ZooKeeper restarts');
    return this.client;
  }
}

async function runBoth(
  options: ResolvedFaultHarnessOptions,
  cleanup: CleanupStack,
): Promise<FaultReport> {
  const dir = await mkdtemp(join(tmpdir(), 'zk-plan-fault-harness-'));
  cleanup.add('remove the temp dir', () => rm(dir, { recursive: true, force: true }));
  // The server's minimum session timeout is 2 ticks: a tick of a quarter of the workers' timeout allows it.
  const tickTimeMs = Math.min(500, Math.floor(options.sessionTimeoutMs / 4));
  const servers: ZooKeeperServer[] = [
    await startZooKeeper({ tickTimeMs, dataDir: join(dir, 'zookeeper') }),
  ];
  cleanup.watchPid(servers[0]?.pid);
  cleanup.add('stop ZooKeeper', () => servers.at(-1)?.stop());
  const server = servers[0] as ZooKeeperServer;
  const logFile = join(dir, 'executions.jsonl');
  await writeFile(logFile, '');

  const harness = new HarnessClient(server.connectString);
  cleanup.add('close the harness client', () => harness.close());
  const fleet = new WorkerFleet({
    connect: server.connectString,
    parent: PARENT,
    functionsModule: RECORDING_FUNCTIONS,
    env: { [HARNESS_LOG_ENV]: logFile, [HARNESS_FUNCTIONS_ENV]: options.functions },
    cwd: process.cwd(),
    loops: options.loopsPerWorker,
    sessionTimeoutMs: options.sessionTimeoutMs,
    drainTimeoutMs: 500,
    extraArgs: ['--no-retention'],
  });
  // Registered after the server's stop, so it runs before it: no worker outlives the server.
  cleanup.add('stop the worker processes', async () => {
    const alive = await fleet.stopAll();
    if (alive.length > 0) throw new Error(`worker processes still alive: ${alive.join(', ')}`);
  });
  const slots: WorkerSlot[] = [];
  for (let index = 0; index < options.workers; index++) {
    const proxy = await TcpProxy.start(server.port);
    cleanup.add('stop a proxy', () => proxy.stop());
    slots.push({ proxy, worker: fleet.spawn(`w${index + 1}`, { connect: proxy.connectString }) });
  }
  for (const slot of slots) cleanup.watchPid(slot.worker.pid);
  try {
    await Promise.all(slots.map((slot) => slot.worker.ready(60_000)));
  } catch (cause) {
    throw new FaultHarnessError(
      'FAULT_HARNESS_WORKERS_FAILED',
      `the worker processes did not start with ${options.functions}: check that \`zk-plan worker --functions ${options.functions}\` starts. ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
  await harness.open();

  const baseline = await runOnce(options, harness, undefined);
  if (!baseline.finished)
    throw new FaultHarnessError(
      'FAULT_HARNESS_BASELINE_INCOMPLETE',
      `the fault-free run of the plan did not finish within ${options.timeoutMs} ms (unfinished: ${unfinishedOf(baseline)}): make it finish without faults first, or raise timeoutMs`,
      { path: baseline.plan },
    );

  // How many executions the plan gives, without faults: owed faults come due a share of the way in.
  const baselineStarts = readExecutionRecords(logFile).filter(
    (record) => record.kind === 'start' && record.plan === baseline.plan,
  ).length;
  const injector = new FaultInjector({
    slots,
    fleet,
    faults: options.faults,
    random: seededRandom(options.seed),
    atLeastOnce: options.atLeastOnce,
    expectedStarts: baselineStarts,
    logFile,
    sessionTimeoutMs: options.sessionTimeoutMs,
    restartZooKeeper: async (downMs) => {
      await harness.close();
      const current = servers.at(-1) as ZooKeeperServer;
      await current.stop();
      await pauseUntil(Date.now() + downMs);
      const restarted = await startZooKeeper({
        tickTimeMs,
        dataDir: current.dataDir,
        port: current.port,
      });
      servers.push(restarted);
      cleanup.watchPid(restarted.pid);
      await harness.open();
    },
  });
  const faulty = await runOnce(options, harness, injector);
  for (const worker of fleet.processes) cleanup.watchPid(worker.pid);
  const records = readExecutionRecords(logFile);
  const labels = new Map(faulty.tasks.map((task) => [task.path, task.key ?? task.name]));
  return buildFaultReport({
    seed: options.seed,
    faultsSelected: [...options.faults.keys()],
    atLeastOnce: options.atLeastOnce,
    faults: faulty.faults.map((fault) => ({
      ...fault,
      ...(fault.during === undefined ? {} : { during: labels.get(fault.during) ?? fault.during }),
    })),
    baseline: { ...baseline, records },
    faulty: { ...faulty, records },
  });
}

/** One run: build the plan, follow it to its end or the deadline (with faults when `injector` is given), observe its tasks. */
async function runOnce(
  options: ResolvedFaultHarnessOptions,
  harness: HarnessClient,
  injector: FaultInjector | undefined,
): Promise<Omit<RunObservation, 'records'> & { faults: InjectedFault[] }> {
  const startedAt = Date.now();
  let plan: string;
  try {
    plan = await build(options, harness.zkPlan);
  } catch (cause) {
    throw new FaultHarnessError(
      'FAULT_HARNESS_BUILD_FAILED',
      `the plan could not be built: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
  injector?.start(plan, startedAt);
  let finished = false;
  let faults: InjectedFault[] = [];
  try {
    finished = await waitForEnd(harness, plan, startedAt + options.timeoutMs);
  } finally {
    faults = (await injector?.stop()) ?? [];
  }
  const durationMs = Date.now() - startedAt;
  // A restart may still be under way when the plan ended: the client is back once it is done.
  return { plan, finished, durationMs, tasks: await observeTasks(harness.zkPlan, plan), faults };
}

async function build(options: ResolvedFaultHarnessOptions, zkPlan: ZkPlan): Promise<string> {
  if (typeof options.plan === 'function') {
    const plan = await options.plan(zkPlan, PARENT);
    if (typeof plan !== 'string')
      throw new Error(
        'the plan builder must resolve the path of the plan it built and marked ready',
      );
    return plan;
  }
  const submitted = await zkPlan.submitPlan(PARENT, options.plan, { params: options.params });
  return submitted.plan;
}

/** True once the plan has ended; false at the deadline. Polls, since the client is closed while the server restarts. */
async function waitForEnd(
  harness: HarnessClient,
  plan: string,
  deadline: number,
): Promise<boolean> {
  while (Date.now() < deadline) {
    const client = harness.current;
    if (client !== undefined) {
      try {
        const status = await client.plans.status(plan);
        if (ENDED_PLAN_STATES.has(status.state)) return true;
      } catch {
        // a connection loss while a fault runs: ask again
      }
    }
    await pauseUntil(Math.min(deadline, Date.now() + POLL_MS));
  }
  return false;
}

/** Every task of the plan with its state, and the hash of each kept result. */
async function observeTasks(zkPlan: ZkPlan, plan: string): Promise<ObservedTask[]> {
  const view = await zkPlan.plans.describe(plan);
  const tasks: ObservedTask[] = [];
  for (const task of view.tasks) {
    let kept: { resultHash: string; resultPreview: string } | undefined;
    if (task.keepResult && task.state === 'done') {
      const result = await zkPlan.getResult(task.task);
      kept = { resultHash: valueHash(result), resultPreview: previewOf(result) };
    }
    tasks.push({
      path: task.task,
      name: task.name,
      ...(task.key === undefined ? {} : { key: task.key }),
      fn: task.fn,
      state: task.state,
      ...kept,
    });
  }
  return tasks;
}

function unfinishedOf(run: { tasks: readonly ObservedTask[] }): string {
  const open = run.tasks.filter(
    (task) => !['done', 'skipped', 'failed', 'cancelled'].includes(task.state),
  );
  return open.map((task) => `${task.key ?? task.name} (${task.state})`).join(', ') || 'none';
}
