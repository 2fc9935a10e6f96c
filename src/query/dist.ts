/**
 * Durations as distributions: count, total, extremes and percentiles, from the samples
 * themselves (nearest-rank percentiles, so every figure is a duration that occurred).
 */
export interface Dist {
  count: number;
  /** Milliseconds, summed. */
  total: number;
  min: number | null;
  max: number | null;
  mean: number | null;
  p50: number | null;
  p95: number | null;
}

/** Nearest-rank percentile of sorted samples. */
function rank(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function distOf(samples: readonly number[]): Dist {
  const n = samples.length;
  if (n === 0) return { count: 0, total: 0, min: null, max: null, mean: null, p50: null, p95: null };
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const x of samples) total += x;
  const arr = Array.from(sorted);
  return { count: n, total, min: arr[0]!, max: arr[n - 1]!, mean: total / n, p50: rank(arr, 50), p95: rank(arr, 95) };
}
