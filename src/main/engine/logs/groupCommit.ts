// Group commit for the request-log worker (logWorker.ts): the writes the engine hands over (a
// 64-entry batch every few milliseconds under load) are held for a moment and committed together,
// in one transaction. A commit costs far more per transaction than per row: the usage roll-ups
// are one upsert per (granularity, bucket, dimension, key) touched, whatever the number of
// entries, and each commit rewrites the same roll-up and index pages into the WAL. Measured on the
// worker's own write path: 21 µs per entry in 64-entry transactions, 15 µs in 512-entry ones
// (docs/decisions/lean-25-group-commit.md).
//
// What is held is committed when it reaches GROUP_MAX_ENTRIES, GROUP_WINDOW_MS after the first of
// it arrived, when the engine asks (`sync`: a read of the store, close, retirement), or before the
// worker closes. Order is kept. A write is acknowledged only once committed, so the journal keeps
// an entry until it is in the store, and a worker that dies takes nothing the engine cannot
// replay. Should a group's transaction fail, each write is retried in a transaction of its own,
// so one bad write loses only itself, as before grouping.

import type { CancelTimer, Clock } from '../clock';

/** Commit once this many request-log entries are held. */
export const GROUP_MAX_ENTRIES = 512;
/** Commit at most this long after the first held write arrived. */
export const GROUP_WINDOW_MS = 200;

export interface GroupCommitDeps<W> {
  /** Writes these in one transaction; throws if it failed (nothing of it committed). */
  commit(writes: readonly W[]): void;
  /** How many request-log entries a write carries (what GROUP_MAX_ENTRIES counts). */
  entries(write: W): number;
  /** Every write up to and including `seq` is committed (or failed and was reported). */
  ack(seq: number): void;
  error(message: string): void;
  /** Times the window (the worker's system clock). */
  clock: Pick<Clock, 'setTimer'>;
  maxEntries?: number;
  windowMs?: number;
}

export class GroupCommit<W> {
  private held: W[] = [];
  private heldEntries = 0;
  private lastSeq = 0;
  private cancelTimer: CancelTimer | null = null;
  private readonly max: number;
  private readonly windowMs: number;

  constructor(private readonly d: GroupCommitDeps<W>) {
    this.max = d.maxEntries ?? GROUP_MAX_ENTRIES;
    this.windowMs = d.windowMs ?? GROUP_WINDOW_MS;
  }

  /** How many writes are held, not yet committed. */
  get size(): number {
    return this.held.length;
  }

  add(seq: number, write: W): void {
    this.held.push(write);
    this.heldEntries += this.d.entries(write);
    this.lastSeq = seq;
    if (this.heldEntries >= this.max) this.flush();
    else this.cancelTimer ??= this.d.clock.setTimer(() => {
      this.cancelTimer = null;
      this.flush();
    }, this.windowMs);
  }

  /** Commits what is held now. */
  flush(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    if (this.held.length === 0) return;
    const writes = this.held;
    const seq = this.lastSeq;
    this.held = [];
    this.heldEntries = 0;
    try {
      this.d.commit(writes);
    } catch (err) {
      if (writes.length === 1) this.d.error(messageOf(err));
      else
        for (const w of writes) {
          try {
            this.d.commit([w]);
          } catch (e) {
            this.d.error(messageOf(e));
          }
        }
    }
    this.d.ack(seq);
  }
}

const messageOf = (e: unknown) => String((e as Error)?.message ?? e);
