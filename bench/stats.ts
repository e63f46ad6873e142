/** Quantiles and the "median (min–max)" cells of the bench's tables. */

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

export function summary(values: readonly number[], digits = 0): string {
  if (values.length === 0) return '–';
  return `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
}
