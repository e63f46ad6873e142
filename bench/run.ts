/**
 * `npm run bench`: zk-plan's dispatch measured against the ZooKeeper ceiling, in one run on one
 * machine. Starts its own standalone ZooKeeper with fsync on (as in production), measures serial
 * create latency and pipelined creates/s, then runs each workload 3 times (seed-stress 5 times at
 * the default setting) at each setting and prints a markdown table per setting (median, with
 * min–max) and each target of issue 26 with its figure and whether it is met.
 *
 * Settings (BENCH_SETTINGS=default,tuned,4-processes,16-processes picks some; all by default):
 * - default: 10 worker loops in one process for every workload, as a user keeps them;
 * - tuned: the loop count picked per workload (4 for the chain, 32 for the wide ones), the figures
 *   docs/performance.md tracked before issue 26, labelled as tuned;
 * - 4 processes: 4 real `zk-plan worker` processes × 8 loops;
 * - 16 processes: 16 of them × 8 loops, on the same ensemble.
 *
 * Then the parts that take a process (and a ZooKeeper) of their own, in bench/parts.ts: plan size,
 * history, and memory over a million tasks (about 30 minutes of the whole). BENCH_PARTS picks
 * among workloads,size,history,memory (all by default). Every target, of the workloads and of the
 * parts, is printed once more at the end.
 *
 *   npm run bench                 (BENCH_RUNS=1 BENCH_ONLY=chain-200 BENCH_SETTINGS=default BENCH_PARTS=workloads for a quick look)
 *
 * Plans keep their history (the default); BENCH_HISTORY=off runs them with { history: false }.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startZooKeeper } from '../src/testing/index.js';
import { measureCeiling } from './ceiling.js';
import { runOnce, type HopParts, type Sample, type Setting } from './measure.js';
import { median, summary } from './stats.js';
import {
  DEFAULT_SETTING,
  MANY_PROCESSES_SETTING,
  PROCESSES_SETTING,
  checkTargets,
  type TargetLine,
} from './targets.js';
import { startWorkerFleet, type WorkerFleet } from './worker-processes.js';
import { WORKLOADS, type Workload } from './workloads.js';
import { PARTS, runPart } from './parts.js';
import { formatTarget } from './part-result.js';

const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const SEED_STRESS_RUNS = 5;
const ONLY = process.env['BENCH_ONLY']?.split(',');
const HISTORY = process.env['BENCH_HISTORY'] !== 'off';

const SETTINGS: readonly (Setting & { readonly id: string })[] = [
  {
    id: 'default',
    name: DEFAULT_SETTING,
    processes: 0,
    loops: () => 10,
    label: '1 process × 10 loops, every workload (the setting a user keeps)',
  },
  {
    id: 'tuned',
    name: 'tuned',
    processes: 0,
    loops: (workload) => workload.tunedLoops,
    label: 'TUNED: 1 process, loops picked per workload (as docs/performance.md tracked before)',
  },
  {
    id: '4-processes',
    name: PROCESSES_SETTING,
    processes: 4,
    loops: () => 8,
    label: '4 worker processes × 8 loops',
  },
  {
    id: '16-processes',
    name: MANY_PROCESSES_SETTING,
    processes: 16,
    loops: () => 8,
    label: '16 worker processes × 8 loops',
  },
];
const CHOSEN = process.env['BENCH_SETTINGS']?.split(',');
const PARTS_CHOSEN = process.env['BENCH_PARTS']?.split(',');
const WORKLOADS_PART = 'workloads';
const chosenPart = (id: string): boolean => !PARTS_CHOSEN || PARTS_CHOSEN.includes(id);

function runsOf(setting: Setting, workload: Workload): number {
  return setting.name === DEFAULT_SETTING && workload.name === 'seed-stress'
    ? Math.max(RUNS, SEED_STRESS_RUNS)
    : RUNS;
}

/** Where a hop's time goes, per workload with hops, at a setting whose loops run in the bench's process. */
function printHopParts(results: ReadonlyMap<string, readonly Sample[]>): void {
  const rows = [...results].filter(([, samples]) => samples.some((s) => s.hopParts));
  if (rows.length === 0) return;
  console.log(
    `\nwhere a hop's time goes (p50 ms, median over runs): producer's function end → its task:completed (result write, hand-on, deletion) → dependent's task:claimed (noticing, claim) → its task:started (reads)\n`,
  );
  console.log('| workload | hop p50 | finish | notice and claim | read |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const [name, samples] of rows) {
    const parts = samples.flatMap((s) => (s.hopParts ? [s.hopParts] : []));
    const cell = (pick: (parts: HopParts) => number): string => median(parts.map(pick)).toFixed(2);
    console.log(
      `| ${name} | ${median(samples.map((s) => s.hopP50)).toFixed(2)} | ${cell((p) => p.finishP50)} | ${cell((p) => p.noticeAndClaimP50)} | ${cell((p) => p.readP50)} |`,
    );
  }
}

