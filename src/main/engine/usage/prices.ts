// The price catalogue: what a model costs per million tokens, input, output, and prompt-cache reads
// and writes where the provider prices them apart. One catalogue for the whole engine: the request
// log's cost per request reads it, and so do the combo strategies that pick by cost (through
// routing/combos/modelCatalog.ts). Three layers, each overriding the one before for its key:
//   1. the built-in list below, each price with the day it was checked (`asOf`);
//   2. the `combos.modelPrices` setting (input and output only, kept for existing configurations);
//   3. the operator's edits from the dashboard (stored in the model_prices table, migration 12).
// Keys are model ids or id prefixes; a lookup takes the longest key the model id equals or starts
// with at a word boundary ("claude-sonnet-4-5" covers "claude-sonnet-4-5-20250929", "gpt-4o-mini"
// wins over "gpt-4o", "gpt-4" never covers "gpt-4.1"). Lookups are memoised per model id until a
// layer changes, so the request path pays one Map read.
//
// The cost rule (nothing counted twice): a log entry's `inputTokens` is every prompt token, cache
// reads and writes included (OpenAI reports it so; Anthropic's three counters are summed when read).
// So cost = (input − cacheRead − cacheWrite) × input price + cacheRead × cache-read price
//         + cacheWrite × cache-write price + output × output price, per million tokens;
// a cache price that is null (not priced apart) is the input price.
import type { ModelPrice, PriceCatalogueView, PriceEntry } from '../../../shared/usage';

/** One built-in price: USD per million tokens, and the day it was checked. */
interface BuiltInPrice {
  price: ModelPrice;
  asOf: string;
}

/** Anthropic's prompt cache: a 5-minute cache write costs 1.25× input, a read 0.1× input. */
const anthropic = (input: number, output: number, asOf: string): BuiltInPrice => ({
  price: { input, output, cacheRead: round(input * 0.1), cacheWrite: round(input * 1.25) },
  asOf,
});
/** A provider whose cached input has its own (discounted) price and whose cache writes cost nothing extra. */
const cached = (input: number, output: number, cacheRead: number | null, asOf: string): BuiltInPrice => ({
  price: { input, output, cacheRead, cacheWrite: null },
  asOf,
});
const round = (n: number) => Math.round(n * 1e6) / 1e6;

const ANTHROPIC_DATE = '2025-11-24';
const OPENAI_DATE = '2025-10-01';
const GOOGLE_DATE = '2025-10-01';
const OTHERS_DATE = '2025-10-01';

