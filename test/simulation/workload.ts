/**
 * What one seed simulates: the cluster (worker processes, plan writers), the plans (random DAGs)
 * and how often faults strike. Pure: drawn from the seed's workload stream only.
 */
import type { FailurePolicy } from '../../src/config/plan-options.js';
import type { TriggerRule } from '../../src/trigger/trigger-rule.js';
import type { Prng } from '../sim-harness/prng.js';

/** Stored as the task's `call('sim', params)` parameter: the task function reads its behaviour from it. */
export interface SimTaskParams {
  /** Index of the task in its plan's DAG. */
  readonly label: number;
  /** Labels of its input tasks, in argument order (may repeat). */
  readonly inputs: readonly number[];
  readonly durationMs: number;
  /** Runs 1…n throw a plain Error (retried while attempts last). */
  readonly plainFailures: number;
  /** This run throws a PermanentError (0: never). */
  readonly permanentOnRun: number;
  /** (`dynamic` profile) When it runs, given how its inputs ended; absent: allSucceeded. */
  readonly trigger?: TriggerRule;
  /** (`dynamic`) Its function returns `skip(…)`: it completes as skipped. */
  readonly skips?: boolean;
  /** (`dynamic`) Its function spawns this many `sim-child` tasks and hands over to a `sim-sum` of them (ctx.spawn, ctx.continueWith). */
  readonly spawns?: number;
  /**
   * (`dynamic`) A sub-plan task instead (`subPlan`): its child plan runs this many `sim-child` tasks
   * and a `sim-sum` of them, whose result becomes the task's. It takes its inputs as the child's
   * params (unused), so its trigger rule and inputs work as any task's.
   */
  readonly subPlan?: number;
}

/**
 * (`cancel` profile) The plan is cancelled while its tasks run, with a fault around the cancel
 * (invariant 10 checks the history record of every task).
 */
export interface SimCancelSpec {
  /** Simulated ms after the plan was built at which the cancel starts. */
  readonly afterMs: number;
  /**
   * What happens to a worker process that runs one of the plan's tasks when the cancel starts:
   * killed right before the cancel, killed or its session expired right after the cancel's control
   * record lands (before any worker heard of it), or frozen past its session timeout so that the
   * server expires its session while the cancel runs (a little before or after it starts).
   */
  readonly runnerFault:
    'none' | 'crash-before' | 'crash-at-landing' | 'expire-at-landing' | 'freeze-across';
  /**
   * The cancel is sent by a process of its own that dies right after its control record lands;
   * the plan's writer then calls it again.
   */
  readonly cutShort: boolean;
}

export interface SimPlanSpec {
  readonly tasks: readonly SimTaskParams[];
  readonly failurePolicy: FailurePolicy;
  readonly maxAttempts: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** addTasks in one batch, else addTask one by one. */
  readonly batch: boolean;
  /** markAsReady before the tasks are added (then every task keeps its result, so later tasks can depend on finished ones). */
  readonly readyFirst: boolean;
  /** Delete the plan's runnable index right after createPlan: workers find its tasks by the scan only (a plan written by another tool). */
  readonly withoutIndex: boolean;
  /** Simulated ms after the start at which its writer begins building it. */
  readonly startAtMs: number;
  /** How many times the writer may call retryFailed after the plan failed. */
  readonly retries: number;
  /** (`cancel`) When and how the plan is cancelled; such a plan always keeps its history. */
  readonly cancel?: SimCancelSpec;
}

export interface SimWorkload {
  /** Loops per initial worker process (each a pool of 1–3 loops). */
  readonly processLoops: readonly number[];
  readonly sessionTimeoutMs: number;
  /** One list of plans per writer client. */
  readonly writers: readonly (readonly SimPlanSpec[])[];
  /** Faults are injected only before this simulated time. */
  readonly faultWindowMs: number;
  /** Chance per scheduler step of a fault. */
  readonly faultRate: number;
  /** Crashes need a second process to be meaningful; a single-process cluster only loses sessions and connections. */
  readonly crashes: boolean;
}

/**
 * `default`: the seeds of the sim-*.test.ts files. `stress`: more processes racing for the same tasks and
 * faults at least ten times as dense, for the self-tests of the mutants that need it (a defect whose damage
 * needs two faults in a row; see test/mutants/plan-sim-catch.ts). `dynamic`: the default's cluster and
 * faults, with plans whose tasks spawn tasks and hand over (ctx.spawn, ctx.continueWith), run child
 * plans (subPlan), skip, fail
 * for good more often, and run under trigger rules (sim-dynamic.test.ts). `cancel`: the default's
 * cluster and faults, with every plan cancelled while its (longer) tasks run, a worker process
 * that runs one of them killed, frozen or expired around the cancel, and now and then the cancel
 * itself cut short and called again (sim-cancel.test.ts, invariant 10). The extra draws of `dynamic`
 * and `cancel` come after the default's, so the default and stress seeds draw what they always drew.
 */
