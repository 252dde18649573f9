// Where request-log writes run. SQLite commits cost far more per transaction than per row, and a
// large batch on the event loop would stall every request in flight, so large batches go to a
// worker thread with its own connection (WAL lets this thread keep reading). A worker is a V8
// isolate of its own (about 10 MiB resident), which a workstation should not carry for an agent
// that sends a request every few seconds: small batches (a light load) are written inline, the
// worker starts with the first large one and is retired once writes have been quiet for a while
// (or when the idle trim asks, memory/idleTrim.ts), to start again with the next large batch.
// Writes keep their order: while a worker runs or starts, every write goes to it. If the worker
// cannot start, writes run inline. The worker (logWorker.ts) gets the request-log entries as JSON
// and builds their rows and roll-ups itself, so this thread only hands over their JSON lines. It
// gathers a burst's batches first (up to GROUP_WINDOW_MS, GROUP_MAX_ENTRIES) and hands them over as
// one write, which the worker commits in one transaction: a commit and the usage roll-ups cost per
// transaction, not per entry (docs/decisions/lean-25-group-commit.md). A read of the store
// (`drain`) hands over what is gathered at once.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RequestLogEntry } from '../../../shared/model';
import type { CancelTimer, Clock } from '../clock';
import { workerHeap } from '../memory/heapPolicy';
import type { Db } from '../store/db';
import { insertOps, runLogWrites, type LogWriteOp, type StatementCache } from '../store/logsRepo';
import { LineStage, linesOf } from './lineStage';
import type { LogWorkerData, WorkerReply, WorkerRequest, WriteBody } from './logWorkerProtocol';

export interface LogWriter {
  write(ops: LogWriteOp[]): void;
  /**
   * Request-log entries, their rows and usage roll-ups built where the write runs: in the worker,
   * off this thread, from `lines()` (each entry's JSON, usually the journal's own line).
   * The entries must not change once handed over.
   */
  insert(entries: RequestLogEntry[], lines: () => string[]): void;
  /** Resolves once every write handed over so far is committed, which it asks for now (a read of the store waits). */
  drain(): Promise<void>;
  /** Resolves once every write handed over so far is committed, in the writer's own time (it gathers a burst's writes). */
  whenCommitted(): Promise<void>;
  /** Gives memory back after a burst (memory/idleTrim.ts): SQLite's page cache, the worker itself. */
  trim(): Promise<void>;
  close(): Promise<void>;
  readonly kind: 'worker' | 'inline';
}

export class InlineLogWriter implements LogWriter {
  readonly kind = 'inline';
  private readonly cache: StatementCache = new Map();

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

  insert(entries: RequestLogEntry[]): void {
    this.write(insertOps(entries));
  }

  /** A write handed to a worker that could not take it. */
  replay(body: WriteBody): void {
    let ops: LogWriteOp[];
    try {
      ops = body.kind === 'lines' ? insertOps(Array.from(linesOf(body.buffer, body.len), (l) => JSON.parse(l) as RequestLogEntry)) : (JSON.parse(body.json) as LogWriteOp[]);
    } catch (err) {
      return this.onError(err);
    }
    this.write(ops);
  }

  async drain(): Promise<void> {}

  async whenCommitted(): Promise<void> {}

  async trim(): Promise<void> {
    try {
      this.db.pragma('shrink_memory');
    } catch (err) {
      this.onError(err);
    }
  }

  async close(): Promise<void> {}
}

/**
 * Writes run inline while at most this many arrive within INLINE_WINDOW_MS (about 200 requests: a
 * few milliseconds of SQLite); more start the worker. Counted over a window, not per batch, so the
 * request log's batch size (small, for memory) does not decide where the writes run.
 */
export const INLINE_MAX_OPS = 512;
export const INLINE_WINDOW_MS = 250;
/** A worker with nothing to write for this long is retired. */
export const WORKER_RETIRE_MS = 30_000;
/**
 * Request-log batches are gathered into one write for the worker until it holds this many entries
 * or this many bytes, or GROUP_WINDOW_MS after the first of them. Past 512 entries a commit gains
 * little (the worker's write per entry: 21 µs at 64, 15 at 512, 14.4 at 1,024).
 */
export const GROUP_MAX_ENTRIES = 512;
export const GROUP_MAX_BYTES = 512 * 1024;
export const GROUP_WINDOW_MS = 200;

export interface WorkerLogWriterOptions {
  db: Db;
  dbPath: string;
  nativeBinding?: string;
  onError: (err: unknown) => void;
  /** Times the retirement; without one the worker, once started, stays until close(). */
  clock?: Clock;
  inlineMaxOps?: number;
  retireMs?: number;
  /** How long batches are gathered into one write (GROUP_WINDOW_MS); without a clock they are not. */
  groupWindowMs?: number;
}

type Phase = 'none' | 'starting' | 'running' | 'retiring';

/** A write handed to the worker, kept until it is committed. */
interface Pending {
  seq: number;
  body: WriteBody;
}

