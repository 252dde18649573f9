// JSON.parse of UTF-8 bytes, without decoding the whole text through V8's UTF-8 decoder.
//
// Node 20 decodes UTF-8 one byte at a time from the first non-ASCII byte on: a 110 KB Claude Code
// request (system prompt and tool descriptions with a few em dashes, then tool results) costs about
// 300 us to decode, more than twice its parse. Most of such a body is ASCII (code, tool output,
// JSON schemas), so it is parsed as Latin-1 instead (each byte one character, a plain copy) and
// only the strings that hold a byte of 0x80 or more are decoded again, from their own bytes. That
// gives the same value as decoding first, because:
//   - outside strings, JSON's syntax is ASCII; a non-ASCII byte there fails either way;
//   - in UTF-8 no ASCII byte is part of a multi-byte sequence, so the decoder never joins bytes
//     across a quote or an escape, and decoding each string's bytes alone gives what decoding the
//     whole text gives (invalid sequences included: U+FFFD for each, as Buffer#toString does);
//   - a character of 0x80 or more in a Latin-1 parse came from a raw byte, unless an escape
//     (\u0080 and up) made it: a text with such an escape is decoded first, as before.
// Also decoded first, as before: a text dense in non-ASCII bytes (DENSITY_WINDOWS), and one with a
// key that needs decoding (rare: a non-ASCII property name).
// See docs/decisions/lean-25-agent-bodies.md.
import { isAscii } from 'node:buffer';

/**
 * A text is dense in non-ASCII bytes, and decoded first, when more than half of these windows,
 * spread evenly over it, hold one: the share of the text that the Latin-1 parse would decode again
 * anyway, estimated without reading it all. Measured in the engine: a Claude Code-shaped request
 * (its tool results ASCII) gains; a conversation in accents and CJK (a non-ASCII byte every few
 * dozen) and a request that is only Claude Code's prompt and tools do not.
 */
export const DENSITY_WINDOWS = 16;
export const DENSITY_WINDOW_BYTES = 256;

/** Whether most of the sampled windows of `buf` hold a non-ASCII byte (see DENSITY_WINDOWS). */
export function denseInNonAscii(buf: Buffer): boolean {
  if (buf.length <= DENSITY_WINDOWS * DENSITY_WINDOW_BYTES) return !isAscii(buf);
  const step = Math.floor((buf.length - DENSITY_WINDOW_BYTES) / (DENSITY_WINDOWS - 1));
  let wide = 0;
  for (let w = 0; w < DENSITY_WINDOWS; w++) {
    const at = w * step;
    if (!isAscii(buf.subarray(at, at + DENSITY_WINDOW_BYTES))) wide++;
  }
  return wide * 2 > DENSITY_WINDOWS;
}

/** Nesting this deep is left to the plain path (whose caller refuses it): the walk stays bounded. */
const WALK_MAX_DEPTH = 256;

/** The JSON value of the UTF-8 bytes `buf` (throws JSON.parse's SyntaxError, worded as for the decoded text). */
export function parseUtf8Json(buf: Buffer): unknown {
  if (isAscii(buf)) return JSON.parse(buf.toString('latin1'));
  // A text dense in non-ASCII bytes gains nothing (nearly every string would be decoded again):
  // decode it first, before making its Latin-1 copy.
  if (denseInNonAscii(buf)) return JSON.parse(buf.toString('utf8'));
  const text = buf.toString('latin1');
  if (hasWideEscape(text)) return JSON.parse(buf.toString('utf8'));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Parse again from the decoded text, so that the error names the right character.
    return JSON.parse(buf.toString('utf8'));
  }
  if (typeof value === 'string') return needsDecoding(value) ? decoded(value) : value;
  return redecode(value, WALK_MAX_DEPTH) ? value : JSON.parse(buf.toString('utf8'));
}

/** Whether the text holds an escape `\uXXXX` of 0x80 or more (or a malformed one). */
function hasWideEscape(text: string): boolean {
  for (let i = text.indexOf('\\u'); i >= 0; i = text.indexOf('\\u', i + 2)) {
    const code = Number.parseInt(text.slice(i + 2, i + 6), 16);
    if (!(code < 0x80)) return true;
  }
  return false;
}

/** A Latin-1 string holds a character of 0x80 or more exactly when its UTF-8 form is longer. */
const needsDecoding = (s: string): boolean => Buffer.byteLength(s, 'utf8') !== s.length;

const decoded = (s: string): string => Buffer.from(s, 'latin1').toString('utf8');

/**
 * Decodes, in place, every string of the Latin-1-parsed `value` that holds a non-ASCII byte.
 * False when the value cannot be mended in place (a key to decode, or nesting beyond `depth`); the
 * caller then parses the decoded text. (An own `__proto__` member, as JSON.parse makes it, is
 * assigned as any other: the assignment finds the own property before Object.prototype's setter.)
 */
function redecode(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth <= 0) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v === 'string') {
        if (needsDecoding(v)) value[i] = decoded(v);
      } else if (!redecode(v, depth - 1)) return false;
    }
    return true;
  }
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (needsDecoding(k)) return false;
    const v = o[k];
    if (typeof v === 'string') {
      if (needsDecoding(v)) o[k] = decoded(v);
    } else if (!redecode(v, depth - 1)) return false;
  }
  return true;
}
