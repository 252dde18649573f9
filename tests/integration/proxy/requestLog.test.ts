// The request log store: writes through the worker thread, reads after drain, paging, filters and
// bounded retention (by count and by age), with attempts removed alongside their request. The
// writer writes small batches inline and starts its worker for large ones only, retiring it when
// writes go quiet.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RequestLogEntry } from '../../../src/shared/model';
import { EventBus } from '../../../src/main/engine/events';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { FileLogJournal } from '../../../src/main/engine/logs/logJournal';
import {
  GROUP_MAX_ENTRIES,
  GROUP_WINDOW_MS,
  INLINE_MAX_OPS,
  INLINE_WINDOW_MS,
  InlineLogWriter,
  WORKER_RETIRE_MS,
  WorkerLogWriter,
  type LogWriter,
} from '../../../src/main/engine/logs/logWriter';
import { fullGc } from '../../../src/main/engine/memory/idleTrim';
import { REQUEST_LOG_FLUSH_MS, RequestLog } from '../../../src/main/engine/logs/requestLog';
import { openStore, type Db } from '../../../src/main/engine/store/db';
import { LogsRepo } from '../../../src/main/engine/store/logsRepo';
import { FakeClock } from '../../support/fakeClock';

const DAY = 86_400_000;

function entry(i: number, startedAt: number, status = 200): RequestLogEntry {
  return {
    id: `req_${i}`,
    startedAt,
    protocol: 'openai-chat',
    path: '/v1/chat/completions',
    clientKeyId: 'k',
    requestedModel: 'm',
    model: 'm',
    stream: false,
    status,
    errorCode: status >= 400 ? 'upstream_error' : null,
    errorMessage: null,
    connectionId: i % 2 ? 'conn-odd' : 'conn-even',
    connectionName: 'C',
    provider: 'p',
    ttfbMs: 1,
    durationMs: 2,
    inputTokens: 3,
    outputTokens: 4,
    attempts: [
      {
        attempt: 1,
        connectionId: i % 2 ? 'conn-odd' : 'conn-even',
        connectionName: 'C',
        provider: 'p',
        model: 'm',
        startedAt,
        status,
        errorClass: null,
        errorCode: null,
        errorMessage: null,
        ttfbMs: 1,
        durationMs: 2,
        failedOver: false,
        queuedMs: 0,
      },
    ],
    skipped: [{ connectionId: 'x', connectionName: 'X', provider: 'p', reason: 'cooling_down', until: startedAt + 1000, detail: 'rate limited' }],
  };
}

