// Usage roll-ups (migration 11): usage_minute, usage_hour and usage_day, one row per bucket start
// and (dimension, key). Written with the request log's rows, in the same write transaction and on
// the same connection (the log writer's worker, see logs/logWriter.ts): `rollupOps` aggregates a
// batch of finished requests into one upsert per row touched. Each table has its own retention,
// independent of the request log's pruning. Reads sum rows in SQL, so a month answers from a few
// thousand hour and day rows whatever the number of requests.
// See docs/decisions/overview-23-usage-rollups.md.
import type { RequestLogEntry } from '../../../shared/model';
import { histBucket, HIST_BUCKETS } from '../usage/histogram';
import type { Db } from './db';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export type UsageGrain = 'minute' | 'hour' | 'day';

/** Each granularity: its table, bucket length and how long its rows are kept. */
export const USAGE_GRAINS: Record<UsageGrain, { table: string; ms: number; keepMs: number }> = {
  minute: { table: 'usage_minute', ms: MINUTE_MS, keepMs: 2 * DAY_MS },
  hour: { table: 'usage_hour', ms: HOUR_MS, keepMs: 90 * DAY_MS },
  day: { table: 'usage_day', ms: DAY_MS, keepMs: 730 * DAY_MS },
};
const GRAIN_ORDER: UsageGrain[] = ['minute', 'hour', 'day'];

/** The stored dimensions: '' is every request; requestedModel is kept for the export. */
export const ROLLUP_DIMS = ['', 'connection', 'provider', 'model', 'requestedModel', 'combo', 'clientKey'] as const;
export type RollupDim = (typeof ROLLUP_DIMS)[number];

const SUM_COLUMNS = [
  'requests',
  'successes',
  'errors',
  'rescued',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_usd',
  'unpriced',
] as const;
const HIST_COLUMNS = [
  ...Array.from({ length: HIST_BUCKETS }, (_, i) => `t${i}`),
  ...Array.from({ length: HIST_BUCKETS }, (_, i) => `d${i}`),
];
const VALUE_COLUMNS = [...SUM_COLUMNS, ...HIST_COLUMNS];

/** The stored dimensions as an SQL list: a range of every dimension is one seek each (the key starts with dim). */
const DIMS_SQL = ROLLUP_DIMS.map((d) => `'${d}'`).join(', ');

const upsertSql = (table: string) =>
  `INSERT INTO ${table} (bucket_start, dim, key, label, ${VALUE_COLUMNS.join(', ')})
   VALUES (?, ?, ?, ?, ${VALUE_COLUMNS.map(() => '?').join(', ')})
   ON CONFLICT (dim, bucket_start, key) DO UPDATE SET label = COALESCE(excluded.label, label),
     ${VALUE_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`;

/** The roll-ups' write statements, appended to the request log's (store/logsRepo.ts LOG_WRITE_SQL). */
export const USAGE_WRITE_SQL: string[] = [
  ...GRAIN_ORDER.map((g) => upsertSql(USAGE_GRAINS[g].table)),
  ...GRAIN_ORDER.map((g) => `DELETE FROM ${USAGE_GRAINS[g].table} WHERE dim IN (${DIMS_SQL}) AND bucket_start < ?`),
];
const UPSERT = 0;
const PRUNE = GRAIN_ORDER.length;

type SqlValue = string | number | null;
type Op = [number, ...SqlValue[]];

/** Served (2xx) after a failed attempt, or completed by a mid-stream continuation. */
export function isRescued(e: RequestLogEntry): boolean {
  if (e.status < 200 || e.status >= 300) return false;
  const n = e.attempts.length;
  for (let i = 0; i < n; i++) {
    const a = e.attempts[i]!;
    if (a.continuation || a.continuedElsewhere) return true;
    if (i < n - 1 && (a.errorClass !== null || a.failedOver || a.status === null || a.status >= 400)) return true;
  }
  return false;
}

/** The key of each stored dimension for an entry ('' when none). */
export function dimKeys(e: RequestLogEntry): Record<RollupDim, string> {
  return {
    '': '',
    connection: e.connectionId ?? '',
    provider: e.provider ?? '',
    model: e.model ?? e.requestedModel ?? '',
    requestedModel: e.requestedModel ?? '',
    combo: e.combo?.name ?? '',
    clientKey: e.clientKeyId ?? '',
  };
}

const tokens = (n: number | null | undefined) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);

/** A batch's entries that share a minute and every dimension key, summed (rollupOps' first pass). */
interface Group {
  minute: number;
  keys: Record<RollupDim, string>;
  label: string | null;
  v: Float64Array;
}

/** A roll-up op's leading fields: the statement, bucket, dimension, key and label. */
const OP_HEAD = 5;