function printTable(setting: Setting, results: ReadonlyMap<string, readonly Sample[]>): void {
  console.log(`\n### ${setting.label}\n`);
  console.log(
    '| workload | loops | build ms | makespan ms | tasks/s | hop p50 ms | hop p99 ms | writes/task | txns/task | reads/task | × ideal | kept bytes/task | kept znodes/task |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const [name, samples] of results) {
    const workload = WORKLOADS.find((w) => w.name === name) as Workload;
    const col = (pick: (sample: Sample) => number, digits = 0): string =>
      Number.isNaN(pick(samples[0] as Sample)) ? '–' : summary(samples.map(pick), digits);
    const loops =
      setting.processes === 0
        ? String(setting.loops(workload))
        : `${setting.processes} × ${setting.loops(workload)}`;
    console.log(
      `| ${name} | ${loops} | ${col((s) => s.buildMs)} | ${col((s) => s.makespanMs)} | ${col((s) => s.tasksPerSecond)} | ${col((s) => s.hopP50, 1)} | ${col((s) => s.hopP99, 1)} | ${col((s) => s.writesPerTask, 2)} | ${col((s) => s.txnsPerTask, 2)} | ${col((s) => s.readsPerTask, 2)} | ${col((s) => s.ratio, 2)} | ${col((s) => s.keptBytesPerTask)} | ${col((s) => s.keptNodesPerTask, 2)} |`,
    );
  }
}

/** Runs every workload at every chosen setting on one server; prints their tables and targets. */
async function runWorkloads(): Promise<TargetLine[]> {
  const server = await startZooKeeper({ fsync: true, heapMb: 1024 });
  const timingsDir = mkdtempSync(join(tmpdir(), 'zk-plan-bench-'));
  try {
    const connect = server.connectString;
    const ceiling = await measureCeiling(connect);
    console.log(
      `machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, standalone ZooKeeper 3.8 with fsync on`,
    );
    console.log(
      `ceiling: serial create p50 ${ceiling.serialP50.toFixed(2)} ms, p99 ${ceiling.serialP99.toFixed(2)} ms; pipelined ${Math.round(ceiling.pipelinedPerSecond)} creates/s`,
    );
    console.log(
      `plans ${HISTORY ? 'keep their history (the default)' : 'created with { history: false } (BENCH_HISTORY=off)'}; writes/task: sent by the bench's own client (its own loops only); txns/task: applied by the server (every process)`,
    );
    const results = new Map<string, Map<string, Sample[]>>();
    for (const setting of SETTINGS.filter((s) => !CHOSEN || CHOSEN.includes(s.id))) {
      const parent = `/bench/${setting.id}`;
      let fleet: WorkerFleet | undefined;
      if (setting.processes > 0)
        fleet = await startWorkerFleet({
          connect,
          parent,
          processes: setting.processes,
          loops: setting.loops(WORKLOADS[0] as Workload),
          timingsDir,
        });
      try {
        const bySetting = new Map<string, Sample[]>();
        for (const workload of WORKLOADS.filter((w) => !ONLY || ONLY.includes(w.name))) {
          const samples: Sample[] = [];
          for (let run = 0; run < runsOf(setting, workload); run++)
            samples.push(
              await runOnce(
                {
                  connect,
                  setting,
                  parent,
                  timingFiles: fleet?.timingFiles ?? [],
                  pipelinedPerSecond: ceiling.pipelinedPerSecond,
                  history: HISTORY,
                },
                workload,
              ),
            );
          bySetting.set(workload.name, samples);
          process.stderr.write(`${setting.id} ${workload.name}: done\n`);
        }
        results.set(setting.name, bySetting);
        printTable(setting, bySetting);
        if (setting.processes === 0) printHopParts(bySetting);
      } finally {
        await fleet?.stop();
      }
    }
    const targets = checkTargets(results, ceiling);
    console.log('\ntargets of the workloads (issue 26):');
    for (const line of targets) console.log(formatTarget(line));
    return targets;
  } finally {
    rmSync(timingsDir, { recursive: true, force: true });
    await server.stop();
  }
}

const targets: TargetLine[] = [];
if (chosenPart(WORKLOADS_PART)) targets.push(...(await runWorkloads()));
for (const part of PARTS.filter((p) => chosenPart(p.id))) {
  console.log(`\n### ${part.title}\n`);
  targets.push(...(await runPart(part)));
}
console.log('\nevery target of issue 26 in this run:');
for (const line of targets) console.log(formatTarget(line));
