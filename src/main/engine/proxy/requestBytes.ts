// A request body's bytes as the proxy keeps them: one buffer, or a large body's socket chunks left
// unjoined. Joining an agent-sized body costs a second copy of it outside V8's heap, which V8
// counts toward its next full collection (docs/decisions/lean-25-agent-bodies.md); the chunks are
// kept anyway until the request ends, so the join was the only copy that could go. These helpers
// read the chunks as one sequence of bytes: length, one contiguous view, and slices.

/** One buffer, or (bodies of proxy/body.ts CHUNKED_MIN_BYTES or more) the socket's chunks in order. */
export type RequestBytes = Buffer | readonly Buffer[];

export function byteLengthOf(b: RequestBytes): number {
  if (Buffer.isBuffer(b)) return b.length;
  let n = 0;
  for (const c of b) n += c.length;
  return n;
}

/** Up to this size a chunked body is joined into one reused buffer, so the join allocates nothing. */
export const SCRATCH_MAX_BYTES = 1024 * 1024;
let scratch: Buffer | null = null;

/**
 * The bytes as one buffer, to be read at once: a chunked body is copied into a buffer that the
 * next call reuses (a character split across two chunks must be decoded whole). Beyond
 * SCRATCH_MAX_BYTES, a copy of its own.
 */
export function contiguousView(b: RequestBytes): Buffer {
  if (Buffer.isBuffer(b)) return b;
  if (b.length === 1) return b[0]!;
  const n = byteLengthOf(b);
  if (n > SCRATCH_MAX_BYTES) return Buffer.concat(b, n);
  if (!scratch || scratch.length < n) scratch = Buffer.allocUnsafeSlow(Math.min(SCRATCH_MAX_BYTES, Math.max(64 * 1024, 2 ** Math.ceil(Math.log2(n)))));
  let at = 0;
  for (const c of b) at += c.copy(scratch, at);
  return scratch.subarray(0, n);
}

/** The bytes in [from, to) as views of the original buffers (no copy), in order. */
export function partsOf(b: RequestBytes, from: number, to = Number.POSITIVE_INFINITY): Buffer[] {
  const chunks = Buffer.isBuffer(b) ? [b] : b;
  const out: Buffer[] = [];
  let base = 0;
  for (const c of chunks) {
    const lo = Math.max(from - base, 0);
    const hi = Math.min(to - base, c.length);
    if (hi > lo) out.push(lo === 0 && hi === c.length ? c : c.subarray(lo, hi));
    base += c.length;
    if (base >= to) break;
  }
  return out;
}
