/**
 * The simulated participants: worker processes (a ZkPlan with a pool of loops on its own
 * MemoryZkClient session, running the simulated task function) and plan writers (a ZkPlan that
 * builds, retries and deletes plans). All run on fake timers; their operations reach the server
 * only when the driver steps them.
 */
import { rootContainer } from '../../src/di/container.js';
import { PlanCancelledError } from '../../src/errors/plan-errors.js';
import { PermanentError } from '../../src/errors/task-errors.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call, type TaskSpec } from '../../src/exec/task-spec.js';
import type { PlanSpec } from '../../src/spec/plan-spec.js';
import { subPlan } from '../../src/subplan/sub-plan-target.js';
import type { AddTaskOptions } from '../../src/config/task-options.js';
import type { TaskContext } from '../../src/exec/task-context.js';
import { ZkPlan } from '../../src/zk-plan.js';
import type { MemoryZkClient, MemoryZooKeeper } from '../../src/testing/index.js';
import type { WorkerPool } from '../../src/worker/worker-pool.js';
import type { SimObserver } from './observer.js';
import { crashAndExpire, type Expiry } from '../sim-harness/fault-schedule.js';
import { stableHash } from '../sim-harness/prng.js';
import type { SimPlanSpec, SimTaskParams } from './workload.js';
import { skip } from '../../src/trigger/skip.js';

/** What a `sim-child` task is told: the task that spawned it, and its place in that spawn. */
export interface SimChildParams {
  readonly spawner: string;
  readonly index: number;
}

/** What a `sim-sum` task is told: the task that handed over to it, and how many children it sums. */
export interface SimSumParams {
  readonly spawner: string;
  readonly count: number;
}

export const PARENT = '/plans';
/** Small back-off, so idle loops look again soon in simulated time. */
const BACKOFF = { initial: 10, increase: 2, max: 2_000 } as const;

