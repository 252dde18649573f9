// Model-id patterns for mappings: `*` matches any run of characters (slashes included, since
// model ids are not paths) and `?` exactly one; everything else is literal and case-insensitive.
// When several patterns match, the most specific wins: the one with the most literal characters,
// then the one created first. (A path-glob library would treat "/" specially, which is wrong here,
// and two wildcards do not need one.)

export interface CompiledPattern {
  pattern: string;
  re: RegExp;
  /** Literal characters: the more, the more specific. */
  specificity: number;
}

const escape = (c: string) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function compilePattern(pattern: string): CompiledPattern {
  let src = '';
  let literal = 0;
  for (const c of pattern) {
    if (c === '*') src += '.*';
    else if (c === '?') src += '.';
    else {
      src += escape(c);
      literal++;
    }
  }
  return { pattern, re: new RegExp(`^${src}$`, 'i'), specificity: literal };
}

/** The most specific of `patterns` (in creation order) that matches `model`, or null. */
export function bestMatch<P extends { compiled: CompiledPattern }>(patterns: readonly P[], model: string): P | null {
  let best: P | null = null;
  for (const p of patterns) {
    if (best !== null && p.compiled.specificity <= best.compiled.specificity) continue;
    if (p.compiled.re.test(model)) best = p;
  }
  return best;
}
