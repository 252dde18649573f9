// Export of the usage roll-ups and of the request log for a time range, as CSV or JSON: a file
// (name, content type, body) the HTTP server answers as a download and the desktop dashboard
// saves. Bounded: at most USAGE_EXPORT_MAX_ROWS roll-up rows (the oldest of the range) and
// LOG_EXPORT_MAX_ROWS log rows (the newest of the range); `truncated` says when more matched.
import type { LogsPage, RequestLogEntry } from '../../../shared/model';
import {
  LOG_EXPORT_MAX_ROWS,
  USAGE_EXPORT_MAX_ROWS,
  type ExportFile,
  type ExportFormat,
  type UsageGrainName,
} from '../../../shared/usage';
import { DAY_MS, HOUR_MS, isRescued, USAGE_GRAINS, type UsageRepo } from '../store/usageRepo';
import { percentiles } from './histogram';

type Cell = string | number | boolean | null | undefined;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; a text starting
 * with = + - @ (or a tab / carriage return) gets a leading apostrophe so a spreadsheet does not
 * run it as a formula. Numbers go out as they are.
 */
export function csvCell(v: Cell): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  let s = v;
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(header: readonly string[], rows: readonly Cell[][]): string {
  const lines = [header.map(csvCell).join(',')];
  for (const r of rows) lines.push(r.map(csvCell).join(','));
  return lines.join('\r\n') + '\r\n';
}

const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace(':', '-') + 'Z';
const iso = (ms: number) => new Date(ms).toISOString();

/** The file name: what, and the range (UTC), e.g. switchyard-usage-2025-01-01T00-00Z--2025-01-31T00-00Z.csv */
export const exportFilename = (what: 'usage' | 'logs', from: number, to: number, format: ExportFormat) =>
  `switchyard-${what}-${stamp(from)}--${stamp(to)}.${format}`;

const CONTENT_TYPE: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

/** The granularity a usage export uses when none is asked: minutes up to 6 hours, hours up to 31 days. */
export function defaultGrain(from: number, to: number): UsageGrainName {
  const span = to - from;
  if (span <= 6 * HOUR_MS) return 'minute';
  if (span <= 31 * DAY_MS) return 'hour';
  return 'day';
}

const USAGE_COLUMNS = [
  'bucketStart',
  'grain',
  'dimension',
  'key',
  'label',
  'requests',
  'successes',
  'errors',
  'rescued',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'costUsd',
  'unpricedRequests',
  'ttfbP50Ms',
  'ttfbP95Ms',
  'durationP50Ms',
  'durationP95Ms',
] as const;

export interface UsageExportInput {
  from: number;
  to: number;
  format: ExportFormat;
  grain?: UsageGrainName;
}

export function exportUsage(
  repo: UsageRepo,
  labels: { connection: (id: string) => string | null; clientKey: (id: string) => string | null },
  q: UsageExportInput,
): ExportFile {
  const grain = q.grain ?? defaultGrain(q.from, q.to);
  // Every bucket that overlaps the range: the first one may start before `from`.
  const ms = USAGE_GRAINS[grain].ms;
  const got = repo.rows(grain, Math.floor(q.from / ms) * ms, q.to, USAGE_EXPORT_MAX_ROWS + 1);
  const truncated = got.length > USAGE_EXPORT_MAX_ROWS;
  const rows = truncated ? got.slice(0, USAGE_EXPORT_MAX_ROWS) : got;
  const records = rows.map((r) => {
    const t = percentiles(r.ttfbHist);
    const d = percentiles(r.durationHist);
    const label =
      r.key === ''
        ? ''
        : r.dim === 'connection'
          ? (labels.connection(r.key) ?? r.label ?? r.key)
          : r.dim === 'clientKey'
            ? (labels.clientKey(r.key) ?? r.key)
            : r.key;
    return {
      bucketStart: iso(r.bucketStart),
      grain,
      dimension: r.dim === '' ? 'all' : r.dim,
      key: r.key,
      label,
      requests: r.requests,
      successes: r.successes,
      errors: r.errors,
      rescued: r.rescued,
      inputTokens: r.inputTokens,
      outputTokens: r.outputTokens,
      cacheReadTokens: r.cacheReadTokens,
      cacheWriteTokens: r.cacheWriteTokens,
      costUsd: Math.round(r.costUsd * 1e6) / 1e6,
      unpricedRequests: r.unpriced,
      ttfbP50Ms: t.p50,
      ttfbP95Ms: t.p95,
      durationP50Ms: d.p50,
      durationP95Ms: d.p95,
    };
  });
  const body =
    q.format === 'csv'
      ? toCsv(USAGE_COLUMNS, records.map((r) => USAGE_COLUMNS.map((c) => r[c])))
      : JSON.stringify({ from: iso(q.from), to: iso(q.to), grain, truncated, limit: USAGE_EXPORT_MAX_ROWS, rows: records });
  return { filename: exportFilename('usage', q.from, q.to, q.format), contentType: CONTENT_TYPE[q.format], body, rows: records.length, truncated };
}

const LOG_COLUMNS = [
  'id',
  'startedAt',
  'status',
  'protocol',
  'path',
  'clientKeyId',
  'clientKeyName',
  'requestedModel',
  'model',
  'connectionId',
  'connectionName',
  'provider',
  'combo',
  'stream',
  'attempts',
  'rescued',
  'ttfbMs',
  'durationMs',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'costUsd',
  'errorCode',
  'errorMessage',
] as const;

const logCells = (e: RequestLogEntry): Cell[] => [
  e.id,
  iso(e.startedAt),
  e.status,
  e.protocol,
  e.path,
  e.clientKeyId,
  e.clientKeyName ?? null,
  e.requestedModel,
  e.model,
  e.connectionId,
  e.connectionName,
  e.provider,
  e.combo?.name ?? null,
  e.stream,
  e.attempts.length,
  isRescued(e),
  e.ttfbMs,
  e.durationMs,
  e.inputTokens,
  e.outputTokens,
  e.cacheReadTokens ?? null,
  e.cacheWriteTokens ?? null,
  e.costUsd ?? null,
  e.errorCode,
  e.errorMessage,
];

export interface LogExportInput {
  from: number;
  to: number;
  format: ExportFormat;
}

/** Pages of the log (newest first) within [from, to], up to the bound; written oldest first. */
export async function exportLogs(
  page: (q: { limit: number; before?: number; from: number; to: number }) => Promise<LogsPage>,
  q: LogExportInput,
  maxRows = LOG_EXPORT_MAX_ROWS,
): Promise<ExportFile> {
  const entries: RequestLogEntry[] = [];
  let before: number | undefined;
  let truncated = false;
  for (;;) {
    const p = await page({ limit: 500, before, from: q.from, to: q.to });
    for (const e of p.entries) {
      if (entries.length >= maxRows) {
        truncated = true;
        break;
      }
      entries.push(e);
    }
    if (truncated || p.nextBefore === null) break;
    before = p.nextBefore;
  }
  entries.reverse();
  const body =
    q.format === 'csv'
      ? toCsv(LOG_COLUMNS, entries.map(logCells))
      : JSON.stringify({ from: iso(q.from), to: iso(q.to), truncated, limit: maxRows, entries });
  return { filename: exportFilename('logs', q.from, q.to, q.format), contentType: CONTENT_TYPE[q.format], body, rows: entries.length, truncated };
}
