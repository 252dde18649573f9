// A roll-up row's upsert names only the row's non-zero columns (the others keep their value, 0 in a
// new row), and past SPARSE_MAX column sets a new set takes the full statement: either way the
// stored sums are what the entries add up to. An in-memory store, written inline.
import { describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../../src/shared/model';
import { EventBus } from '../../../src/main/engine/events';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { InlineLogWriter } from '../../../src/main/engine/logs/logWriter';
import { RequestLog } from '../../../src/main/engine/logs/requestLog';
import { openStore } from '../../../src/main/engine/store/db';
import { LogsRepo } from '../../../src/main/engine/store/logsRepo';
import { rollupOps, ROLLUP_DIMS, SPARSE_MAX } from '../../../src/main/engine/store/usageRepo';
import { histBucket, HIST_BUCKETS } from '../../../src/main/engine/usage/histogram';
import { attemptEntry } from '../../support/builders';
import { FakeClock } from '../../support/fakeClock';
import { logEntry } from '../renderer/builders';

const START = Date.UTC(2026, 5, 15, 12, 0, 0);
let n = 0;
const entry = (over: Partial<RequestLogEntry> = {}): RequestLogEntry =>
  logEntry({
    id: `req_${++n}`,
    startedAt: START,
    ttfbMs: 100,
    durationMs: 400,
    inputTokens: 10,
    outputTokens: 20,
    costUsd: 0.001,
    attempts: [attemptEntry({ attempt: 1, startedAt: START })],
    ...over,
  });

/** The column list of an upsert's SQL. */
const columnsOf = (sql: string) => /\(bucket_start, dim, key, label, ([^)]*)\)/.exec(sql)![1]!.split(', ');

describe('roll-up upserts of the non-zero columns', () => {
  it("binds and adds only a row's non-zero columns", () => {
    const ops = rollupOps([entry()], 100);
    expect(ops).toHaveLength(3 * ROLLUP_DIMS.length);
    for (const op of ops) {
      expect(typeof op[0]).toBe('string');
      const columns = columnsOf(op[0] as string);
      expect(columns).toEqual(['requests', 'successes', 'input_tokens', 'output_tokens', 'cost_usd', `t${histBucket(100)}`, `d${histBucket(400)}`]);
      // bucket, dimension, key, label, then one value per column
      expect(op.slice(5)).toEqual([1, 1, 10, 20, 0.001, 1, 1]);
      expect(op).toHaveLength(5 + columns.length);
    }
  });

  it('sums right across many column sets, past SPARSE_MAX (where a new set takes the full statement)', async () => {
    const clock = new FakeClock(START + 30 * 60_000);
    const db = openStore({ path: ':memory:', now: () => clock.now() });
    const logger = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => clock.now() });
    const errors: unknown[] = [];
    const log = new RequestLog(new LogsRepo(db), new InlineLogWriter(db, (e) => errors.push(e)), clock, new EventBus(), logger, () => ({ retentionDays: 30, maxRows: 1_000_000 }));
    const ttfb = new Array<number>(HIST_BUCKETS).fill(0);
    const dur = new Array<number>(HIST_BUCKETS).fill(0);
    let requests = 0;
    let inputTokens = 0;
    // One batch per entry, each entry with its own pair of latency buckets: three new column sets a batch.
    const write = (e: RequestLogEntry) => {
      ttfb[histBucket(e.ttfbMs!)]! += 1;
      dur[histBucket(e.durationMs!)]! += 1;
      requests++;
      inputTokens += e.inputTokens!;
      log.append(e);
      log.flush();
    };
    for (let i = 0; i < SPARSE_MAX; i++) write(entry({ ttfbMs: 1.2 ** (i % 60), durationMs: 1.3 ** (i % 47) * 7, inputTokens: i % 3 === 0 ? 0 : i }));
    // The cap is reached: a new column set now takes the full statement (an index into the statement list).
    const fresh = rollupOps([entry({ ttfbMs: 9e9, durationMs: 9e9, cacheReadTokens: 3 })], 100);
    expect(fresh.every((op) => typeof op[0] === 'number' && op.length === 5 + 10 + 2 * HIST_BUCKETS)).toBe(true);
    // ...and so do the store's writes, which still add up.
    for (let i = 0; i < 20; i++) write(entry({ ttfbMs: 3 + i * 997, durationMs: 5 + i * 1999, cacheReadTokens: i }));
    await log.settled();
    for (const table of ['usage_minute', 'usage_hour', 'usage_day']) {
      const row = db.prepare(`SELECT * FROM ${table} WHERE dim = '' `).get() as Record<string, number>;
      expect(row.requests).toBe(requests);
      expect(row.successes).toBe(requests);
      expect(row.input_tokens).toBe(inputTokens);
      expect(row.cache_read_tokens).toBe(190);
      expect(Array.from({ length: HIST_BUCKETS }, (_, i) => row[`t${i}`])).toEqual(ttfb);
      expect(Array.from({ length: HIST_BUCKETS }, (_, i) => row[`d${i}`])).toEqual(dur);
      const conn = db.prepare(`SELECT requests, label FROM ${table} WHERE dim = 'connection' AND key = 'c1'`).get();
      expect(conn).toEqual({ requests, label: 'Alpha' });
    }
    expect(errors).toEqual([]);
    await log.close();
    db.close();
  });
});
