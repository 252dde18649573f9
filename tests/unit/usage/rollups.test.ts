// The usage roll-ups: written with the request log's batches (the same write path), read back by
// the usage report per range, equal to the figures computed from the raw log rows, kept after the
// log's pruning, and pruned on their own retention. Fake clock; an in-memory store (inline writer).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AttemptEntry, RequestLogEntry } from '../../../src/shared/model';
import type { UsageTotals } from '../../../src/shared/usage';
import { EventBus } from '../../../src/main/engine/events';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { InlineLogWriter } from '../../../src/main/engine/logs/logWriter';
import { RequestLog } from '../../../src/main/engine/logs/requestLog';
import { openStore, type Db } from '../../../src/main/engine/store/db';
import { LogsRepo } from '../../../src/main/engine/store/logsRepo';
import { UsageRepo } from '../../../src/main/engine/store/usageRepo';
import { emptyHist, histBucket, percentiles } from '../../../src/main/engine/usage/histogram';
import { rangeWindow, UsageService } from '../../../src/main/engine/usage/usageService';
import { attemptEntry } from '../../support/builders';
import { FakeClock } from '../../support/fakeClock';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let n = 0;
function entry(over: Partial<RequestLogEntry> & { startedAt: number }, attempts?: Partial<AttemptEntry>[]): RequestLogEntry {
  const status = over.status ?? 200;
  return {
    id: `req_${++n}`,
    protocol: 'openai-chat',
    path: '/v1/chat/completions',
    clientKeyId: 'key-1',
    requestedModel: 'gpt-x',
    model: 'gpt-x',
    stream: false,
    status,
    errorCode: null,
    errorMessage: null,
    connectionId: 'c1',
    connectionName: 'Conn One',
    provider: 'openai',
    ttfbMs: 100,
    durationMs: 400,
    inputTokens: 10,
    outputTokens: 20,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0.001,
    attempts: (attempts ?? [{ status }]).map((a, i) => attemptEntry({ attempt: i + 1, startedAt: over.startedAt, ...a })),
    skipped: [],
    combo: null,
    ...over,
  };
}

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** Totals computed the plain way from entries (the raw log's rows). */
function expectedTotals(entries: RequestLogEntry[]): UsageTotals {
  const ttfb = emptyHist();
  const dur = emptyHist();
  const ok = (e: RequestLogEntry) => e.status >= 200 && e.status < 300;
  for (const e of entries.filter(ok)) {
    if (e.ttfbMs != null) ttfb[histBucket(e.ttfbMs)]!++;
    if (e.durationMs != null) dur[histBucket(e.durationMs)]!++;
  }
  const sum = (f: (e: RequestLogEntry) => number) => entries.reduce((a, e) => a + f(e), 0);
  const rescued = (e: RequestLogEntry) =>
    ok(e) && (e.attempts.some((a) => a.continuation) || e.attempts.slice(0, -1).some((a) => a.errorClass !== null || (a.status ?? 0) >= 400));
  return {
    requests: entries.length,
    successes: entries.filter(ok).length,
    errors: entries.filter((e) => e.status >= 400).length,
    rescued: entries.filter(rescued).length,
    inputTokens: sum((e) => e.inputTokens ?? 0),
    outputTokens: sum((e) => e.outputTokens ?? 0),
    cacheReadTokens: sum((e) => e.cacheReadTokens ?? 0),
    cacheWriteTokens: sum((e) => e.cacheWriteTokens ?? 0),
    costUsd: Math.round(sum((e) => e.costUsd ?? 0) * 1e6) / 1e6,
    unpricedRequests: entries.filter((e) => e.costUsd == null).length,
    ttfbMs: percentiles(ttfb),
    durationMs: percentiles(dur),
  };
}

describe('usage roll-ups', () => {
  let db: Db;
  let clock: FakeClock;
  let log: RequestLog;
  let usage: UsageService;
  let limits = { retentionDays: 30, maxRows: 1_000_000 };

  beforeEach(() => {
    n = 0;
    clock = new FakeClock(Date.UTC(2026, 5, 15, 12, 0, 0));
    db = openStore({ path: ':memory:', now: () => clock.now() });
    const logger = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => clock.now() });
    log = new RequestLog(new LogsRepo(db), new InlineLogWriter(db, (e) => { throw e; }), clock, new EventBus(), logger, () => limits);
    usage = new UsageService({
      repo: new UsageRepo(db),
      settle: () => log.settled(),
      connectionName: (id) => ({ c1: 'Conn One (renamed)', c2: 'Conn Two' })[id] ?? null,
      clientKeyName: (id) => (id === 'key-1' ? 'Laptop' : null),
    });
  });
  afterEach(async () => {
    await log.close();
    db.close();
  });

  it('counts successes, errors, rescued requests, tokens, cost and unpriced requests', async () => {
    const now = clock.now();
    const batch = [
      entry({ startedAt: now - 5 * MIN }),
      entry({ startedAt: now - 4 * MIN, inputTokens: 5, outputTokens: 7, cacheReadTokens: 100, cacheWriteTokens: 50, costUsd: 0.25 }),
      // Failed over: a 503 on c1, served by c2.
      entry({ startedAt: now - 3 * MIN, connectionId: 'c2', connectionName: 'Conn Two' }, [
        { status: 503, errorClass: 'server_error', failedOver: true },
        { status: 200, connectionId: 'c2' },
      ]),
      // Completed by a mid-stream continuation.
      entry({ startedAt: now - 3 * MIN, stream: true }, [{ status: 200, continuedElsewhere: true }, { status: 200, continuation: 'continue' }]),
      // An error after a failover is not rescued.
      entry({ startedAt: now - 2 * MIN, status: 502, ttfbMs: null, durationMs: 30, inputTokens: null, outputTokens: null, costUsd: null }, [
        { status: 503, errorClass: 'server_error', failedOver: true },
        { status: 502, errorClass: 'server_error' },
      ]),
      entry({ startedAt: now - MIN, status: 429, model: null, requestedModel: 'gpt-y', costUsd: null, clientKeyId: null }),
    ];
    for (const e of batch) log.append(e);
    const r = await usage.report('hour', now);
    expect(r.totals).toEqual({
      requests: 6,
      successes: 4,
      errors: 2,
      rescued: 2,
      inputTokens: 45,
      outputTokens: 87,
      cacheReadTokens: 100,
      cacheWriteTokens: 50,
      costUsd: 0.253,
      unpricedRequests: 2,
      // 100 ms and 400 ms read back as their buckets' middles (within 9.05 %).
      ttfbMs: { p50: 99, p95: 99 },
      durationMs: { p50: 395, p95: 395 },
    });
    expect(r.totals).toEqual(expectedTotals(batch));
    // Breakdowns: labels from the registry and the key names; the "none" rows in plain words.
    expect(r.breakdown.connection.map((b) => [b.key, b.label, b.requests])).toEqual([
      ['c1', 'Conn One (renamed)', 5],
      ['c2', 'Conn Two', 1],
    ]);
    expect(r.breakdown.model.map((b) => [b.label, b.requests])).toEqual([
      ['gpt-x', 5],
      ['gpt-y', 1],
    ]);
    expect(r.breakdown.combo.map((b) => [b.key, b.label, b.requests])).toEqual([['', '(no combo)', 6]]);
    expect(r.breakdown.clientKey.map((b) => [b.label, b.requests, b.errors])).toEqual([
      ['Laptop', 5, 1],
      ['(no key)', 1, 1],
    ]);
    expect(r.breakdown.provider.map((b) => [b.label, b.rescued])).toEqual([['openai', 2]]);
    // The series: one bucket per minute, the last one holding now.
    expect(r.series).toHaveLength(60);
    expect(r.series.at(-1)!.t).toBe(now);
    expect(r.series.filter((p) => p.requests > 0).map((p) => [(now - p.t) / MIN, p.requests])).toEqual([
      [5, 1],
      [4, 1],
      [3, 2],
      [2, 1],
      [1, 1],
    ]);
    expect(r.series.reduce((a, p) => a + p.requests, 0)).toBe(6);
  });

  it('answers each range from rows that cover it once, and equals the raw log over the same rows', async () => {
    const now = clock.now();
    const rnd = lcg(42);
    const all: RequestLogEntry[] = [];
    // 1500 requests over 35 days, in batches of 100 (as the log flushes them).
    for (let i = 0; i < 1500; i++) {
      const failed = rnd() < 0.1;
      const failover = !failed && rnd() < 0.1;
      all.push(
        entry(
          {
            startedAt: now - Math.floor(rnd() * 35 * DAY),
            status: failed ? (rnd() < 0.5 ? 500 : 429) : 200,
            connectionId: rnd() < 0.5 ? 'c1' : 'c2',
            model: rnd() < 0.3 ? 'gpt-y' : 'gpt-x',
            combo: rnd() < 0.4 ? ({ name: 'fast' } as RequestLogEntry['combo']) : null,
            ttfbMs: Math.floor(20 + rnd() * 2000),
            durationMs: Math.floor(200 + rnd() * 20_000),
            inputTokens: Math.floor(rnd() * 1000),
            outputTokens: Math.floor(rnd() * 500),
            costUsd: rnd() < 0.2 ? null : Math.round(rnd() * 1e4) / 1e6,
          },
          failover ? [{ status: 503, errorClass: 'server_error', failedOver: true }, { status: 200 }] : undefined,
        ),
      );
      log.append(all.at(-1)!);
      if (all.length % 100 === 0) log.flush();
    }
    await log.settled();
    // Cache tokens and cost are not columns of the log on this branch's schema: those come from
    // the entries as they were logged (matched by id); every other figure from the stored rows.
    const logged = new Map(all.map((e) => [e.id, e]));
    const withCost = (rows: RequestLogEntry[]) =>
      rows.map((e) => {
        const l = logged.get(e.id)!;
        return { ...e, costUsd: l.costUsd, cacheReadTokens: l.cacheReadTokens, cacheWriteTokens: l.cacheWriteTokens };
      });
    for (const range of ['hour', 'day', 'week', 'month'] as const) {
      const r = await usage.report(range, now);
      const w = rangeWindow(range, now);
      expect(r.from).toBe(w.from);
      // The raw log's rows of the same range, read back from the store.
      const raw = withCost((await log.page({ limit: 500_000, from: w.from, to: now })).entries);
      expect(r.totals).toEqual(expectedTotals(raw));
      expect(r.series.reduce((a, p) => a + p.requests, 0)).toBe(raw.length);
      expect(r.series.reduce((a, p) => a + p.errors, 0)).toBe(r.totals.errors);
      for (const dim of ['connection', 'model', 'combo', 'provider', 'clientKey'] as const) {
        expect(r.breakdown[dim].reduce((a, b) => a + b.requests, 0)).toBe(raw.length);
      }
      const rowOf = (rows: { key: string }[], key: string) => rows.find((b) => b.key === key);
      const c2 = raw.filter((e) => e.connectionId === 'c2');
      const fast = raw.filter((e) => e.combo?.name === 'fast');
      if (range !== 'hour') expect(c2.length * fast.length).toBeGreaterThan(0);
      if (c2.length) expect(rowOf(r.breakdown.connection, 'c2')).toMatchObject(expectedTotals(c2));
      if (fast.length) expect(rowOf(r.breakdown.combo, 'fast')).toMatchObject(expectedTotals(fast));
      // Each series point equals its bucket's raw rows.
      const p = r.series[Math.floor(r.series.length / 2)]!;
      const inBucket = raw.filter((e) => e.startedAt >= p.t && e.startedAt < p.t + r.bucketMs);
      const want = expectedTotals(inBucket);
      expect([p.requests, p.errors, p.rescued, p.inputTokens, p.outputTokens, p.ttfbMs, p.durationMs]).toEqual([
        want.requests,
        want.errors,
        want.rescued,
        want.inputTokens,
        want.outputTokens,
        want.ttfbMs,
        want.durationMs,
      ]);
    }
  }, 60_000);

  it('outlives the log pruning, and keeps each granularity for its own retention', async () => {
    const now = clock.now();
    const old = [entry({ startedAt: now - 10 * DAY }), entry({ startedAt: now - 3 * DAY, status: 500 }), entry({ startedAt: now - 20 * MIN })];
    for (const e of old) log.append(e);
    const before = await usage.report('month', now);
    expect(before.totals.requests).toBe(3);

    // The log keeps one day and one row: the roll-ups keep every figure.
    limits = { retentionDays: 1, maxRows: 1 };
    log.prune();
    expect((await log.page({ limit: 10 })).entries.map((e) => e.id)).toEqual([old[2]!.id]);
    expect(await usage.report('month', now)).toEqual(before);
    expect((await usage.report('week', now)).totals).toMatchObject({ requests: 2, errors: 1 });

    // Three days on: the minute rows of the last request are gone, its hour and day rows answer.
    clock.advance(3 * DAY);
    log.prune();
    await log.settled();
    const minutes = db.prepare('SELECT COUNT(*) AS n FROM usage_minute').get() as { n: number };
    expect(minutes.n).toBe(0);
    const later = await usage.report('month', clock.now());
    expect(later.totals.requests).toBe(3);
    expect((await usage.report('day', clock.now())).totals.requests).toBe(0);
    // A hundred days on: only day rows hold them.
    clock.advance(100 * DAY);
    log.prune();
    await log.settled();
    expect((db.prepare('SELECT COUNT(*) AS n FROM usage_hour').get() as { n: number }).n).toBe(0);
    expect((db.prepare("SELECT SUM(requests) AS n FROM usage_day WHERE dim = ''").get() as { n: number }).n).toBe(3);
  });

  it('writes nothing on the request path: the roll-ups change when the batch is flushed', async () => {
    log.append(entry({ startedAt: clock.now() }));
    const count = () => (db.prepare("SELECT COALESCE(SUM(requests), 0) AS n FROM usage_minute WHERE dim = ''").get() as { n: number }).n;
    expect(count()).toBe(0);
    log.flush();
    expect(count()).toBe(1);
  });

  it('an empty store answers zeros and an empty series', async () => {
    const r = await usage.report('week', clock.now());
    expect(r.totals.requests).toBe(0);
    expect(r.totals.ttfbMs).toEqual({ p50: null, p95: null });
    expect(r.series).toHaveLength(168);
    expect(r.breakdown.connection).toEqual([]);
  });
});
