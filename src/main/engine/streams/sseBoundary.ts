// Where the complete events of an SSE byte stream end. A native stream is forwarded byte for byte,
// but only up to the end of its last complete event: the bytes of an event still in flight are held
// until its blank line arrives. So the client never holds half an event when the stream is cut, and
// an error event or a spliced continuation written after it starts on a clean line.
//
// A blank line is two line terminators in a row (LF, CR or CRLF). "\n\n", "\r\r" and "\r\n\r\n"
// are always blank lines (data cannot hold a raw CR or LF), so finding the last of them never
// splits an event; rarer mixes ("\r\n\n") are found at the next ordinary blank line, which only
// delays bytes, never corrupts them.

const LFLF = Buffer.from('\n\n');
const CRCR = Buffer.from('\r\r');
const CRLFCRLF = Buffer.from('\r\n\r\n');
const CR = 13;
const LF = 10;

/** The index just past the last blank line in `b`, or 0 when it has none. */
export function lastEventEnd(b: Buffer): number {
  // The usual chunk ends exactly on a blank line ("\n\n", or Google's "\r\n\r\n"): no scan at all.
  const n = b.length;
  if (n >= 2 && b[n - 1] === LF && (b[n - 2] === LF || (n >= 4 && b[n - 2] === CR && b[n - 3] === LF && b[n - 4] === CR))) return n;
  let end = 0;
  const lf = b.lastIndexOf(LFLF);
  if (lf >= 0) end = lf + 2;
  // The usual chunk ends exactly on a blank line: nothing after it to look for.
  if (end === b.length) return end;
  // A CR-style blank line can only end later than `end` if there is a CR after it: look only
  // there (a stream with LF blank lines never pays for scanning the whole chunk).
  const from = lf >= 0 ? lf + 1 : 0;
  if (b.indexOf(CR, from) >= 0) {
    const rest = b.subarray(from);
    const crlf = rest.lastIndexOf(CRLFCRLF);
    if (crlf >= 0) end = Math.max(end, from + crlf + 4);
    const cr = rest.lastIndexOf(CRCR);
    if (cr >= 0) end = Math.max(end, from + cr + 2);
  }
  return end;
}

export class SseBoundary {
  private rest: Buffer | null = null;

  /**
   * Feeds one chunk; returns the bytes that complete events (possibly empty), holding the rest.
   * `limit`: the most bytes an unfinished event may hold (a server that never sends a blank line).
   */
  push(chunk: Buffer): Buffer {
    const b = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    const end = lastEventEnd(b);
    if (end === b.length) {
      this.rest = null;
      return b;
    }
    this.rest = b.subarray(end);
    return b.subarray(0, end);
  }

  /** Bytes of the event still in flight. */
  get held(): number {
    return this.rest?.length ?? 0;
  }

  /** The stream ended: whatever is left (an event without its blank line). */
  end(): Buffer | null {
    const r = this.rest;
    this.rest = null;
    return r;
  }
}
