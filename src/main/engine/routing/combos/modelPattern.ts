// Model-id patterns for mappings and per-model deadlines: `*` matches any run of characters
// (slashes included, since model ids are not paths) and `?` exactly one; everything else is
// literal and case-insensitive. When several patterns match, the most specific wins: the one with
// the most literal characters, then the one created first. (A path-glob library would treat "/"
// specially, which is wrong here, and two wildcards do not need one.)
//
// No regular expression: a pattern is cut at its stars into segments, and the segments are found
// in the model id left to right, each at its earliest place. With only `*` between them, the
// earliest place is always a right choice (it leaves the most room for what follows), so there
// is nothing to backtrack: a match costs at most (model length × pattern length) comparisons, and
// both lengths are bounded (shared/modelIds.ts). A pattern with many stars costs no more than one
// with few.

export interface CompiledPattern {
  pattern: string;
  /** Literal characters: the more, the more specific. */
  specificity: number;
  /** The pattern lower-cased and cut at its stars (runs of stars are one). */
  segments: readonly string[];
  /** Whether `model` matches the pattern. */
  test(model: string): boolean;
}

const QUESTION = 63;

/** Lower-cases ASCII letters only, one code unit for one (so positions stay put). */
export function foldModelId(s: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s.toLowerCase();
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : s[i];
  }
  return out;
}

/** Whether `seg` (literals and `?`) matches `text` at `at`. */
function segmentAt(text: string, at: number, seg: string): boolean {
  for (let j = 0; j < seg.length; j++) {
    const p = seg.charCodeAt(j);
    if (p !== QUESTION && p !== text.charCodeAt(at + j)) return false;
  }
  return true;
}

/** The earliest index ≥ `from` where `seg` matches `text` and ends by `end`, or -1. */
function findSegment(text: string, from: number, end: number, seg: string): number {
  for (let i = from; i + seg.length <= end; i++) if (segmentAt(text, i, seg)) return i;
  return -1;
}

/** Whether `text` (already folded) matches the pattern cut into `segments` at its stars. */
function matchSegments(text: string, segments: readonly string[]): boolean {
  const n = text.length;
  if (segments.length === 1) {
    const only = segments[0]!;
    return only.length === n && segmentAt(text, 0, only);
  }
  const first = segments[0]!;
  const last = segments[segments.length - 1]!;
  // The fixed head and tail must fit without overlapping.
  if (first.length + last.length > n) return false;
  if (!segmentAt(text, 0, first) || !segmentAt(text, n - last.length, last)) return false;
  let pos = first.length;
  const end = n - last.length;
  for (let k = 1; k < segments.length - 1; k++) {
    const seg = segments[k]!;
    const at = findSegment(text, pos, end, seg);
    if (at < 0) return false;
    pos = at + seg.length;
  }
  return true;
}

export function compilePattern(pattern: string): CompiledPattern {
  let literal = 0;
  for (const c of pattern) if (c !== '*' && c !== '?') literal++;
  // Runs of stars are one star; empty middle segments match anywhere and are dropped.
  const parts = foldModelId(pattern).split('*');
  const segments = parts.length <= 2 ? parts : [parts[0]!, ...parts.slice(1, -1).filter((s) => s !== ''), parts[parts.length - 1]!];
  return { pattern, specificity: literal, segments, test: (model) => matchSegments(foldModelId(model), segments) };
}

/** Whether a model id already folded (`foldModelId`) matches: for trying many patterns on one id. */
export function matchesFolded(compiled: CompiledPattern, folded: string): boolean {
  return matchSegments(folded, compiled.segments);
}

/** The most specific of `patterns` (in creation order) that matches `model`, or null. */
export function bestMatch<P extends { compiled: CompiledPattern }>(patterns: readonly P[], model: string): P | null {
  let best: P | null = null;
  const folded = foldModelId(model);
  for (const p of patterns) {
    if (best !== null && p.compiled.specificity <= best.compiled.specificity) continue;
    if (matchesFolded(p.compiled, folded)) best = p;
  }
  return best;
}