/**
 * One upsert per (granularity, bucket, dimension, key) that this batch touches, each carrying the
 * batch's sums for that row. `base` is where USAGE_WRITE_SQL starts in the writer's statement list.
 *
 * Two passes, so the per-request work is small at thousands of requests a second: each entry's
 * non-zero figures (about a dozen of the 174 columns) are added into its group (the entries of one
 * minute with the same connection, model, combo and client key: in practice a handful per batch),
 * then each group is added to its row of every granularity and dimension.
 */
export function rollupOps(entries: readonly RequestLogEntry[], base: number): Op[] {
  const batch = new RollupBatch();
  for (const e of entries) batch.add(e);
  return batch.ops(base);
}

/**
 * rollupOps one entry at a time: the log worker adds each entry as it writes its rows, so an entry
 * is garbage as soon as it is written, not held until the batch's end (store/logsRepo.ts
 * writeEntryLines).
 */
export class RollupBatch {
  private readonly groups = new Map<string, Group>();

  add(e: RequestLogEntry): void {
    const T0 = SUM_COLUMNS.length;
    const D0 = T0 + HIST_BUCKETS;
    const minute = Math.floor(e.startedAt / MINUTE_MS) * MINUTE_MS;
    const keys = dimKeys(e);
    const id = `${minute}\u0000${keys.connection}\u0000${keys.provider}\u0000${keys.model}\u0000${keys.requestedModel}\u0000${keys.combo}\u0000${keys.clientKey}`;
    let g = this.groups.get(id);
    if (!g) this.groups.set(id, (g = { minute, keys, label: null, v: new Float64Array(VALUE_COLUMNS.length) }));
    if (e.connectionName) g.label = e.connectionName;
    const v = g.v;
    const ok = e.status >= 200 && e.status < 300;
    v[0]! += 1;
    if (ok) v[1]! += 1;
    if (e.status >= 400) v[2]! += 1;
    if (isRescued(e)) v[3]! += 1;
    v[4]! += tokens(e.inputTokens);
    v[5]! += tokens(e.outputTokens);
    v[6]! += tokens(e.cacheReadTokens);
    v[7]! += tokens(e.cacheWriteTokens);
    if (typeof e.costUsd === 'number' && Number.isFinite(e.costUsd)) v[8]! += e.costUsd;
    else v[9]! += 1;
    if (ok && e.ttfbMs != null) v[T0 + histBucket(e.ttfbMs)]! += 1;
    if (ok && e.durationMs != null) v[D0 + histBucket(e.durationMs)]! += 1;
  }

  /** The upserts of every row the added entries touch. */
  ops(base: number): Op[] {
    const accs = new Map<string, SqlValue[]>();
    for (const g of this.groups.values()) {
      for (let gi = 0; gi < GRAIN_ORDER.length; gi++) {
        const ms = USAGE_GRAINS[GRAIN_ORDER[gi]!].ms;
        const bucket = Math.floor(g.minute / ms) * ms;
        for (const dim of ROLLUP_DIMS) {
          const key = g.keys[dim];
          const id = `${gi}|${bucket}|${dim}|${key}`;
          // The op itself is the accumulator: its sums follow the statement, bucket, dimension, key and label.
          let op = accs.get(id);
          if (!op) {
            op = new Array<SqlValue>(OP_HEAD + VALUE_COLUMNS.length).fill(0);
            op[0] = base + UPSERT + gi;
            op[1] = bucket;
            op[2] = dim;
            op[3] = key;
            op[4] = null;
            accs.set(id, op);
          }
          if (dim === 'connection' && g.label) op[4] = g.label;
          const v = g.v;
          for (let j = 0; j < v.length; j++) if (v[j] !== 0) (op[OP_HEAD + j] as number) += v[j]!;
        }
      }
    }
    return [...accs.values()] as Op[];
  }
}

/** Deletes each granularity's rows older than its retention. */
export function rollupPruneOps(now: number, base: number): Op[] {
  return GRAIN_ORDER.map((g, i) => {
    const { ms, keepMs } = USAGE_GRAINS[g];
    return [base + PRUNE + i, Math.floor((now - keepMs) / ms) * ms] as Op;
  });
}

/** Summed figures of a group of roll-up rows. */
export interface RollupSums {
  requests: number;
  successes: number;
  errors: number;
  rescued: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
  unpriced: number;
  ttfbHist: number[];
  durationHist: number[];
}

export interface RollupGroup extends RollupSums {
  dim: string;
  key: string;
  label: string | null;
}

export interface RollupSeriesRow extends RollupSums {
  t: number;
}

export interface RollupExportRow extends RollupGroup {
  bucketStart: number;
}

