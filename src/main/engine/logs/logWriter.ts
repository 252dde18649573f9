// Where request-log writes run. SQLite commits cost far more per transaction than per row, and a
// large batch on the event loop would stall every request in flight, so writes go to a worker
// thread with its own connection (WAL lets this thread keep reading). If the worker cannot start,
// writes run inline in small batches.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from '../store/db';
import { LOG_WRITE_SQL, runLogWrites, type LogWriteOp } from '../store/logsRepo';

export interface LogWriter {
  write(ops: LogWriteOp[]): void;
  /** Resolves once every write handed over so far is committed. */
  drain(): Promise<void>;
  /** Gives memory back after a burst (memory/idleTrim.ts): SQLite's page cache, the worker's garbage. */
  trim(): Promise<void>;
  close(): Promise<void>;
  readonly kind: 'worker' | 'inline';
}

export class InlineLogWriter implements LogWriter {
  readonly kind = 'inline';
  private readonly cache = new Map<number, ReturnType<Db['prepare']>>();

  constructor(
    private readonly db: Db,
    private readonly onError: (err: unknown) => void,
  ) {}

  write(ops: LogWriteOp[]): void {
    try {
      runLogWrites(this.db, ops, this.cache);
    } catch (err) {
      this.onError(err);
    }
  }

  async drain(): Promise<void> {}

  async trim(): Promise<void> {
    try {
      this.db.pragma('shrink_memory');
    } catch (err) {
      this.onError(err);
    }
  }

  async close(): Promise<void> {}
}

// The worker is plain CommonJS evaluated from this string, so it needs no separate bundle entry in
// either shell; better-sqlite3's path and the SQL come in through workerData.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlitePath);
const db = new Database(workerData.dbPath, workerData.nativeBinding ? { nativeBinding: workerData.nativeBinding } : {});
db.pragma('journal_mode = WAL');
db.pragma('synchronous = OFF');
db.pragma('busy_timeout = 5000');
const stmts = workerData.sql.map((s) => db.prepare(s));
const run = db.transaction((ops) => { for (const op of ops) stmts[op[0]].run(op.slice(1)); });
parentPort.on('message', (m) => {
  if (m.type === 'write') {
    try { run(JSON.parse(m.ops)); } catch (e) { parentPort.postMessage({ type: 'error', message: String(e && e.message) }); }
    parentPort.postMessage({ type: 'ack', seq: m.seq });
  } else if (m.type === 'trim') {
    // After a burst (memory/idleTrim.ts): the page cache, then this isolate's garbage (gc exists
    // when the engine set --expose-gc before starting this worker).
    try { db.pragma('shrink_memory'); } catch {}
    if (typeof gc === 'function') gc();
    parentPort.postMessage({ type: 'trimmed' });
  } else if (m.type === 'close') {
    try { db.close(); } catch {}
    parentPort.postMessage({ type: 'closed' });
  }
});
parentPort.postMessage({ type: 'ready' });
`;

export class WorkerLogWriter implements LogWriter {
  readonly kind = 'worker';
  private seq = 0;
  private acked = 0;
  private waiters: { seq: number; resolve: () => void }[] = [];
  private dead = false;
  private trimWaiters: (() => void)[] = [];

  private constructor(
    private readonly worker: Worker,
    private readonly fallback: LogWriter,
    private readonly onError: (err: unknown) => void,
  ) {
    worker.on('message', (m: { type: string; seq?: number; message?: string }) => {
      if (m.type === 'ack' && m.seq !== undefined) {
        this.acked = m.seq;
        this.waiters = this.waiters.filter((w) => {
          if (w.seq > this.acked) return true;
          w.resolve();
          return false;
        });
      } else if (m.type === 'trimmed') this.trimWaiters.shift()?.();
      else if (m.type === 'error') this.onError(new Error(m.message));
    });
    worker.on('error', (err) => this.die(err));
    worker.on('exit', () => this.die(null));
    worker.unref();
  }

  /** Starts the worker; resolves with an inline writer instead when it cannot start. */
  static async start(opts: {
    db: Db;
    dbPath: string;
    nativeBinding?: string;
    onError: (err: unknown) => void;
  }): Promise<LogWriter> {
    const inline = new InlineLogWriter(opts.db, opts.onError);
    if (opts.dbPath === ':memory:') return inline;
    try {
      const sqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { sqlitePath, dbPath: opts.dbPath, nativeBinding: opts.nativeBinding, sql: LOG_WRITE_SQL },
      });
      await new Promise<void>((resolve, reject) => {
        worker.once('message', (m: { type: string }) => (m.type === 'ready' ? resolve() : reject(new Error(m.type))));
        worker.once('error', reject);
      });
      return new WorkerLogWriter(worker, inline, opts.onError);
    } catch (err) {
      opts.onError(err);
      return inline;
    }
  }

  private die(err: unknown) {
    if (this.dead) return;
    this.dead = true;
    if (err) this.onError(err);
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
    for (const t of this.trimWaiters) t();
    this.trimWaiters = [];
  }

  write(ops: LogWriteOp[]): void {
    if (this.dead) return this.fallback.write(ops);
    // A JSON string crosses to the worker far cheaper than a structured clone of many small objects.
    this.worker.postMessage({ type: 'write', seq: ++this.seq, ops: JSON.stringify(ops) });
  }

  trim(): Promise<void> {
    if (this.dead) return this.fallback.trim();
    return new Promise((resolve) => {
      this.trimWaiters.push(resolve);
      this.worker.postMessage({ type: 'trim' });
    });
  }

  drain(): Promise<void> {
    if (this.dead || this.acked >= this.seq) return Promise.resolve();
    const seq = this.seq;
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  async close(): Promise<void> {
    if (this.dead) return;
    await this.drain();
    this.dead = true;
    await new Promise<void>((resolve) => {
      this.worker.once('message', () => resolve());
      this.worker.once('exit', () => resolve());
      this.worker.postMessage({ type: 'close' });
    });
    await this.worker.terminate();
  }
}
