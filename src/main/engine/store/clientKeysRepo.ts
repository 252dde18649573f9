// client_keys: keys that local agents present to the proxy. Stored as a SHA-256 hash (for lookup)
// plus the encrypted value (so the dashboard can show it again for copy-paste setup).
import type { Db } from './db';

export interface ClientKeyRecord {
  id: string;
  name: string;
  keyHash: string;
  keyEnc: string;
  masked: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

interface Row {
  id: string;
  name: string;
  key_hash: string;
  key_enc: string;
  masked: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

const fromRow = (r: Row): ClientKeyRecord => ({
  id: r.id,
  name: r.name,
  keyHash: r.key_hash,
  keyEnc: r.key_enc,
  masked: r.masked,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export class ClientKeysRepo {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      all: db.prepare('SELECT * FROM client_keys ORDER BY created_at'),
      insert: db.prepare(
        `INSERT INTO client_keys (id, name, key_hash, key_enc, masked, created_at, last_used_at, revoked_at)
         VALUES (@id, @name, @keyHash, @keyEnc, @masked, @createdAt, @lastUsedAt, @revokedAt)`,
      ),
      revoke: db.prepare('UPDATE client_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      touch: db.prepare('UPDATE client_keys SET last_used_at = ? WHERE id = ?'),
    };
  }

  all(): ClientKeyRecord[] {
    return (this.stmts.all.all() as Row[]).map(fromRow);
  }

  insert(k: ClientKeyRecord): void {
    this.stmts.insert.run(k);
  }

  revoke(id: string, at: number): boolean {
    return this.stmts.revoke.run(at, id).changes > 0;
  }

  touch(id: string, at: number): void {
    this.stmts.touch.run(at, id);
  }
}
