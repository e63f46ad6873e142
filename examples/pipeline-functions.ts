/**
 * The demo pipeline's data, steps and task functions (examples/pipeline.ts runs it): a batch
 * ETL/report pipeline, 8 shards × extract → clean → aggregate, then merge and report.
 *
 * Also a functions module, as `zk-plan worker --functions examples/pipeline-functions.ts` loads it
 * (its `functions` export), and the plan's builder (`addPipelineTasks`): the fault harness runs the
 * pipeline so (examples/fault-tolerance.test.ts).
 */
import 'reflect-metadata'; // before tsyringe: it checks for the Reflect polyfill when it loads
import { setTimeout as sleep } from 'node:timers/promises';
import { container as rootContainer, type InjectionToken } from 'tsyringe';
import { FunctionRegistry, call, type TaskContext, type ZkPlan } from '../src/index.js';
import { prng } from './seeded-random.js';

// ---------------------------------------------------------------------------------------------
// The data: shards, products, currencies
// ---------------------------------------------------------------------------------------------

const SEED = 20240517;

export interface ShardSpec {
  readonly index: number;
  readonly region: string;
  readonly currency: string;
  readonly seed: number;
}

const REGIONS: ReadonlyArray<readonly [region: string, currency: string]> = [
  ['eu-west', 'EUR'],
  ['eu-north', 'SEK'],
  ['uk', 'GBP'],
  ['us-east', 'USD'],
  ['us-west', 'USD'],
  ['sa-east', 'BRL'],
  ['ap-south', 'INR'],
  ['ap-northeast', 'JPY'],
];

export const SHARDS: readonly ShardSpec[] = REGIONS.map(([region, currency], index) => ({
  index,
  region,
  currency,
  seed: SEED + 7919 * index,
}));

/** Catalog: sku → name and list price in EUR. */
const CATALOG: ReadonlyMap<string, { readonly name: string; readonly priceEur: number }> = new Map(
  [
    ['Espresso beans 1 kg', 24.9],
    ['Filter coffee 500 g', 9.5],
    ['Green tea 100 g', 6.2],
    ['Oolong tea 100 g', 11.8],
    ['Chai mix 250 g', 7.4],
    ['Cocoa powder 250 g', 5.9],
    ['Oat milk 1 l', 2.3],
    ['Ceramic mug', 12.0],
    ['Travel mug', 19.5],
    ['Pour-over dripper', 27.0],
    ['Paper filters ×100', 4.8],
    ['Burr grinder', 89.0],
    ['Milk frother', 34.5],
    ['Kettle 1.2 l', 59.0],
    ['Espresso machine', 449.0],
    ['Descaler', 8.9],
    ['Tea infuser', 6.5],
    ['Gift box', 39.0],
    ['Biscotti 200 g', 4.2],
    ['Syrup, vanilla', 7.9],
  ].map(([name, price], i) => [
    `SKU-${String(i + 1).padStart(3, '0')}`,
    { name: name as string, priceEur: price as number },
  ]),
);
const SKUS = [...CATALOG.keys()];

/** A sales row as extracted: some are invalid on purpose. */
export interface SaleRow {
  readonly id: number;
  readonly day: number;
  readonly sku: string | null;
  readonly qty: number;
  readonly unitPrice: number;
  readonly currency: string;
}

type RejectReason =
  'missing-sku' | 'unknown-sku' | 'bad-quantity' | 'bad-price' | 'unknown-currency';

export interface CleanShard {
  readonly shard: number;
  readonly region: string;
  readonly rowsRead: number;
  readonly rows: SaleRow[];
  readonly rejected: Map<RejectReason, number>;
}

interface ProductTotals {
  units: number;
  orders: number;
  revenueEur: number;
}

export interface ShardAggregate {
  readonly shard: number;
  readonly region: string;
  readonly rowsRead: number;
  readonly rowsAccepted: number;
  readonly rejected: Map<RejectReason, number>;
  readonly products: Map<string, ProductTotals>;
  readonly revenueEur: number;
}

export interface Merged {
  readonly shards: number;
  readonly rowsRead: number;
  readonly rowsAccepted: number;
  readonly rejected: Map<RejectReason, number>;
  readonly products: Map<string, ProductTotals>;
  readonly regions: Map<string, { orders: number; revenueEur: number }>;
}

