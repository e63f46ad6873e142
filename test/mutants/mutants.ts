/**
 * Known defects, kept outside the product: each mutant is a set of text patches that the vitest
 * project of the same name applies to modules of src/ as they load (vitest.config.ts,
 * `mutantPlugin`), for the simulation self-tests in test/mutants/*.mutant.test.ts. Nothing in src/
 * can switch a defect back on. A patch whose text is no longer in its file fails the load, naming
 * the mutant, so a refactor cannot quietly turn a self-test into one that tests nothing.
 */
export interface Patch {
  /** A text of the module, found there exactly once. */
  readonly find: string;
  /** What it becomes in the mutant. */
  readonly replace: string;
}

export interface MutantFile {
  /** The module the patches apply to, relative to the repository. */
  readonly file: string;
  /** Applied in order, each to the text the one before it left. */
  readonly patches: readonly Patch[];
}

/**
 * The seeds a mutant's `searchFrom` is one of. 'plan' is the plan simulation's default profile, whose
 * seeds test/simulation/sim-*.test.ts run on the product; 'plan-stress' its `stress` profile, which
 * only test/simulation/stress-baseline.test.ts runs on the product, and only at the seeds recorded
 * here (plan-sim-catch.ts says why that is enough). 'schedule' and 'schedule-skip' are the schedule
 * simulation's seeds with overlap 'allow' and 'skip' (SCHEDULE_SEEDS and SCHEDULE_SKIP_SEEDS in
 * schedule-simulation.ts), 'job' the job simulation's (JOB_SEEDS in job-simulation.ts),
 * 'plan-dynamic' the plan simulation's `dynamic` profile (DYNAMIC_SEEDS in sim-dynamic.test.ts),
 * 'crash-sweep' no simulation but a crash-injection sweep or scenario (its self-test names it), for a defect
 * whose damage needs a crash in a window of a few writes that random faults hardly ever hit,
 * 'long-schedule' and 'long-job' the long-horizon simulations'.
 */
export type MutantSimulation =
  | 'plan'
  | 'plan-stress'
  | 'plan-dynamic'
  | 'schedule'
  | 'schedule-skip'
  | 'job'
  | 'long-schedule'
  | 'long-job'
  | 'crash-sweep';

export interface Mutant {
  /** The project's and the self-test file's name: test/mutants/<name>.mutant.test.ts. */
  readonly name: string;
  /** The modules it patches: one for most defects, more for a defect that spans modules. */
  readonly files: readonly MutantFile[];
  /** The defect it puts back, and where it was first found. */
  readonly defect: string;
  /** The simulation whose seeds catch it. */
  readonly simulation: MutantSimulation;
  /**
   * The seed its self-test's search starts at: the first that caught it when last searched from seed
   * 1 (search-seeds.ts). For 'plan-stress', the one seed its self-test runs: the first that catches it
   * and passes without it (test/simulation/stress-baseline.test.ts; plan-sim-catch.ts says why).
   */
  readonly searchFrom: number;
}

