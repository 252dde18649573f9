// Usage, cost and the Overview (issue 23): the shapes the engine's usage roll-ups, the price
// catalogue and the state timeline answer with, read by the Overview page and the export. Plain
// data, no I/O. Figures are sums over finished requests; an estimated cost counts only requests
// whose model has a known price (`unpricedRequests` says how many had none).

/** The periods the Overview offers, each ending now. */
export const USAGE_RANGES = ['hour', 'day', 'week', 'month'] as const;
export type UsageRange = (typeof USAGE_RANGES)[number];

/** Length of each range in ms, and the bucket its time series is drawn in. */
export const USAGE_RANGE_SPEC: Record<UsageRange, { spanMs: number; bucketMs: number }> = {
  hour: { spanMs: 3_600_000, bucketMs: 60_000 },
  day: { spanMs: 86_400_000, bucketMs: 3_600_000 / 4 },
  week: { spanMs: 7 * 86_400_000, bucketMs: 3_600_000 },
  month: { spanMs: 30 * 86_400_000, bucketMs: 86_400_000 / 4 },
};

/** What a breakdown groups by. */
export const USAGE_DIMENSIONS = ['connection', 'provider', 'model', 'combo', 'clientKey'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

export interface Percentiles {
  p50: number | null;
  p95: number | null;
}

export interface UsageTotals {
  requests: number;
  /** Answered with a 2xx. */
  successes: number;
  /** Answered with a status >= 400 (including cancelled by the client: 499). */
  errors: number;
  /** Served after at least one failed attempt, or completed by a mid-stream continuation. */
  rescued: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Estimated spend in USD, from the price catalogue at the time each request finished. */
  costUsd: number;
  /** Requests whose model had no price (they add nothing to `costUsd`). */
  unpricedRequests: number;
  /** Time to first output byte, and total duration, of successful requests. */
  ttfbMs: Percentiles;
  durationMs: Percentiles;
}

/** One bucket of the time series (`t` is the bucket's start, ms since the epoch). */
export interface UsagePoint {
  t: number;
  requests: number;
  errors: number;
  rescued: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  ttfbMs: Percentiles;
  durationMs: Percentiles;
}

export interface UsageBreakdownRow extends UsageTotals {
  /** The id grouped by (connection id, provider, model id, combo name, client key id); '' when none. */
  key: string;
  /** What a person reads: the connection's or key's name, the model id, "(no combo)". */
  label: string;
}

export interface UsageReport {
  range: UsageRange;
  from: number;
  to: number;
  bucketMs: number;
  totals: UsageTotals;
  series: UsagePoint[];
  breakdown: Record<UsageDimension, UsageBreakdownRow[]>;
}

// ---- prices ------------------------------------------------------------------------------------

/** USD per million tokens; cache prices are null where the provider does not price them apart. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number | null;
  cacheWrite: number | null;
}

export interface PriceEntry {
  /** A model id or id prefix, matched like the model catalogue (longest prefix at a word boundary). */
  model: string;
  price: ModelPrice;
  /** The day the price was published or checked (YYYY-MM-DD). */
  asOf: string;
  source: 'built-in' | 'edited';
  /** Set when the price comes from the "Model prices" setting (no date; changed in Settings, not here). */
  fromSetting?: true;
}

export interface PriceCatalogueView {
  entries: PriceEntry[];
}

// ---- state timeline ------------------------------------------------------------------------------

export type StateSpanKind = 'cooldown' | 'breaker-open' | 'breaker-half-open' | 'lockout' | 'terminal' | 'disabled';

export interface StateSpan {
  kind: StateSpanKind;
  from: number;
  /** null while it still holds. */
  to: number | null;
  /** Plain words: why (for a lockout, which model). */
  reason: string;
}

export interface ConnectionTimeline {
  connectionId: string;
  name: string;
  spans: StateSpan[];
}

export interface StateTimelineView {
  from: number;
  to: number;
  connections: ConnectionTimeline[];
}
