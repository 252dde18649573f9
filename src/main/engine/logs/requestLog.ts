// The request log: entries are batched off the request path and handed to a LogWriter (a worker
// thread with its own SQLite connection), pushed to the dashboard as a batch, and pruned by age
// and count. Reads wait for the writes handed over before them. Each entry is also journalled as it
// is logged (logJournal.ts), so a killed process loses none; `recover` puts them back at start.
import type { LogsPage, RequestLogEntry } from '../../../shared/model';
import type { CancelTimer, Clock } from '../clock';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import { amendOps, pruneOps, usagePruneOps, type LogPageQuery, type LogsRepo } from '../store/logsRepo';
import { NO_JOURNAL, type LogJournal } from './logJournal';
import type { LogWriter } from './logWriter';

/** Entries reach the store (and the dashboard) within this long; larger batches cost less per row. */
export const REQUEST_LOG_FLUSH_MS = 250;
/**
 * A batch also leaves once it holds this many entries. A batch of 256 lived across two young-generation
 * collections under a burst, so its entries were promoted and later cost a full collection; 64 took
 * the process's CPU per request at c=32 from about 189 to 174 µs (docs/decisions/lean-25-hot-path.md).
 * The log writer decides where the writes run from their rate, not the batch size (logWriter.ts).
 */
const FLUSH_ROWS = 64;
const PRUNE_EVERY_MS = 10 * 60_000;
/** Provisional entries kept for re-journalling (requests answering now); more is a leak, not load. */
const MAX_OPEN = 10_000;

/** A client key's name by id (in memory: the key service's map), and whether it was revoked. */
export type ClientKeyNames = (id: string) => { name: string; revoked: boolean } | null;
const NO_KEY_NAMES: ClientKeyNames = () => null;

/**
 * Under the test runner a logged entry is frozen, deeply: the store gets the entry as it was when
 * logged (its journal line, built into rows by the log worker), so a change made to it afterwards
 * would silently reach neither. A change must go through `amend`.
 */
const FREEZE_LOGGED = process.env.VITEST !== undefined;

function deepFreeze(v: unknown): void {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const k in v) deepFreeze((v as Record<string, unknown>)[k]);
}