const SUMS_SELECT = VALUE_COLUMNS.map((c) => `SUM(${c})`).join(', ');
const COLS_SELECT = VALUE_COLUMNS.join(', ');

/** The sums from a raw row (an array): its leading columns, then VALUE_COLUMNS in order. */
function sumsFrom(r: unknown[], at: number): RollupSums {
  const n = (i: number) => Number(r[at + i] ?? 0);
  const t0 = at + SUM_COLUMNS.length;
  return {
    requests: n(0),
    successes: n(1),
    errors: n(2),
    rescued: n(3),
    inputTokens: n(4),
    outputTokens: n(5),
    cacheReadTokens: n(6),
    cacheWriteTokens: n(7),
    costUsd: n(8),
    unpriced: n(9),
    ttfbHist: r.slice(t0, t0 + HIST_BUCKETS).map((x) => Number(x ?? 0)),
    durationHist: r.slice(t0 + HIST_BUCKETS, t0 + 2 * HIST_BUCKETS).map((x) => Number(x ?? 0)),
  };
}

type Statement = ReturnType<Db['prepare']>;

/** Reads of the roll-ups (writes go through the request log's writer). */
export class UsageRepo {
  private readonly groups: Statement;
  private readonly series = new Map<UsageGrain, Statement>();
  private readonly exportRows = new Map<UsageGrain, Statement>();

  constructor(private readonly db: Db) {
    const m = USAGE_GRAINS.minute.table;
    const h = USAGE_GRAINS.hour.table;
    const d = USAGE_GRAINS.day.table;
    // Every row from `from` on, each bucket counted once: minutes up to the first whole hour, hours
    // up to the first whole day, days after that.
    this.groups = db
      .prepare(
        `SELECT dim, key, MAX(label), ${SUMS_SELECT} FROM (
           SELECT * FROM ${m} WHERE dim IN (${DIMS_SQL}) AND bucket_start >= @from AND bucket_start < @hour
           UNION ALL SELECT * FROM ${h} WHERE dim IN (${DIMS_SQL}) AND bucket_start >= @hour AND bucket_start < @day
           UNION ALL SELECT * FROM ${d} WHERE dim IN (${DIMS_SQL}) AND bucket_start >= @day)
         GROUP BY dim, key`,
      )
      .raw();
  }

  /**
   * Sums by (dimension, key) of every request since `from` (a minute boundary), read from the
   * coarsest rows that cover it exactly.
   */
  groupsSince(from: number): RollupGroup[] {
    const hour = Math.ceil(from / HOUR_MS) * HOUR_MS;
    const day = Math.ceil(hour / DAY_MS) * DAY_MS;
    const rows = this.groups.all({ from, hour, day }) as unknown[][];
    return rows.map((r) => ({ dim: String(r[0]), key: String(r[1]), label: (r[2] as string | null) ?? null, ...sumsFrom(r, 3) }));
  }

  /** Every request since `from`, summed per `bucketMs` (a multiple of the grain's), from one granularity. */
  seriesSince(grain: UsageGrain, from: number, bucketMs: number): RollupSeriesRow[] {
    let st = this.series.get(grain);
    if (!st) {
      st = this.db
        .prepare(
          `SELECT bucket_start - (bucket_start % @bucket) AS t, ${SUMS_SELECT} FROM ${USAGE_GRAINS[grain].table}
            WHERE dim = '' AND bucket_start >= @from GROUP BY t ORDER BY t`,
        )
        .raw();
      this.series.set(grain, st);
    }
    const rows = st.all({ from, bucket: bucketMs }) as unknown[][];
    return rows.map((r) => ({ t: Number(r[0]), ...sumsFrom(r, 1) }));
  }

  /** The stored rows of one granularity in [from, to), oldest first; at most `limit`. */
  rows(grain: UsageGrain, from: number, to: number, limit: number): RollupExportRow[] {
    let st = this.exportRows.get(grain);
    if (!st) {
      st = this.db
        .prepare(
          `SELECT bucket_start, dim, key, label, ${COLS_SELECT} FROM ${USAGE_GRAINS[grain].table}
            WHERE dim IN (${DIMS_SQL}) AND bucket_start >= @from AND bucket_start < @to ORDER BY bucket_start, dim, key LIMIT @limit`,
        )
        .raw();
      this.exportRows.set(grain, st);
    }
    const rows = st.all({ from, to, limit }) as unknown[][];
    return rows.map((r) => ({
      bucketStart: Number(r[0]),
      dim: String(r[1]),
      key: String(r[2]),
      label: (r[3] as string | null) ?? null,
      ...sumsFrom(r, 4),
    }));
  }
}