export const MUTANTS: readonly Mutant[] = [
  {
    name: 'slot-release-resent',
    files: [
      {
        file: 'src/limits/concurrency-limits.ts',
        patches: [
          {
            find: 'await this.zk.delete(path, slot.stat.version, { fence: session, incarnation: slot.stat.czxid })',
            replace: 'await this.zk.delete(path, slot.stat.version)',
          },
        ],
      },
    ],
    defect:
      "issue 19, defect 1: a slot's release, sent again after a lost reply (through the next session or the same one), deletes the slot another worker took meanwhile, and a limit of 1 runs two tasks at once",
    simulation: 'plan-stress',
    searchFrom: 435,
  },
  {
    name: 'slot-take-unfenced',
    files: [
      {
        file: 'src/limits/concurrency-limits.ts',
        patches: [
          {
            find: "await this.zk.create(path, bytes, 'ephemeral', { fence: session });",
            replace: "await this.zk.create(path, bytes, 'ephemeral');",
          },
        ],
      },
    ],
    defect:
      "issue 19, defect 2: a slot's take, sent again through the next session, makes a slot the next session holds that no lease knows: the key stays blocked until the process ends",
    simulation: 'plan',
    searchFrom: 113,
  },
  {
    name: 'tick-record-pruned-while-named',
    files: [
      {
        file: 'src/schedule/scheduler.ts',
        patches: [
          {
            find: 'const named = new Set([...cursor.fire.map(cronTickId), ...backfillTicks]);',
            replace: 'const named = new Set<string>(backfillTicks);',
          },
          {
            find: 'now - (seen.get(id) ?? now) >= DEFAULTS.schedule.keepTicksMs',
            replace: "now - Number(id.split('-')[1]) > DEFAULTS.schedule.keepTicksMs",
          },
          {
            find: 'await store.prune(schedule.name, ids, prunable, DEFAULTS.schedule.keepTicks, cursor, backfillTicks, stillNeeded);',
            replace:
              'await store.prune(schedule.name, ids, prunable, DEFAULTS.schedule.keepTicks, { ...cursor, fire: [] }, backfillTicks, stillNeeded);',
          },
        ],
      },
    ],
    defect:
      'issue 19, defect 3: tick records beyond the newest 50 are pruned once their tick is 10 minutes old, while the cursor still names them; every pass makes them again, pending, and they fire a second time',
    simulation: 'long-schedule',
    searchFrom: 4,
  },
  {
    name: 'lease-write-resent',
    files: [
      {
        file: 'src/jobs/job-store.ts',
        patches: [
          {
            find: "const stat = await this.setIfVersion(path, encodeValue(record, 'lease', path), read.version, { ...fence, incarnation: read.czxid });",
            replace:
              "const stat = await this.setIfVersion(path, encodeValue(record, 'lease', path), read.version, fence);",
          },
        ],
      },
    ],
    defect:
      'issue 19, defect 4: a lease take sent again after a reconnect lands on the lease node of an item that left the pool and came back, taken since by another worker: two live holders, and a token that goes down',
    simulation: 'long-job',
    searchFrom: 17,
  },
  {
    name: 'misfire-catch-up-dropped',
    files: [
      {
        file: 'src/jobs/job-runner.ts',
        patches: [
          {
            find: "if (handling === 'caught-up') this.owe({ cause: 'misfire', attempt: 1, firedAt: tick });",
            replace: '',
          },
        ],
      },
    ],
    defect:
      "issue 24: a tick that came while the previous run of the share still ran is recorded as caught up but never run: the share's next run is the tick after (a misfire lost silently)",
    simulation: 'long-job',
    searchFrom: 1,
  },
  {
    name: 'failover-ignored',
    files: [
      {
        file: 'src/jobs/job-worker.ts',
        patches: [
          {
            find: 'for (const [run, runItems] of byRun) this.runners.get(job)?.failover(run, runItems);',
            replace: '',
          },
        ],
      },
    ],
    defect:
      "issue 24: the new holder of items whose holder died in the middle of a run does not run them again at once (ElasticJob's failover): they wait for the next tick",
    simulation: 'long-job',
    searchFrom: 1,
  },
  {
    name: 'owner-first-delete',
    files: [
      {
        file: 'src/store/task-store.ts',
        patches: [
          // finish() no longer removes `ready` before the inputs are handed on: deleteTask removes it, after `owner`.
          {
            find: 'plan.history ? this.keepHistory(claim.task, plan.history, fence) : undefined,\n      this.zk.deleteIfPresent(childPath(claim.task, READY), -1, fence),',
            replace:
              'plan.history ? this.keepHistory(claim.task, plan.history, fence) : undefined,\n      undefined,',
          },
          {
            find: 'const rest = children.filter((name) => name !== RESULT && name !== OWNER);',
            replace:
              'for (const name of [OWNER, ...children.filter((child) => child !== OWNER)]) await deleteValue(this.zk, childPath(claim.task, name), fence);\n      const rest = children.filter((name) => name !== RESULT && name !== OWNER);',
          },
        ],
      },
    ],
    defect:
      "the published Clojure deletion order: a finished task's `owner` is deleted before its other children, `ready` and `result` included, so a half-deleted task can be taken and run again, and its dependents get their inputs twice or too few",
    simulation: 'plan-stress',
    searchFrom: 1,
  },
  {
    name: 'run-failed-task',
    files: [
      {
        file: 'src/worker/perform-task.ts',
        patches: [
          {
            find: "if (children.includes(FAILED)) return 'failed-already'; // read behind the claim: no run can follow a failure for good",
            replace: '',
          },
          // Since issue 23 a task failed for good also has its final try recorded, which a claim
          // honours as well: the defect put back is the claim that looks at neither.
          { find: '(!attempts.lastFailure.retryable ||', replace: '(false ||' },
        ],
      },
    ],
    defect:
      "performTask runs a claimed task without looking for its `failed` child (the first review's defect 1, regression tests in 2fda092), nor, since issue 23, for its final try: a task failed for good runs again",
    simulation: 'plan-stress',
    searchFrom: 28,
  },
  {
    name: 'keep-reservation-on-claim-error',
    files: [
      {
        file: 'src/worker/find-task.ts',
        patches: [
          {
            find: 'try {\n      claim = await store.claim(task, seeker.workerId, seeker.taskSignal);\n    } finally {\n      if (claim === undefined) context.book?.release(task);\n    }',
            replace:
              'claim = await store.claim(task, seeker.workerId, seeker.taskSignal);\n    if (claim === undefined) context.book?.release(task);',
          },
        ],
      },
    ],
    defect:
      "a claim that throws in the scan keeps its reservation in the claim book (the first review's defect 4, regression tests in 2fda092): the task is never taken again in that process, which also remembers the plan after it is deleted",
    simulation: 'plan-stress',
    searchFrom: 6,
  },
  {
    name: 'skip-control-check-after-claim',
    files: [
      {
        file: 'src/worker/perform-task.ts',
        patches: [{ find: "if (halted) return 'plan-halted';", replace: '' }],
      },
    ],
    defect:
      "performTask trusts the process's watch on the plan and does not act on its `control` node after the claim: a task of a paused or cancelled plan starts",
    simulation: 'plan-stress',
    searchFrom: 7,
  },
  {
    name: 'trust-stale-control-view',
    files: [
      {
        file: 'src/worker/plan-tracker.ts',
        patches: [
          { find: 'tracked.fresh = false; // until this read answers', replace: '' },
          { find: 'if (this.plans.get(plan) === tracked) tracked.fresh = false;', replace: '' },
        ],
      },
    ],
    defect:
      'the plan tracker keeps vouching that a plan is not paused after its plan watch fired, until its reload answers: a claim made in that window misses the pause and its task starts',
    simulation: 'plan-stress',
    searchFrom: 217,
  },
  {
    name: 'start-when-limit-full',
    files: [
      {
        file: 'src/worker/perform-task.ts',
        patches: [{ find: "if (slot?.kind === 'full') return 'limit-full';", replace: '' }],
      },
    ],
    defect:
      'a task with a concurrency key starts even when every slot of the key is held: the limit is not enforced',
    simulation: 'plan-stress',
    searchFrom: 1,
  },
  {
    name: 'keep-half-built-tick-plan',
    files: [
      {
        file: 'src/schedule/tick-firing.ts',
        patches: [
          {
            find: 'await clearHalfBuilt(zk, plan, existing.children, session, resolvePlanSettings(checked.options).history);',
            replace: '',
          },
        ],
      },
    ],
    defect:
      'a scheduler that takes over a tick fills the half-built plan of a dead firer without deleting its tasks first: a plan with extra tasks',
    simulation: 'schedule',
    searchFrom: 2,
  },
  {
    name: 'backfill-tick-records-not-remade',
    files: [
      {
        file: 'src/backfill/backfiller.ts',
        patches: [
          {
            find: 'await this.createTickRecords(schedule, id, record, [tick], session);',
            replace: '',
          },
        ],
      },
    ],
    defect:
      'a backfill step does not make the missing records of the ticks its record names under way: a scheduler that committed a step and died (or froze past its session) before making them leaves those ticks without a record, never fired, and the backfill never completes',
    simulation: 'schedule',
    searchFrom: 73,
  },
  {
    name: 'fire-tick-without-lock',
    files: [
      {
        file: 'src/schedule/tick-firing.ts',
        patches: [
          {
            find: "if (lock === undefined) return { state: 'held-elsewhere', here: false };",
            replace: '',
          },
          {
            find: 'await lock.release().catch(() => undefined);',
            replace: 'await lock?.release().catch(() => undefined);',
          },
        ],
      },
    ],
    defect: 'a scheduler fires a tick without its lock: two firers build one plan at once',
    simulation: 'schedule',
    searchFrom: 1,
  },
  {
    name: 'overlap-newest-run-only',
    files: [
      {
        file: 'src/schedule/tick-firing.ts',
        patches: [
          {
            find: "if (manual && tick.record.state === 'pending') {\n      runs.push({ plan: tick.record.plan, finished: false, starting: true });\n      continue;\n    }",
            replace: '',
          },
          {
            find: 'runs.push({ plan: tick.record.plan, finished: await context.planFinished(tick.record.plan) });',
            replace:
              'runs.push({ plan: tick.record.plan, finished: await context.planFinished(tick.record.plan) });\n    break;',
          },
        ],
      },
    ],
    defect:
      "overlap looks only at the newest fired run, so a finished manual run hides an unfinished cron run (and a manual run still being fired is not looked at): under 'skip', a cron run starts beside an unfinished one",
    simulation: 'schedule-skip',
    searchFrom: 1,
  },
  {
    name: 'take-before-lease-ends',
    files: [
      {
        file: 'src/jobs/job-worker.ts',
        patches: [{ find: 'if (wait > 0) return wait;', replace: '' }],
      },
    ],
    defect:
      "a job worker takes an item as soon as it is assigned, without waiting for the previous holder's lease to be given back or run out",
    simulation: 'job',
    searchFrom: 1,
  },
  {
    name: 'work-past-deadline',
    files: [
      {
        file: 'src/jobs/job-worker.ts',
        patches: [
          { find: 'expireOverdue(): void {', replace: 'expireOverdue(): void {\n    return;' },
          {
            find: "if (clock.mono() >= held.deadline) return this.drop(held, 'lease-ran-out'); // never renew a lease this worker has stopped on",
            replace: '',
          },
        ],
      },
    ],
    defect:
      'a job worker that cannot renew keeps working on its items past its stop deadline: a detached worker does not stop on its own',
    simulation: 'job',
    searchFrom: 1,
  },
  {
    name: 'assign-disabled-worker',
    files: [
      {
        file: 'src/jobs/assignment.ts',
        patches: [{ find: '.filter((worker) => !disabled.has(worker.id))', replace: '' }],
      },
    ],
    defect:
      "the manager's decision leaves the flags of disabled job workers unread: a disabled worker keeps its items",
    simulation: 'job',
    searchFrom: 1,
  },
  {
    name: 'hand-on-failure-after-mark',
    files: [
      {
        file: 'src/worker/record-failure.ts',
        patches: [
          {
            find: 'await handOnFailure(store, claim, inputFailureOf(claim.task, key, failure));\n  await store.markFailed(claim, failure);',
            replace:
              'await store.markFailed(claim, failure);\n  await handOnFailure(store, claim, inputFailureOf(claim.task, key, failure));',
          },
        ],
      },
    ],
    defect:
      "a task's failure for good is handed to the dependents whose trigger rule takes failures only after the task is marked failed: a worker that dies in between leaves them waiting for ever (no claim of a failed task walks again)",
    simulation: 'crash-sweep',
    searchFrom: 0,
  },
  {
    name: 'run-after-final-try',
    files: [
      {
        file: 'src/worker/perform-task.ts',
        patches: [{ find: '(!attempts.lastFailure.retryable ||', replace: '(false ||' }],
      },
    ],
    defect:
      'a task whose final try is recorded, but whose worker died before marking it failed, runs again: its failure may already have been handed on, and a run that succeeds now contradicts it',
    simulation: 'plan-dynamic',
    searchFrom: 71,
  },
  {
    name: 'spawn-ignores-committed-batch',
    files: [
      {
        file: 'src/spawn/task-spawner.ts',
        patches: [
          {
            find: 'const committed = await this.committedTasks(claim.plan, record.batch);',
            replace: 'const committed = undefined as string[] | undefined;',
          },
        ],
      },
    ],
    defect:
      "a run of a spawning task that finds the record of a dead run's batch takes it over without looking for that batch's commit marker: the dead run's committed children run, and so does a second set",
    simulation: 'crash-sweep',
    searchFrom: 0,
  },
  {
    name: 'skipped-input-runs',
    files: [
      {
        file: 'src/trigger/trigger-decision.ts',
        patches: [
          {
            find: "if (outcome.status === 'skipped')",
            replace: "if (outcome.status === ('never' as string))",
          },
        ],
      },
    ],
    defect:
      'a task under the default trigger rule runs although an input was skipped: the skip does not propagate',
    simulation: 'plan-dynamic',
    searchFrom: 2,
  },
  {
    name: 'continued-task-runs-again',
    files: [
      {
        file: 'src/worker/perform-task.ts',
        patches: [
          {
            find: 'const continued = children.find((name) => isContinuedSerial(serialOf(name, ARG_PREFIX)));',
            replace: 'const continued = undefined as string | undefined;',
          },
        ],
      },
    ],
    defect:
      "a task that handed over with ctx.continueWith is not completed with its continuation's result once it arrives: the worker runs its function again, which hands over to the same continuation, for ever",
    simulation: 'plan-dynamic',
    searchFrom: 1,
  },
  {
    name: 'sub-plan-refill-keeps-half-built',
    files: [
      {
        file: 'src/subplan/sub-plan-runner.ts',
        patches: [
          {
            find: 'await clearHalfBuilt(\n        zk,\n        child,',
            replace:
              'await (async (..._ignored: unknown[]) => undefined)(\n        zk,\n        child,',
          },
        ],
      },
    ],
    defect:
      'a sub-plan task whose check died while it built the child fills the half-built child again as it finds it: the tasks the dead check made stay beside a second set (each runs twice), and the children of the plan node it did not make yet (its history) are never made',
    simulation: 'plan-dynamic',
    searchFrom: 186,
  },
];