/** Published list prices (USD per million tokens) of well-known models. */
export const BUILT_IN_PRICES: Readonly<Record<string, BuiltInPrice>> = {
  // Anthropic
  'claude-opus-4-5': anthropic(5, 25, ANTHROPIC_DATE),
  'claude-opus-4-1': anthropic(15, 75, ANTHROPIC_DATE),
  'claude-opus-4': anthropic(15, 75, ANTHROPIC_DATE),
  'claude-sonnet-4-5': anthropic(3, 15, ANTHROPIC_DATE),
  'claude-sonnet-4': anthropic(3, 15, ANTHROPIC_DATE),
  'claude-haiku-4-5': anthropic(1, 5, ANTHROPIC_DATE),
  'claude-3-7-sonnet': anthropic(3, 15, ANTHROPIC_DATE),
  'claude-3-5-sonnet': anthropic(3, 15, ANTHROPIC_DATE),
  'claude-3-5-haiku': anthropic(0.8, 4, ANTHROPIC_DATE),
  'claude-3-opus': anthropic(15, 75, ANTHROPIC_DATE),
  'claude-3-haiku': anthropic(0.25, 1.25, ANTHROPIC_DATE),
  // OpenAI (cached input at its published rate; writing the cache costs nothing extra)
  'gpt-5': cached(1.25, 10, 0.125, OPENAI_DATE),
  'gpt-5-mini': cached(0.25, 2, 0.025, OPENAI_DATE),
  'gpt-5-nano': cached(0.05, 0.4, 0.005, OPENAI_DATE),
  'gpt-5-codex': cached(1.25, 10, 0.125, OPENAI_DATE),
  'gpt-4.1': cached(2, 8, 0.5, OPENAI_DATE),
  'gpt-4.1-mini': cached(0.4, 1.6, 0.1, OPENAI_DATE),
  'gpt-4.1-nano': cached(0.1, 0.4, 0.025, OPENAI_DATE),
  'gpt-4o': cached(2.5, 10, 1.25, OPENAI_DATE),
  'gpt-4o-mini': cached(0.15, 0.6, 0.075, OPENAI_DATE),
  'gpt-4-turbo': cached(10, 30, null, OPENAI_DATE),
  'gpt-4': cached(30, 60, null, OPENAI_DATE),
  'gpt-3.5-turbo': cached(0.5, 1.5, null, OPENAI_DATE),
  o1: cached(15, 60, 7.5, OPENAI_DATE),
  o3: cached(2, 8, 0.5, OPENAI_DATE),
  'o3-mini': cached(1.1, 4.4, 0.55, OPENAI_DATE),
  'o4-mini': cached(1.1, 4.4, 0.275, OPENAI_DATE),
  // Google (context-cache reads at the published rate for prompts up to 200k tokens)
  'gemini-2.5-pro': cached(1.25, 10, 0.125, GOOGLE_DATE),
  'gemini-2.5-flash': cached(0.3, 2.5, 0.03, GOOGLE_DATE),
  'gemini-2.5-flash-lite': cached(0.1, 0.4, 0.01, GOOGLE_DATE),
  'gemini-2.0-flash': cached(0.1, 0.4, 0.025, GOOGLE_DATE),
  'gemini-1.5-pro': cached(1.25, 5, null, GOOGLE_DATE),
  'gemini-1.5-flash': cached(0.075, 0.3, null, GOOGLE_DATE),
  // Others often used with coding agents
  'deepseek-chat': cached(0.27, 1.1, 0.07, OTHERS_DATE),
  'deepseek-reasoner': cached(0.55, 2.19, 0.14, OTHERS_DATE),
  'glm-4.6': cached(0.6, 2.2, 0.11, OTHERS_DATE),
  'glm-4.5': cached(0.6, 2.2, 0.11, OTHERS_DATE),
  'glm-4.5-air': cached(0.2, 1.1, 0.03, OTHERS_DATE),
  'kimi-k2': cached(0.6, 2.5, 0.15, OTHERS_DATE),
  'kimi-k2-0905': cached(0.6, 2.5, 0.15, OTHERS_DATE),
  'mistral-large': cached(2, 6, null, OTHERS_DATE),
  codestral: cached(0.3, 0.9, null, OTHERS_DATE),
  'grok-4': cached(3, 15, 0.75, OTHERS_DATE),
  'grok-code-fast-1': cached(0.2, 1.5, 0.02, OTHERS_DATE),
};

/** Characters that may follow a key inside a longer model id (a date, a size, a tag). */
const BOUNDARY = new Set(['-', '@', ':', '_', '/']);

/** The longest of `keys` that `model` equals or starts with at a boundary (case-insensitive). */
export function longestKey(keys: readonly string[], model: string): string | null {
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
export const bareModel = (model: string): string => {
  const slash = model.lastIndexOf('/');
  return slash >= 0 ? model.slice(slash + 1) : model;
};

/** Token counts of one finished request, as on its log entry. */
export interface TokenUsage {
  /** Every prompt token, cache reads and writes included. */
  inputTokens: number | null;
  outputTokens: number | null;
  cacheReadTokens?: number | null;
  cacheWriteTokens?: number | null;
}

/** USD for `usage` at `price` (per million tokens), by the cost rule above; null when no count is known. */
export function costOf(price: ModelPrice, usage: TokenUsage): number | null {
  if (usage.inputTokens == null && usage.outputTokens == null) return null;
  const read = usage.cacheReadTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, (usage.inputTokens ?? 0) - read - write);
  const usd =
    uncached * price.input +
    read * (price.cacheRead ?? price.input) +
    write * (price.cacheWrite ?? price.input) +
    (usage.outputTokens ?? 0) * price.output;
  // `usd` is in millionths of a dollar; rounded to a millionth of a cent, so float noise never shows.
  return Math.round(usd * 100) / 1e8;
}

