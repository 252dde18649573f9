// placeholder until h/rollups merges (and h/notify for the state timeline): an empty but valid
// usage report and state timeline, so the Overview page runs on the overview branch. The lead
// replaces this module with the real roll-ups at merge.
import { USAGE_DIMENSIONS, USAGE_RANGE_SPEC, type StateTimelineView, type UsageRange, type UsageReport, type UsageTotals } from '../../../shared/usage';

const emptyTotals = (): UsageTotals => ({
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

/** placeholder until h/rollups merges: no requests in the range. */
export function placeholderUsageReport(range: UsageRange, now: number): UsageReport {
  const { spanMs, bucketMs } = USAGE_RANGE_SPEC[range];
  return {
    range,
    from: now - spanMs,
    to: now,
    bucketMs,
    totals: emptyTotals(),
    series: [],
    breakdown: Object.fromEntries(USAGE_DIMENSIONS.map((d) => [d, []])) as unknown as UsageReport['breakdown'],
  };
}

/** placeholder until h/notify merges: no state changes recorded. */
export function placeholderStateTimeline(from: number, to: number): StateTimelineView {
  return { from, to, connections: [] };
}