export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  /** The journal's line of each entry in `buffer` (null: not journalled). */
  private lines: (string | null)[] = [];
  private cancelFlush: CancelTimer | null = null;
  private lastPrune = 0;
  /** Provisional entries of requests whose answer has started and whose final entry is not in yet. */
  private readonly open = new Map<string, RequestLogEntry>();

  constructor(
    private readonly repo: LogsRepo,
    private readonly writer: LogWriter,
    private readonly clock: Clock,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly limits: () => { retentionDays: number; maxRows: number },
    private readonly journal: LogJournal = NO_JOURNAL,
    private readonly keyNames: ClientKeyNames = NO_KEY_NAMES,
  ) {}

  /**
   * Inserts the journalled entries an earlier run had not committed (synchronously, on this thread:
   * it runs once, at start, before any request); returns how many.
   */
  recover(): number {
    const { entries, discard } = this.journal.leftover();
    const n = entries.length ? this.repo.insertMissing(entries) : 0;
    discard();
    if (n) this.log.warn('requestLog.recovered', { entries: n });
    return n;
  }

  /**
   * A request's answer is about to reach the client: its provisional entry goes to the journal only
   * (the store gets the final one), so a crash before the final entry still leaves it in the log.
   * Resolves once it is written: the answer's first byte waits for that.
   */
  provisional(entry: RequestLogEntry): Promise<void> {
    if (this.open.size >= MAX_OPEN) this.open.delete(this.open.keys().next().value!);
    this.open.set(entry.id, entry);
    this.journal.append(entry);
    return this.journal.durable();
  }

  /** Resolves once every entry appended so far is in the journal. */
  durable(): Promise<void> {
    return this.journal.durable();
  }

  /** A request's final entry. It must not change afterwards (`amend` replaces it). */
  append(entry: RequestLogEntry): void {
    this.open.delete(entry.id);
    // The pushed entries carry their client key's name, as a read of the store does (joined there).
    const k = entry.clientKeyId ? this.keyNames(entry.clientKeyId) : null;
    entry.clientKeyName = k?.name ?? null;
    entry.clientKeyRevoked = k?.revoked ?? false;
    if (FREEZE_LOGGED) deepFreeze(entry);
    this.lines.push(this.journal.append(entry));
    this.buffer.push(entry);
    if (this.buffer.length >= FLUSH_ROWS) this.flush();
    else if (!this.cancelFlush) this.cancelFlush = this.clock.setTimer(() => this.flush(), REQUEST_LOG_FLUSH_MS);
  }

  flush(): void {
    this.cancelFlush?.();
    this.cancelFlush = null;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    const lines = this.lines;
    this.buffer = [];
    this.lines = [];
    const sealed = this.journal.seal();
    // The requests still answering are carried into a new segment (the full one goes once committed).
    if (sealed.newSegment) for (const e of this.open.values()) this.journal.append(e);
    // The journal's lines are the entries' JSON already: what the worker builds the rows from.
    this.writer.insert(batch, () => (lines.includes(null) ? batch.map((e) => JSON.stringify(e)) : (lines as string[])));
    // The segment goes once the batch is committed, whenever the writer commits it (no hurry).
    void this.writer.whenCommitted().then(sealed.committed);
    this.bus.emit('logs', batch);
    const now = this.clock.now();
    if (now - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = now;
      this.prune();
    }
  }

  /**
   * A logged entry changed before its answer went out (the client left meanwhile): the journal and
   * the store get `patch` applied. Waiting for its batch, the entry is replaced; already handed to
   * the store, its row is corrected there (the minute's usage roll-up keeps the first status).
   */
  amend(entry: RequestLogEntry, patch: Pick<RequestLogEntry, 'status' | 'errorCode' | 'errorMessage'>): void {
    const next: RequestLogEntry = { ...entry, ...patch };
    if (FREEZE_LOGGED) deepFreeze(next);
    const line = this.journal.append(next);
    const i = this.buffer.lastIndexOf(entry);
    if (i >= 0) {
      this.buffer[i] = next;
      this.lines[i] = line;
    } else this.writer.write(amendOps(next));
  }

  /** Queues the retention clean-up (by age and by count). */
  prune(): void {
    const { retentionDays, maxRows } = this.limits();
    this.writer.write(pruneOps(this.clock.now() - retentionDays * 86_400_000, maxRows));
    // The usage roll-ups keep their own retention (store/usageRepo.ts USAGE_GRAINS).
    this.writer.write(usagePruneOps(this.clock.now()));
  }

  /** Resolves once every entry appended so far is committed (the usage report reads after it). */
  async settled(): Promise<void> {
    this.flush();
    await this.writer.drain();
  }

  async page(opts: LogPageQuery): Promise<LogsPage> {
    this.flush();
    await this.writer.drain();
    return this.repo.page(opts);
  }

  async get(id: string): Promise<RequestLogEntry | null> {
    this.flush();
    await this.writer.drain();
    return this.repo.get(id);
  }

  /**
   * The last egress IP each of these connections recorded since `since` (SPEC R-EGR-03): the
   * store, plus the entries still waiting for the next flush. Synchronous; writes handed to the
   * writer but not yet committed (it gathers up to GROUP_WINDOW_MS of them for the worker) are not
   * seen.
   */
  lastEgressIps(connectionIds: readonly string[], since: number): Map<string, { ip: string; at: number }> {
    const out = this.repo.lastEgressIps(connectionIds, since);
    if (this.buffer.length === 0) return out;
    const wanted = new Set(connectionIds);
    for (const e of this.buffer) {
      if (e.startedAt < since) continue;
      for (const a of e.attempts) {
        if (!a.egressIp || !wanted.has(a.connectionId)) continue;
        const prev = out.get(a.connectionId);
        if (!prev || a.startedAt >= prev.at) out.set(a.connectionId, { ip: a.egressIp, at: a.startedAt });
      }
    }
    return out;
  }

  async close(): Promise<void> {
    this.flush();
    try {
      await this.writer.close();
      this.journal.close();
    } catch (err) {
      this.log.error('requestLog.closeFailed', { err });
    }
  }
}
