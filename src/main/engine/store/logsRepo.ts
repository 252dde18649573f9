// proxy_logs (one row per request) and proxy_log_attempts (one row per upstream attempt).
// Rows are written in batches by the RequestLog service; reads page by the request sequence.
import type { AffinityTrace, AttemptEntry, ComboTrace, InboundProtocol, LeaseTrace, LogsPage, RequestLogEntry, RequestWait, SkipEntry, StreamWatchdog } from '../../../shared/model';
import { REQUEST_WAIT_REASONS } from '../../../shared/model';
import { jsonTooDeep } from '../../../shared/jsonBounds';
import type { LogQuery, LogStatusClass } from '../../../shared/logQuery';
import type { Db } from './db';
import { readJsonColumn, UnreadableRows } from './unreadableRows';
import { RollupBatch, rollupOps, rollupPruneOps, USAGE_WRITE_SQL } from './usageRepo';

const TABLE = 'proxy_logs';
/** A skipped list is [{connection, reason, ...}]: nothing the engine writes nests deeper. */
const SKIPPED_MAX_DEPTH = 4;

interface LogRow {
  seq: number;
  id: string;
  started_at: number;
  protocol: string;
  path: string;
  client_key_id: string | null;
  requested_model: string | null;
  model: string | null;
  stream: number;
  status: number;
  error_code: string | null;
  error_message: string | null;
  connection_id: string | null;
  connection_name: string | null;
  provider: string | null;
  ttfb_ms: number | null;
  duration_ms: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  /** Migration 12. */
  cache_read_tokens?: number | null;
  cache_write_tokens?: number | null;
  cost_usd?: number | null;
  skipped: string;
  combo: string | null;
  /** JSON {affinity, lease} (migration 5). */
  session: string | null;
  /** JSON list of RequestWait (migration 9); NULL: no wait. */
  waits?: string | null;
  /** The client key's name and revocation time, joined from client_keys at read. */
  ck_name?: string | null;
  ck_revoked_at?: number | null;
}

interface AttemptRow {
  request_id: string;
  attempt: number;
  connection_id: string;
  connection_name: string;
  provider: string;
  model: string;
  started_at: number;
  status: number | null;
  error_class: string | null;
  error_code: string | null;
  error_message: string | null;
  ttfb_ms: number | null;
  duration_ms: number | null;
  failed_over: number;
  queued_ms: number | null;
  translated: string | null;
  dropped: string | null;
  last_resort: number;
  via: string | null;
  egress_ip?: string | null;
  first_output_ms?: number | null;
  bytes?: number | null;
  frames?: number | null;
  output_frames?: number | null;
  watchdog?: string | null;
  continued_elsewhere?: number;
  continuation?: string | null;
  prefill_refused?: number;
  retry_waited_ms?: number | null;
  retry_why?: string | null;
  retry_after_status?: number | null;
}

const WATCHDOGS: ReadonlySet<string> = new Set<StreamWatchdog>(['first_output', 'content_stall', 'throughput', 'attempt_deadline']);

const attemptFromRow = (r: AttemptRow): AttemptEntry => ({
  attempt: r.attempt,
  connectionId: r.connection_id,
  connectionName: r.connection_name,
  provider: r.provider,
  model: r.model,
  startedAt: r.started_at,
  status: r.status,
  errorClass: r.error_class,
  errorCode: r.error_code,
  errorMessage: r.error_message,
  ttfbMs: r.ttfb_ms,
  durationMs: r.duration_ms,
  failedOver: r.failed_over === 1,
  queuedMs: r.queued_ms,
  translated: r.translated,
  dropped: droppedList(r.dropped),
  ...(r.last_resort === 1 ? { lastResort: true } : {}),
  ...(r.via === 'pin' || r.via === 'lease' ? { via: r.via } : {}),
  egressIp: r.egress_ip ?? null,
  firstOutputMs: r.first_output_ms ?? null,
  bytes: r.bytes ?? null,
  frames: r.frames ?? null,
  outputFrames: r.output_frames ?? null,
  watchdog: r.watchdog && WATCHDOGS.has(r.watchdog) ? (r.watchdog as StreamWatchdog) : null,
  ...(r.continued_elsewhere === 1 ? { continuedElsewhere: true } : {}),
  continuation: r.continuation === 'prefill' || r.continuation === 'continue' ? r.continuation : null,
  ...(r.prefill_refused === 1 ? { prefillRefused: true } : {}),
  ...(r.retry_waited_ms != null && (r.retry_why === 'hinted' || r.retry_why === 'unhinted')
    ? { retry: { waitedMs: r.retry_waited_ms, why: r.retry_why, afterStatus: r.retry_after_status ?? null } }
    : {}),
});