/**
 * The worker's script. Built (both shells): logWorker.js, an entry of the main bundle, beside the
 * entries (this module may sit in a chunk one folder down). From source (tests, tsx): a bootstrap
 * that registers tsx in the thread and loads logWorker.ts.
 */
function workerScript(): { url: URL; entry?: string } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return { url: new URL('./sourceWorker.mjs', here), entry: new URL('./logWorker.ts', here).href };
  for (const rel of ['./logWorker.js', '../logWorker.js']) {
    const url = new URL(rel, here);
    if (existsSync(fileURLToPath(url))) return { url };
  }
  throw new Error('the request-log worker script (logWorker.js) is missing from the build');
}

export class WorkerLogWriter implements LogWriter {
  readonly kind = 'worker';
  private phase: Phase = 'none';
  private worker: Worker | null = null;
  /** Writes handed over while no worker can take them yet (starting or retiring), in order. */
  private queued: Pending[] = [];
  /** Writes posted to the worker and not yet committed: run inline should it die. */
  private readonly inflight = new Map<number, Pending>();
  private seq = 0;
  private acked = 0;
  private waiters: { seq: number; resolve: () => void }[] = [];
  /** The worker could not start (or died): everything runs inline from then on. */
  private dead = false;
  private closed = false;
  private cancelRetire: CancelTimer | null = null;
  private retired: (() => void)[] = [];
  /** How many workers were started (tests and the bench read it). */
  starts = 0;
  private readonly inlineMax: number;
  private readonly retireMs: number;
  private readonly groupWindowMs: number;
  /** Request-log batches gathered for the worker's next write, the last one's seq, and the window's timer. */
  private readonly stage = new LineStage();
  private stagedSeq = 0;
  private cancelGroup: CancelTimer | null = null;
  /** Writes run inline in the current window, and when it began (clock time). */
  private windowOps = 0;
  private windowStart = Number.NEGATIVE_INFINITY;

  private constructor(
    private readonly opts: WorkerLogWriterOptions,
    private readonly inline: InlineLogWriter,
  ) {
    this.inlineMax = opts.inlineMaxOps ?? INLINE_MAX_OPS;
    this.retireMs = opts.retireMs ?? WORKER_RETIRE_MS;
    this.groupWindowMs = opts.groupWindowMs ?? GROUP_WINDOW_MS;
  }

  /** A writer (the worker starts once writes come faster than INLINE_MAX_OPS per INLINE_WINDOW_MS); an inline one for an in-memory store. */
  static async start(opts: WorkerLogWriterOptions): Promise<LogWriter> {
    const inline = new InlineLogWriter(opts.db, opts.onError);
    if (opts.dbPath === ':memory:') return inline;
    return new WorkerLogWriter(opts, inline);
  }

  /** Request-log entries gathered for the worker's next write, not handed over yet. */
  get gathered(): number {
    return this.stage.entries;
  }

  /** Whether a worker thread is alive now. */
  get running(): boolean {
    return this.phase !== 'none';
  }

  /** Resolves once a worker being retired has exited (at once when none is). */
  whenRetired(): Promise<void> {
    return this.phase === 'retiring' ? new Promise((resolve) => this.retired.push(resolve)) : Promise.resolve();
  }

  write(ops: LogWriteOp[]): void {
    // After the batches gathered before it: writes keep their order.
    this.flushStage();
    if (this.toWorker(ops.length)) this.enqueue({ seq: ++this.seq, body: { kind: 'ops', json: JSON.stringify(ops) } });
    else this.inline.write(ops);
  }

  insert(entries: RequestLogEntry[], lines: () => string[]): void {
    let rows = entries.length;
    for (const e of entries) rows += e.attempts.length;
    if (!this.toWorker(rows)) return this.inline.insert(entries);
    this.stage.add(lines());
    this.stagedSeq = ++this.seq;
    const clock = this.opts.clock;
    if (!clock || this.stage.entries >= GROUP_MAX_ENTRIES || this.stage.bytes >= GROUP_MAX_BYTES) this.flushStage();
    else
      this.cancelGroup ??= clock.setTimer(() => {
        this.cancelGroup = null;
        this.flushStage();
      }, this.groupWindowMs);
  }

  /** Whether a write of `rows` rows goes to the worker (started if need be) rather than inline. */
  private toWorker(rows: number): boolean {
    if (this.dead || this.closed) return false;
    if (this.phase === 'none' && !this.underLoad(rows)) return false;
    if (this.phase === 'none') this.spawn();
    this.armRetire();
    return !this.dead;
  }

  /** The gathered batches, handed to the worker as one write. */
  private flushStage(): void {
    this.cancelGroup?.();
    this.cancelGroup = null;
    const staged = this.stage.take();
    if (staged) this.enqueue({ seq: this.stagedSeq, body: { kind: 'lines', ...staged } });
  }

  /** Posted when a worker runs; otherwise queued for the next one (started if none is). */
  private enqueue(w: Pending): void {
    if (this.phase === 'running') return this.post(w);
    this.queued.push(w);
    if (this.phase === 'none') this.spawn();
  }

