// A large request body's top level, read without building the body.
//
// An agent's turn is 40-110 KB of JSON (later in a session, several hundred). Routing a native
// request reads a handful of its top-level members (the model, the stream flag, a session id in
// `metadata`, how many tools), and the attempt sends the client's own bytes. Parsing the whole
// body only to find those built thousands of objects and, worse, copied every string of the body
// into V8's young generation: at 100 KiB the parse and the collections it caused were a third of
// the engine's thread (docs/decisions/lean-25-skeleton.md).
//
// `scanSkeleton` checks every byte against JSON's grammar instead, and keeps only the top level:
// each member's key, the span of its value, and for an array its length. Small members are parsed
// (from their own bytes); the large ones stay bytes until someone asks for them, and then the
// whole body is parsed (proxy/parsedCall.ts).
//
// An agent sends its whole conversation on every turn: with a client's MemberRecall
// (proxy/memberMemory.ts), a large member whose bytes equal one checked before is not checked again,
// and an array that starts like one checked before is checked from where they part.
//
// The rule that keeps this safe: a body it accepts is one JSON.parse accepts, with the same
// top-level members. Anything it is not sure of answers null, and the caller parses the body as
// before, which reports errors in its own words: invalid JSON, nesting deeper than the limit, a
// key written twice (JSON.parse keeps the last), a key with an escape or a non-ASCII byte, more
// than MAX_MEMBERS members.
//
// What it checks, on bytes (a UTF-8 text's syntax is ASCII; inside a string every byte of 0x80 or
// more is allowed, as the decoder turns an invalid sequence into U+FFFD rather than failing):
// whitespace (space, tab, LF, CR), objects and arrays with their commas and colons, strings (no
// byte below 0x20; escapes \" \\ \/ \b \f \n \r \t and \u with four hex digits), numbers
// (-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?), true, false, null, and nothing after the
// top-level object but whitespace.
import { BACKSLASH, isSpace, QUOTE, SHORT_STRING } from './jsonScan';

const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Members whose value takes fewer bytes than this are parsed at once; larger ones wait. */
export const EAGER_MEMBER_MAX_BYTES = 1024;

/**
 * More top-level members than this and the body is parsed whole: each member parsed alone costs a
 * call, and a request has a dozen or two (a body of 100,000 one-byte members would cost twenty
 * times its parse).
 */
export const MAX_MEMBERS = 256;

/** The top level of a JSON object body. */
export interface Skeleton {
  /** Every member, in order: where its value lies, and its length when an array. */
  members: Map<string, MemberSpan>;
  /** The members parsed at once (their value took fewer than EAGER_MEMBER_MAX_BYTES). */
  values: Map<string, unknown>;
}

export interface MemberSpan {
  start: number;
  end: number;
  /** Elements, for an array; -1 for any other value. */
  length: number;
}

/** A large member's value as an earlier scan of the same client's body read it. */
export interface RememberedValue {
  /** The value's bytes: given to `keep`, a view of the scanned body; recalled, the memory's own copy. */
  readonly bytes: Buffer;
  /** Elements, for an array; -1 for any other value. */
  readonly length: number;
  /** For an array: where each element after the first starts, counted from the value's start. */
  readonly marks: readonly number[] | null;
  /** The nesting limit it was checked against (a value is reused only under the same one). */
  readonly maxDepth: number;
}

/**
 * Values of large members read before, by key (proxy/memberMemory.ts). An agent sends its whole
 * conversation again on every turn: the same system prompt and tools, and its messages grown at
 * the end. A member whose bytes equal a remembered value's is not checked again (a string, an
 * object or an array ends where its bytes end, so equal bytes are the same value); an array whose
 * bytes start with a remembered array's first elements is checked from where they end.
 */
export interface MemberRecall {
  /** The values remembered for `key`, most recent first. */
  recall(key: string): readonly RememberedValue[] | undefined;
  /**
   * After a scan that accepted its body: a large member's value, read now (`reused`: it was
   * `value` itself, remembered). A new value's bytes are a view of the scanned body: copy them.
   */
  keep(key: string, value: RememberedValue, reused: boolean): void;
}

/** Members whose value takes at least this many bytes are remembered (the ones left as bytes). */
export const REMEMBERED_MIN_BYTES = 1024;

let reusedBytes = 0;

/** Bytes of bodies accepted from remembered values without being checked again, in this process (for tests and the bench). */
export function rememberedBytesReused(): number {
  return reusedBytes;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);

/** Escapes after a backslash, other than \u: " \ / b f n r t. */
const SIMPLE_ESCAPE = new Uint8Array(128);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

/** Container kinds on the scanner's stack. */
const IN_OBJECT = 1;
const IN_ARRAY = 2;