/** The dropped-fields column: a JSON list of strings; anything else reads as none. */
function droppedList(text: string | null): string[] {
  if (!text) return [];
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

const WAIT_REASONS: ReadonlySet<string> = new Set(REQUEST_WAIT_REASONS);
const NO_WAITS: RequestWait[] = [];

/** The waits column: a JSON list of waits; anything else (or a wait with an unknown reason) reads as none. */
function waitList(text: string | null | undefined): RequestWait[] {
  if (!text) return NO_WAITS.slice();
  try {
    const v: unknown = JSON.parse(text);
    if (!Array.isArray(v)) return [];
    return v.filter(
      (w): w is RequestWait =>
        typeof w === 'object' && w !== null && WAIT_REASONS.has((w as RequestWait).reason) && typeof (w as RequestWait).ms === 'number',
    );
  } catch {
    return [];
  }
}

/** The entry for a row, or why it cannot be read. */
function entryFromRow(r: LogRow, attempts: AttemptEntry[]): RequestLogEntry | { reason: string } {
  const parsed = readJsonColumn('skipped', r.skipped);
  if (!parsed.ok) return parsed;
  if (!Array.isArray(parsed.value) || jsonTooDeep(parsed.value, SKIPPED_MAX_DEPTH)) {
    return { reason: 'skipped is not a list of skipped connections' };
  }
  const skipped = parsed.value as SkipEntry[];
  let combo: ComboTrace | null = null;
  if (r.combo) {
    try {
      combo = JSON.parse(r.combo) as ComboTrace;
    } catch {
      combo = null;
    }
  }
  let session: { affinity?: AffinityTrace | null; lease?: LeaseTrace | null } = {};
  if (r.session) {
    try {
      session = JSON.parse(r.session) as typeof session;
    } catch {
      session = {};
    }
  }
  return {
    id: r.id,
    startedAt: r.started_at,
    protocol: r.protocol as InboundProtocol,
    path: r.path,
    clientKeyId: r.client_key_id,
    requestedModel: r.requested_model,
    model: r.model,
    stream: r.stream === 1,
    status: r.status,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    connectionId: r.connection_id,
    connectionName: r.connection_name,
    provider: r.provider,
    ttfbMs: r.ttfb_ms,
    durationMs: r.duration_ms,
    inputTokens: r.input_tokens,
    outputTokens: r.output_tokens,
    cacheReadTokens: r.cache_read_tokens ?? null,
    cacheWriteTokens: r.cache_write_tokens ?? null,
    costUsd: r.cost_usd ?? null,
    attempts,
    skipped,
    combo,
    affinity: session.affinity ?? null,
    lease: session.lease ?? null,
    clientKeyName: r.ck_name ?? null,
    clientKeyRevoked: r.ck_revoked_at != null,
    waits: waitList(r.waits),
  };
}

/**
 * Write statements, by index, with positional parameters. Writes are described as data (statement
 * index + values) so they can run on this thread or in the log writer's worker thread with its own
 * connection; positional values keep that message small and cheap to encode.
 */
export const LOG_WRITE_SQL = [
  `INSERT INTO proxy_logs (id, started_at, protocol, path, client_key_id, requested_model, model, stream, status,
     error_code, error_message, connection_id, connection_name, provider, ttfb_ms, duration_ms, input_tokens,
     output_tokens, skipped, combo, session, waits, cache_read_tokens, cache_write_tokens, cost_usd)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  `INSERT INTO proxy_log_attempts (request_id, attempt, connection_id, connection_name, provider, model, started_at,
     status, error_class, error_code, error_message, ttfb_ms, duration_ms, failed_over, queued_ms, translated, dropped, last_resort, via, egress_ip,
     first_output_ms, bytes, frames, output_frames, watchdog, continued_elsewhere, continuation, prefill_refused,
     retry_waited_ms, retry_why, retry_after_status)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  'DELETE FROM proxy_logs WHERE started_at < ?',
  'DELETE FROM proxy_logs WHERE seq <= (SELECT seq FROM proxy_logs ORDER BY seq DESC LIMIT 1 OFFSET ?)',
  'DELETE FROM proxy_log_attempts WHERE request_id NOT IN (SELECT id FROM proxy_logs)',
  'UPDATE proxy_logs SET status = ?, error_code = ?, error_message = ? WHERE id = ?',
  // The usage roll-ups (store/usageRepo.ts), written in the same transaction as the rows.
  ...USAGE_WRITE_SQL,
] as const;

const INSERT_REQUEST = 0;
const INSERT_ATTEMPT = 1;
const PRUNE_OLD = 2;
const PRUNE_COUNT = 3;
const PRUNE_ORPHANS = 4;
const AMEND = 5;
const USAGE_SQL_BASE = AMEND + 1;

type SqlValue = string | number | null;
/** One write: [index into LOG_WRITE_SQL, ...its positional values]. */
export type LogWriteOp = [number, ...SqlValue[]];

export function insertOps(entries: RequestLogEntry[]): LogWriteOp[] {
  const ops: LogWriteOp[] = [];
  for (const e of entries) entryOps(e, ops);
  // The usage roll-ups of the same requests, aggregated per batch, in the same transaction.
  ops.push(...(rollupOps(entries, USAGE_SQL_BASE) as LogWriteOp[]));
  return ops;
}

/** An entry's rows: its request and each attempt. */
function entryOps(e: RequestLogEntry, ops: LogWriteOp[]): void {
  ops.push([
    INSERT_REQUEST,
    e.id,
    e.startedAt,
    e.protocol,
    e.path,
    e.clientKeyId,
    e.requestedModel,
    e.model,
    e.stream ? 1 : 0,
    e.status,
    e.errorCode,
    e.errorMessage,
    e.connectionId,
    e.connectionName,
    e.provider,
    e.ttfbMs,
    e.durationMs,
    e.inputTokens,
    e.outputTokens,
    e.skipped.length ? JSON.stringify(e.skipped) : '[]',
    e.combo ? JSON.stringify(e.combo) : null,
    e.affinity || e.lease ? JSON.stringify({ affinity: e.affinity ?? null, lease: e.lease ?? null }) : null,
    e.waits?.length ? JSON.stringify(e.waits) : null,
    e.cacheReadTokens ?? null,
    e.cacheWriteTokens ?? null,
    e.costUsd ?? null,
  ]);
  for (const a of e.attempts) {
    ops.push([
      INSERT_ATTEMPT,
      e.id,
      a.attempt,
      a.connectionId,
      a.connectionName,
      a.provider,
      a.model,
      a.startedAt,
      a.status,
      a.errorClass,
      a.errorCode,
      a.errorMessage,
      a.ttfbMs,
      a.durationMs,
      a.failedOver ? 1 : 0,
      a.queuedMs,
      a.translated ?? null,
      a.dropped?.length ? JSON.stringify(a.dropped) : null,
      a.lastResort ? 1 : 0,
      a.via ?? null,
      a.egressIp ?? null,
      a.firstOutputMs ?? null,
      a.bytes ?? null,
      a.frames ?? null,
      a.outputFrames ?? null,
      a.watchdog ?? null,
      a.continuedElsewhere ? 1 : 0,
      a.continuation ?? null,
      a.prefillRefused ? 1 : 0,
      a.retry?.waitedMs ?? null,
      a.retry?.why ?? null,
      a.retry?.afterStatus ?? null,
    ]);
  }
}

/**
 * Writes request-log entries given as their JSON lines (the log worker's batches, usually the
 * journal's own lines): what `insertOps` writes, in one transaction, each entry parsed and written
 * in turn so it is garbage at once (the worker's heap stays near its live set under a burst).
 */
export function writeEntryLines(db: Db, lines: Iterable<string>, cache: StatementCache): void {
  db.transaction(() => {
    const rollups = new RollupBatch();
    const ops: LogWriteOp[] = [];
    for (const line of lines) {
      const e = JSON.parse(line) as RequestLogEntry;
      ops.length = 0;
      entryOps(e, ops);
      runOps(db, ops, cache);
      rollups.add(e);
    }
    runOps(db, rollups.ops(USAGE_SQL_BASE) as LogWriteOp[], cache);
  })();
}

/** Deletes the usage roll-ups past their own retention (independent of the log's). */
export function usagePruneOps(now: number): LogWriteOp[] {
  return rollupPruneOps(now, USAGE_SQL_BASE) as LogWriteOp[];
}

/** Corrects the outcome of a request whose row is already written (RequestLog.amend). */
export function amendOps(e: RequestLogEntry): LogWriteOp[] {
  return [[AMEND, e.status, e.errorCode, e.errorMessage, e.id]];
}

/** Deletes requests older than `olderThan` and beyond the newest `maxRows`, with their attempts. */
export function pruneOps(olderThan: number, maxRows: number): LogWriteOp[] {
  return [[PRUNE_OLD, olderThan], [PRUNE_COUNT, maxRows], [PRUNE_ORPHANS]];
}

/** Runs write ops in one transaction on a connection (this thread's, or the worker's). */
export function runLogWrites(db: Db, ops: LogWriteOp[], cache: StatementCache = new Map()): void {
  db.transaction(() => runOps(db, ops, cache))();
}

/** Runs write ops, each statement prepared once per connection (`cache`). */
function runOps(db: Db, ops: readonly LogWriteOp[], cache: StatementCache): void {
  for (const [i, ...values] of ops) {
    let st = cache.get(i);
    if (!st) cache.set(i, (st = db.prepare(LOG_WRITE_SQL[i]!)));
    st.run(values);
  }
}

type Statement = ReturnType<Db['prepare']>;
/** A connection's prepared write statements, by index into LOG_WRITE_SQL. */
export type StatementCache = Map<number, Statement>;

/** The columns of a read: the row, and its client key's name and revocation (keys are never deleted). */
const READ_FROM = `SELECT l.*, ck.name AS ck_name, ck.revoked_at AS ck_revoked_at
  FROM proxy_logs l LEFT JOIN client_keys ck ON ck.id = l.client_key_id`;

/**
 * Each status class as SQL on l.status. The failed classes spell `l.status >= 400` out, so the
 * planner can walk the partial index of failed requests (idx_pl_failed, migration 9).
 */
const STATUS_SQL: Record<LogStatusClass, string> = {
  ok: 'l.status < 400',
  failed: 'l.status >= 400',
  client_error: 'l.status >= 400 AND l.status < 500 AND l.status NOT IN (429, 499)',
  rate_limited: 'l.status >= 400 AND l.status = 429',
  cancelled: 'l.status >= 400 AND l.status = 499',
  server_error: 'l.status >= 400 AND l.status >= 500',
};

/** LIKE's own characters in a search text, escaped (with ESCAPE '\\'). */
const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const SEARCH_SQL = `(l.id LIKE @search ESCAPE '\\' OR l.requested_model LIKE @search ESCAPE '\\' OR l.model LIKE @search ESCAPE '\\'
    OR l.connection_name LIKE @search ESCAPE '\\' OR l.provider LIKE @search ESCAPE '\\' OR ck.name LIKE @search ESCAPE '\\'
    OR l.error_message LIKE @search ESCAPE '\\' OR l.error_code LIKE @search ESCAPE '\\'
    OR EXISTS (SELECT 1 FROM proxy_log_attempts a WHERE a.request_id = l.id
               AND (a.connection_name LIKE @search ESCAPE '\\' OR a.model LIKE @search ESCAPE '\\' OR a.error_message LIKE @search ESCAPE '\\')))`;

export type LogPageQuery = LogQuery & { limit: number; before?: number };

/** Reads of the request log. Writes go through a LogWriter (see logs/logWriter.ts). */
export class LogsRepo {
  private readonly stmts;
  /** Page statements by the filters they use (a handful of shapes; each prepared once). */
  private readonly pages = new Map<string, Statement>();

  constructor(
    private readonly db: Db,
    private readonly unreadable: UnreadableRows = new UnreadableRows(),
  ) {
    this.stmts = {
      byId: db.prepare(`${READ_FROM} WHERE l.id = ?`),
      has: db.prepare('SELECT 1 FROM proxy_logs WHERE id = ?').pluck(),
      attemptsFor: db.prepare('SELECT * FROM proxy_log_attempts WHERE request_id = ? ORDER BY attempt'),
      // SPEC R-EGR-03/11: the last egress IP of each listed connection within the window. Bounded by
      // the window through idx_pl_timestamp; each request's attempts by their primary key.
      lastEgress: db.prepare(
        `SELECT a.connection_id AS id, a.egress_ip AS ip, MAX(a.started_at) AS at
           FROM proxy_logs l JOIN proxy_log_attempts a ON a.request_id = l.id
          WHERE l.started_at >= @since AND a.egress_ip IS NOT NULL
            AND a.connection_id IN (SELECT value FROM json_each(@ids))
          GROUP BY a.connection_id`,
      ),
    };
  }

  /**
   * The statement of a page with these filters: only the conditions in use are in its WHERE, so
   * each shape gets its own plan (the request id through its unique index, a time range through
   * idx_pl_timestamp, the failed classes through idx_pl_failed, newest first by seq otherwise).
   */
  private pageStatement(q: LogPageQuery, status: LogStatusClass | undefined): Statement {
    const key = [q.requestId ? 'i' : '', q.connectionId ? 'c' : '', status ?? '', q.search ? 's' : '', q.from !== undefined ? 'f' : '', q.to !== undefined ? 't' : ''].join('|');
    let st = this.pages.get(key);
    if (st) return st;
    const where = ['l.seq < @before'];
    if (q.requestId) where.push('l.id = @requestId');
    if (q.connectionId) {
      where.push('(l.connection_id = @connectionId OR l.id IN (SELECT request_id FROM proxy_log_attempts WHERE connection_id = @connectionId))');
    }
    if (status) where.push(STATUS_SQL[status]);
    if (q.from !== undefined) where.push('l.started_at >= @from');
    if (q.to !== undefined) where.push('l.started_at <= @to');
    if (q.search) where.push(SEARCH_SQL);
    st = this.db.prepare(`${READ_FROM} WHERE ${where.join(' AND ')} ORDER BY l.seq DESC LIMIT @limit`);
    this.pages.set(key, st);
    return st;
  }

  /** The last recorded egress IP (and when) of each of these connections since `since`. */
  lastEgressIps(connectionIds: readonly string[], since: number): Map<string, { ip: string; at: number }> {
    const out = new Map<string, { ip: string; at: number }>();
    if (connectionIds.length === 0) return out;
    const rows = this.stmts.lastEgress.all({ since, ids: JSON.stringify(connectionIds) }) as { id: string; ip: string; at: number }[];
    for (const r of rows) out.set(r.id, { ip: r.ip, at: r.at });
    return out;
  }

  page(q: LogPageQuery): LogsPage {
    // "Errors only" is the failed class; beside another class it adds nothing (every class but ok
    // is a failed one), and beside ok it leaves nothing.
    if (q.errorsOnly && q.status === 'ok') return { entries: [], nextBefore: null };
    const status: LogStatusClass | undefined = q.status ?? (q.errorsOnly ? 'failed' : undefined);
    const params: Record<string, string | number> = { before: q.before ?? Number.MAX_SAFE_INTEGER, limit: q.limit };
    if (q.requestId) params.requestId = q.requestId;
    if (q.connectionId) params.connectionId = q.connectionId;
    if (q.search) params.search = likePattern(q.search);
    if (q.from !== undefined) params.from = q.from;
    if (q.to !== undefined) params.to = q.to;
    const rows = this.pageStatement(q, status).all(params) as (LogRow & { seq: number })[];
    // A row that cannot be read is left out of the page (paging still follows the rows).
    const entries = rows.map((r) => this.read(r)).filter((e): e is RequestLogEntry => e !== null);
    const last = rows[rows.length - 1];
    return { entries, nextBefore: rows.length === q.limit && last ? last.seq : null };
  }

  /** The entries whose id is not stored yet, inserted now on this connection (start-up recovery); how many. */
  insertMissing(entries: RequestLogEntry[]): number {
    const seen = new Set<string>();
    const missing = entries.filter((e) => !seen.has(e.id) && (seen.add(e.id), this.stmts.has.get(e.id) === undefined));
    if (missing.length) runLogWrites(this.db, insertOps(missing));
    return missing.length;
  }

  get(id: string): RequestLogEntry | null {
    const r = this.stmts.byId.get(id) as LogRow | undefined;
    return r ? this.read(r) : null;
  }

  private read(r: LogRow): RequestLogEntry | null {
    const e = entryFromRow(r, (this.stmts.attemptsFor.all(r.id) as AttemptRow[]).map(attemptFromRow));
    if (!('reason' in e)) return e;
    this.unreadable.report(TABLE, r.id, e.reason);
    return null;
  }
}
