// What the combo strategies know about models: context windows and prices. Context windows: a
// built-in table of well-known models, overridden entry by entry by the setting
// `combos.contextWindows`. Prices come from the engine's one price catalogue (usage/prices.ts:
// built-in, the setting `combos.modelPrices`, the operator's edits). Keys are model ids or id prefixes; a lookup takes the longest key that the
// model id starts with at a word boundary, so "claude-sonnet-4-5" covers
// "claude-sonnet-4-5-20250929" and "gpt-4o-mini" wins over "gpt-4o" (but "gpt-4" never covers
// "gpt-4.1"). Lookups are memoised per model id until the settings change.
import type { ModelCatalogEntry } from '../../../../shared/model';
import { bareModel as bare, longestKey, PriceCatalogue } from '../../usage/prices';

export interface Price {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}

interface BuiltIn {
  contextWindow: number;
}

const K = 1_000;
const M = 1_000_000;

/** Published context windows of well-known models (their prices: usage/prices.ts). */
const BUILT_IN: Record<string, BuiltIn> = {
  // Anthropic
  'claude-opus-4-5': { contextWindow: 200 * K },
  'claude-opus-4-1': { contextWindow: 200 * K },
  'claude-opus-4': { contextWindow: 200 * K },
  'claude-sonnet-4-5': { contextWindow: 200 * K },
  'claude-sonnet-4': { contextWindow: 200 * K },
  'claude-haiku-4-5': { contextWindow: 200 * K },
  'claude-3-7-sonnet': { contextWindow: 200 * K },
  'claude-3-5-sonnet': { contextWindow: 200 * K },
  'claude-3-5-haiku': { contextWindow: 200 * K },
  'claude-3-opus': { contextWindow: 200 * K },
  'claude-3-haiku': { contextWindow: 200 * K },
  // OpenAI
  'gpt-5': { contextWindow: 400 * K },
  'gpt-5-mini': { contextWindow: 400 * K },
  'gpt-5-nano': { contextWindow: 400 * K },
  'gpt-5-codex': { contextWindow: 400 * K },
  'gpt-4.1': { contextWindow: 1_047_576 },
  'gpt-4.1-mini': { contextWindow: 1_047_576 },
  'gpt-4.1-nano': { contextWindow: 1_047_576 },
  'gpt-4o': { contextWindow: 128 * K },
  'gpt-4o-mini': { contextWindow: 128 * K },
  'gpt-4-turbo': { contextWindow: 128 * K },
  'gpt-4': { contextWindow: 8_192 },
  'gpt-3.5-turbo': { contextWindow: 16_385 },
  o1: { contextWindow: 200 * K },
  o3: { contextWindow: 200 * K },
  'o3-mini': { contextWindow: 200 * K },
  'o4-mini': { contextWindow: 200 * K },
  // Google
  'gemini-2.5-pro': { contextWindow: 1_048_576 },
  'gemini-2.5-flash': { contextWindow: 1_048_576 },
  'gemini-2.5-flash-lite': { contextWindow: 1_048_576 },
  'gemini-2.0-flash': { contextWindow: 1_048_576 },
  'gemini-1.5-pro': { contextWindow: 2 * 1_048_576 },
  'gemini-1.5-flash': { contextWindow: 1_048_576 },
  // Others often used with coding agents
  'deepseek-chat': { contextWindow: 128 * K },
  'deepseek-reasoner': { contextWindow: 128 * K },
  'glm-4.6': { contextWindow: 200 * K },
  'glm-4.5': { contextWindow: 128 * K },
  'glm-4.5-air': { contextWindow: 128 * K },
  'kimi-k2': { contextWindow: 128 * K },
  'kimi-k2-0905': { contextWindow: 256 * K },
  'qwen3-coder': { contextWindow: 256 * K },
  'mistral-large': { contextWindow: 128 * K },
  codestral: { contextWindow: 256 * K },
  'grok-4': { contextWindow: 256 * K },
  'grok-code-fast-1': { contextWindow: 256 * K },
};

export interface CatalogOverrides {
  contextWindows: Record<string, number>;
  modelPrices: Record<string, Price>;
}

export class ModelCatalog {
  private overrides: CatalogOverrides = { contextWindows: {}, modelPrices: {} };
  private windowKeys: string[] = Object.keys(BUILT_IN);
  private readonly windows = new Map<string, number | null>();
  /** Input and output prices as the strategies read them, memoised until the catalogue changes. */
  private readonly prices = new Map<string, Price | null>();
  private pricesVersion = -1;

  /** `priceCatalogue`: the engine's one price catalogue (default: a catalogue of its own, built-in prices only). */
  constructor(
    overrides?: CatalogOverrides,
    readonly priceCatalogue: PriceCatalogue = new PriceCatalogue(),
  ) {
    if (overrides) this.setOverrides(overrides);
  }

  setOverrides(o: CatalogOverrides): void {
    this.overrides = o;
    this.windowKeys = [...new Set([...Object.keys(BUILT_IN), ...Object.keys(o.contextWindows)])];
    this.windows.clear();
    this.priceCatalogue.setSettingPrices(o.modelPrices);
  }

  /** Context window of a model in tokens; null when unknown. */
  contextWindow(model: string): number | null {
    const hit = this.windows.get(model);
    if (hit !== undefined) return hit;
    const id = bare(model);
    const key = longestKey(this.windowKeys, id);
    const v = key === null ? null : (this.overrides.contextWindows[key] ?? BUILT_IN[key]?.contextWindow ?? null);
    if (this.windows.size > 5_000) this.windows.clear();
    this.windows.set(model, v);
    return v;
  }

  /** Input and output price of a model (from the price catalogue); null when unknown. */
  price(model: string): Price | null {
    if (this.pricesVersion !== this.priceCatalogue.version) {
      this.prices.clear();
      this.pricesVersion = this.priceCatalogue.version;
    }
    const hit = this.prices.get(model);
    if (hit !== undefined) return hit;
    const p = this.priceCatalogue.price(model);
    const v = p ? { input: p.input, output: p.output } : null;
    if (this.prices.size > 5_000) this.prices.clear();
    this.prices.set(model, v);
    return v;
  }

  /** Every entry, built-in and from the settings (a setting wins for its key), sorted by key. */
  entries(): ModelCatalogEntry[] {
    const prices = new Map(this.priceCatalogue.view().entries.map((e) => [e.model, e]));
    const keys = [...new Set([...this.windowKeys, ...prices.keys()])].sort();
    return keys.map((model) => {
      const p = prices.get(model);
      const fromSetting = model in this.overrides.contextWindows || p?.source === 'edited';
      return {
        model,
        contextWindow: this.overrides.contextWindows[model] ?? BUILT_IN[model]?.contextWindow ?? null,
        price: p ? { input: p.price.input, output: p.price.output } : null,
        source: fromSetting ? 'setting' : 'built-in',
      };
    });
  }
}

/** Tokens per million, for price arithmetic. */
export const PER_TOKEN = 1 / M;
