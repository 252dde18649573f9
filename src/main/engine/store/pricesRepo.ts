// model_prices (migration 12): the model prices an operator edited in the dashboard, USD per
// million tokens, each with the day it applies from. The price catalogue (usage/prices.ts) reads
// them once at start and writes through on every edit.
import type { PriceStore, StoredPrice } from '../usage/prices';
import type { Db } from './db';

interface PriceRow {
  model: string;
  input: number;
  output: number;
  cache_read: number | null;
  cache_write: number | null;
  as_of: string;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

export class PricesRepo implements PriceStore {
  private readonly stmts;

  constructor(
    db: Db,
    private readonly now: () => number,
  ) {
    this.stmts = {
      all: db.prepare('SELECT model, input, output, cache_read, cache_write, as_of FROM model_prices ORDER BY model'),
      put: db.prepare(
        `INSERT INTO model_prices (model, input, output, cache_read, cache_write, as_of, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(model) DO UPDATE SET input = excluded.input, output = excluded.output, cache_read = excluded.cache_read,
           cache_write = excluded.cache_write, as_of = excluded.as_of, updated_at = excluded.updated_at`,
      ),
      del: db.prepare('DELETE FROM model_prices WHERE model = ?'),
    };
  }

  all(): StoredPrice[] {
    const out: StoredPrice[] = [];
    for (const r of this.stmts.all.all() as PriceRow[]) {
      // A row edited by hand into something unusable is left out (the built-in price applies).
      if (!finite(r.input) || !finite(r.output)) continue;
      out.push({
        model: r.model,
        price: { input: r.input, output: r.output, cacheRead: finite(r.cache_read) ? r.cache_read : null, cacheWrite: finite(r.cache_write) ? r.cache_write : null },
        asOf: r.as_of,
      });
    }
    return out;
  }

  put(p: StoredPrice): void {
    this.stmts.put.run(p.model, p.price.input, p.price.output, p.price.cacheRead, p.price.cacheWrite, p.asOf, this.now());
  }

  remove(model: string): boolean {
    return this.stmts.del.run(model).changes > 0;
  }
}
