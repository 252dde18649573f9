// The request log's crash journal. Entries reach SQLite in batches (every 250 ms, in a worker
// thread), so a process killed between a batch's start and its commit would lose every request it
// held. Each entry is therefore also appended to a journal file (one JSON line per entry). Appends
// are gathered and written once per event-loop turn (one `write` for every request that logged in
// that turn, instead of one per entry: at a few thousand requests a second that is the difference
// between one system call per request and one per dozen); `durable()` resolves once what was
// appended so far is written, and from then on it survives the process being killed. Journal
// segments take batches until they are full (SEGMENT_BYTES), and a full one is deleted once the
// batches holding its entries are committed; at start, the segments
// an earlier run left behind are read back and any of their entries missing from the store are
// inserted (`RequestLog.recover`). A request whose answer is about to start is journalled
// provisionally first, and its answer waits for `durable()` before its first byte goes out
// (proxy/delivery.ts), so a kill between the answer's end and its final entry still leaves it in
// the log; the final line, when there is one, wins.
//
// No fsync: a killed process loses nothing the kernel already has; only an OS crash or power loss
// could, which is the same promise the log's SQLite connection makes (synchronous=OFF).
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestLogEntry } from '../../../shared/model';

export interface LogJournal {
  /**
   * Records the entry: written with every other entry of this event-loop turn, at its end. Returns
   * its line (the entry's JSON), or null when nothing is journalled.
   */
  append(entry: RequestLogEntry): string | null;
  /** Resolves once every entry appended so far is written (it then survives the process being killed). */
  durable(): Promise<void>;
  /**
   * Marks the entries appended so far as one batch. `committed` is to be called once the batch is
   * in the store: a segment is deleted when it is full (a new one was started: `newSegment`) and
   * every batch in it is committed. The caller journals again, in the new segment, the entries it
   * still expects a final line for (their provisional lines are in the segment that will go).
   */
  seal(): Sealed;
  /** Entries earlier runs left in the journal, and the function that deletes them once recovered. */
  leftover(): { entries: RequestLogEntry[]; discard: () => void };
  close(): void;
}

export interface Sealed {
  committed: () => void;
  newSegment: boolean;
}

const WRITTEN: Promise<void> = Promise.resolve();
const NOTHING_SEALED: Sealed = { committed: () => {}, newSegment: false };

/**
 * A segment takes batches until it holds this much; then the next starts. One segment per batch
 * meant an open, a close and an unlink every 64 requests (2 % of the CPU at c=32) and every open
 * request journalled again each time.
 */
export const SEGMENT_BYTES = 4 * 1024 * 1024;

/** A journal file and the batches sealed in it that the store has not committed yet. */
interface Segment {
  name: string;
  bytes: number;
  uncommitted: number;
}

export const NO_JOURNAL: LogJournal = {
  append: () => null,
  durable: () => WRITTEN,
  seal: () => NOTHING_SEALED,
  leftover: () => ({ entries: [], discard: () => {} }),
  close() {},
};

const SEGMENT = /^segment-(\d+)\.ndjson$/;
const segmentName = (n: number) => `segment-${String(n).padStart(12, '0')}.ndjson`;

export class FileLogJournal implements LogJournal {
  private fd: number | null = null;
  private current: Segment;
  private next: number;
  private dirty = false;
  private failed = false;
  /** Lines appended this turn, written together at its end. */
  private pending: string[] = [];
  private scheduled = false;
  private waiters: (() => void)[] = [];
  /** Segments that were there when this run started (an earlier run's). */
  private readonly previous: string[];

  constructor(
    private readonly dir: string,
    private readonly onError: (err: unknown) => void,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.previous = readdirSync(dir)
      .filter((f) => SEGMENT.test(f))
      .sort();
    const last = this.previous.length ? Number(SEGMENT.exec(this.previous[this.previous.length - 1]!)![1]) : 0;
    this.next = last + 1;
    this.current = this.openNext();
  }

  private openNext(): Segment {
    const name = segmentName(this.next++);
    try {
      this.fd = openSync(join(this.dir, name), 'a', 0o600);
    } catch (err) {
      this.fail(err);
    }
    return { name, bytes: 0, uncommitted: 0 };
  }

  private fail(err: unknown): void {
    if (!this.failed) this.onError(err);
    this.failed = true;
    this.fd = null;
  }

  append(entry: RequestLogEntry): string | null {
    if (this.fd === null) return null;
    const line = JSON.stringify(entry);
    this.pending.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      // The end of this turn: after every I/O callback of the poll phase (all the answers that
      // started in it), before the loop waits again.
      setImmediate(this.endOfTurn);
    }
    return line;
  }

  durable(): Promise<void> {
    if (this.pending.length === 0) return WRITTEN;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private readonly endOfTurn = () => {
    this.scheduled = false;
    this.writePending();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  };

  /** One write for every line appended since the last. */
  private writePending(): void {
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? `${this.pending[0]}\n` : `${this.pending.join('\n')}\n`;
    this.pending = [];
    if (this.fd === null) return;
    try {
      writeSync(this.fd, text);
      this.dirty = true;
      this.current.bytes += text.length;
    } catch (err) {
      this.fail(err);
    }
  }

  seal(): Sealed {
    this.writePending();
    if (!this.dirty) return NOTHING_SEALED;
    this.dirty = false;
    const seg = this.current;
    seg.uncommitted++;
    const newSegment = seg.bytes >= SEGMENT_BYTES;
    if (newSegment) {
      if (this.fd !== null) closeSync(this.fd);
      this.current = this.openNext();
    }
    return {
      // A segment no longer current is full: it goes with its last batch.
      committed: () => {
        if (--seg.uncommitted === 0 && seg !== this.current) this.remove([seg.name]);
      },
      newSegment,
    };
  }

  leftover(): { entries: RequestLogEntry[]; discard: () => void } {
    // A request may be journalled twice (provisional, then final): the later line wins.
    const entries = new Map<string, RequestLogEntry>();
    for (const f of this.previous) {
      let text: string;
      try {
        text = readFileSync(join(this.dir, f), 'utf8');
      } catch (err) {
        this.onError(err);
        continue;
      }
      for (const line of text.split('\n')) {
        if (!line) continue;
        try {
          const e = JSON.parse(line) as RequestLogEntry;
          entries.delete(e.id);
          entries.set(e.id, e);
        } catch {
          // A line cut off by the kill: its request had not been answered yet.
        }
      }
    }
    return { entries: [...entries.values()], discard: () => this.remove(this.previous) };
  }

  private remove(names: string[]): void {
    for (const n of names) {
      try {
        unlinkSync(join(this.dir, n));
      } catch {
        // already gone
      }
    }
  }

  close(): void {
    // Whatever is still pending belongs to entries the store is about to hold (the log closes after
    // its last flush); written anyway, then the segment goes.
    this.writePending();
    this.endOfTurn();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.remove([this.current.name]);
  }
}