export type WorkloadProfile = 'default' | 'stress' | 'dynamic' | 'cancel';

export function drawWorkload(random: Prng, profile: WorkloadProfile = 'default'): SimWorkload {
  const stress = profile === 'stress';
  const singleProcess = !stress && random.chance(0.3);
  const processLoops = singleProcess
    ? [random.int(1, 3)]
    : Array.from({ length: stress ? random.int(3, 4) : random.int(2, 3) }, () =>
        random.int(stress ? 2 : 1, 3),
      );
  const writerCount = random.int(1, 2);
  const writers = Array.from({ length: writerCount }, () =>
    Array.from({ length: random.chance(0.3) ? 2 : 1 }, () => {
      const plan = drawPlan(random, singleProcess, profile === 'dynamic');
      return profile === 'cancel' ? withCancelDraws(random, plan) : plan;
    }),
  );
  return {
    processLoops,
    sessionTimeoutMs: random.int(1_000, 4_000),
    writers,
    faultWindowMs: random.int(0, 8_000),
    faultRate: stress ? random.pick([0.02, 0.05, 0.1]) : random.pick([0, 0.002, 0.005, 0.01, 0.02]),
    crashes: !singleProcess,
  };
}

function drawPlan(random: Prng, singleProcess: boolean, dynamic: boolean): SimPlanSpec {
  const readyFirst = random.chance(0.25);
  const count = random.int(3, 15);
  const tasks: SimTaskParams[] = [];
  for (let label = 0; label < count; label++) {
    const inputCount = label === 0 ? 0 : random.int(0, Math.min(3, label));
    const inputs = Array.from({ length: inputCount }, () =>
      random.int(Math.max(0, label - 5), label - 1),
    );
    const task: SimTaskParams = {
      label,
      inputs,
      durationMs: random.pick([0, 1, 5, 20, 50, 100, 300]),
      plainFailures: random.chance(0.12) ? random.int(1, 2) : 0,
      permanentOnRun: random.chance(0.04) ? 1 : 0,
    };
    tasks.push(dynamic ? withDynamicDraws(random, task) : task);
  }
  return {
    tasks,
    failurePolicy: random.chance(0.5) ? 'continue' : 'failFast',
    maxAttempts: random.int(1, 3),
    initialDelayMs: random.pick([0, 5, 20, 100]),
    maxDelayMs: 300,
    batch: random.chance(0.6),
    readyFirst,
    withoutIndex: random.chance(singleProcess ? 0.5 : 0.2),
    startAtMs: random.int(0, 3_000),
    retries: random.int(0, 2),
  };
}

/** The `dynamic` profile's own draws for a task, after the default's. */
function withDynamicDraws(random: Prng, task: SimTaskParams): SimTaskParams {
  const trigger =
    task.inputs.length > 0 && random.chance(0.35)
      ? random.pick<TriggerRule>(['allDone', 'anySucceeded', 'oneFailed'])
      : undefined;
  const permanent = random.chance(0.08);
  const skips = random.chance(0.1);
  const spawns = !skips && random.chance(0.2) ? random.int(0, 4) : undefined;
  const subPlan =
    !skips && spawns === undefined && random.chance(0.12) ? random.int(0, 3) : undefined;
  return {
    ...task,
    ...(permanent ? { permanentOnRun: 1 } : {}),
    ...(trigger === undefined ? {} : { trigger }),
    ...(skips ? { skips } : {}),
    ...(spawns === undefined ? {} : { spawns }),
    ...(subPlan === undefined ? {} : { subPlan }),
  };
}

/**
 * The `cancel` profile's own draws for a plan, after the default's: tasks long enough to be running
 * when the cancel comes, the cancel's time and the fault around it.
 */
function withCancelDraws(random: Prng, plan: SimPlanSpec): SimPlanSpec {
  return {
    ...plan,
    tasks: plan.tasks.map((task) => ({
      ...task,
      durationMs: random.pick([20, 300, 1_000, 3_000]),
    })),
    cancel: {
      afterMs: random.int(0, 1_500),
      runnerFault: random.pick([
        'none',
        'crash-before',
        'crash-at-landing',
        'expire-at-landing',
        'freeze-across',
      ] as const),
      cutShort: random.chance(0.4),
    },
  };
}
