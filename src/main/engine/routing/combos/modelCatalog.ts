// What the combo strategies know about models: context windows and prices. A built-in table of
// well-known models, overridden entry by entry by the settings `combos.contextWindows` and
// `combos.modelPrices`. Keys are model ids or id prefixes; a lookup takes the longest key that the
// model id starts with at a word boundary, so "claude-sonnet-4-5" covers
// "claude-sonnet-4-5-20250929" and "gpt-4o-mini" wins over "gpt-4o" (but "gpt-4" never covers
// "gpt-4.1"). Lookups are memoised per model id until the settings change.
import type { ModelCatalogEntry } from '../../../../shared/model';

export interface Price {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}

interface BuiltIn {
  contextWindow: number;
  price: Price | null;
}

const K = 1_000;
const M = 1_000_000;

/** Published context windows and list prices (USD per million tokens) of well-known models. */
const BUILT_IN: Record<string, BuiltIn> = {
  // Anthropic
  'claude-opus-4-1': { contextWindow: 200 * K, price: { input: 15, output: 75 } },
  'claude-opus-4': { contextWindow: 200 * K, price: { input: 15, output: 75 } },
  'claude-sonnet-4-5': { contextWindow: 200 * K, price: { input: 3, output: 15 } },
  'claude-sonnet-4': { contextWindow: 200 * K, price: { input: 3, output: 15 } },
  'claude-haiku-4-5': { contextWindow: 200 * K, price: { input: 1, output: 5 } },
  'claude-3-7-sonnet': { contextWindow: 200 * K, price: { input: 3, output: 15 } },
  'claude-3-5-sonnet': { contextWindow: 200 * K, price: { input: 3, output: 15 } },
  'claude-3-5-haiku': { contextWindow: 200 * K, price: { input: 0.8, output: 4 } },
  'claude-3-opus': { contextWindow: 200 * K, price: { input: 15, output: 75 } },
  'claude-3-haiku': { contextWindow: 200 * K, price: { input: 0.25, output: 1.25 } },
  // OpenAI
  'gpt-5': { contextWindow: 400 * K, price: { input: 1.25, output: 10 } },
  'gpt-5-mini': { contextWindow: 400 * K, price: { input: 0.25, output: 2 } },
  'gpt-5-nano': { contextWindow: 400 * K, price: { input: 0.05, output: 0.4 } },
  'gpt-5-codex': { contextWindow: 400 * K, price: { input: 1.25, output: 10 } },
  'gpt-4.1': { contextWindow: 1_047_576, price: { input: 2, output: 8 } },
  'gpt-4.1-mini': { contextWindow: 1_047_576, price: { input: 0.4, output: 1.6 } },
  'gpt-4.1-nano': { contextWindow: 1_047_576, price: { input: 0.1, output: 0.4 } },
  'gpt-4o': { contextWindow: 128 * K, price: { input: 2.5, output: 10 } },
  'gpt-4o-mini': { contextWindow: 128 * K, price: { input: 0.15, output: 0.6 } },
  'gpt-4-turbo': { contextWindow: 128 * K, price: { input: 10, output: 30 } },
  'gpt-4': { contextWindow: 8_192, price: { input: 30, output: 60 } },
  'gpt-3.5-turbo': { contextWindow: 16_385, price: { input: 0.5, output: 1.5 } },
  o1: { contextWindow: 200 * K, price: { input: 15, output: 60 } },
  o3: { contextWindow: 200 * K, price: { input: 2, output: 8 } },
  'o3-mini': { contextWindow: 200 * K, price: { input: 1.1, output: 4.4 } },
  'o4-mini': { contextWindow: 200 * K, price: { input: 1.1, output: 4.4 } },
  // Google
  'gemini-2.5-pro': { contextWindow: 1_048_576, price: { input: 1.25, output: 10 } },
  'gemini-2.5-flash': { contextWindow: 1_048_576, price: { input: 0.3, output: 2.5 } },
  'gemini-2.5-flash-lite': { contextWindow: 1_048_576, price: { input: 0.1, output: 0.4 } },
  'gemini-2.0-flash': { contextWindow: 1_048_576, price: { input: 0.1, output: 0.4 } },
  'gemini-1.5-pro': { contextWindow: 2 * 1_048_576, price: { input: 1.25, output: 5 } },
  'gemini-1.5-flash': { contextWindow: 1_048_576, price: { input: 0.075, output: 0.3 } },
  // Others often used with coding agents
  'deepseek-chat': { contextWindow: 128 * K, price: { input: 0.27, output: 1.1 } },
  'deepseek-reasoner': { contextWindow: 128 * K, price: { input: 0.55, output: 2.19 } },
  'glm-4.6': { contextWindow: 200 * K, price: { input: 0.6, output: 2.2 } },
  'glm-4.5': { contextWindow: 128 * K, price: { input: 0.6, output: 2.2 } },
  'glm-4.5-air': { contextWindow: 128 * K, price: { input: 0.2, output: 1.1 } },
  'kimi-k2': { contextWindow: 128 * K, price: { input: 0.6, output: 2.5 } },
  'kimi-k2-0905': { contextWindow: 256 * K, price: { input: 0.6, output: 2.5 } },
  'qwen3-coder': { contextWindow: 256 * K, price: null },
  'mistral-large': { contextWindow: 128 * K, price: { input: 2, output: 6 } },
  codestral: { contextWindow: 256 * K, price: { input: 0.3, output: 0.9 } },
  'grok-4': { contextWindow: 256 * K, price: { input: 3, output: 15 } },
  'grok-code-fast-1': { contextWindow: 256 * K, price: { input: 0.2, output: 1.5 } },
};

