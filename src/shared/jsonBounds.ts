// Bounds on JSON input, shared by the proxy, the management boundary and the contract's schemas:
// how deep a parsed value nests, whether it holds a key that reaches an object's prototype, and
// whether a free-form value is plain JSON within a depth and a serialised size. Pure, no I/O.
//
// JSON.parse itself does not recurse (V8 parses a million levels), but JSON.stringify and
// structuredClone do and overflow the stack at a few thousand levels, so a deep value must be
// refused before anything serialises or clones it.

/** Deepest nesting the proxy accepts in a request body. Agent traffic (tool schemas included) stays far below. */
export const PROXY_JSON_MAX_DEPTH = 128;
/** Deepest nesting the management API accepts in a request body or input field. */
export const MANAGEMENT_JSON_MAX_DEPTH = 32;

/** Keys that reach an object's prototype when assigned; never valid in any input. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * True when `value` nests arrays/objects deeper than `limit` (a scalar is depth 0, `{}` and `[]`
 * are depth 1). Recursion stops at the limit, so it is safe on any input.
 */
export function jsonTooDeep(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (jsonTooDeep(value[i], limit - 1)) return true;
    return false;
  }
  for (const k of Object.keys(value)) if (jsonTooDeep((value as Record<string, unknown>)[k], limit - 1)) return true;
  return false;
}

/**
 * The path of the first key named `__proto__`, `constructor` or `prototype` (own keys, at any
 * depth up to `maxDepth`), or null.
 */
export function prototypeKeyPath(value: unknown, maxDepth: number, path: string[] = []): string[] | null {
  if (value === null || typeof value !== 'object' || path.length >= maxDepth) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = prototypeKeyPath(value[i], maxDepth, [...path, String(i)]);
      if (p) return p;
    }
    return null;
  }
  for (const k of Object.keys(value)) {
    if (PROTOTYPE_KEYS.has(k)) return [...path, k];
    const p = prototypeKeyPath((value as Record<string, unknown>)[k], maxDepth, [...path, k]);
    if (p) return p;
  }
  return null;
}

export interface JsonLimits {
  /** Deepest nesting, the value itself counting as level 1 when it is an object or array. */
  maxDepth: number;
  /** Longest serialised form, in characters of JSON text. */
  maxChars: number;
}

/**
 * Why a free-form value is not plain JSON within the limits (a message fit for a field error), or
 * null when it is. Plain JSON: null, booleans, finite numbers, strings, arrays and plain objects,
 * without prototype keys (an undefined field is let through: serialising leaves it out).
 */
export function jsonValueProblem(value: unknown, limits: JsonLimits): string | null {
  const problem = walk(value, 0, limits, { chars: 0 });
  if (problem) return problem;
  // The walk's count is a lower bound (escapes are not counted), so measure the real text too.
  if ((JSON.stringify(value) ?? '').length > limits.maxChars) return tooLarge(limits.maxChars);
  return null;
}

const tooLarge = (max: number) => `is larger than ${max} characters of JSON`;

function walk(v: unknown, depth: number, limits: JsonLimits, budget: { chars: number }): string | null {
  switch (typeof v) {
    case 'string':
      budget.chars += v.length + 2;
      break;
    case 'number':
      if (!Number.isFinite(v)) return 'holds a number JSON cannot carry (NaN or Infinity)';
      budget.chars += 1;
      break;
    case 'boolean':
      budget.chars += 4;
      break;
    case 'undefined':
      // What JSON.stringify leaves out (an IPC caller may send `{ field: undefined }`).
      break;
    case 'object': {
      if (v === null) {
        budget.chars += 4;
        break;
      }
      if (depth >= limits.maxDepth) return `nests deeper than ${limits.maxDepth} levels`;
      budget.chars += 2;
      if (Array.isArray(v)) {
        for (const x of v) {
          const p = walk(x, depth + 1, limits, budget);
          if (p) return p;
          budget.chars += 1;
        }
        break;
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) return 'holds a value that is not plain JSON';
      for (const k of Object.keys(v)) {
        if (PROTOTYPE_KEYS.has(k)) return `has a key named "${k}"`;
        budget.chars += k.length + 4;
        const p = walk((v as Record<string, unknown>)[k], depth + 1, limits, budget);
        if (p) return p;
      }
      break;
    }
    default:
      return 'holds a value that is not plain JSON';
  }
  return budget.chars > limits.maxChars ? tooLarge(limits.maxChars) : null;
}