/** An operator's price, as stored. */
export interface StoredPrice {
  model: string;
  price: ModelPrice;
  asOf: string;
}

/** Where operator prices are kept (store/pricesRepo.ts; absent: in memory only, for tests and plain catalogues). */
export interface PriceStore {
  all(): StoredPrice[];
  put(p: StoredPrice): void;
  remove(model: string): boolean;
}

/** A price the operator sent that cannot be kept; `message` is for a person. */
export class PriceInputError extends Error {
  constructor(
    readonly code: 'invalid_price' | 'price_not_found' | 'price_from_setting',
    message: string,
  ) {
    super(message);
  }
}

const MODEL_KEY = /^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_PRICE = 100_000;

export interface PriceInput {
  model: string;
  price: { input: number; output: number; cacheRead?: number | null; cacheWrite?: number | null };
  asOf?: string | null;
}

/** Checks an operator's price; throws a PriceInputError that says what is wrong. */
export function checkPrice(p: PriceInput, today: string): StoredPrice {
  const model = typeof p.model === 'string' ? p.model.trim() : '';
  if (!model) throw new PriceInputError('invalid_price', 'Enter the model name (or the start of it) the price is for.');
  if (model.length > 200 || !MODEL_KEY.test(model)) {
    throw new PriceInputError('invalid_price', 'The model name may hold letters, digits and . _ : @ + / - only, and must start with a letter or digit.');
  }
  const amount = (v: unknown, what: string, optional: boolean): number | null => {
    if (v === null || v === undefined) {
      if (optional) return null;
      throw new PriceInputError('invalid_price', `Enter the ${what} price.`);
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new PriceInputError('invalid_price', `The ${what} price must be a number.`);
    if (v < 0) throw new PriceInputError('invalid_price', `The ${what} price cannot be negative.`);
    if (v > MAX_PRICE) throw new PriceInputError('invalid_price', `The ${what} price is more than ${MAX_PRICE.toLocaleString('en-US')} dollars per million tokens.`);
    return v;
  };
  const price: ModelPrice = {
    input: amount(p.price?.input, 'input', false)!,
    output: amount(p.price?.output, 'output', false)!,
    cacheRead: amount(p.price?.cacheRead, 'cache read', true),
    cacheWrite: amount(p.price?.cacheWrite, 'cache write', true),
  };
  const asOf = p.asOf == null || p.asOf === '' ? today : p.asOf;
  if (!DAY.test(asOf) || Number.isNaN(Date.parse(`${asOf}T00:00:00Z`))) {
    throw new PriceInputError('invalid_price', 'The date must be a day written as year-month-day, like 2025-10-01.');
  }
  return { model, price, asOf };
}

/** A memory-only store (a catalogue with nowhere to keep edits). */
export class MemoryPriceStore implements PriceStore {
  private readonly rows = new Map<string, StoredPrice>();
  all(): StoredPrice[] {
    return [...this.rows.values()];
  }
  put(p: StoredPrice): void {
    this.rows.set(p.model, p);
  }
  remove(model: string): boolean {
    return this.rows.delete(model);
  }
}

export class PriceCatalogue {
  private settingPrices: Record<string, { input: number; output: number }> = {};
  private edited = new Map<string, StoredPrice>();
  private keys: string[] = Object.keys(BUILT_IN_PRICES);
  private readonly memo = new Map<string, ModelPrice | null>();
  private listeners: (() => void)[] = [];
  /** Bumped on every change, so a reader that memoises what it derives knows to forget it. */
  version = 0;

  constructor(private readonly store: PriceStore = new MemoryPriceStore()) {
    for (const p of store.all()) this.edited.set(p.model, p);
    this.changed();
  }

  /** The `combos.modelPrices` setting (input and output per key), the middle layer. */
  setSettingPrices(prices: Record<string, { input: number; output: number }>): void {
    this.settingPrices = prices ?? {};
    this.changed();
  }

  /** Called after every change of any layer. */
  onChange(fn: () => void): () => void {
    this.listeners.push(fn);
    return () => (this.listeners = this.listeners.filter((l) => l !== fn));
  }

  /** The price of a model (or null when none is known); memoised per model id. */
  price(model: string): ModelPrice | null {
    const hit = this.memo.get(model);
    if (hit !== undefined) return hit;
    const key = longestKey(this.keys, bareModel(model));
    const v = key === null ? null : this.priceOfKey(key);
    if (this.memo.size > 5_000) this.memo.clear();
    this.memo.set(model, v);
    return v;
  }

  /** The cost of one request in USD, or null when the model has no price or no token count is known. */
  costOf(model: string | null, usage: TokenUsage): number | null {
    if (!model) return null;
    const p = this.price(model);
    return p ? costOf(p, usage) : null;
  }

  /** Every entry with the layer it comes from, sorted by key. */
  view(): PriceCatalogueView {
    const entries: PriceEntry[] = [...this.keys].sort().map((model) => this.entryOf(model)!);
    return { entries };
  }

  /** Stores an operator's price (it overrides a built-in or setting price for the same key). */
  set(input: PriceInput, today: string): PriceEntry {
    const p = checkPrice(input, today);
    this.store.put(p);
    this.edited.set(p.model, p);
    this.changed();
    return this.entryOf(p.model)!;
  }

  /** Removes an operator's price: the built-in one (if any) applies again. Returns what applies now (null: nothing). */
  reset(model: string): PriceEntry | null {
    const key = typeof model === 'string' ? model.trim() : '';
    if (!key) throw new PriceInputError('invalid_price', 'Say which model\u2019s price to reset.');
    if (!this.edited.has(key)) {
      if (key in this.settingPrices) {
        throw new PriceInputError('price_from_setting', `The price of ${key} comes from the "Model prices" setting; change it in Settings.`);
      }
      throw new PriceInputError('price_not_found', `There is no edited price for ${key} to reset.`);
    }
    this.store.remove(key);
    this.edited.delete(key);
    this.changed();
    return this.entryOf(key);
  }

  private priceOfKey(key: string): ModelPrice | null {
    const e = this.edited.get(key);
    if (e) return e.price;
    const s = this.settingPrices[key];
    if (s) {
      const b = BUILT_IN_PRICES[key]?.price;
      // A setting price has no cache prices of its own: the built-in ratios stay when it names a built-in model.
      return { input: s.input, output: s.output, cacheRead: b?.cacheRead ?? null, cacheWrite: b?.cacheWrite ?? null };
    }
    return BUILT_IN_PRICES[key]?.price ?? null;
  }

  private entryOf(key: string): PriceEntry | null {
    const e = this.edited.get(key);
    if (e) return { model: key, price: e.price, asOf: e.asOf, source: 'edited' };
    const price = this.priceOfKey(key);
    if (!price) return null;
    if (key in this.settingPrices) return { model: key, price, asOf: '', source: 'edited', fromSetting: true };
    return { model: key, price, asOf: BUILT_IN_PRICES[key]?.asOf ?? '', source: 'built-in' };
  }

  private changed(): void {
    this.keys = [...new Set([...Object.keys(BUILT_IN_PRICES), ...Object.keys(this.settingPrices), ...this.edited.keys()])];
    this.memo.clear();
    this.version++;
    for (const l of this.listeners) l();
  }
}