/** Characters that may follow a key inside a longer model id (a date, a size, a tag). */
const BOUNDARY = new Set(['-', '@', ':', '_', '/']);

/** The longest key of `table` that `model` equals or starts with at a boundary. */
function longestKey(keys: readonly string[], model: string): string | null {
  let best: string | null = null;
  const m = model.toLowerCase();
  for (const k of keys) {
    const kl = k.toLowerCase();
    if (best !== null && kl.length <= best.length) continue;
    if (m === kl || (m.startsWith(kl) && BOUNDARY.has(m[kl.length]!))) best = k;
  }
  return best;
}

/** A provider prefix some gateways keep in the id ("anthropic/claude-..."), dropped for lookups. */
const bare = (model: string) => {
  const slash = model.lastIndexOf('/');
  return slash >= 0 ? model.slice(slash + 1) : model;
};

export interface CatalogOverrides {
  contextWindows: Record<string, number>;
  modelPrices: Record<string, Price>;
}

export class ModelCatalog {
  private overrides: CatalogOverrides = { contextWindows: {}, modelPrices: {} };
  private windowKeys: string[] = Object.keys(BUILT_IN);
  private priceKeys: string[] = Object.keys(BUILT_IN);
  private readonly windows = new Map<string, number | null>();
  private readonly prices = new Map<string, Price | null>();

  constructor(overrides?: CatalogOverrides) {
    if (overrides) this.setOverrides(overrides);
  }

  setOverrides(o: CatalogOverrides): void {
    this.overrides = o;
    this.windowKeys = [...new Set([...Object.keys(BUILT_IN), ...Object.keys(o.contextWindows)])];
    this.priceKeys = [...new Set([...Object.keys(BUILT_IN), ...Object.keys(o.modelPrices)])];
    this.windows.clear();
    this.prices.clear();
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

  /** Price of a model; null when unknown. */
  price(model: string): Price | null {
    const hit = this.prices.get(model);
    if (hit !== undefined) return hit;
    const id = bare(model);
    const key = longestKey(this.priceKeys, id);
    const v = key === null ? null : (this.overrides.modelPrices[key] ?? BUILT_IN[key]?.price ?? null);
    if (this.prices.size > 5_000) this.prices.clear();
    this.prices.set(model, v);
    return v;
  }

  /** Every entry, built-in and from the settings (a setting wins for its key), sorted by key. */
  entries(): ModelCatalogEntry[] {
    const keys = [...new Set([...this.windowKeys, ...this.priceKeys])].sort();
    return keys.map((model) => {
      const fromSetting = model in this.overrides.contextWindows || model in this.overrides.modelPrices;
      return {
        model,
        contextWindow: this.overrides.contextWindows[model] ?? BUILT_IN[model]?.contextWindow ?? null,
        price: this.overrides.modelPrices[model] ?? BUILT_IN[model]?.price ?? null,
        source: fromSetting ? 'setting' : 'built-in',
      };
    });
  }
}

/** Tokens per million, for price arithmetic. */
export const PER_TOKEN = 1 / M;
