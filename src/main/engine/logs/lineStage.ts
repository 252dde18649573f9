// Where the request-log writer gathers a burst's entries before it hands them to the log worker in
// one write, which the worker commits in one transaction (logWriter.ts; why:
// docs/decisions/lean-25-group-commit.md). The entries' JSON lines are encoded (UTF-8, one per
// line) into a SharedArrayBuffer (an ArrayBuffer where a runtime has none: posting it then copies
// it, nothing else changes): posting it to the worker copies nothing, the writer keeps it to
// replay the write should the worker die, and once the worker has committed it the buffer comes
// back to a small pool for the next group. So a group held for its window is neither a JS object
// (held strings outlive two young-generation collections, get promoted and wait for a full one)
// nor a fresh allocation per group (a half-MiB buffer per commit, freed whenever a collection
// finds it, grew malloc's heap by tens of MiB under the bench's load).

/** A pooled buffer's size: a full group (GROUP_MAX_BYTES in logWriter.ts) and the batch that filled it. */
export const STAGE_BYTES = 640 * 1024;
/** SharedArrayBuffer where the runtime has it (posting it copies nothing); an ArrayBuffer otherwise. */
const Backing: new (bytes: number) => ArrayBufferLike = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : ArrayBuffer;

/** Buffers kept for reuse; more in flight than this are let go once committed. */
const POOL_MAX = 3;
const NEWLINE = 0x0a;

/** A group's bytes: `len` bytes of `buffer`, `count` lines. */
export interface StagedLines {
  buffer: ArrayBufferLike;
  len: number;
  count: number;
}

export class LineStage {
  private backing: ArrayBufferLike | null = null;
  private buf: Buffer | null = null;
  private len = 0;
  private count = 0;
  private readonly pool: ArrayBufferLike[] = [];

  /** Entries staged. */
  get entries(): number {
    return this.count;
  }

  /** Bytes staged. */
  get bytes(): number {
    return this.len;
  }

  /** Appends JSON lines (which never hold a raw newline). */
  add(lines: readonly string[]): void {
    for (const line of lines) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit; one more for the newline.
      this.reserve(3 * line.length + 1);
      const buf = this.buf!;
      if (this.len > 0) buf[this.len++] = NEWLINE;
      this.len += buf.write(line, this.len, 'utf8');
    }
    this.count += lines.length;
  }

  /** What is staged (null when nothing is); the stage starts a new buffer after. Hand it back with `reuse` once it is no longer read. */
  take(): StagedLines | null {
    if (this.count === 0) return null;
    const out = { buffer: this.backing!, len: this.len, count: this.count };
    this.backing = null;
    this.buf = null;
    this.len = 0;
    this.count = 0;
    return out;
  }

  /** A buffer `take` handed out, committed: kept for the next group (when of the pool's size). */
  reuse(buffer: ArrayBufferLike): void {
    if (buffer.byteLength === STAGE_BYTES && this.pool.length < POOL_MAX && this.backing !== buffer && !this.pool.includes(buffer)) this.pool.push(buffer);
  }

  /** Lets the pooled buffers go, and the stage's own when it is empty: an idle writer holds none. */
  release(): void {
    this.pool.length = 0;
    if (this.count === 0) {
      this.backing = null;
      this.buf = null;
    }
  }

  private reserve(n: number): void {
    const need = this.len + n;
    if (this.buf && need <= this.buf.length) return;
    const backing = need <= STAGE_BYTES ? (this.pool.pop() ?? new Backing(STAGE_BYTES)) : new Backing(2 ** Math.ceil(Math.log2(need)));
    const buf = Buffer.from(backing);
    if (this.buf) this.buf.copy(buf, 0, 0, this.len);
    const outgrown = this.backing;
    this.backing = backing;
    this.buf = buf;
    // The buffer outgrown is read by no one: back to the pool (reuse keeps out the stage's own).
    if (outgrown) this.reuse(outgrown);
  }
}

/** The lines of a staged group, decoded one at a time (each is garbage once its entry is written). */
export function* linesOf(buffer: ArrayBufferLike, len: number): Generator<string> {
  const buf = Buffer.from(buffer, 0, len);
  let start = 0;
  while (start < len) {
    let end = buf.indexOf(NEWLINE, start);
    if (end < 0) end = len;
    yield buf.toString('utf8', start, end);
    start = end + 1;
  }
}
