// domain_circuit_breakers: one JSON state per provider, so an open breaker survives a restart.
import type { Db } from './db';

export class BreakersRepo {
  private readonly stmts;

  constructor(
    db: Db,
    private readonly now: () => number,
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
      try {
        out.set(r.provider, JSON.parse(r.state));
      } catch {
        // unreadable state: the breaker starts CLOSED
      }
    }
    return out;
  }

  save(provider: string, state: unknown): void {
    this.stmts.upsert.run(provider, JSON.stringify(state), this.now());
  }

  delete(provider: string): void {
    this.stmts.delete.run(provider);
  }
}