class Scanner {
  /** The first backslash at or after some earlier position (n: none left). */
  private backslash = -1;
  private readonly stack: Uint8Array;

  constructor(
    private readonly b: Buffer,
    private readonly n: number,
    private readonly maxDepth: number,
  ) {
    this.stack = new Uint8Array(maxDepth + 1);
  }

  space(i: number): number {
    const b = this.b;
    while (i < this.n && isSpace(b[i]!)) i++;
    return i;
  }

  /**
   * Whether [from, to) holds a byte below 0x20 (not allowed in a string). Long ranges are read four
   * bytes at a time through an aligned Int32Array over the same memory: a word holds such a byte
   * exactly when (w - 0x20202020) & ~w & 0x80808080 is not zero.
   */
  private control(from: number, to: number): boolean {
    const b = this.b;
    let k = from;
    if (to - from >= 16) {
      const abs = b.byteOffset + k;
      const lead = (4 - (abs & 3)) & 3;
      for (const end = k + lead; k < end; k++) if (b[k]! < 0x20) return true;
      const words = this.words();
      let w = (b.byteOffset + k - this.wordsOffset) >> 2;
      const wEnd = w + ((to - k) >> 2);
      for (; w < wEnd; w++) {
        const x = words[w]!;
        if ((((x - 0x20202020) | 0) & ~x & 0x80808080) !== 0) return true;
      }
      k = to - ((to - k) & 3);
    }
    for (; k < to; k++) if (b[k]! < 0x20) return true;
    return false;
  }

  private wordView: Int32Array | null = null;
  /** The byte offset in the ArrayBuffer where the word view starts (4-aligned). */
  private wordsOffset = 0;

  private words(): Int32Array {
    if (this.wordView) return this.wordView;
    const b = this.b;
    const start = (b.byteOffset + 3) & ~3;
    const count = (b.byteOffset + this.n - start) >> 2;
    this.wordsOffset = start;
    this.wordView = new Int32Array(b.buffer, start, Math.max(0, count));
    return this.wordView;
  }

  /** The offset past the string that opens at `at` (its bytes checked), or -1. */
  string(at: number): number {
    const b = this.b;
    const n = this.n;
    let i = at + 1;
    let q = -1;
    for (;;) {
      // The next few bytes in JS: short strings (keys, enum values) and the text between two
      // escapes (code with a \n every line) end there without a native call.
      const lim = Math.min(n, i + SHORT_STRING);
      for (; i < lim; i++) {
        const c = b[i]!;
        if (c === QUOTE) return i + 1;
        if (c === BACKSLASH) break;
        if (c < 0x20) return -1;
      }
      if (i >= n) return -1;
      if (b[i] !== BACKSLASH) {
        // A long run: the next quote natively, and the first backslash before it, if any.
        if (q < i) {
          q = b.indexOf(QUOTE, i);
          if (q < 0) return -1;
        }
        if (this.backslash < i) {
          const s = b.indexOf(BACKSLASH, i);
          this.backslash = s < 0 ? n : s;
        }
        const s = this.backslash;
        if (s >= q) return this.control(i, q) ? -1 : q + 1;
        if (this.control(i, s)) return -1;
        i = s;
      }
      // An escape at i.
      const e = b[i + 1];
      if (e === 0x75 /* u */) {
        if (i + 5 >= n || !isHex(b[i + 2]!) || !isHex(b[i + 3]!) || !isHex(b[i + 4]!) || !isHex(b[i + 5]!)) return -1;
        i += 6;
      } else if (e !== undefined && e < 128 && SIMPLE_ESCAPE[e] === 1) {
        i += 2;
      } else {
        return -1;
      }
    }
  }

  /** The offset past the number that starts at `at`, or -1. */
  number(at: number): number {
    const b = this.b;
    let i = at;
    if (b[i] === 0x2d /* - */) i++;
    const first = b[i];
    if (first === 0x30) i++;
    else if (first !== undefined && first >= 0x31 && first <= 0x39) {
      i++;
      while (i < this.n && isDigit(b[i]!)) i++;
    } else return -1;
    if (b[i] === 0x2e /* . */) {
      i++;
      if (i >= this.n || !isDigit(b[i]!)) return -1;
      while (i < this.n && isDigit(b[i]!)) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45 /* e E */) {
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      if (i >= this.n || !isDigit(b[i]!)) return -1;
      while (i < this.n && isDigit(b[i]!)) i++;
    }
    return i;
  }

  private literal(at: number, word: string): number {
    const b = this.b;
    if (at + word.length > this.n) return -1;
    for (let k = 0; k < word.length; k++) if (b[at + k] !== word.charCodeAt(k)) return -1;
    return at + word.length;
  }

