// Where a top-level member's value lies in a JSON text's bytes, found without parsing it.
//
// The proxy rewrites a request's `model` by splicing the raw bytes (proxy/body.ts), which needs the
// value's exact span. Searching for the bytes `"model"` is not enough: Claude Code's tool schemas
// name a `model` parameter, so its every request holds the key more than once, and a body whose
// key was found twice used to be serialised again whole (about a millisecond for 100 KiB). This
// walks the top-level object instead: a string is skipped to its closing quote (Buffer#indexOf for
// long ones), a nested value by counting brackets outside strings. The text is valid JSON (it was
// parsed first); anything unexpected answers null and the caller re-serialises.

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
/** JSON's whitespace: space, LF, CR, tab. */
export const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Bytes looked at one at a time for a string's closing quote before it is searched natively. */
export const SHORT_STRING = 32;

/**
 * The offset just past the closing quote of the string that opens at `at`, or -1. A quote closes
 * the string unless an odd run of backslashes stands right before it (backslashes pair up from the
 * run's start, and the run cannot reach back past the opening quote), so escapes are never stepped
 * through: only quotes are looked for.
 */
export function endOfString(b: Buffer, at: number): number {
  let i = at + 1;
  for (;;) {
    let q = -1;
    const lim = Math.min(b.length, i + SHORT_STRING);
    for (let k = i; k < lim; k++) {
      if (b[k] === QUOTE) {
        q = k;
        break;
      }
    }
    if (q < 0) {
      if (lim >= b.length) return -1;
      q = b.indexOf(QUOTE, lim);
      if (q < 0) return -1;
    }
    let slashes = 0;
    while (b[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** A value's bytes: [start, end). */
export type ValueSpan = readonly [start: number, end: number];

/**
 * The spans of the values of the top-level members whose key is written exactly as `key` (an
 * escaped spelling of the same name does not match), in order; null when the text does not start
 * with an object or is not JSON as expected. Once a match is found and the key's bytes occur
 * nowhere after it, the rest is not read (the text was parsed before: it is valid JSON).
 */
export function topLevelValueSpans(b: Buffer, key: Buffer): ValueSpan[] | null {
  const out: ValueSpan[] = [];
  let i = 0;
  while (isSpace(b[i])) i++;
  if (b[i] !== 0x7b /* { */) return null;
  i++;
  while (isSpace(b[i])) i++;
  if (b[i] === 0x7d /* } */) return out;
  for (;;) {
    if (b[i] !== QUOTE) return null;
    const keyStart = i;
    i = endOfString(b, i);
    if (i < 0) return null;
    const matches = i - keyStart === key.length && b.compare(key, 0, key.length, keyStart, i) === 0;
    while (isSpace(b[i])) i++;
    if (b[i] !== 0x3a /* : */) return null;
    i++;
    while (isSpace(b[i])) i++;
    const start = i;
    i = endOfValue(b, i);
    if (i < 0) return null;
    if (matches) {
      out.push([start, i]);
      // No later occurrence of the key's bytes at all: nothing after this can be another one.
      if (b.indexOf(key, i) < 0) return out;
    }
    while (isSpace(b[i])) i++;
    if (b[i] === 0x7d) return out;
    if (b[i] !== 0x2c /* , */) return null;
    i++;
    while (isSpace(b[i])) i++;
  }
}

/** The offset just past the value that starts at `at` (no trailing space), or -1. */
function endOfValue(b: Buffer, at: number): number {
  const first = b[at];
  if (first === QUOTE) return endOfString(b, at);
  if (first !== 0x7b && first !== 0x5b) {
    // A number or a literal: up to the next delimiter.
    let i = at;
    while (i < b.length && b[i] !== 0x2c && b[i] !== 0x7d && b[i] !== 0x5d && !isSpace(b[i])) i++;
    return i > at ? i : -1;
  }
  let depth = 0;
  let i = at;
  while (i < b.length) {
    const c = b[i]!;
    if (c === QUOTE) {
      i = endOfString(b, i);
      if (i < 0) return -1;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return -1;
}