  drain(): Promise<void> {
    this.flushStage();
    return this.whenCommitted();
  }

  whenCommitted(): Promise<void> {
    if (this.acked >= this.seq) return Promise.resolve();
    const seq = this.seq;
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /** After a burst: the worker (and its isolate, heap and SQLite cache) goes; the main connection's cache is released by the caller. */
  async trim(): Promise<void> {
    if (this.phase === 'running') await this.retire();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.drain();
    this.closed = true;
    this.cancelRetire?.();
    this.cancelRetire = null;
    if (this.phase === 'running') await this.retire();
    else if (this.phase === 'retiring') await new Promise<void>((resolve) => this.retired.push(resolve));
  }

  /** Whether `n` more writes make too many for this thread (without a clock: this batch alone). */
  private underLoad(n: number): boolean {
    if (n > this.inlineMax) return true;
    const clock = this.opts.clock;
    if (!clock) return false;
    const now = clock.monotonic();
    if (now - this.windowStart >= INLINE_WINDOW_MS) {
      this.windowStart = now;
      this.windowOps = 0;
    }
    this.windowOps += n;
    return this.windowOps > this.inlineMax;
  }

  private post(w: Pending): void {
    this.inflight.set(w.seq, w);
    const m: WorkerRequest = { type: 'write', seq: w.seq, body: w.body };
    this.worker!.postMessage(m);
  }

  private armRetire(): void {
    const clock = this.opts.clock;
    if (!clock) return;
    this.cancelRetire?.();
    this.cancelRetire = clock.setTimer(() => {
      this.cancelRetire = null;
      if (this.phase === 'running' && this.acked >= this.seq) void this.retire();
      else if (this.phase === 'running') this.armRetire();
    }, this.retireMs);
  }

  private spawn(): void {
    this.phase = 'starting';
    this.starts++;
    let worker: Worker;
    try {
      const sqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
      const script = workerScript();
      const workerData: LogWorkerData = { sqlitePath, dbPath: this.opts.dbPath, nativeBinding: this.opts.nativeBinding, entry: script.entry };
      worker = new Worker(script.url, { resourceLimits: workerHeap(), workerData });
    } catch (err) {
      this.fail(err);
      return;
    }
    this.worker = worker;
    worker.unref();
    worker.on('message', (m: WorkerReply) => {
      if (m.type === 'ready') this.ready();
      else if (m.type === 'ack') this.ack(m.seq);
      else if (m.type === 'error') this.opts.onError(new Error(m.message));
    });
    worker.on('error', (err) => this.gone(worker, err));
    worker.on('exit', () => this.gone(worker, null));
  }

  private ready(): void {
    if (this.phase !== 'starting') return;
    this.phase = 'running';
    const q = this.queued;
    this.queued = [];
    for (const w of q) this.post(w);
  }

  private ack(seq: number): void {
    this.acked = Math.max(this.acked, seq);
    for (const [s, w] of this.inflight) {
      if (s > seq) continue;
      this.inflight.delete(s);
      // Committed: the worker reads it no more, the next group may be written into it.
      if (w.body.kind === 'lines') this.stage.reuse(w.body.buffer);
    }
    this.waiters = this.waiters.filter((w) => {
      if (w.seq > this.acked) return true;
      w.resolve();
      return false;
    });
  }

  /** Retires the running worker once its writes are committed; resolves when it has exited. */
  private retire(): Promise<void> {
    const worker = this.worker;
    if (!worker || this.phase !== 'running') return Promise.resolve();
    this.flushStage();
    this.phase = 'retiring';
    this.cancelRetire?.();
    this.cancelRetire = null;
    const done = new Promise<void>((resolve) => this.retired.push(resolve));
    worker.once('message', (m: WorkerReply) => {
      if (m.type === 'closed') void worker.terminate();
    });
    const close: WorkerRequest = { type: 'close' };
    worker.postMessage(close);
    return done;
  }

  /** The worker exited: retired as planned, or died. */
  private gone(worker: Worker, err: unknown): void {
    if (this.worker !== worker) return;
    this.worker = null;
    const planned = this.phase === 'retiring';
    this.phase = 'none';
    const retired = this.retired;
    this.retired = [];
    for (const r of retired) r();
    if (!planned) return this.fail(err ?? new Error('the request-log worker exited'));
    this.stage.release();
    // Writes that came while it was retiring start the next one.
    if (this.queued.length > 0 && !this.closed) this.spawn();
  }

  /** No worker: what is queued runs inline now, and so does everything after. */
  private fail(err: unknown): void {
    this.dead = true;
    this.phase = 'none';
    this.worker = null;
    if (err) this.opts.onError(err);
    this.cancelGroup?.();
    this.cancelGroup = null;
    const staged = this.stage.take();
    this.stage.release();
    const pending = [...this.inflight.values(), ...this.queued];
    if (staged) pending.push({ seq: this.stagedSeq, body: { kind: 'lines', ...staged } });
    this.inflight.clear();
    this.queued = [];
    for (const w of pending) this.inline.replay(w.body);
    this.acked = this.seq;
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }
}
