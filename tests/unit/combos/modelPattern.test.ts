// Mapping and deadline patterns: a glob matcher with no backtracking (no regular expression is
// built from a pattern), the same answers as the glob's regular expression on short inputs, and the
// complexity bounds a saved pattern and a model id at the door must keep.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compilePattern } from '../../../src/main/engine/routing/combos/modelPattern';
import {
  MODEL_ID_MAX_LENGTH,
  MODEL_PATTERN_MAX_WILDCARDS,
  modelFromHeader,
  modelHeaderValue,
  modelIdProblem,
  modelPatternProblem,
} from '../../../src/shared/modelIds';

describe('the glob matcher', () => {
  afterEach(() => vi.restoreAllMocks());

  it('never builds a regular expression from a pattern', () => {
    const ctor = vi.spyOn(globalThis, 'RegExp');
    const p = compilePattern('*-*-*-latest');
    expect(p.test('a-b-c-latest')).toBe(true);
    expect(p.test('a-b-latest')).toBe(false);
    expect(ctor).not.toHaveBeenCalled();
  });

  it('answers the pathological cases of a backtracking engine', () => {
    // A backtracking regex spends seconds (three wildcards) to minutes (forty) on these.
    const long = 'a-'.repeat(1500);
    expect(compilePattern('*-*-*-latest').test(long)).toBe(false);
    expect(compilePattern('*-*-*-latest').test(`${long}latest`)).toBe(true);
    const forty = `${'*a'.repeat(20)}*b`;
    expect(compilePattern(forty).test('a'.repeat(3000))).toBe(false);
    expect(compilePattern(forty).test(`${'a'.repeat(3000)}b`)).toBe(true);
  });

  it('* spans any run, ? one character, literals case-insensitively, runs of stars are one', () => {
    const cases: [string, string, boolean][] = [
      ['*', '', true],
      ['?', '', false],
      ['a**b', 'ab', true],
      ['a*b*c', 'abbbc', true],
      ['a*b*c', 'acb', false],
      ['*ab', 'aab', true],
      ['ab*', 'ab', true],
      ['a*a', 'a', false],
      ['?*?', 'xy', true],
      ['gpt-?o*', 'GPT-4O-mini', true],
      ['claude-*-4-?', 'claude-opus-4-1', true],
      ['*/*', 'openrouter/x', true],
      ['*/*', 'no-slash', false],
      ['*é*', 'café', true],
    ];
    for (const [pattern, model, want] of cases) expect(compilePattern(pattern).test(model), `${pattern} ~ ${model}`).toBe(want);
  });
});

describe('bounds on patterns and model ids', () => {
  it('a pattern may hold at most 16 wildcards, and says so', () => {
    expect(modelPatternProblem('?'.repeat(MODEL_PATTERN_MAX_WILDCARDS))).toBeNull();
    expect(modelPatternProblem(`${'*a'.repeat(MODEL_PATTERN_MAX_WILDCARDS)}?`)).toMatch(/at most 16 wildcards .* this one has 17/);
    expect(modelPatternProblem('a'.repeat(201))).toMatch(/at most 200 characters/);
  });

  it('a model id is at most 256 characters without control characters or broken ones', () => {
    expect(modelIdProblem('claude-sonnet-4-5-20250929')).toBeNull();
    expect(modelIdProblem('hf.co/user/repo:Q4_K_M')).toBeNull();
    expect(modelIdProblem('modèle-🚀')).toBeNull();
    expect(modelIdProblem('m'.repeat(MODEL_ID_MAX_LENGTH))).toBeNull();
    expect(modelIdProblem('m'.repeat(MODEL_ID_MAX_LENGTH + 1))).toMatch(/longer than 256/);
    for (const bad of ['a\r\nx-injected: 1', 'a\u0000b', 'tab\there', 'del\u007f', 'sep\u2028']) {
      expect(modelIdProblem(bad), JSON.stringify(bad)).toMatch(/control character/);
    }
    expect(modelIdProblem('half\ud83d')).toMatch(/broken/);
    expect(modelIdProblem('  ')).toMatch(/needs a "model"/);
  });

  it('a model id in a header is printable ASCII, encoded when it must be, and reads back', () => {
    expect(modelHeaderValue('claude-opus-4-1')).toBe('claude-opus-4-1');
    for (const id of ['modèle-🚀', '50%-off', 'a b', 'x\r\ny']) {
      const v = modelHeaderValue(id)!;
      expect(v).toMatch(/^[\x21-\x7e]+$/);
      expect(modelFromHeader(v)).toBe(id);
    }
    expect(modelHeaderValue('🚀'.repeat(2000))).toBeNull();
    expect(modelHeaderValue('half\ud83d')).toBeNull();
  });
});