export interface Report {
  readonly generatedAt: Date;
  readonly shards: number;
  readonly rowsRead: number;
  readonly rowsAccepted: number;
  readonly rowsRejected: number;
  readonly rejectedByReason: Record<string, number>;
  readonly units: number;
  readonly revenueEur: number;
  readonly topProducts: ReadonlyArray<{
    rank: number;
    sku: string;
    name: string;
    units: number;
    orders: number;
    revenueEur: number;
    share: number;
  }>;
  readonly regions: ReadonlyArray<{
    region: string;
    orders: number;
    revenueEur: number;
    share: number;
  }>;
}

// ---------------------------------------------------------------------------------------------
// A service the tasks resolve from the container
// ---------------------------------------------------------------------------------------------

/** A tiny in-memory "currency rates" service (EUR per unit of each currency). */
export class CurrencyRates {
  constructor(private readonly eurPerUnit: ReadonlyMap<string, number>) {}

  has(currency: string): boolean {
    return this.eurPerUnit.has(currency);
  }

  toEur(amount: number, currency: string): number {
    const rate = this.eurPerUnit.get(currency);
    if (rate === undefined) throw new Error(`no rate for ${currency}`);
    return amount * rate;
  }

  rate(currency: string): number {
    return this.toEur(1, currency);
  }
}

export const CURRENCY_RATES: InjectionToken<CurrencyRates> = Symbol('examples.currency-rates');

export const rates = new CurrencyRates(
  new Map([
    ['EUR', 1],
    ['USD', 0.92],
    ['GBP', 1.17],
    ['SEK', 0.088],
    ['BRL', 0.17],
    ['INR', 0.011],
    ['JPY', 0.0061],
  ]),
);

// Worker processes started with `zk-plan worker --functions examples/pipeline-functions.ts` have no
// hook to set up a container: ZkPlan's default container is a child of tsyringe's root one, so the
// service is registered there when the module loads. A program (examples/pipeline.ts) registers its
// own in the container it hands ZkPlan, which comes first.
rootContainer.register(CURRENCY_RATES, { useValue: rates });

// ---------------------------------------------------------------------------------------------
// The pipeline's steps: pure functions, used by the tasks and by the single-process check
// ---------------------------------------------------------------------------------------------

const round2 = (x: number): number => Math.round(x * 100) / 100;

/**
 * A region's sales. Results travel through ZooKeeper znodes, which hold at most ~1 MB
 * (jute.maxbuffer): a shard is 2,000–3,500 rows, about 250 KB of superjson at most.
 */