/** Simulated work: resolves after `ms` of fake time, rejects as soon as `signal` aborts. */
function simulatedWork(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A stable digest of a run's inputs, part of its result. */
function digestOf(args: readonly unknown[]): number {
  return stableHash(JSON.stringify(args));
}

export class SimProcess {
  readonly client: MemoryZkClient;
  readonly zkPlan: ZkPlan<MemoryZkClient>;
  readonly pool: WorkerPool;
  crashed = false;
  private claims = 0;

  constructor(
    readonly name: string,
    private readonly server: MemoryZooKeeper,
    observer: SimObserver,
    seed: number,
    loops: number,
    sessionTimeoutMs: number,
  ) {
    this.client = server.connect({ name, sessionTimeoutMs });
    const functions = new FunctionRegistry().register(
      'sim',
      async (ctx: TaskContext<[SimTaskParams]>, ...args: unknown[]) => {
        const params = ctx.params[0];
        const run = observer.startRun(
          this,
          this.client.sessionId,
          ctx.workerId,
          ctx.task,
          params,
          args,
        );
        ctx.log.info(`run ${run.id} starts`);
        try {
          await simulatedWork(params.durationMs + (run.number % 3) * 7, ctx.signal);
          console.log(`run ${run.id} works`); // captured for this task only, though other tasks of the process log meanwhile
          if (run.number === params.permanentOnRun)
            throw new PermanentError(`permanent failure of ${ctx.task} on run ${run.number}`);
          if (run.number <= params.plainFailures)
            throw new Error(`plain failure of ${ctx.task} on run ${run.number}`);
          ctx.log.info(`run ${run.id} ends`);
          if (params.skips === true) {
            run.returned = true;
            observer.endRun(run, 'skipped');
            return skip(`label ${params.label} skips`);
          }
          if (params.spawns !== undefined) {
            const children = await ctx.spawn(
              Array.from({ length: params.spawns }, (_, index) => ({
                task: call('sim-child', { spawner: ctx.task, index } satisfies SimChildParams),
              })),
            );
            run.returned = true;
            observer.endRun(run, `handed over to the sum of ${children.length} children`);
            return ctx.continueWith(
              call('sim-sum', { spawner: ctx.task, count: params.spawns } satisfies SimSumParams),
              children,
            );
          }
          run.returned = true;
          observer.endRun(run, 'returned');
          // Encodes the run: a re-run returns a different value, so a dependent fed by it is caught.
          return { task: ctx.task, run: run.id, inputs: digestOf(args) };
        } catch (error) {
          if (!run.ended)
            observer.endRun(
              run,
              `threw ${error instanceof Error ? error.name : 'a value'}`,
              error instanceof PlanCancelledError,
            );
          throw error;
        }
      },
    );
    functions
      .register('sim-child', async (ctx: TaskContext<[SimChildParams]>) => {
        const params = ctx.params[0];
        observer.childStarts(ctx.task, params);
        await simulatedWork(5 + params.index, ctx.signal);
        return params.index + 1;
      })
      .register('sim-sum', (ctx: TaskContext<[SimSumParams]>, ...values: unknown[]) => {
        observer.sumStarts(ctx.task, ctx.params[0], values);
        return values.reduce<number>((sum, value) => sum + Number(value), 0);
      });
    this.zkPlan = new ZkPlan<MemoryZkClient>(this.client, functions, {
      container: rootContainer.createChildContainer(),
    });
    // Listeners that throw now and then: the worker must report it and go on, never leave a claim held.
    this.zkPlan.on('task:claimed', ({ task }) => {
      this.claims += 1;
      if (stableHash(seed, task, this.claims) % 5 === 0)
        throw new Error(`listener of ${name} throws on claiming ${task}`);
    });
    this.zkPlan.on('task:completed', ({ task }) => {
      if (stableHash(seed, 'completed', task) % 7 === 0)
        throw new Error(`listener of ${name} throws on completing ${task}`);
    });
    this.zkPlan.on('worker:error', ({ workerId, error }) =>
      observer.note(`worker:error ${workerId}: ${error.message.slice(0, 160)}`),
    );
    this.pool = this.zkPlan.startWorkers(PARENT, {
      count: loops,
      backoff: BACKOFF,
      workerId: name,
      taskLogs: { echo: false, sink: false, flushIntervalMs: 50 },
    });
  }

  /**
   * The process dies. The server expires its session as `expiry` says; without one the session lives
   * on in the server (the seed is over and everything is torn down).
   */
  crash(expiry?: Expiry): void {
    this.crashed = true;
    if (expiry === undefined) this.client.crash();
    else crashAndExpire(this.server, this.client, expiry);
  }
}

/** What the driver knows of one plan a writer builds. */
export interface SimPlan {
  readonly writer: SimWriter;
  readonly spec: SimPlanSpec;
  readonly index: number;
  path: string | undefined;
  /** The tasks its writer added, as addTask and addTasks answered (invariant 10 checks their history records). */
  readonly tasks: string[];
  /**
   * building → running (ready and complete) → ended (completed or failed, seen by the driver) → deleting → deleted;
   * abandoned: building failed (a fault), so the writer deletes what it made.
   */
  phase:
    | 'waiting'
    | 'building'
    | 'running'
    | 'retrying'
    | 'pausing'
    | 'cancelling'
    | 'deleting'
    | 'deleted'
    | 'abandoned';
  /** The driver is asking planStatus about it. */
  checking: boolean;
  lastCheckAt: number;
  retriesLeft: number;
  endedAs?: 'completed' | 'failed' | 'cancelled' | 'deleted-early' | 'abandoned';
}

export class SimWriter {
  readonly client: MemoryZkClient;
  readonly zkPlan: ZkPlan<MemoryZkClient>;

  constructor(
    readonly name: string,
    server: MemoryZooKeeper,
    sessionTimeoutMs: number,
  ) {
    this.client = server.connect({ name, sessionTimeoutMs });
    this.zkPlan = new ZkPlan<MemoryZkClient>(this.client, new FunctionRegistry(), {
      container: rootContainer.createChildContainer(),
    });
  }

  /** Builds the plan as its spec says; resolves false when a fault made it fail (the plan is then abandoned). */
  async build(plan: SimPlan, observer: SimObserver): Promise<boolean> {
    const { spec } = plan;
    try {
      const path = await this.zkPlan.createPlan(PARENT, {
        failurePolicy: spec.failurePolicy,
        maxAttempts: spec.maxAttempts,
        initialDelayMs: spec.initialDelayMs,
        maxDelayMs: spec.maxDelayMs,
        multiplier: 2,
        // Priorities from the spec, drawing nothing from the seed's streams: a plan's from its start time, some tasks' their own.
        priority: (spec.startAtMs % 3) - 1,
        // Every other plan keeps its history (drawn from the spec, not the seed's streams): both kinds run side by side.
        // A plan of the `cancel` profile always does: invariant 10 checks its records.
        history: spec.cancel !== undefined || spec.startAtMs % 2 === 0,
      });
      plan.path = path;
      observer.note(`${this.name} created ${path}`);
      if (spec.withoutIndex) await this.client.delete(`${path}/runnable`);
      if (spec.readyFirst) await this.zkPlan.markAsReady(path);
      // A concurrency key whose name says its limit (the observer checks it: invariant 7), set before any task uses it.
      const limit = 1 + (spec.startAtMs % 3);
      const key = `k${limit}`;
      await this.zkPlan.limits(PARENT).set(key, limit);
      const options = (params: SimTaskParams): AddTaskOptions => ({
        keepResult: spec.readyFirst || params.label % 4 === 0,
        ...(params.trigger === undefined ? {} : { trigger: params.trigger }),
        ...(params.label % 5 === 1 ? { priority: params.label % 3 } : {}),
        // One plan in four keys every task, so that its tasks queue for the key's slots (a slot changes hands often).
        ...(params.label % 3 === 2 || spec.startAtMs % 4 === 0 ? { concurrencyKey: key } : {}),
      });
      if (spec.batch) {
        const added = await this.zkPlan.addTasks(
          path,
          spec.tasks.map((params) => ({
            task: taskOf(path, params),
            args: params.inputs,
            options: options(params),
          })),
        );
        plan.tasks.push(...added);
      } else {
        const paths: string[] = [];
        for (const params of spec.tasks) {
          paths.push(
            await this.zkPlan.addTask(
              path,
              taskOf(path, params),
              params.inputs.map((label) => paths[label] as string),
              options(params),
            ),
          );
        }
        plan.tasks.push(...paths);
      }
      if (!spec.readyFirst) await this.zkPlan.markAsReady(path);
      return true;
    } catch (error) {
      observer.note(
        `${this.name} failed to build plan ${plan.index}: ${error instanceof Error ? error.message.slice(0, 120) : String(error)}`,
      );
      return false;
    }
  }
}

/**
 * What a task of the workload runs: `sim`, or (`subPlan`) a sub-plan whose child runs its
 * `sim-child` tasks and their `sim-sum`, named after the plan and the label (invariant 9: one task
 * per place, one sum, however often the sub-plan task was checked).
 */
function taskOf(plan: string, params: SimTaskParams): TaskSpec {
  if (params.subPlan === undefined) return call('sim', params);
  const spawner = `${plan}#sub-${params.label}`;
  const children = Array.from({ length: params.subPlan }, (_, index) => `c${index}`);
  const spec: PlanSpec = {
    tasks: {
      ...Object.fromEntries(
        children.map((key, index) => [
          key,
          { fn: 'sim-child', params: [{ spawner, index } satisfies SimChildParams] },
        ]),
      ),
      sum: {
        fn: 'sim-sum',
        params: [{ spawner, count: params.subPlan } satisfies SimSumParams],
        inputs: children,
      },
    },
  };
  return subPlan({
    spec,
    // The child's params hold the label (its spec uses none): the observer knows the task by it.
    params: { label: params.label },
    inputs: params.inputs.map((_, position) => `in${position}`),
    result: 'sum',
    checkEveryMs: 20,
  });
}