  /** A scalar at `at`: the offset past it, or -1 (also for a container's opening). */
  private scalar(at: number, c: number): number {
    if (c === QUOTE) return this.string(at);
    if (c === 0x2d || isDigit(c)) return this.number(at);
    if (c === 0x74) return this.literal(at, 'true');
    if (c === 0x66) return this.literal(at, 'false');
    if (c === 0x6e) return this.literal(at, 'null');
    return -1;
  }

  /** After `value`: the value's length when it is an array, else -1. */
  elements = -1;

  /**
   * Where each element after the first of the array being walked starts (past the comma before it
   * and any space), while `value` or `resumeArray` walks a top-level member's array; null: none kept.
   */
  marks: number[] | null = null;

  /**
   * The value at `at` (no leading space), nested at `depth` (the top-level object is 1): the
   * offset past it, or -1. `this.elements` is then its length when it is an array.
   */
  value(at: number, depth: number): number {
    const b = this.b;
    const c = b[at];
    if (c === undefined) return -1;
    this.elements = -1;
    if (c !== LBRACE && c !== LBRACKET) return this.scalar(at, c);
    // A container: walked without recursion, its own kind on a stack.
    const top = depth + 1;
    if (top > this.maxDepth) return -1;
    this.stack[top] = c === LBRACE ? IN_OBJECT : IN_ARRAY;
    const i = this.space(at + 1);
    // Empty container?
    if (b[i] === (c === LBRACE ? RBRACE : RBRACKET)) {
      if (c === LBRACKET) this.elements = 0;
      return i + 1;
    }
    return this.walk(c === LBRACKET, depth, i, 0);
  }

  /**
   * The array at depth `depth` + 1 whose first `count` (at least one) elements lie before `from`,
   * where the next one starts (the bytes before `from` checked earlier, by a scan of the same
   * bytes): the offset past the array, or -1, as `value` answers.
   */
  resumeArray(depth: number, from: number, count: number): number {
    const top = depth + 1;
    if (top > this.maxDepth || count < 1) return -1;
    this.elements = -1;
    this.stack[top] = IN_ARRAY;
    return this.walk(true, depth, from, count);
  }

  /** The walk of a non-empty container opened at depth `base` + 1, from `i`, at a member or an element. */
  private walk(isArray: boolean, base: number, i: number, count: number): number {
    const b = this.b;
    const n = this.n;
    const stack = this.stack;
    const marks = isArray ? this.marks : null;
    let top = base + 1;
    for (;;) {
      // At a member (in an object: its key first) or an element.
      if (stack[top] === IN_OBJECT) {
        if (b[i] !== QUOTE) return -1;
        i = this.string(i);
        if (i < 0) return -1;
        i = this.space(i);
        if (b[i] !== COLON) return -1;
        i = this.space(i + 1);
      }
      const v = b[i];
      if (v === undefined) return -1;
      if (v === LBRACE || v === LBRACKET) {
        if (top === base + 1) count++;
        top++;
        if (top > this.maxDepth) return -1;
        stack[top] = v === LBRACE ? IN_OBJECT : IN_ARRAY;
        i = this.space(i + 1);
        if (b[i] === (v === LBRACE ? RBRACE : RBRACKET)) {
          top--;
          i++;
        } else continue;
      } else {
        if (top === base + 1) count++;
        i = this.scalar(i, v);
        if (i < 0) return -1;
      }
      // After a value: a comma, or the end of one or more containers.
      for (;;) {
        i = this.space(i);
        const d = b[i];
        if (d === COMMA) {
          i = this.space(i + 1);
          if (marks !== null && top === base + 1) marks.push(i);
          break;
        }
        if (d !== (stack[top] === IN_OBJECT ? RBRACE : RBRACKET)) return -1;
        i++;
        if (top === base + 1) {
          if (isArray) this.elements = count;
          return i;
        }
        top--;
      }
      if (i >= n) return -1;
    }
  }
}

/**
 * The top level of the JSON object in `b`, or null when `b` is not one or holds anything this does
 * not settle (see the header): the caller then parses it whole. `maxDepth` is the deepest nesting
 * of objects and arrays accepted, the top-level object being 1. With `recall`, large members equal
 * to (or, for an array, starting with) a value read before are not checked again, and the large
 * members read are remembered once the whole body is accepted.
 */
