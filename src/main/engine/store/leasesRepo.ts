// session_leases (migration 5): the active exclusive leases, one row each; a lease's row is
// deleted when it ends, so the table's unique indexes hold exactly R-LS-05 (one active lease per
// owner and per connection). Generations come from one counter (key_value leases/generation), so
// a generation is never issued twice, not even to an owner that acquires again after a release.
// In team mode (issue 26) the counter is also raised to every generation the team issued, and the
// team layer keeps two small records beside it: the changes made while Redis was away, and the
// epoch of the Redis it last agreed with (routing/sessionTeam.ts).
import type { Lease } from '../routing/leases/leaseMachine';
import type { Db } from './db';

interface Row {
  id: string;
  owner_hash: string;
  client_key_id: string;
  connection_id: string;
  generation: number;
  ttl_ms: number;
  label: string | null;
  acquired_at: number;
  renewed_at: number;
  expires_at: number;
}

const fromRow = (r: Row): Lease => ({
  id: r.id,
  ownerHash: r.owner_hash,
  clientKeyId: r.client_key_id,
  connectionId: r.connection_id,
  generation: r.generation,
  ttlMs: r.ttl_ms,
  label: r.label,
  acquiredAt: r.acquired_at,
  renewedAt: r.renewed_at,
  expiresAt: r.expires_at,
});

const params = (l: Lease) => ({
  id: l.id,
  ownerHash: l.ownerHash,
  clientKeyId: l.clientKeyId,
  connectionId: l.connectionId,
  generation: l.generation,
  ttlMs: l.ttlMs,
  label: l.label,
  acquiredAt: l.acquiredAt,
  renewedAt: l.renewedAt,
  expiresAt: l.expiresAt,
});

export class LeasesRepo {
  private readonly stmts;

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
  ) {
    this.stmts = {
      all: db.prepare('SELECT * FROM session_leases ORDER BY acquired_at'),
      upsert: db.prepare(
        `INSERT INTO session_leases (id, owner_hash, client_key_id, connection_id, generation, ttl_ms, label, acquired_at, renewed_at, expires_at)
         VALUES (@id, @ownerHash, @clientKeyId, @connectionId, @generation, @ttlMs, @label, @acquiredAt, @renewedAt, @expiresAt)
         ON CONFLICT(id) DO UPDATE SET connection_id = excluded.connection_id, generation = excluded.generation,
           ttl_ms = excluded.ttl_ms, renewed_at = excluded.renewed_at, expires_at = excluded.expires_at`,
      ),
      delete: db.prepare('DELETE FROM session_leases WHERE id = ?'),
      generation: db.prepare("SELECT value FROM key_value WHERE namespace = 'leases' AND key = 'generation'"),
      setGeneration: db.prepare(
        `INSERT INTO key_value (namespace, key, value, updated_at) VALUES ('leases', 'generation', ?, ?)
         ON CONFLICT(namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
      getState: db.prepare("SELECT value FROM key_value WHERE namespace = 'leases' AND key = ?"),
      setState: db.prepare(
        `INSERT INTO key_value (namespace, key, value, updated_at) VALUES ('leases', ?, ?, ?)
         ON CONFLICT(namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
      deleteState: db.prepare("DELETE FROM key_value WHERE namespace = 'leases' AND key = ?"),
    };
  }

  all(): Lease[] {
    return (this.stmts.all.all() as Row[]).map(fromRow);
  }

  save(l: Lease): void {
    this.stmts.upsert.run(params(l));
  }

  delete(id: string): void {
    this.stmts.delete.run(id);
  }

  private lastGeneration(): number {
    const row = this.stmts.generation.get() as { value: string } | undefined;
    const last = row ? Number(JSON.parse(row.value)) : 0;
    return Number.isSafeInteger(last) && last > 0 ? last : 0;
  }

  /** The next generation (1, 2, 3 … across all leases), counted in the store. */
  nextGeneration(): number {
    const n = this.lastGeneration() + 1;
    this.stmts.setGeneration.run(JSON.stringify(n), this.now());
    return n;
  }

  /** Team mode: a generation the team issued; the counter never hands out one at or below it. */
  raiseGeneration(n: number): void {
    if (Number.isSafeInteger(n) && n > this.lastGeneration()) this.stmts.setGeneration.run(JSON.stringify(n), this.now());
  }

  /** A small team-mode record kept beside the leases (JSON), or undefined. */
  teamState<T>(key: string): T | undefined {
    const row = this.stmts.getState.get(key) as { value: string } | undefined;
    if (!row) return undefined;
    try {
      return JSON.parse(row.value) as T;
    } catch {
      return undefined;
    }
  }

  setTeamState(key: string, value: unknown): void {
    if (value === undefined) this.stmts.deleteState.run(key);
    else this.stmts.setState.run(key, JSON.stringify(value), this.now());
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
