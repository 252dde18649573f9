// The request log's filters, declared once: the management API's listLogs input, the SQL the
// engine runs for a page (store/logsRepo.ts) and the check the dashboard runs on live pushes
// (stores/logsStore.ts) all mean the same thing by a status class, a text search and a time range.
import type { RequestLogEntry } from './model';

/**
 * Status classes of a logged request, by the status the client received: `ok` below 400, `failed`
 * any 400 or more, split into `client_error` (a 4xx other than 429 and 499), `rate_limited` (429),
 * `cancelled` (499: the client left) and `server_error` (5xx).
 */
export const LOG_STATUS_CLASSES = ['ok', 'failed', 'client_error', 'rate_limited', 'cancelled', 'server_error'] as const;
export type LogStatusClass = (typeof LOG_STATUS_CLASSES)[number];

export function inStatusClass(status: number, c: LogStatusClass): boolean {
  switch (c) {
    case 'ok':
      return status < 400;
    case 'failed':
      return status >= 400;
    case 'client_error':
      return status >= 400 && status < 500 && status !== 429 && status !== 499;
    case 'rate_limited':
      return status === 429;
    case 'cancelled':
      return status === 499;
    case 'server_error':
      return status >= 500;
  }
}

/** What a page of the request log is filtered by; every field is optional and they combine with AND. */
export interface LogQuery {
  /** Requests served by, or attempted on, this connection. */
  connectionId?: string;
  /** Same as status = failed (kept for existing callers). */
  errorsOnly?: boolean;
  status?: LogStatusClass;
  /** Exact request id (the `x-switchyard-request-id` the client received). */
  requestId?: string;
  /**
   * Text found (case-insensitively) in the requested or served model, a connection's name (the
   * serving one or any attempted), the provider, the client key's name, the error text or code, or
   * the request id.
   */
  search?: string;
  /** Started at or after `from` and at or before `to` (epoch ms). */
  from?: number;
  to?: number;
}

/** The fields a text search looks in, for one entry (the same ones the SQL looks in). */
function searchable(e: RequestLogEntry): (string | null | undefined)[] {
  const out: (string | null | undefined)[] = [e.id, e.requestedModel, e.model, e.connectionName, e.provider, e.clientKeyName, e.errorMessage, e.errorCode];
  for (const a of e.attempts) out.push(a.connectionName, a.model, a.errorMessage);
  return out;
}

/** Whether an entry belongs to the page a query describes (for live pushes). */
export function matchesLogQuery(e: RequestLogEntry, q: LogQuery): boolean {
  if (q.requestId && e.id !== q.requestId) return false;
  if (q.errorsOnly && e.status < 400) return false;
  if (q.status && !inStatusClass(e.status, q.status)) return false;
  if (q.from !== undefined && e.startedAt < q.from) return false;
  if (q.to !== undefined && e.startedAt > q.to) return false;
  if (q.connectionId && e.connectionId !== q.connectionId && !e.attempts.some((a) => a.connectionId === q.connectionId)) return false;
  if (q.search) {
    const needle = q.search.toLowerCase();
    if (!searchable(e).some((v) => typeof v === 'string' && v.toLowerCase().includes(needle))) return false;
  }
  return true;
}
