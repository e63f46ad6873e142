/**
 * The demo (`npm run demo`): a batch ETL/report pipeline run by zk-plan on a pool of 4 worker
 * loops, and checked against a single-process run of the same code.
 *
 *   level 1  extract[shard]    ×8  synthetic sales of one region (seeded PRNG, a few thousand rows, some invalid)
 *   level 2  clean[shard]      ×8  drops invalid rows and counts them by reason
 *   level 3  aggregate[shard]  ×8  per-product totals (a Map) in EUR, via a CurrencyRates service from ctx.container
 *   level 4  merge             ×1  fan-in of the 8 shard aggregates
 *   level 5  report            ×1  totals, top products, regions, rejected rows, generatedAt (kept result)
 *
 * The data, the steps and the task functions are in pipeline-functions.ts; this file runs them and
 * prints the report.
 *
 *   npx tsx examples/pipeline.ts            (ZOOKEEPER_CONNECT=host:port to use a running ZooKeeper)
 */
import 'reflect-metadata'; // before tsyringe: it checks for the Reflect polyfill when it loads
import { isDeepStrictEqual } from 'node:util';
import { container as rootContainer } from 'tsyringe';
import { ZkPlan } from '../src/index.js';
import { runMain, withZooKeeper } from './local-zookeeper.js';
import {
  CURRENCY_RATES,
  SHARDS,
  addPipelineTasks,
  functions,
  rates,
  singleProcessReport,
  type Report,
} from './pipeline-functions.js';

const WORKERS = 4;

// ---------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------

const eur = (x: number): string =>
  x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const int = (x: number): string => x.toLocaleString('en-US');
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function table(
  headers: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  rightAligned: ReadonlySet<number>,
): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    '  ' +
    cells
      .map((cell, c) =>
        rightAligned.has(c) ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0),
      )
      .join('  ');
  return [
    line(headers),
    '  ' + widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
  ].join('\n');
}

function printReport(report: Report): void {
  console.log(
    `\nSales report (generated ${report.generatedAt.toISOString()}, ${report.shards} shards)`,
  );
  console.log(
    `  rows read ${int(report.rowsRead)}, accepted ${int(report.rowsAccepted)}, rejected ${int(report.rowsRejected)} ` +
      `(${Object.entries(report.rejectedByReason)
        .map(([reason, n]) => `${reason} ${n}`)
        .join(', ')})`,
  );
  console.log(`  units sold ${int(report.units)}, revenue EUR ${eur(report.revenueEur)}\n`);
  console.log(
    table(
      ['#', 'sku', 'product', 'units', 'orders', 'revenue EUR', 'share'],
      report.topProducts.map((p) => [
        String(p.rank),
        p.sku,
        p.name,
        int(p.units),
        int(p.orders),
        eur(p.revenueEur),
        pct(p.share),
      ]),
      new Set([0, 3, 4, 5, 6]),
    ),
  );
  console.log('');
  console.log(
    table(
      ['region', 'orders', 'revenue EUR', 'share'],
      report.regions.map((r) => [r.region, int(r.orders), eur(r.revenueEur), pct(r.share)]),
      new Set([1, 2, 3]),
    ),
  );
}

function isReport(value: unknown): value is Report {
  return (
    typeof value === 'object' &&
    value !== null &&
    'generatedAt' in value &&
    (value as Report).generatedAt instanceof Date
  );
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

await runMain('pipeline', () =>
  withZooKeeper(async (connect) => {
    console.log(`connect string: ${connect}`);
    // Services for the tasks live in a child container handed to ZkPlan: tasks see it as ctx.container.
    const container = rootContainer.createChildContainer();
    container.register(CURRENCY_RATES, { useValue: rates });

    const zkPlan = await ZkPlan.connect({ connect, functions, container });
    // A parent of our own, so that workers take only this run's plan even on a shared ZooKeeper.
    const parent = `/zk-plan-examples/pipeline-${process.pid}-${Date.now()}`;
    let failures = 0;
    let pool: ReturnType<ZkPlan['startWorkers']> | undefined;
    try {
      const plan = await zkPlan.createPlan(parent);
      console.log(`plan: ${plan}`);
      const { tasks, report } = await addPipelineTasks(zkPlan, plan, new Date());
      const labels = new Map(tasks.map((task) => [task.path, task]));
      console.log(
        `${labels.size} tasks: ${SHARDS.length}× extract → clean → aggregate, merge (fan-in of ${SHARDS.length}), report\n`,
      );

      const started = performance.now();
      let busyMs = 0;
      const since = (): string =>
        `${((performance.now() - started) / 1000).toFixed(2).padStart(5)} s`;
      zkPlan.on('task:completed', ({ task, workerId, durationMs, reusedResult }) => {
        busyMs += durationMs;
        const info = labels.get(task);
        const name = task.slice(task.lastIndexOf('/') + 1);
        console.log(
          `  ${since()}  ${name}  ${(info?.fn ?? '?').padEnd(13)} ${(info?.label ?? '').padEnd(22)} ${Math.round(durationMs).toString().padStart(4)} ms` +
            `  worker w${workerId.slice(workerId.lastIndexOf('/') + 1)}${reusedResult ? '  (reused a stored result)' : ''}`,
        );
      });
      zkPlan.on('task:failed', ({ task, workerId, error }) => {
        failures += 1;
        console.error(
          `  ${since()}  FAILED ${labels.get(task)?.label ?? task} on ${workerId}: ${error.message}`,
        );
      });
      zkPlan.on('worker:error', ({ workerId, error }) => {
        failures += 1;
        console.error(`  ${since()}  worker ${workerId} error: ${error.message}`);
      });

      await zkPlan.markAsReady(plan);
      pool = zkPlan.startWorkers(parent, { count: WORKERS, drainTimeoutMs: 5_000 });
      await zkPlan.waitForCompletion(plan, { timeoutMs: 30_000 });
      const makespanMs = performance.now() - started;

      const result = await zkPlan.getResult(report);
      if (!isReport(result))
        throw new Error(`the report task returned ${JSON.stringify(result)}, not a report`);
      printReport(result);

      console.log(
        `\nmakespan ${Math.round(makespanMs)} ms on ${WORKERS} workers: ${labels.size} tasks run, ` +
          `${Math.round(busyMs)} ms of task time (×${(busyMs / makespanMs).toFixed(2)} parallelism)` +
          (failures > 0 ? `, ${failures} failures/errors (retried)` : ''),
      );

      const expected = singleProcessReport(result.generatedAt);
      if (!isDeepStrictEqual(result, expected)) {
        console.error('expected (single process):', JSON.stringify(expected, null, 2));
        throw new Error(
          'verification failed: the distributed report differs from a single-process run',
        );
      }
      if (result.rowsAccepted + result.rowsRejected !== result.rowsRead)
        throw new Error('verification failed: accepted + rejected ≠ read');
      console.log('verified: results match a single-process run');
    } finally {
      await pool?.stop();
      await zkPlan.zk
        .deleteRecursive(parent)
        .catch((error: unknown) => console.error(`could not remove ${parent}: ${String(error)}`));
      await zkPlan.close();
    }
  }),
);