describe('request log store', () => {
  let dir: string;
  let db: Db;
  let writer: LogWriter;
  let log: RequestLog;
  let clock: FakeClock;
  let limits = { retentionDays: 7, maxRows: 100 };
  const bus = new EventBus();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-log-'));
    clock = new FakeClock();
    const path = join(dir, 'switchyard.db');
    db = openStore({ path, now: () => clock.now() });
    const sink = new MemorySink();
    const logger = createLogger({ sinks: [sink], redactor: new SecretRedactor(), now: () => clock.now() });
    writer = await WorkerLogWriter.start({ db, dbPath: path, onError: (e) => logger.error('x', { e }) });
    log = new RequestLog(new LogsRepo(db), writer, clock, bus, logger, () => limits);
  });
  afterEach(async () => {
    await log.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads every entry back with its attempts and skips', async () => {
    expect(writer.kind).toBe('worker');
    for (let i = 0; i < 10; i++) log.append(entry(i, clock.now() + i));
    const page = await log.page({ limit: 5 });
    expect(page.entries.map((e) => e.id)).toEqual(['req_9', 'req_8', 'req_7', 'req_6', 'req_5']);
    expect(page.entries[0]!.attempts).toHaveLength(1);
    expect(page.entries[0]!.skipped[0]).toMatchObject({ reason: 'cooling_down', detail: 'rate limited' });
    const next = await log.page({ limit: 5, before: page.nextBefore! });
    expect(next.entries.map((e) => e.id)).toEqual(['req_4', 'req_3', 'req_2', 'req_1', 'req_0']);
    expect((await log.get('req_3'))!.attempts[0]!.connectionId).toBe('conn-odd');
  });

  it('gives memory back after a burst (trim) and keeps writing afterwards', async () => {
    fullGc(); // as the engine does before starting its worker
    for (let i = 0; i < 50; i++) log.append(entry(i, clock.now() + i));
    log.flush();
    await writer.trim();
    await Promise.all([writer.trim(), writer.trim()]);
    log.append(entry(99, clock.now() + 99));
    const page = await log.page({ limit: 100 });
    expect(page.entries).toHaveLength(51);
    expect(page.entries[0]!.id).toBe('req_99');
  });

  it('filters by connection and by errors', async () => {
    log.append(entry(1, clock.now(), 200));
    log.append(entry(2, clock.now(), 429));
    log.append(entry(3, clock.now(), 500));
    expect((await log.page({ limit: 10, connectionId: 'conn-odd' })).entries.map((e) => e.id)).toEqual(['req_3', 'req_1']);
    expect((await log.page({ limit: 10, errorsOnly: true })).entries.map((e) => e.id)).toEqual(['req_3', 'req_2']);
  });

  it('keeps at most maxRows requests, newest first, and drops their attempts', async () => {
    limits = { retentionDays: 7, maxRows: 100 };
    for (let i = 0; i < 150; i++) log.append(entry(i, clock.now()));
    log.flush();
    log.prune();
    const page = await log.page({ limit: 500 });
    expect(page.entries).toHaveLength(100);
    expect(page.entries.at(-1)!.id).toBe('req_50');
    const attempts = db.prepare('SELECT COUNT(*) AS n FROM proxy_log_attempts').get() as { n: number };
    expect(attempts.n).toBe(100);
  });

  it('deletes requests older than the retention period', async () => {
    limits = { retentionDays: 7, maxRows: 1000 };
    log.append(entry(1, clock.now() - 8 * DAY));
    log.append(entry(2, clock.now() - 6 * DAY));
    log.flush();
    log.prune();
    expect((await log.page({ limit: 10 })).entries.map((e) => e.id)).toEqual(['req_2']);
  });

  it('pushes each batch of new entries to subscribers', async () => {
    const seen: string[][] = [];
    const off = bus.on('logs', (batch) => seen.push(batch.map((e) => e.id)));
    log.append(entry(1, clock.now()));
    log.append(entry(2, clock.now()));
    clock.advance(REQUEST_LOG_FLUSH_MS);
    off();
    expect(seen).toEqual([['req_1', 'req_2']]);
  });
});

