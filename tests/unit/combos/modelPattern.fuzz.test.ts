// Property-based checks of the glob matcher (fast-check, seeded and bounded): on short inputs it
// answers exactly what the glob's regular expression answers, and a pattern within the saved
// bounds never makes a model id within the door's bounds throw.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePattern } from '../../../src/main/engine/routing/combos/modelPattern';
import { MODEL_ID_MAX_LENGTH, MODEL_PATTERN_MAX_LENGTH, modelPatternProblem } from '../../../src/shared/modelIds';

const SEED = 21_021;

/** The reference: the glob as an anchored, case-insensitive regular expression (short inputs only). */
function oracle(pattern: string, model: string): boolean {
  let src = '';
  for (const c of pattern) src += c === '*' ? '[\\s\\S]*' : c === '?' ? '[\\s\\S]' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${src}$`, 'i').test(model);
}

const chars = (alphabet: string, maxLength: number) => fc.string({ unit: fc.constantFrom(...alphabet), maxLength });

describe('glob matcher against a regular-expression oracle', () => {
  it('agrees on short patterns and ids over a small alphabet (where the tricky overlaps happen)', () => {
    fc.assert(
      fc.property(chars('ab-*?', 10), chars('abAB-', 14), (pattern, model) => {
        expect(compilePattern(pattern).test(model)).toBe(oracle(pattern, model));
      }),
      { seed: SEED, numRuns: 3_000 },
    );
  });

  it('agrees when the id is built to match (the pattern with its wildcards filled in)', () => {
    const filled = chars('xy-*?.', 12).chain((pattern) =>
      fc.tuple(
        fc.constant(pattern),
        fc.array(chars('xyXY-./', 4), { minLength: pattern.length, maxLength: pattern.length }).map((fills) =>
          [...pattern].map((c, i) => (c === '*' ? fills[i]! : c === '?' ? (fills[i]![0] ?? 'q') : c.toUpperCase())).join(''),
        ),
      ),
    );
    fc.assert(
      fc.property(filled, ([pattern, model]) => {
        expect(oracle(pattern, model)).toBe(true);
        expect(compilePattern(pattern).test(model)).toBe(true);
      }),
      { seed: SEED, numRuns: 1_000 },
    );
  });

  it('any pattern within the saved bounds against any id within the door\'s bounds answers a boolean', () => {
    const pattern = chars('ab-*?/.:', MODEL_PATTERN_MAX_LENGTH).filter((p) => modelPatternProblem(p) === null);
    const model = fc.oneof(fc.string({ unit: 'grapheme', maxLength: MODEL_ID_MAX_LENGTH }), chars('ab-', MODEL_ID_MAX_LENGTH));
    fc.assert(
      fc.property(pattern, model, (p, m) => {
        expect(typeof compilePattern(p).test(m.slice(0, MODEL_ID_MAX_LENGTH))).toBe('boolean');
      }),
      { seed: SEED, numRuns: 500 },
    );
  });
});
