// The price catalogue for the Prices page: read once on start and after the live link comes back,
// and again after an edit or a reset. A price is checked here before it is sent (the engine checks
// it again), so a mistyped figure is refused with a message next to the form, not a round trip.
import { createStore } from 'zustand/vanilla';
import type { PriceCatalogueView, PriceEntry } from '../../shared/usage';
import { describeError } from '../lib/errors';
import { pendingActions, reportLoadError, rethrow, type StoreContext } from './context';

/** What the price form holds: the figures as typed (dollars per million tokens). */
export interface PriceDraft {
  model: string;
  input: string;
  output: string;
  cacheRead: string;
  cacheWrite: string;
  asOf: string;
}

export type CheckedPrice =
  | { ok: true; value: { model: string; price: { input: number; output: number; cacheRead: number | null; cacheWrite: number | null }; asOf: string | null } }
  | { ok: false; message: string };

/** Checks a draft the way the engine will; the message says what to fix. */
export function checkPriceDraft(d: PriceDraft): CheckedPrice {
  const model = d.model.trim();
  if (!model) return { ok: false, message: 'Enter the model name (or the start of it) the price is for.' };
  if (!/^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$/.test(model)) {
    return { ok: false, message: 'The model name may hold letters, digits and . _ : @ + / - only, and must start with a letter or digit.' };
  }
  const amount = (text: string, what: string, optional: boolean): number | null | string => {
    const t = text.trim().replace(/^\$/, '');
    if (t === '') return optional ? null : `Enter the ${what} price.`;
    const n = Number(t);
    if (!Number.isFinite(n)) return `The ${what} price must be a number.`;
    if (n < 0) return `The ${what} price cannot be negative.`;
    if (n > 100_000) return `The ${what} price is more than 100,000 dollars per million tokens.`;
    return n;
  };
  const input = amount(d.input, 'input', false);
  const output = amount(d.output, 'output', false);
  const cacheRead = amount(d.cacheRead, 'cache read', true);
  const cacheWrite = amount(d.cacheWrite, 'cache write', true);
  for (const v of [input, output, cacheRead, cacheWrite]) if (typeof v === 'string') return { ok: false, message: v };
  const asOf = d.asOf.trim();
  if (asOf && !/^\d{4}-\d{2}-\d{2}$/.test(asOf)) return { ok: false, message: 'The date must be a day written as year-month-day, like 2025-10-01.' };
  return {
    ok: true,
    value: { model, price: { input: input as number, output: output as number, cacheRead: cacheRead as number | null, cacheWrite: cacheWrite as number | null }, asOf: asOf || null },
  };
}

/** A draft filled from an entry (for "Edit"). */
export const draftOf = (e: PriceEntry): PriceDraft => ({
  model: e.model,
  input: String(e.price.input),
  output: String(e.price.output),
  cacheRead: e.price.cacheRead === null ? '' : String(e.price.cacheRead),
  cacheWrite: e.price.cacheWrite === null ? '' : String(e.price.cacheWrite),
  asOf: '',
});

export const EMPTY_DRAFT: PriceDraft = { model: '', input: '', output: '', cacheRead: '', cacheWrite: '', asOf: '' };

export interface PricesState {
  view: PriceCatalogueView | null;
  pending: Record<string, boolean>;
  load(): Promise<void>;
  /** Checks and saves a price; gives null when saved, else the message to show by the form. */
  save(d: PriceDraft): Promise<string | null>;
  reset(model: string): Promise<boolean>;
}

export function createPricesStore(ctx: StoreContext) {
  return createStore<PricesState>()((set) => {
    const { run, setPending } = pendingActions(ctx, set);
    const load = async () => {
      try {
        set({ view: await ctx.bridge.listPrices() });
      } catch (err) {
        reportLoadError(ctx, 'prices', err, 'Could not load prices');
      }
    };
    return {
      view: null,
      pending: {},
      load,
      async save(d) {
        const checked = checkPriceDraft(d);
        if (!checked.ok) return checked.message;
        const id = checked.value.model;
        setPending(id, true);
        try {
          await rethrow(ctx, () => ctx.bridge.setPrice(checked.value));
          ctx.toasts.getState().push('success', `Price of ${id} saved`);
          await load();
          return null;
        } catch (err) {
          return describeError(err).message;
        } finally {
          setPending(id, false);
        }
      },
      reset(model) {
        return run(
          model,
          `Could not reset the price of ${model}`,
          async () => {
            await ctx.bridge.resetPrice({ model });
            ctx.toasts.getState().push('success', `Price of ${model} reset`);
          },
          { after: load },
        );
      },
    };
  });
}

export type PricesStore = ReturnType<typeof createPricesStore>;