describe('the request-log writer: inline when light, a worker under load', () => {
  let dir: string;
  let db: Db;
  let clock: FakeClock;
  let writer: WorkerLogWriter;
  let log: RequestLog;
  const errors: unknown[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-logw-'));
    clock = new FakeClock();
    const path = join(dir, 'switchyard.db');
    db = openStore({ path, now: () => clock.now() });
    errors.length = 0;
    writer = (await WorkerLogWriter.start({ db, dbPath: path, clock, onError: (e) => errors.push(e) })) as WorkerLogWriter;
    const logger = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => clock.now() });
    log = new RequestLog(new LogsRepo(db), writer, clock, new EventBus(), logger, () => ({ retentionDays: 7, maxRows: 100_000 }));
  });
  afterEach(async () => {
    await log.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const burst = (from: number, n: number) => {
    for (let i = from; i < from + n; i++) log.append(entry(i, clock.now() + i));
    log.flush();
  };

  it('writes a light batch on this thread: no worker starts', async () => {
    burst(0, 20);
    expect(writer.running).toBe(false);
    expect(writer.starts).toBe(0);
    expect((await log.page({ limit: 50 })).entries).toHaveLength(20);
  });

  it('starts the worker for a batch too large to write inline, and keeps the order of writes', async () => {
    // One entry is two rows plus the roll-ups: more than INLINE_MAX_OPS rows in one batch.
    burst(0, INLINE_MAX_OPS);
    expect(writer.running).toBe(true);
    // While it runs, even a light batch goes to it, after the large one.
    burst(INLINE_MAX_OPS, 3);
    const page = await log.page({ limit: 5 });
    expect(page.entries.map((e) => e.id)).toEqual([`req_${INLINE_MAX_OPS + 2}`, `req_${INLINE_MAX_OPS + 1}`, `req_${INLINE_MAX_OPS}`, `req_${INLINE_MAX_OPS - 1}`, `req_${INLINE_MAX_OPS - 2}`]);
    expect(writer.starts).toBe(1);
    expect(errors).toEqual([]);
  });

  it('starts the worker for small batches that come fast, not for the same batches spread out', async () => {
    // The log flushes small batches under a burst; what starts the worker is the rate of writes.
    const batch = 16; // 32 rows and the roll-ups each: far under INLINE_MAX_OPS alone
    let id = 0;
    for (let i = 0; i < 8; i++) {
      burst(id, batch);
      id += batch;
      clock.advance(INLINE_WINDOW_MS);
    }
    expect(writer.running).toBe(false);
    for (let i = 0; i < INLINE_MAX_OPS / batch; i++) {
      burst(id, batch);
      id += batch;
    }
    expect(writer.running).toBe(true);
    expect(writer.starts).toBe(1);
    expect((await log.page({ limit: 5000 })).entries).toHaveLength(id);
    expect(errors).toEqual([]);
  });

  it('retires the worker once writes have been quiet, and starts another with the next large batch', async () => {
    burst(0, INLINE_MAX_OPS);
    await log.settled();
    expect(writer.running).toBe(true);
    clock.advance(WORKER_RETIRE_MS);
    await writer.whenRetired();
    expect(writer.running).toBe(false);
    // Light traffic afterwards stays on this thread.
    burst(INLINE_MAX_OPS, 5);
    expect(writer.running).toBe(false);
    burst(10_000, INLINE_MAX_OPS);
    expect(writer.running).toBe(true);
    expect(writer.starts).toBe(2);
    expect((await log.page({ limit: 5000 })).entries).toHaveLength(2 * INLINE_MAX_OPS + 5);
  });

  it('retires the worker when the idle trim asks', async () => {
    burst(0, INLINE_MAX_OPS);
    await log.settled();
    await writer.trim();
    expect(writer.running).toBe(false);
    expect((await log.page({ limit: 5000 })).entries).toHaveLength(INLINE_MAX_OPS);
  });

  it('writes on this thread whatever a worker that died had not committed', async () => {
    burst(0, INLINE_MAX_OPS);
    // The worker is gone before it could write anything.
    await (writer as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    burst(INLINE_MAX_OPS, INLINE_MAX_OPS);
    expect(writer.running).toBe(false);
    expect((await log.page({ limit: 5000 })).entries).toHaveLength(2 * INLINE_MAX_OPS);
    expect(String(errors[0])).toMatch(/exited/);
  });
});

describe('the rows the log worker builds, and entries amended after they were logged', () => {
  let dir: string;
  let clock: FakeClock;
  const errors: unknown[] = [];
  const open: { close(): unknown }[] = [];
  const logger = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => 0 });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-loga-'));
    clock = new FakeClock();
    errors.length = 0;
  });
  afterEach(async () => {
    for (const o of open.reverse()) await o.close();
    open.length = 0;
    rmSync(dir, { recursive: true, force: true });
  });

  async function store(name: string, journalled: boolean) {
    const path = join(dir, `${name}.db`);
    const db = openStore({ path, now: () => clock.now() });
    const writer = (await WorkerLogWriter.start({ db, dbPath: path, clock, onError: (e) => errors.push(e) })) as WorkerLogWriter;
    const journal = journalled ? new FileLogJournal(join(dir, `${name}-journal`), (e) => errors.push(e)) : undefined;
    const log = new RequestLog(new LogsRepo(db), writer, clock, new EventBus(), logger, () => ({ retentionDays: 7, maxRows: 100_000 }), journal);
    open.push(db, journal ?? { close() {} }, log);
    return { db, writer, log, journal, journalDir: join(dir, `${name}-journal`) };
  }
  const rows = (db: Db) =>
    ['proxy_logs ORDER BY id', 'proxy_log_attempts ORDER BY request_id, attempt', 'usage_minute ORDER BY dim, bucket_start, key', 'usage_day ORDER BY dim, bucket_start, key'].map((q) =>
      db.prepare(`SELECT * FROM ${q}`).all(),
    );
  /** Entries unlike each other: errors, tokens, several connections and models, two minutes. */
  const varied = (n: number) =>
    Array.from({ length: n }, (_, i) => {
      const e = entry(i, clock.now() + i * 97, i % 7 === 0 ? 429 : 200);
      e.inputTokens = i * 3;
      e.outputTokens = i % 5 === 0 ? null : i;
      e.model = `m${i % 3}`;
      e.stream = i % 2 === 0;
      return e;
    });

  it('builds in the worker, from the journal\'s lines, the same rows and roll-ups as this thread does', async () => {
    const a = await store('worker', true);
    const entries = varied(INLINE_MAX_OPS);
    for (const e of entries) a.log.append(structuredClone(e));
    a.log.flush();
    expect(a.writer.running).toBe(true);
    await a.log.settled();

    const path = join(dir, 'inline.db');
    const db = openStore({ path, now: () => clock.now() });
    open.push(db);
    const inline = new InlineLogWriter(db, (e) => errors.push(e));
    const b = new RequestLog(new LogsRepo(db), inline, clock, new EventBus(), logger, () => ({ retentionDays: 7, maxRows: 100_000 }));
    for (const e of entries) b.append(structuredClone(e));
    b.flush();

    const [logs, attempts, minutes, days] = rows(a.db);
    expect(logs).toHaveLength(INLINE_MAX_OPS);
    expect(attempts).toHaveLength(INLINE_MAX_OPS);
    expect(minutes!.length).toBeGreaterThan(1);
    expect([logs, attempts, minutes, days]).toEqual(rows(db));
    expect(errors).toEqual([]);
  });

  const lastLine = (journalDir: string) => {
    const files = readdirSync(journalDir).sort();
    const lines = files.flatMap((f) => readFileSync(join(journalDir, f), 'utf8').trim().split('\n')).filter(Boolean);
    return JSON.parse(lines[lines.length - 1]!) as RequestLogEntry;
  };
  const left = { status: 499, errorCode: 'client_closed_request', errorMessage: 'the client left' };

  it('an entry amended while it waits for its batch: the journal and the stored row say what was amended', async () => {
    const s = await store('wait', true);
    const e = entry(1, clock.now());
    s.log.append(e);
    s.log.amend(e, left);
    await s.journal!.durable();
    expect(lastLine(s.journalDir)).toMatchObject({ id: 'req_1', ...left });
    s.log.flush();
    const page = await s.log.page({ limit: 5 });
    expect(page.entries.map((x) => [x.id, x.status, x.errorCode, x.errorMessage])).toEqual([['req_1', 499, 'client_closed_request', 'the client left']]);
    expect(errors).toEqual([]);
  });

  it('an entry amended after its batch went to the store (the worker running): its row is corrected', async () => {
    const s = await store('late', true);
    const entries = varied(INLINE_MAX_OPS);
    for (const e of entries) s.log.append(e);
    s.log.flush();
    expect(s.writer.running).toBe(true);
    s.log.amend(entries[3]!, left);
    await s.journal!.durable();
    expect(lastLine(s.journalDir)).toMatchObject({ id: 'req_3', ...left });
    expect(await s.log.get('req_3')).toMatchObject({ status: 499, errorCode: 'client_closed_request', errorMessage: 'the client left' });
    expect(await s.log.get('req_4')).toMatchObject({ status: 200, errorCode: null });
    expect(errors).toEqual([]);
  });

  it('a logged entry cannot be changed in place (under the test runner): a change goes through amend', async () => {
    const { log } = await store('frozen', false);
    const e = entry(1, clock.now());
    log.append(e);
    expect(() => {
      e.attempts[0]!.durationMs = 5;
    }).toThrow(TypeError);
  });
});

