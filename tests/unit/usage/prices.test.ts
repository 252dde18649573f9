// The price catalogue: built-in prices with their dates, the cost rule (cache tokens are parts of
// the input and are never counted twice), the setting and the operator's edits over the built-ins.
import { describe, expect, it } from 'vitest';
import { costOf, MemoryPriceStore, PriceCatalogue, PriceInputError } from '../../../src/main/engine/usage/prices';
import { ModelCatalog } from '../../../src/main/engine/routing/combos/modelCatalog';

const TODAY = '2026-01-15';

describe('the cost rule', () => {
  const sonnet = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

  it('prices the uncached input, the cache reads, the cache writes and the output each once', () => {
    // 1,000,000 prompt tokens of which 600,000 read from the cache and 100,000 written to it.
    const usd = costOf(sonnet, { inputTokens: 1_000_000, outputTokens: 200_000, cacheReadTokens: 600_000, cacheWriteTokens: 100_000 });
    // 300k × $3 + 600k × $0.30 + 100k × $3.75 + 200k × $15, per million.
    expect(usd).toBeCloseTo(0.9 + 0.18 + 0.375 + 3, 10);
    // Counting the cache tokens again as plain input would give more: the rule does not.
    expect(usd).toBeLessThan(costOf(sonnet, { inputTokens: 1_000_000, outputTokens: 200_000 })!);
  });

  it('a cache price not set apart is the input price', () => {
    const p = { input: 2, output: 8, cacheRead: null, cacheWrite: null };
    expect(costOf(p, { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 500_000 })).toBeCloseTo(2, 10);
  });

  it('no token count at all: no cost', () => {
    expect(costOf(sonnet, { inputTokens: null, outputTokens: null })).toBeNull();
  });
});

describe('PriceCatalogue', () => {
  it('built-in prices carry their date and Anthropic-style cache prices', () => {
    const c = new PriceCatalogue();
    expect(c.price('claude-sonnet-4-5-20250929')).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    expect(c.price('gpt-4o-mini-2024-07-18')).toMatchObject({ input: 0.15, cacheRead: 0.075, cacheWrite: null });
    expect(c.price('anthropic/claude-haiku-4-5')).toMatchObject({ input: 1 });
    expect(c.price('my-local-model')).toBeNull();
    const e = c.view().entries.find((x) => x.model === 'gpt-5');
    expect(e).toMatchObject({ source: 'built-in', asOf: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
  });

  it('costOf: the model\u2019s price at the longest matching key, null when the model has none', () => {
    const c = new PriceCatalogue();
    expect(c.costOf('gpt-4o-2024-08-06', { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000 })).toBeCloseTo(1.25 + 10, 10);
    expect(c.costOf('my-local-model', { inputTokens: 10, outputTokens: 10 })).toBeNull();
    expect(c.costOf(null, { inputTokens: 10, outputTokens: 10 })).toBeNull();
  });

  it('an edit overrides the built-in price (kept in the store, dated today by default); reset brings it back', () => {
    const store = new MemoryPriceStore();
    const c = new PriceCatalogue(store);
    expect(c.price('gpt-4o')).toMatchObject({ input: 2.5 });
    const e = c.set({ model: 'gpt-4o', price: { input: 1, output: 2 } }, TODAY);
    expect(e).toEqual({ model: 'gpt-4o', price: { input: 1, output: 2, cacheRead: null, cacheWrite: null }, asOf: TODAY, source: 'edited' });
    expect(c.price('gpt-4o-2024-08-06')).toMatchObject({ input: 1, output: 2 });
    expect(new PriceCatalogue(store).price('gpt-4o')).toMatchObject({ input: 1 });
    expect(c.reset('gpt-4o')).toMatchObject({ source: 'built-in', price: { input: 2.5 } });
    expect(c.price('gpt-4o')).toMatchObject({ input: 2.5 });
    expect(store.all()).toEqual([]);
  });

  it('a new prefix prices models the built-in list does not know; resetting it leaves no price', () => {
    const c = new PriceCatalogue();
    c.set({ model: 'my-local', price: { input: 0.5, output: 1, cacheRead: 0.05 }, asOf: '2025-12-01' }, TODAY);
    expect(c.costOf('my-local:7b', { inputTokens: 2_000_000, outputTokens: 0, cacheReadTokens: 1_000_000 })).toBeCloseTo(0.5 + 0.05, 10);
    expect(c.reset('my-local')).toBeNull();
    expect(c.price('my-local:7b')).toBeNull();
  });

  it('refuses bad input with a message a person can act on', () => {
    const c = new PriceCatalogue();
    const refused = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        expect(err).toBeInstanceOf(PriceInputError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused(() => c.set({ model: '  ', price: { input: 1, output: 1 } }, TODAY))).toMatch(/model name/);
    expect(refused(() => c.set({ model: 'x', price: { input: -1, output: 1 } }, TODAY))).toBe('The input price cannot be negative.');
    expect(refused(() => c.set({ model: 'x', price: { input: 1, output: 1, cacheWrite: -0.1 } }, TODAY))).toBe('The cache write price cannot be negative.');
    expect(refused(() => c.set({ model: 'x', price: { input: 1, output: 1 }, asOf: '15/01/2026' }, TODAY))).toMatch(/year-month-day/);
    expect(refused(() => c.reset('gpt-4o'))).toMatch(/no edited price/);
    expect(c.price('x')).toBeNull();
  });

  it('the combos setting is a layer between the built-ins and the edits, and cannot be reset here', () => {
    const c = new PriceCatalogue();
    c.setSettingPrices({ 'claude-sonnet-4-5': { input: 2, output: 10 } });
    expect(c.price('claude-sonnet-4-5')).toEqual({ input: 2, output: 10, cacheRead: 0.3, cacheWrite: 3.75 });
    expect(c.view().entries.find((e) => e.model === 'claude-sonnet-4-5')).toMatchObject({ source: 'edited', fromSetting: true });
    c.set({ model: 'claude-sonnet-4-5', price: { input: 1, output: 5 } }, TODAY);
    expect(c.price('claude-sonnet-4-5')).toMatchObject({ input: 1, cacheRead: null });
    c.reset('claude-sonnet-4-5');
    expect(() => c.reset('claude-sonnet-4-5')).toThrow(/Settings/);
  });
});

describe('one catalogue for the combo strategies too', () => {
  it('the model catalog reads its prices from the price catalogue, edits included', () => {
    const prices = new PriceCatalogue();
    const catalog = new ModelCatalog(undefined, prices);
    expect(catalog.price('gpt-4o')).toEqual({ input: 2.5, output: 10 });
    prices.set({ model: 'gpt-4o', price: { input: 0.1, output: 0.2 } }, TODAY);
    expect(catalog.price('gpt-4o')).toEqual({ input: 0.1, output: 0.2 });
    expect(catalog.entries().find((e) => e.model === 'gpt-4o')).toMatchObject({ price: { input: 0.1, output: 0.2 }, source: 'setting' });
  });
});
