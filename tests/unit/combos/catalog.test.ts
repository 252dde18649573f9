// The model catalog (context windows and prices, built-in plus settings) and mapping patterns.
import { describe, expect, it } from 'vitest';
import { ModelCatalog } from '../../../src/main/engine/routing/combos/modelCatalog';
import { bestMatch, compilePattern } from '../../../src/main/engine/routing/combos/modelPattern';

describe('ModelCatalog', () => {
  const c = new ModelCatalog();

  it('covers dated and tagged ids by their longest known prefix', () => {
    expect(c.contextWindow('claude-sonnet-4-5-20250929')).toBe(200_000);
    expect(c.contextWindow('claude-3-5-haiku-20241022')).toBe(200_000);
    expect(c.price('claude-3-5-haiku-20241022')).toEqual({ input: 0.8, output: 4 });
    expect(c.price('gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(c.price('gpt-4o-2024-08-06')).toEqual({ input: 2.5, output: 10 });
    expect(c.contextWindow('anthropic/claude-opus-4-1')).toBe(200_000);
  });

  it('never lets a prefix cover a different model', () => {
    expect(c.contextWindow('gpt-4.1')).toBe(1_047_576);
    expect(c.contextWindow('gpt-4')).toBe(8_192);
    expect(c.contextWindow('gpt-4x')).toBeNull();
    expect(c.contextWindow('my-local-model')).toBeNull();
  });

  it('settings override and extend the built-in table', () => {
    const o = new ModelCatalog({ contextWindows: { 'gpt-4o': 64_000, 'my-local': 32_768 }, modelPrices: { 'my-local': { input: 0, output: 0 } } });
    expect(o.contextWindow('gpt-4o-2024-08-06')).toBe(64_000);
    expect(o.contextWindow('my-local:7b')).toBe(32_768);
    expect(o.price('my-local')).toEqual({ input: 0, output: 0 });
    expect(o.entries().find((e) => e.model === 'my-local')).toMatchObject({ source: 'setting' });
  });
});

describe('model patterns', () => {
  it('* matches any run (slashes too), ? one character, case-insensitively', () => {
    expect(compilePattern('claude-*').test('claude-sonnet-4-5-20250929')).toBe(true);
    expect(compilePattern('claude-*').test('Claude-Opus-4-1')).toBe(true);
    expect(compilePattern('*/gpt-4o').test('openrouter/openai/gpt-4o')).toBe(true);
    expect(compilePattern('gpt-?').test('gpt-5')).toBe(true);
    expect(compilePattern('gpt-?').test('gpt-5-mini')).toBe(false);
    expect(compilePattern('gpt-4.1').test('gpt-401')).toBe(false);
  });

  it('the most specific matching pattern wins, then the first created', () => {
    const list = ['claude-*', 'claude-3-5-haiku-*', '*haiku*', 'claude-*-4-1'].map((p) => ({ compiled: compilePattern(p) }));
    expect(bestMatch(list, 'claude-3-5-haiku-20241022')?.compiled.pattern).toBe('claude-3-5-haiku-*');
    expect(bestMatch(list, 'claude-opus-4-1')?.compiled.pattern).toBe('claude-*-4-1');
    expect(bestMatch(list, 'claude-sonnet-4-5')?.compiled.pattern).toBe('claude-*');
    expect(bestMatch(list, 'gpt-5')).toBeNull();
    const tie = ['a*', '*a'].map((p) => ({ compiled: compilePattern(p) }));
    expect(bestMatch(tie, 'aa')?.compiled.pattern).toBe('a*');
  });
});
