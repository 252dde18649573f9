// The usage report behind the Overview (getUsage): totals, a time series and breakdowns by
// connection, provider, model, combo and client key for the last hour, day, week or month, read
// from the roll-ups (store/usageRepo.ts), never from the request log, so it stays fast over months
// and outlives the log's pruning. Time comes in as `now`.
import {
  USAGE_DIMENSIONS,
  USAGE_RANGE_SPEC,
  type UsageBreakdownRow,
  type UsageDimension,
  type UsagePoint,
  type UsageRange,
  type UsageReport,
  type UsageTotals,
} from '../../../shared/usage';
import { HOUR_MS, type RollupSums, type UsageGrain, type UsageRepo } from '../store/usageRepo';
import type { ExportFile } from '../../../shared/usage';
import { exportUsage, type UsageExportInput } from './exports';
import { percentiles } from './histogram';

export interface UsageServiceDeps {
  repo: UsageRepo;
  /** Resolves once the finished requests handed to the log so far are written (with their roll-ups). */
  settle: () => Promise<void>;
  connectionName: (id: string) => string | null;
  clientKeyName: (id: string) => string | null;
}

/**
 * The series' buckets: `n = span / bucket` of them, aligned to the bucket length (UTC), the last
 * one holding `now`. The report's `from` is the first bucket's start, so it covers between
 * span - bucket and span.
 */
export function rangeWindow(range: UsageRange, now: number): { from: number; to: number; bucketMs: number; buckets: number } {
  const { spanMs, bucketMs } = USAGE_RANGE_SPEC[range];
  const buckets = Math.round(spanMs / bucketMs);
  const from = Math.floor(now / bucketMs) * bucketMs - (buckets - 1) * bucketMs;
  return { from, to: now, bucketMs, buckets };
}

/** The granularity a series in `bucketMs` buckets is summed from: hours when it can, else minutes. */
export const seriesGrain = (bucketMs: number): UsageGrain => (bucketMs % HOUR_MS === 0 ? 'hour' : 'minute');

export function totalsOf(s: RollupSums | undefined): UsageTotals {
  if (!s) return emptyTotals();
  return {
    requests: s.requests,
    successes: s.successes,
    errors: s.errors,
    rescued: s.rescued,
    inputTokens: s.inputTokens,
    outputTokens: s.outputTokens,
    cacheReadTokens: s.cacheReadTokens,
    cacheWriteTokens: s.cacheWriteTokens,
    costUsd: roundUsd(s.costUsd),
    unpricedRequests: s.unpriced,
    ttfbMs: percentiles(s.ttfbHist),
    durationMs: percentiles(s.durationHist),
  };
}

export const emptyTotals = (): UsageTotals => ({
  requests: 0,
  successes: 0,
  errors: 0,
  rescued: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0,
  unpricedRequests: 0,
  ttfbMs: { p50: null, p95: null },
  durationMs: { p50: null, p95: null },
});

/** Sums of floating-point costs, rounded to a millionth of a dollar. */
const roundUsd = (x: number) => Math.round(x * 1e6) / 1e6;

const NONE_LABEL: Record<UsageDimension, string> = {
  connection: '(no connection)',
  provider: '(no provider)',
  model: '(no model)',
  combo: '(no combo)',
  clientKey: '(no key)',
};

export class UsageService {
  constructor(private readonly d: UsageServiceDeps) {}

  async report(range: UsageRange, now: number): Promise<UsageReport> {
    await this.d.settle();
    return this.reportNow(range, now);
  }

  /** The report from what is stored now (synchronous; the bench and tests call it directly). */
  reportNow(range: UsageRange, now: number): UsageReport {
    const w = rangeWindow(range, now);
    const groups = this.d.repo.groupsSince(w.from);
    const breakdown = Object.fromEntries(USAGE_DIMENSIONS.map((dim) => [dim, [] as UsageBreakdownRow[]])) as Record<UsageDimension, UsageBreakdownRow[]>;
    let totals = emptyTotals();
    const dims = new Set<string>(USAGE_DIMENSIONS);
    for (const g of groups) {
      if (g.dim === '') {
        totals = totalsOf(g);
        continue;
      }
      if (!dims.has(g.dim)) continue;
      const dim = g.dim as UsageDimension;
      breakdown[dim].push({ key: g.key, label: this.label(dim, g.key, g.label), ...totalsOf(g) });
    }
    for (const dim of USAGE_DIMENSIONS) breakdown[dim].sort((a, b) => b.requests - a.requests || a.label.localeCompare(b.label));

    const byT = new Map(this.d.repo.seriesSince(seriesGrain(w.bucketMs), w.from, w.bucketMs).map((r) => [r.t, r]));
    const series: UsagePoint[] = [];
    for (let i = 0; i < w.buckets; i++) {
      const t = w.from + i * w.bucketMs;
      const s = totalsOf(byT.get(t));
      series.push({
        t,
        requests: s.requests,
        errors: s.errors,
        rescued: s.rescued,
        inputTokens: s.inputTokens,
        outputTokens: s.outputTokens,
        costUsd: s.costUsd,
        ttfbMs: s.ttfbMs,
        durationMs: s.durationMs,
      });
    }
    return { range, from: w.from, to: w.to, bucketMs: w.bucketMs, totals, series, breakdown };
  }

  /** The roll-up rows of a range as a file (exports.ts). */
  async exportUsage(q: UsageExportInput): Promise<ExportFile> {
    await this.d.settle();
    return exportUsage(this.d.repo, { connection: this.d.connectionName, clientKey: this.d.clientKeyName }, q);
  }

  private label(dim: UsageDimension, key: string, stored: string | null): string {
    if (key === '') return NONE_LABEL[dim];
    if (dim === 'connection') return this.d.connectionName(key) ?? stored ?? key;
    if (dim === 'clientKey') return this.d.clientKeyName(key) ?? key;
    return key;
  }
}