function extractShard(spec: ShardSpec): SaleRow[] {
  const random = prng(spec.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const count = 2000 + Math.floor(random() * 1500);
  // Each region has its favourites: skew the product mix with a per-shard weight.
  const favourite = Math.floor(random() * SKUS.length);
  const rows: SaleRow[] = [];
  for (let id = 1; id <= count; id++) {
    const sku =
      random() < 0.3
        ? (SKUS[(favourite + Math.floor(random() * 3)) % SKUS.length] as string)
        : pick(SKUS);
    const listEur = CATALOG.get(sku)?.priceEur ?? 0;
    let row: SaleRow = {
      id,
      day: 1 + Math.floor(random() * 31),
      sku,
      qty: 1 + Math.floor(random() * random() * 6),
      unitPrice: round2((listEur / rates.rate(spec.currency)) * (0.9 + random() * 0.2)),
      currency: spec.currency,
    };
    const fault = random();
    if (fault < 0.006) row = { ...row, sku: null };
    else if (fault < 0.01) row = { ...row, sku: 'SKU-999' };
    else if (fault < 0.018) row = { ...row, qty: -Math.floor(random() * 3) };
    else if (fault < 0.022) row = { ...row, unitPrice: -row.unitPrice };
    else if (fault < 0.025) row = { ...row, currency: 'XXX' };
    rows.push(row);
  }
  return rows;
}

function rejectReason(
  row: SaleRow,
  known: (currency: string) => boolean,
): RejectReason | undefined {
  if (row.sku === null || row.sku === '') return 'missing-sku';
  if (!CATALOG.has(row.sku)) return 'unknown-sku';
  if (!Number.isInteger(row.qty) || row.qty <= 0) return 'bad-quantity';
  if (!(row.unitPrice > 0)) return 'bad-price';
  if (!known(row.currency)) return 'unknown-currency';
  return undefined;
}

function cleanShard(
  spec: ShardSpec,
  rows: readonly SaleRow[],
  currencies: CurrencyRates,
): CleanShard {
  const valid: SaleRow[] = [];
  const rejected = new Map<RejectReason, number>();
  for (const row of rows) {
    const reason = rejectReason(row, (currency) => currencies.has(currency));
    if (reason === undefined) valid.push(row);
    else rejected.set(reason, (rejected.get(reason) ?? 0) + 1);
  }
  return { shard: spec.index, region: spec.region, rowsRead: rows.length, rows: valid, rejected };
}

function aggregateShard(clean: CleanShard, currencies: CurrencyRates): ShardAggregate {
  const products = new Map<string, ProductTotals>();
  let revenueEur = 0;
  for (const row of clean.rows) {
    const sku = row.sku as string;
    const totals = products.get(sku) ?? { units: 0, orders: 0, revenueEur: 0 };
    const amount = currencies.toEur(row.qty * row.unitPrice, row.currency);
    totals.units += row.qty;
    totals.orders += 1;
    totals.revenueEur += amount;
    revenueEur += amount;
    products.set(sku, totals);
  }
  return {
    shard: clean.shard,
    region: clean.region,
    rowsRead: clean.rowsRead,
    rowsAccepted: clean.rows.length,
    rejected: clean.rejected,
    products,
    revenueEur,
  };
}

function mergeAggregates(aggregates: readonly ShardAggregate[]): Merged {
  const products = new Map<string, ProductTotals>();
  const rejected = new Map<RejectReason, number>();
  const regions = new Map<string, { orders: number; revenueEur: number }>();
  let rowsRead = 0;
  let rowsAccepted = 0;
  for (const shard of aggregates) {
    rowsRead += shard.rowsRead;
    rowsAccepted += shard.rowsAccepted;
    for (const [reason, count] of shard.rejected)
      rejected.set(reason, (rejected.get(reason) ?? 0) + count);
    for (const [sku, totals] of shard.products) {
      const merged = products.get(sku) ?? { units: 0, orders: 0, revenueEur: 0 };
      merged.units += totals.units;
      merged.orders += totals.orders;
      merged.revenueEur += totals.revenueEur;
      products.set(sku, merged);
    }
    const region = regions.get(shard.region) ?? { orders: 0, revenueEur: 0 };
    region.orders += shard.rowsAccepted;
    region.revenueEur += shard.revenueEur;
    regions.set(shard.region, region);
  }
  return { shards: aggregates.length, rowsRead, rowsAccepted, rejected, products, regions };
}

function buildReport(merged: Merged, generatedAt: Date, top = 10): Report {
  const revenueEur = [...merged.products.values()].reduce((sum, p) => sum + p.revenueEur, 0);
  const units = [...merged.products.values()].reduce((sum, p) => sum + p.units, 0);
  const ranked = [...merged.products].sort(
    ([skuA, a], [skuB, b]) => b.revenueEur - a.revenueEur || skuA.localeCompare(skuB),
  );
  return {
    generatedAt,
    shards: merged.shards,
    rowsRead: merged.rowsRead,
    rowsAccepted: merged.rowsAccepted,
    rowsRejected: merged.rowsRead - merged.rowsAccepted,
    rejectedByReason: Object.fromEntries(
      [...merged.rejected].sort(([a], [b]) => a.localeCompare(b)),
    ),
    units,
    revenueEur: round2(revenueEur),
    topProducts: ranked.slice(0, top).map(([sku, p], i) => ({
      rank: i + 1,
      sku,
      name: CATALOG.get(sku)?.name ?? sku,
      units: p.units,
      orders: p.orders,
      revenueEur: round2(p.revenueEur),
      share: p.revenueEur / revenueEur,
    })),
    regions: [...merged.regions]
      .sort(([, a], [, b]) => b.revenueEur - a.revenueEur)
      .map(([region, r]) => ({
        region,
        orders: r.orders,
        revenueEur: round2(r.revenueEur),
        share: r.revenueEur / revenueEur,
      })),
  };
}

/** The same pipeline, in this process, without zk-plan: the reference the distributed run must match. */
export function singleProcessReport(generatedAt: Date): Report {
  const aggregates = SHARDS.map((spec) =>
    aggregateShard(cleanShard(spec, extractShard(spec), rates), rates),
  );
  return buildReport(mergeAggregates(aggregates), generatedAt);
}

// ---------------------------------------------------------------------------------------------
// The tasks: the steps, plus simulated I/O latency that honours ctx.signal
// ---------------------------------------------------------------------------------------------

const latency = (spec: ShardSpec, base: number, spread: number): number =>
  base + Math.floor(prng(spec.seed ^ base)() * spread);

/** A new registry of the pipeline's task functions. */
export function pipelineFunctions(): FunctionRegistry {
  return (
    new FunctionRegistry()
      .register('etl.extract', async (ctx: TaskContext<[ShardSpec]>) => {
        const [spec] = ctx.params;
        await sleep(latency(spec, 120, 160), undefined, { signal: ctx.signal }); // "reading from the region's database"
        return extractShard(spec);
      })
      .register('etl.clean', async (ctx: TaskContext<[ShardSpec]>, rows: SaleRow[]) => {
        await sleep(latency(ctx.params[0], 40, 40), undefined, { signal: ctx.signal });
        return cleanShard(
          ctx.params[0],
          rows,
          ctx.container.resolve<CurrencyRates>(CURRENCY_RATES),
        );
      })
      .register('etl.aggregate', async (ctx: TaskContext<[ShardSpec]>, clean: CleanShard) => {
        const currencies = ctx.container.resolve<CurrencyRates>(CURRENCY_RATES); // the service of ZkPlan's container (or its parent, the root one)
        await sleep(latency(ctx.params[0], 60, 60), undefined, { signal: ctx.signal });
        return aggregateShard(clean, currencies);
      })
      .register('etl.merge', async (ctx: TaskContext<[]>, ...aggregates: ShardAggregate[]) => {
        await sleep(50, undefined, { signal: ctx.signal });
        return mergeAggregates(aggregates);
      })
      // The report's time comes with the task (taken when the plan is built), not from the clock: a
      // report rendered again after a crash is the same report (the fault harness checks it).
      .register('etl.report', async (ctx: TaskContext<[Date]>, merged: Merged) => {
        await sleep(30, undefined, { signal: ctx.signal }); // "rendering"
        return buildReport(merged, ctx.params[0]);
      })
  );
}

/** The functions a worker process loads from this module. */
export const functions = pipelineFunctions();

// ---------------------------------------------------------------------------------------------
// The plan
// ---------------------------------------------------------------------------------------------

/** A task of the pipeline's plan: its path, function and label (also its key). */
export interface PipelineTask {
  readonly path: string;
  readonly fn: string;
  readonly label: string;
}

/**
 * Adds the pipeline's tasks to `plan` (not marked ready), each with its label as its key; the
 * report (kept) is stamped `generatedAt`. Resolves every task, and the report task's path.
 */
export async function addPipelineTasks(
  zkPlan: ZkPlan,
  plan: string,
  generatedAt: Date,
): Promise<{ tasks: PipelineTask[]; report: string }> {
  const tasks: PipelineTask[] = [];
  const add = async (
    label: string,
    fn: string,
    params: unknown[],
    args: string[] = [],
    keepResult = false,
  ): Promise<string> => {
    const path = await zkPlan.addTask(plan, call(fn, ...params), args, { keepResult, key: label });
    tasks.push({ path, fn, label });
    return path;
  };
  const aggregates: string[] = [];
  for (const spec of SHARDS) {
    const extracted = await add(`extract ${spec.region}`, 'etl.extract', [spec]);
    const cleaned = await add(`clean ${spec.region}`, 'etl.clean', [spec], [extracted]);
    aggregates.push(await add(`aggregate ${spec.region}`, 'etl.aggregate', [spec], [cleaned]));
  }
  const merged = await add('merge', 'etl.merge', [], aggregates);
  const report = await add('report', 'etl.report', [generatedAt], [merged], true);
  return { tasks, report };
}
