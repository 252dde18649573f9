// domain_circuit_breakers: one JSON state per provider, so an open breaker survives a restart.
import type { Db } from './db';
import { readJsonColumn, UnreadableRows } from './unreadableRows';

const TABLE = 'domain_circuit_breakers';

export class BreakersRepo {
  private readonly stmts;

  constructor(
    db: Db,
    private readonly now: () => number,
    private readonly unreadable: UnreadableRows = new UnreadableRows(),
  ) {
    this.stmts = {
      all: db.prepare('SELECT provider, state FROM domain_circuit_breakers'),
      upsert: db.prepare(
        `INSERT INTO domain_circuit_breakers (provider, state, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(provider) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
      ),
      delete: db.prepare('DELETE FROM domain_circuit_breakers WHERE provider = ?'),
    };
  }

  all(): Map<string, unknown> {
    const out = new Map<string, unknown>();
    for (const r of this.stmts.all.all() as { provider: string; state: string }[]) {
      const state = readJsonColumn('state', r.state);
      // An unreadable state is skipped (the breaker starts CLOSED) and reported.
      if (state.ok) out.set(r.provider, state.value);
      else this.unreadable.report(TABLE, r.provider, state.reason);
    }
    return out;
  }

  save(provider: string, state: unknown): void {
    this.stmts.upsert.run(provider, JSON.stringify(state), this.now());
    this.unreadable.resolve(TABLE, provider);
  }

  delete(provider: string): void {
    this.stmts.delete.run(provider);
    this.unreadable.resolve(TABLE, provider);
  }
}
