/**
 * The demo pipeline (examples/pipeline.ts) run by the fault harness, the way a user puts their own
 * plan in CI (docs/guide/fault-testing.md): worker processes killed with SIGKILL, frozen past their
 * session, their sessions expired, their replies lost and their links slowed while they run the
 * pipeline's tasks, and the server restarted. Each of the six kinds is injected at least once
 * (the harness owes each kind asked for one injection), and the test checks it kind by kind. The
 * pipeline holds up: same final results as the fault-free run, no function found not idempotent.
 * An extra task after the report, `audit.invoice`, is deliberately not idempotent (a random
 * invoice number): the report names it, and `expectFaultTolerant` fails on it until it is excepted.
 *
 * Set FAULTS_SEED to repeat a run's choices (the seed is printed with the report).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { call, type ZkPlan } from '../src/index.js';
import {
  NotFaultTolerantError,
  expectFaultTolerant,
  formatFaultReport,
  runFaultHarness,
  type FaultKind,
} from '../src/testing/index.js';
import { addPipelineTasks } from './pipeline-functions.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const TIMING = Number(process.env['ZK_PLAN_TIMING'] ?? '1');
/** The six kinds of fault the test title promises, each asked for and each checked. */
const SIX_KINDS: readonly FaultKind[] = [
  'killWorkers',
  'freezeWorkers',
  'expireSessions',
  'loseReplies',
  'slowLinks',
  'restartZooKeeper',
];

/** The demo's plan, stamped with a fixed time, and the invoice after the report. */
async function buildPlan(zkPlan: ZkPlan, parent: string): Promise<string> {
  const plan = await zkPlan.createPlan(parent);
  const { report } = await addPipelineTasks(zkPlan, plan, new Date('2024-05-17T06:00:00Z'));
  await zkPlan.addTask(plan, call('audit.invoice'), [report], { key: 'invoice', keepResult: true });
  await zkPlan.markAsReady(plan);
  return plan;
}

describe('the demo pipeline under the fault harness', () => {
  it(
    'holds up under killed, frozen and cut-off workers, lost replies, slow links and a server restart; the invoice is named not idempotent',
    { timeout: 180_000 * TIMING },
    async () => {
      const seed = Number(process.env['FAULTS_SEED'] ?? 20240517);
      const report = await runFaultHarness({
        functions: join(HERE, 'fault-tolerance-functions.ts'),
        plan: buildPlan,
        faults: {
          killWorkers: { probability: 0.3, max: 2 },
          freezeWorkers: { probability: 0.3, max: 1 },
          expireSessions: { probability: 0.3, max: 1 },
          loseReplies: { probability: 0.3, max: 1 },
          slowLinks: { probability: 0.3, max: 1 },
          restartZooKeeper: { probability: 0.3, max: 1 },
        },
        seed,
      });
      console.log(formatFaultReport(report));
      const injectedPerKind = Object.fromEntries(
        SIX_KINDS.map((kind) => [
          kind,
          report.faults.filter((fault) => fault.kind === kind).length,
        ]),
      );
      console.log(`seed ${seed}: injected per kind ${JSON.stringify(injectedPerKind)}`);

      expect(report.finished).toBe(true);
      expect([...report.faultsSelected].sort()).toEqual([...SIX_KINDS].sort());
      for (const kind of SIX_KINDS)
        expect(injectedPerKind[kind], `${kind} injected`).toBeGreaterThanOrEqual(1);
      expect(report.missedFaults).toEqual([]);
      expect(report.tasks.filter((task) => task.reExecutions > 0).length).toBeGreaterThan(0);
      expect(report.nonIdempotent.map((fn) => fn.fn)).toEqual(['audit.invoice']);
      expect(() => expectFaultTolerant(report)).toThrow(NotFaultTolerantError);
      expect(() => expectFaultTolerant(report)).toThrow(
        /function audit\.invoice is not idempotent \(effects differ, result differs\) in invoice/,
      );
      // The pipeline itself: every result as without faults, nothing else flagged.
      expectFaultTolerant(report, { except: ['audit.invoice'] });
    },
  );
});
