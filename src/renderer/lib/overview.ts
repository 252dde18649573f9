// The Overview page's pure logic: the headline figures in words, a report's time series filled to
// one point per bucket and turned into uPlot's column arrays (x in seconds), the per-model bars,
// and the state timeline's spans clipped to the range. No DOM, no clock: the caller passes times.
import type { ConnectionTimeline, StateSpanKind, StateTimelineView, UsagePoint, UsageRange, UsageReport, UsageTotals } from '../../shared/usage';
import { formatMs } from './format';

export const RANGE_LABELS: Record<UsageRange, string> = {
  hour: 'Last hour',
  day: 'Last day',
  week: 'Last week',
  month: 'Last month',
};

/** A moment in the period: "14:03" today, else "12 Mar, 14:03" (local time). */
export function formatWhen(ms: number, now: number): string {
  const d = new Date(ms);
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  if (new Date(now).toDateString() === d.toDateString()) return hm;
  return `${d.getDate()} ${d.toLocaleString('en-US', { month: 'short' })}, ${hm}`;
}

/** "0", "950", "12.3k", "4.5M", "1.2B". */
export function formatTokens(n: number): string {
  const a = Math.abs(n);
  if (a < 1_000) return String(Math.round(n));
  const [div, unit] = a < 999_500 ? [1_000, 'k'] : a < 999_500_000 ? [1_000_000, 'M'] : [1_000_000_000, 'B'];
  const v = n / div;
  return `${Math.abs(v) < 10 ? v.toFixed(1) : Math.round(v)}${unit}`.replace(/\.0(?=[kMB])/, '');
}

/** "$0.00", "$0.0042", "$1.23", "$1,234". Small amounts keep two significant digits. */
export function formatUsd(n: number): string {
  if (n === 0) return '$0.00';
  if (Math.abs(n) < 0.01) return `$${n.toPrecision(2)}`;
  if (Math.abs(n) < 1_000) return `$${n.toFixed(2)}`;
  return `$${Math.round(n).toLocaleString('en-US')}`;
}

/** "97.5%" of requests answered with a 2xx; null with no requests. */
export function successRate(t: Pick<UsageTotals, 'requests' | 'successes'>): number | null {
  return t.requests > 0 ? t.successes / t.requests : null;
}

export function formatPercent(f: number | null): string {
  if (f === null) return '—';
  const p = f * 100;
  return `${p === 100 || p === 0 ? p.toFixed(0) : p.toFixed(1)}%`;
}

export interface Figure {
  id: string;
  label: string;
  value: string;
  /** A second line under the value (what it counts, or a caveat). */
  detail?: string;
}

/** The headline figures, in the order the page shows them. */
export function headlineFigures(t: UsageTotals): Figure[] {
  const unpriced = t.unpricedRequests > 0 ? `${t.unpricedRequests.toLocaleString('en-US')} ${t.unpricedRequests === 1 ? 'request' : 'requests'} without a price` : undefined;
  return [
    { id: 'requests', label: 'Requests', value: t.requests.toLocaleString('en-US'), detail: t.errors ? `${t.errors.toLocaleString('en-US')} failed` : undefined },
    { id: 'success', label: 'Success rate', value: formatPercent(successRate(t)) },
    { id: 'rescued', label: 'Requests rescued', value: t.rescued.toLocaleString('en-US'), detail: 'served after a failed try or a broken stream' },
    {
      id: 'tokens',
      label: 'Tokens in / out',
      value: `${formatTokens(t.inputTokens)} / ${formatTokens(t.outputTokens)}`,
      detail: t.cacheReadTokens || t.cacheWriteTokens ? `${formatTokens(t.cacheReadTokens)} read from cache, ${formatTokens(t.cacheWriteTokens)} written` : undefined,
    },
    { id: 'cost', label: 'Estimated cost', value: formatUsd(t.costUsd), detail: unpriced },
    { id: 'ttfb', label: 'First output (median / 95th)', value: `${formatMs(t.ttfbMs.p50)} / ${formatMs(t.ttfbMs.p95)}` },
    { id: 'duration', label: 'Total time (median / 95th)', value: `${formatMs(t.durationMs.p50)} / ${formatMs(t.durationMs.p95)}` },
  ];
}

const emptyPoint = (t: number): UsagePoint => ({
  t,
  requests: 0,
  errors: 0,
  rescued: 0,
  inputTokens: 0,
  outputTokens: 0,
  costUsd: 0,
  ttfbMs: { p50: null, p95: null },
  durationMs: { p50: null, p95: null },
});

