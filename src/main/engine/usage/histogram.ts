// Latency histograms of the usage roll-ups: fixed log-scale buckets, so histograms of any rows
// (minutes, hours, days; any dimension) merge by adding counts, and a percentile read from the
// merged counts has a bounded error. Pure; no I/O.
//
// Bucket 0 holds [0, 1) ms. Bucket i (1..LAST-1) holds [2^((i-1)/4), 2^(i/4)) ms: four buckets
// per doubling. The last bucket holds everything from 2^20 ms (about 17.5 minutes) up.
// A percentile is read by nearest rank (exact, since counts are exact) and reported as the
// geometric middle of its bucket, so within bucket 1..LAST-1 the reported value is within a factor
// of 2^(1/8) (about 9.05 %) of the true value at that rank, before rounding to whole ms (± 0.5 ms).
// Bucket 0 reports 0.5 ms (± 0.5 ms); the last bucket reports its lower bound 2^20 ms (a floor).

/** Buckets per doubling of the latency. */
export const HIST_STEPS_PER_DOUBLING = 4;
/** Number of buckets: [0,1), 80 log-scale buckets up to 2^20 ms, and the open top one. */
export const HIST_BUCKETS = 82;
const LAST = HIST_BUCKETS - 1;
/** The largest relative error of a reported percentile inside the log-scale buckets. */
export const HIST_RELATIVE_ERROR = 2 ** (1 / (2 * HIST_STEPS_PER_DOUBLING)) - 1;

/** The bucket a latency (ms) falls in. */
export function histBucket(ms: number): number {
  if (!(ms >= 1)) return 0; // also NaN and negatives
  const i = 1 + Math.floor(Math.log2(ms) * HIST_STEPS_PER_DOUBLING + 1e-9);
  return i > LAST ? LAST : i;
}

/** The lower bound (ms) of a bucket. */
export function histLowerBound(i: number): number {
  return i <= 0 ? 0 : 2 ** ((i - 1) / HIST_STEPS_PER_DOUBLING);
}

/** The value a bucket reports (ms): the geometric middle; 0.5 for bucket 0; the floor of the last. */
export function histRepresentative(i: number): number {
  if (i <= 0) return 0.5;
  if (i >= LAST) return histLowerBound(LAST);
  return 2 ** ((i - 0.5) / HIST_STEPS_PER_DOUBLING);
}

export const emptyHist = (): number[] => new Array<number>(HIST_BUCKETS).fill(0);

/** Adds `b` into `a` (same length). */
export function mergeHist(a: number[], b: ArrayLike<number>): number[] {
  for (let i = 0; i < HIST_BUCKETS; i++) a[i]! += b[i] ?? 0;
  return a;
}

/**
 * The p-th percentile (0 < p <= 1) of the counts by nearest rank, rounded to whole ms (0.5 ms
 * reported as 1 below 1 ms); null when the histogram is empty.
 */
export function histPercentile(counts: ArrayLike<number>, p: number): number | null {
  let n = 0;
  for (let i = 0; i < HIST_BUCKETS; i++) n += counts[i] ?? 0;
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(p * n));
  let seen = 0;
  for (let i = 0; i < HIST_BUCKETS; i++) {
    seen += counts[i] ?? 0;
    if (seen >= rank) return Math.max(1, Math.round(histRepresentative(i)));
  }
  return Math.round(histRepresentative(LAST));
}

export function percentiles(counts: ArrayLike<number>): { p50: number | null; p95: number | null } {
  return { p50: histPercentile(counts, 0.5), p95: histPercentile(counts, 0.95) };
}
