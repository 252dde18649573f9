// Bounds on model ids and model-id patterns, shared by the proxy's door, the contract's mapping
// schema and the per-model deadline setting; and the one encoding of a model id written into a
// response header. Pure, no I/O.
//
// Matching is linear in the model id for a fixed pattern (routing/combos/modelPattern.ts), so these
// bounds are what keeps its worst case small: a pattern of 200 characters against a model id of
// 256 is at most about fifty thousand character comparisons.
import type { z } from 'zod';

/** Longest model id the proxy accepts (UTF-16 code units). Real ids stay well under 100. */
export const MODEL_ID_MAX_LENGTH = 256;
/** Longest mapping or deadline pattern. */
export const MODEL_PATTERN_MAX_LENGTH = 200;
/** Most wildcards (`*` and `?` together) one pattern may hold. */
export const MODEL_PATTERN_MAX_WILDCARDS = 16;

// C0 and C1 control characters, DEL, and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// A lone surrogate: half a character, which no encoder can write back out.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `model` cannot be a model id at the proxy's door, or null when it can. */
export function modelIdProblem(model: string): string | null {
  if (model.trim() === '') return 'the request needs a "model" string';
  if (model.length > MODEL_ID_MAX_LENGTH) return `the model id is longer than ${MODEL_ID_MAX_LENGTH} characters`;
  if (CONTROL.test(model)) return 'the model id contains a control character';
  if (LONE_SURROGATE.test(model)) return 'the model id contains a broken Unicode character';
  return null;
}

/** How many wildcards (`*` and `?`) `pattern` holds. */
export function wildcardCount(pattern: string): number {
  let n = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charCodeAt(i);
    if (c === 42 || c === 63) n++;
  }
  return n;
}

/** Why `pattern` is too complex to save, or null. (Its characters are the schema's business.) */
export function modelPatternProblem(pattern: string): string | null {
  if (pattern.length > MODEL_PATTERN_MAX_LENGTH) return `a pattern may be at most ${MODEL_PATTERN_MAX_LENGTH} characters long`;
  const n = wildcardCount(pattern);
  if (n > MODEL_PATTERN_MAX_WILDCARDS) {
    return `a pattern may hold at most ${MODEL_PATTERN_MAX_WILDCARDS} wildcards (* and ? together); this one has ${n}`;
  }
  return null;
}

/** A schema refinement: the complexity bound as a validation issue naming it. */
export function refinePattern(pattern: string, ctx: z.RefinementCtx): void {
  const why = modelPatternProblem(pattern);
  if (why) ctx.addIssue({ code: 'custom', message: why });
}

/** Longest header value written for a model id; a longer encoding is left out rather than sent. */
export const MODEL_HEADER_MAX_LENGTH = 4096;

// What Node writes into a header without complaint and every client reads back unchanged:
// printable ASCII but the space (a client trims it at either end). '%' is encoded too, so a value
// holding '%' is always an encoded one.
const HEADER_SAFE = /^[\x21-\x24\x26-\x7e]*$/;

/**
 * A model id as a response header value: unchanged when it is printable ASCII without '%' or spaces, else
 * percent-encoded (UTF-8). Null when the result would be too long, or the id cannot be encoded
 * (a lone surrogate): the header is then left out. Never throws.
 */
export function modelHeaderValue(model: string): string | null {
  let v = model;
  if (!HEADER_SAFE.test(v)) {
    try {
      v = encodeURIComponent(v);
    } catch {
      return null;
    }
  }
  return v.length <= MODEL_HEADER_MAX_LENGTH ? v : null;
}

/** The model id a `modelHeaderValue` header carries (the raw value when it does not decode). */
export function modelFromHeader(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