describe('the writer gathers a burst\'s batches into one write, which the worker commits in one transaction', () => {
  let dir: string;
  let path: string;
  let clock: FakeClock;
  let db: Db;
  const errors: unknown[] = [];
  const open: { close(): unknown }[] = [];
  const logger = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => 0 });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-logg-'));
    path = join(dir, 'switchyard.db');
    clock = new FakeClock();
    db = openStore({ path, now: () => clock.now() });
    errors.length = 0;
  });
  afterEach(async () => {
    for (const o of open.reverse()) await o.close();
    open.length = 0;
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(groupWindowMs = GROUP_WINDOW_MS) {
    const writer = (await WorkerLogWriter.start({ db, dbPath: path, clock, groupWindowMs, onError: (e) => errors.push(e) })) as WorkerLogWriter;
    const log = new RequestLog(new LogsRepo(db), writer, clock, new EventBus(), logger, () => ({ retentionDays: 7, maxRows: 100_000 }));
    open.push(log);
    const burst = (from: number, n: number) => {
      for (let i = from; i < from + n; i++) log.append(entry(i, clock.now() + i));
      log.flush();
    };
    return { writer, log, burst };
  }
  const count = () => (db.prepare('SELECT COUNT(*) AS n FROM proxy_logs').get() as { n: number }).n;

  it('hands over a full group at once, and what is gathered after it when its window closes', async () => {
    const { writer, log, burst } = await start();
    burst(0, INLINE_MAX_OPS);
    expect(writer.running).toBe(true);
    await log.settled();
    expect(count()).toBe(INLINE_MAX_OPS);
    // The log flushes batches of 64: the eighth fills a group, which goes at once; ten more wait.
    burst(INLINE_MAX_OPS, GROUP_MAX_ENTRIES + 10);
    let committed = false;
    const all = writer.whenCommitted().then(() => (committed = true));
    await vi.waitFor(() => expect(count()).toBe(INLINE_MAX_OPS + GROUP_MAX_ENTRIES), { timeout: 10_000, interval: 5 });
    expect(committed).toBe(false);
    clock.advance(GROUP_WINDOW_MS - 1);
    expect(committed).toBe(false);
    clock.advance(1);
    await all;
    expect(count()).toBe(INLINE_MAX_OPS + GROUP_MAX_ENTRIES + 10);
    expect(errors).toEqual([]);
  });

  it('hands over at once what a read of the store waits for, however long the window', async () => {
    const { writer, log, burst } = await start(3_600_000);
    burst(0, INLINE_MAX_OPS);
    burst(INLINE_MAX_OPS, 3);
    expect(writer.running).toBe(true);
    const page = await log.page({ limit: 2 });
    expect(page.entries.map((e) => e.id)).toEqual([`req_${INLINE_MAX_OPS + 2}`, `req_${INLINE_MAX_OPS + 1}`]);
    expect(count()).toBe(INLINE_MAX_OPS + 3);
    // The usage roll-ups are in the same transactions.
    const requests = (db.prepare("SELECT SUM(requests) AS n FROM usage_minute WHERE dim = ''").get() as { n: number }).n;
    expect(requests).toBe(INLINE_MAX_OPS + 3);
  });

  it('commits what is gathered before it closes', async () => {
    const { writer, log, burst } = await start(3_600_000);
    burst(0, INLINE_MAX_OPS);
    burst(INLINE_MAX_OPS, 7);
    expect(writer.running).toBe(true);
    await log.close();
    expect(writer.running).toBe(false);
    expect(count()).toBe(INLINE_MAX_OPS + 7);
  });

  it('keeps the order of writes: a correction goes after the entries gathered before it', async () => {
    const { writer, log, burst } = await start(3_600_000);
    burst(0, INLINE_MAX_OPS);
    // Flushed, so gathered by the writer: the correction of its row must reach the store after it.
    const late = entry(INLINE_MAX_OPS, clock.now());
    log.append(late);
    log.flush();
    log.amend(late, { status: 499, errorCode: 'client_closed_request', errorMessage: 'the client left' });
    expect(writer.running).toBe(true);
    expect(await log.get(late.id)).toMatchObject({ status: 499, errorCode: 'client_closed_request' });
    expect(count()).toBe(INLINE_MAX_OPS + 1);
    expect(errors).toEqual([]);
  });

  it('loses only the entry the store refuses, not the others gathered with it, and reports it once', async () => {
    const { writer, log, burst } = await start(3_600_000);
    burst(0, INLINE_MAX_OPS);
    burst(INLINE_MAX_OPS, 5);
    // Already stored: its id is taken (UNIQUE), so the group that carries it again fails as a whole.
    burst(3, 1);
    burst(INLINE_MAX_OPS + 5, 5);
    expect(writer.running).toBe(true);
    expect((await log.page({ limit: 5000 })).entries).toHaveLength(INLINE_MAX_OPS + 10);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/1 of \d+ request-log entries could not be written: .*UNIQUE/);
  });

  it('loses only a refused write of rows, gathered between entries', async () => {
    const { writer, log, burst } = await start(3_600_000);
    burst(0, INLINE_MAX_OPS);
    burst(INLINE_MAX_OPS, 2);
    writer.write([[9_999]]);
    burst(INLINE_MAX_OPS + 2, 3);
    expect((await log.page({ limit: 5000 })).entries).toHaveLength(INLINE_MAX_OPS + 5);
    expect(errors).toHaveLength(1);
  });

  it('keeps a full journal segment while batches of it are only gathered, and deletes it once they are committed', async () => {
    const journalDir = join(dir, 'journal');
    const journal = new FileLogJournal(journalDir, (e) => errors.push(e));
    const writer = (await WorkerLogWriter.start({ db, dbPath: path, clock, groupWindowMs: 3_600_000, onError: (e) => errors.push(e) })) as WorkerLogWriter;
    const log = new RequestLog(new LogsRepo(db), writer, clock, new EventBus(), logger, () => ({ retentionDays: 7, maxRows: 100_000 }), journal);
    open.push(log); // its close closes the journal
    const segments = () => readdirSync(journalDir).filter((f) => f.endsWith('.ndjson')).sort();
    const first = segments()[0]!;
    // Entries of about 1 KiB, 64 at a time (the log's batches), until the journal starts its second segment.
    let n = 0;
    while (segments().at(-1) === first && n < 20_000) {
      for (let k = 0; k < 64; k++) {
        const e = entry(n, clock.now() + n);
        e.attempts[0]!.errorMessage = 'x'.repeat(600);
        log.append(e);
        n++;
      }
      await journal.durable();
    }
    expect(segments().at(-1)).not.toBe(first);
    expect(writer.running).toBe(true);
    expect(writer.gathered).toBeGreaterThan(0);
    // Everything handed over is committed; what is gathered is not, so the full segment stays.
    await vi.waitFor(() => expect(count()).toBe(n - writer.gathered), { timeout: 10_000, interval: 5 });
    expect(segments()).toContain(first);
    await log.settled();
    expect(count()).toBe(n);
    await vi.waitFor(() => expect(segments()).not.toContain(first), { timeout: 10_000, interval: 5 });
    expect(errors).toEqual([]);
  });

  it('writes on this thread what was gathered for a worker that died', async () => {
    const { writer, log, burst } = await start(3_600_000);
    burst(0, INLINE_MAX_OPS);
    await log.settled();
    burst(INLINE_MAX_OPS, 6);
    await (writer as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await vi.waitFor(() => expect(writer.running).toBe(false), { timeout: 10_000, interval: 5 });
    expect(count()).toBe(INLINE_MAX_OPS + 6);
    expect(String(errors[0])).toMatch(/exited/);
  });
});