/** At most this many buckets are drawn (a malformed report cannot make the page build millions). */
const MAX_BUCKETS = 5_000;

/**
 * One point per bucket from the bucket holding `from` to the one holding `to`: the engine may
 * leave out buckets without requests; they are drawn as zero requests and no latency.
 */
export function fillSeries(r: Pick<UsageReport, 'from' | 'to' | 'bucketMs' | 'series'>): UsagePoint[] {
  const b = r.bucketMs > 0 ? r.bucketMs : 60_000;
  const start = Math.floor(r.from / b) * b;
  const byT = new Map(r.series.map((p) => [Math.floor(p.t / b) * b, p]));
  const out: UsagePoint[] = [];
  for (let t = start; t <= r.to && out.length < MAX_BUCKETS; t += b) out.push(byT.get(t) ?? emptyPoint(t));
  return out;
}

export type Column = (number | null)[];

const seconds = (ms: number) => ms / 1_000;

/** Whether any request is in the report's series (an empty chart shows its empty text instead). */
export function hasTraffic(r: UsageReport | null): boolean {
  return !!r && r.series.some((p) => p.requests > 0);
}

/** [time (s), requests, errors] for the "requests and errors" chart. */
export function requestsData(r: UsageReport): [Column, Column, Column] {
  const pts = fillSeries(r);
  return [pts.map((p) => seconds(p.t)), pts.map((p) => p.requests), pts.map((p) => p.errors)];
}

/** [time (s), first output p50, p95, total p50, p95]; null where a bucket had no successful request. */
export function latencyData(r: UsageReport): [Column, Column, Column, Column, Column] {
  const pts = fillSeries(r);
  return [pts.map((p) => seconds(p.t)), pts.map((p) => p.ttfbMs.p50), pts.map((p) => p.ttfbMs.p95), pts.map((p) => p.durationMs.p50), pts.map((p) => p.durationMs.p95)];
}

export function hasLatency(r: UsageReport | null): boolean {
  return !!r && r.series.some((p) => p.durationMs.p50 !== null || p.ttfbMs.p50 !== null);
}

export interface ModelBars {
  labels: string[];
  /** [index, tokens (in + out), cost in USD]. */
  data: [Column, Column, Column];
}

/** Tokens and cost per model, the busiest (by tokens, then requests) first, at most `max` models. */
export function modelBars(r: UsageReport, max = 12): ModelBars {
  const rows = [...r.breakdown.model]
    .filter((m) => m.requests > 0)
    .sort((a, b) => b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens) || b.requests - a.requests)
    .slice(0, max);
  return {
    labels: rows.map((m) => m.label || m.key || '(no model)'),
    data: [rows.map((_, i) => i), rows.map((m) => m.inputTokens + m.outputTokens), rows.map((m) => m.costUsd)],
  };
}

export const SPAN_WORDS: Record<StateSpanKind, string> = {
  cooldown: 'Cooling down',
  'breaker-open': 'Breaker open',
  'breaker-half-open': 'Breaker probing',
  lockout: 'Model locked',
  terminal: 'Needs attention',
  disabled: 'Disabled',
};

export interface TimelineBar {
  kind: StateSpanKind;
  /** Clipped to the range, in ms. */
  from: number;
  to: number;
  /** It still holds at the end of the range. */
  open: boolean;
  reason: string;
}

export interface TimelineRow {
  connectionId: string;
  name: string;
  bars: TimelineBar[];
}

/** Each connection's spans clipped to [from, to] (one still holding runs to `to`); rows without any are left out. */
export function timelineRows(view: StateTimelineView | null, from: number, to: number): TimelineRow[] {
  if (!view) return [];
  const rows: TimelineRow[] = [];
  for (const c of view.connections as ConnectionTimeline[]) {
    const bars: TimelineBar[] = [];
    for (const s of c.spans) {
      const end = s.to ?? to;
      if (end < from || s.from > to) continue;
      bars.push({ kind: s.kind, from: Math.max(from, s.from), to: Math.min(to, end), open: s.to === null || s.to > to, reason: s.reason });
    }
    if (bars.length) rows.push({ connectionId: c.connectionId, name: c.name, bars });
  }
  return rows.sort((a, b) => a.name.localeCompare(b.name));
}

/** A sentence naming a chart's content for assistive tech (its canvas says nothing). */
export function describeRequests(r: UsageReport): string {
  const t = r.totals;
  return `${t.requests.toLocaleString('en-US')} requests and ${t.errors.toLocaleString('en-US')} errors in the ${RANGE_LABELS[r.range].toLowerCase()}`;
}
