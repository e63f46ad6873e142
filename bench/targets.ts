/**
 * The targets of issue 26, checked against one bench run: each line says the target, the figure and
 * whether it is met. A target whose setting or workload did not run is left out.
 */
import type { Ceiling } from './ceiling.js';
import type { Sample } from './measure.js';
import { median } from './stats.js';

/** Samples by setting name, then workload name. */
export type Results = ReadonlyMap<string, ReadonlyMap<string, readonly Sample[]>>;

export interface TargetLine {
  readonly target: string;
  readonly figure: string;
  readonly met: boolean;
}

export const DEFAULT_SETTING = 'default';
export const PROCESSES_SETTING = '4 processes';
export const MANY_PROCESSES_SETTING = '16 processes';
/** Writes per independent task without keepResult, history on (issue 26). */
export const WRITES_PER_INDEPENDENT_TASK_TARGET = 8;

export function checkTargets(results: Results, ceiling: Ceiling): TargetLine[] {
  const lines: TargetLine[] = [];
  const samples = (setting: string, workload: string): readonly Sample[] =>
    results.get(setting)?.get(workload) ?? [];
  const mid = (setting: string, workload: string, pick: (sample: Sample) => number): number =>
    median(samples(setting, workload).map(pick));
  const has = (setting: string, workload: string): boolean => samples(setting, workload).length > 0;

  for (const setting of [DEFAULT_SETTING, PROCESSES_SETTING]) {
    if (!has(setting, 'chain-200')) continue;
    const p50 = mid(setting, 'chain-200', (s) => s.hopP50);
    const p99 = mid(setting, 'chain-200', (s) => s.hopP99);
    lines.push({
      target: `chain-200 hop p50 ≤ 3 × serial create p50 (${(3 * ceiling.serialP50).toFixed(2)} ms), ${setting}`,
      figure: `${p50.toFixed(2)} ms = ${(p50 / ceiling.serialP50).toFixed(1)} ×`,
      met: p50 <= 3 * ceiling.serialP50,
    });
    lines.push({
      target: `chain-200 hop p99 ≤ 10 × serial create p50 (${(10 * ceiling.serialP50).toFixed(2)} ms), ${setting}`,
      figure: `${p99.toFixed(2)} ms = ${(p99 / ceiling.serialP50).toFixed(1)} ×`,
      met: p99 <= 10 * ceiling.serialP50,
    });
  }
  if (has(DEFAULT_SETTING, 'seed-stress')) {
    const ratios = samples(DEFAULT_SETTING, 'seed-stress').map((s) => s.ratio);
    lines.push({
      target: `seed-stress ≤ 1.10 × ideal in every run (${ratios.length}), default setting`,
      figure: ratios.map((ratio) => ratio.toFixed(2)).join(', '),
      met: ratios.every((ratio) => ratio <= 1.1),
    });
  }
  for (const workload of ['wide-10000', 'fanin-1000']) {
    if (!has(DEFAULT_SETTING, workload)) continue;
    const txns = mid(DEFAULT_SETTING, workload, (s) => s.txnsPerTask);
    const reachable = ceiling.pipelinedPerSecond / txns;
    const rate = mid(DEFAULT_SETTING, workload, (s) => s.tasksPerSecond);
    lines.push({
      target: `${workload} tasks/s ≥ 70 % of ceiling ÷ writes per task (${Math.round(ceiling.pipelinedPerSecond)} ÷ ${txns.toFixed(2)} = ${Math.round(reachable)}), default setting`,
      figure: `${Math.round(rate)} tasks/s = ${Math.round((100 * rate) / reachable)} %`,
      met: rate >= 0.7 * reachable,
    });
  }
  if (has(DEFAULT_SETTING, 'wide-10000')) {
    const writes = mid(DEFAULT_SETTING, 'wide-10000', (s) => s.writesPerTask);
    lines.push({
      target: `writes per independent task ≤ ${WRITES_PER_INDEPENDENT_TASK_TARGET} (wide-10000, history on, no keepResult)`,
      figure: writes.toFixed(2),
      met: writes <= WRITES_PER_INDEPENDENT_TASK_TARGET,
    });
  }
  const workloads = new Set([...(results.get(DEFAULT_SETTING)?.keys() ?? [])]);
  for (const workload of workloads) {
    if (!has(PROCESSES_SETTING, workload)) continue;
    const single = mid(DEFAULT_SETTING, workload, (s) => s.tasksPerSecond);
    const four = mid(PROCESSES_SETTING, workload, (s) => s.tasksPerSecond);
    lines.push({
      target: `${workload}: 4 processes × 8 loops ≥ 1 process × 10 loops (tasks/s)`,
      figure: `${Math.round(four)} vs ${Math.round(single)}`,
      met: four >= single,
    });
    if (!has(MANY_PROCESSES_SETTING, workload)) continue;
    const sixteen = mid(MANY_PROCESSES_SETTING, workload, (s) => s.tasksPerSecond);
    lines.push({
      target: `${workload}: 16 processes × 8 loops ≥ 4 processes × 8 loops (tasks/s)`,
      figure: `${Math.round(sixteen)} vs ${Math.round(four)} (1 process: ${Math.round(single)})`,
      met: sixteen >= four,
    });
  }
  return lines;
}