export function scanSkeleton(b: Buffer, maxDepth: number, recall?: MemberRecall): Skeleton | null {
  const n = b.length;
  const s = new Scanner(b, n, maxDepth);
  let i = s.space(0);
  if (b[i] !== LBRACE || maxDepth < 1) return null;
  i = s.space(i + 1);
  const members = new Map<string, MemberSpan>();
  const values = new Map<string, unknown>();
  const kept: { key: string; start: number; end: number; length: number; marks: number[] | null; reused: RememberedValue | null }[] = [];
  if (b[i] === RBRACE) return s.space(i + 1) === n ? { members, values } : null;
  for (;;) {
    if (b[i] !== QUOTE) return null;
    const keyEnd = s.string(i);
    if (keyEnd < 0) return null;
    // A plain key only: printable ASCII, no escape.
    for (let k = i + 1; k < keyEnd - 1; k++) {
      const c = b[k]!;
      if (c === BACKSLASH || c > 0x7e) return null;
    }
    const key = b.toString('latin1', i + 1, keyEnd - 1);
    if (members.has(key) || members.size >= MAX_MEMBERS) return null;
    i = s.space(keyEnd);
    if (b[i] !== COLON) return null;
    const start = s.space(i + 1);
    const first = b[start];
    const rememberable = recall !== undefined && (first === QUOTE || first === LBRACE || first === LBRACKET);
    const read = rememberable ? readRemembered(s, b, start, recall.recall(key), maxDepth) : null;
    let end: number;
    let length: number;
    if (read) {
      end = read.end;
      length = read.length;
    } else {
      s.marks = rememberable && first === LBRACKET ? [] : null;
      end = s.value(start, 1);
      length = s.elements;
    }
    if (end < 0) return null;
    members.set(key, { start, end, length });
    if (end - start < EAGER_MEMBER_MAX_BYTES) values.set(key, JSON.parse(b.toString('utf8', start, end)));
    if (rememberable && end - start >= REMEMBERED_MIN_BYTES) kept.push({ key, start, end, length, marks: s.marks, reused: read?.whole ?? null });
    s.marks = null;
    i = s.space(end);
    if (b[i] === RBRACE) {
      if (s.space(i + 1) !== n) return null;
      if (recall) for (const k of kept) recall.keep(k.key, k.reused ?? remembered(b, k, maxDepth), k.reused !== null);
      return { members, values };
    }
    if (b[i] !== COMMA) return null;
    i = s.space(i + 1);
  }
}

/**
 * A member's value read with what was remembered for its key: a remembered value with the same
 * bytes (`whole`), or the elements of the remembered array that start the same way, the rest
 * checked (`s.marks` then holds every element's start, as a scan from `start` would). Null: none
 * applies, scan it.
 */
function readRemembered(
  s: Scanner,
  b: Buffer,
  start: number,
  values: readonly RememberedValue[] | undefined,
  maxDepth: number,
): { end: number; length: number; whole: RememberedValue | null } | null {
  if (!values) return null;
  for (const v of values) {
    if (v.maxDepth !== maxDepth) continue;
    const len = v.bytes.length;
    if (start + len <= b.length && b.compare(v.bytes, 0, len, start, start + len) === 0) {
      reusedBytes += len;
      return { end: start + len, length: v.length, whole: v };
    }
  }
  if (b[start] !== LBRACKET) return null;
  // The longest run of leading elements some remembered array shares: equal bytes up to one of
  // its element starts (equal up to one start means equal up to every earlier one).
  let best: RememberedValue | null = null;
  let bestK = -1;
  for (const v of values) {
    const marks = v.marks;
    if (!marks || marks.length === 0 || v.maxDepth !== maxDepth) continue;
    let lo = 0;
    let hi = marks.length - 1;
    let k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = marks[mid]!;
      if (start + m <= b.length && b.compare(v.bytes, 0, m, start, start + m) === 0) {
        k = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (k >= 0 && (best === null || marks[k]! > best.marks![bestK]!)) {
      best = v;
      bestK = k;
    }
  }
  if (!best) return null;
  const marks = best.marks!;
  reusedBytes += marks[bestK]!;
  s.marks = [];
  for (let k = 0; k <= bestK; k++) s.marks.push(start + marks[k]!);
  // marks[k] is where element k + 2 starts: k + 1 elements lie before it.
  const end = s.resumeArray(1, start + marks[bestK]!, bestK + 1);
  return { end, length: s.elements, whole: null };
}

/**
 * The value in [start, end) to remember, its element starts made relative to it. Its bytes are a
 * view of `b`: `keep` must copy them before `b` changes (memberMemory.ts copies them into its ring).
 */
function remembered(b: Buffer, read: { start: number; end: number; length: number; marks: number[] | null }, maxDepth: number): RememberedValue {
  const { start, marks } = read;
  let rel: number[] | null = null;
  if (marks) {
    rel = new Array<number>(marks.length);
    for (let k = 0; k < marks.length; k++) rel[k] = marks[k]! - start;
  }
  return { bytes: b.subarray(start, read.end), length: read.length, marks: rel, maxDepth };
}
