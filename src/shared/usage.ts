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

// ---- export --------------------------------------------------------------------------------------

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Granularities of the usage roll-ups, as the usage export names them. */
export const USAGE_GRAINS_NAMES = ['minute', 'hour', 'day'] as const;
export type UsageGrainName = (typeof USAGE_GRAINS_NAMES)[number];

/** At most this many request-log rows in one export (the newest of the range). */
export const LOG_EXPORT_MAX_ROWS = 100_000;
/** At most this many roll-up rows in one usage export (the oldest of the range). */
export const USAGE_EXPORT_MAX_ROWS = 200_000;

/**
 * A file to download: over HTTP it is the answer itself (its content type, and an attachment with
 * this file name); over IPC the dashboard turns it into a download.
 */
export interface ExportFile {
  filename: string;
  contentType: string;
  body: string;
  /** Rows in the file, and whether the range held more than the export's bound. */
  rows: number;
  truncated: boolean;
}

/** Over HTTP, an export's row count and whether it was cut at its bound travel in these headers. */
export const EXPORT_ROWS_HEADER = 'x-switchyard-export-rows';
export const EXPORT_TRUNCATED_HEADER = 'x-switchyard-export-truncated';

export function isExportFile(v: unknown): v is ExportFile {
  const f = v as ExportFile | null;
  return typeof f === 'object' && f !== null && typeof f.filename === 'string' && typeof f.contentType === 'string' && typeof f.body === 'string';
}

/** The file name in a content-disposition header (`filename="..."`); null when there is none. */
export function attachmentFilename(header: string | null): string | null {
  if (!header || !/^\s*attachment/i.test(header)) return null;
  const m = /filename="([^"]*)"/i.exec(header) ?? /filename=([^;\s]+)/i.exec(header);
  return m ? m[1]! : null;
}
