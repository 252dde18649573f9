// The usage roll-ups' latency histograms: fixed log-scale buckets that merge by adding, and
// percentiles read from them within the documented error bound.
import { describe, expect, it } from 'vitest';
import {
  emptyHist,
  histBucket,
  histLowerBound,
  histPercentile,
  HIST_BUCKETS,
  HIST_RELATIVE_ERROR,
  mergeHist,
  percentiles,
} from '../../../src/main/engine/usage/histogram';

/** A small deterministic generator (no Math.random in tests). */
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const histOf = (values: number[]) => {
  const h = emptyHist();
  for (const v of values) h[histBucket(v)]!++;
  return h;
};

/** The exact nearest-rank percentile. */
const exact = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.max(1, Math.ceil(p * values.length)) - 1]!;

describe('latency histogram', () => {
  it('puts each value in the bucket whose bounds hold it, four buckets per doubling', () => {
    expect(histBucket(0)).toBe(0);
    expect(histBucket(0.9)).toBe(0);
    expect(histBucket(-5)).toBe(0);
    expect(histBucket(Number.NaN)).toBe(0);
    expect(histBucket(1)).toBe(1);
    expect(histBucket(2)).toBe(5);
    expect(histBucket(4)).toBe(9);
    expect(histBucket(1024)).toBe(41);
    expect(histBucket(10 * 3_600_000)).toBe(HIST_BUCKETS - 1);
    for (let i = 1; i < HIST_BUCKETS - 1; i++) {
      expect(histBucket(histLowerBound(i))).toBe(i);
      expect(histBucket(histLowerBound(i + 1) * 0.9999)).toBe(i);
    }
  });

  it('is empty without values and reads null percentiles', () => {
    expect(percentiles(emptyHist())).toEqual({ p50: null, p95: null });
  });

  it('reads p50 and p95 within the error bound of the exact percentiles', () => {
    expect(HIST_RELATIVE_ERROR).toBeCloseTo(0.0905, 3);
    const rnd = lcg(7);
    for (let run = 0; run < 20; run++) {
      // Log-normal-ish latencies from 5 ms to a minute.
      const values = Array.from({ length: 500 + run * 50 }, () => Math.round(5 * Math.exp(rnd() * Math.log(12_000))));
      const h = histOf(values);
      for (const p of [0.5, 0.95]) {
        const want = exact(values, p);
        const got = histPercentile(h, p)!;
        // The bucket's error, plus rounding to whole ms.
        expect(Math.abs(got - want)).toBeLessThanOrEqual(want * HIST_RELATIVE_ERROR + 0.5);
      }
    }
  });

  it('merged histograms read the same percentiles as one histogram of every value', () => {
    const rnd = lcg(11);
    const parts = Array.from({ length: 12 }, () => Array.from({ length: 40 }, () => 1 + rnd() * 3000));
    const merged = parts.reduce((acc, p) => mergeHist(acc, histOf(p)), emptyHist());
    expect(merged).toEqual(histOf(parts.flat()));
    expect(percentiles(merged)).toEqual(percentiles(histOf(parts.flat())));
  });

  it('reports the open top bucket at its floor', () => {
    const h = histOf([5 * 3_600_000]);
    expect(histPercentile(h, 0.5)).toBe(2 ** 20);
  });
});
