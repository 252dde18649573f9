// client_keys: keys that local agents present to the proxy. Stored as a SHA-256 hash (for lookup)
// plus the encrypted value (so the dashboard can show it again for copy-paste setup), with the
// key's scopes and the connections its exclusive leases may hold (migration 5).
import { CLIENT_KEY_SCOPES, type ClientKeyScope } from '../../../shared/model';
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
  scopes: ClientKeyScope[];
  allowedConnections: string[];
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
  scopes: string;
  allowed_connections: string;
}

/** A JSON list of strings; anything else reads as empty (a key then simply has no leases). */
const stringList = (s: string): string[] => {
  try {
    const v: unknown = JSON.parse(s);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
};

const fromRow = (r: Row): ClientKeyRecord => ({
  id: r.id,
  name: r.name,
  keyHash: r.key_hash,
  keyEnc: r.key_enc,
  masked: r.masked,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
  scopes: stringList(r.scopes).filter((x): x is ClientKeyScope => (CLIENT_KEY_SCOPES as readonly string[]).includes(x)),
  allowedConnections: stringList(r.allowed_connections),
});

export class ClientKeysRepo {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      all: db.prepare('SELECT * FROM client_keys ORDER BY created_at'),
      insert: db.prepare(
        `INSERT INTO client_keys (id, name, key_hash, key_enc, masked, created_at, last_used_at, revoked_at, scopes, allowed_connections)
         VALUES (@id, @name, @keyHash, @keyEnc, @masked, @createdAt, @lastUsedAt, @revokedAt, @scopes, @allowedConnections)`,
      ),
      access: db.prepare('UPDATE client_keys SET scopes = ?, allowed_connections = ? WHERE id = ?'),
      revoke: db.prepare('UPDATE client_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      touch: db.prepare('UPDATE client_keys SET last_used_at = ? WHERE id = ?'),
    };
  }

  all(): ClientKeyRecord[] {
    return (this.stmts.all.all() as Row[]).map(fromRow);
  }

  insert(k: ClientKeyRecord): void {
    this.stmts.insert.run({ ...k, scopes: JSON.stringify(k.scopes), allowedConnections: JSON.stringify(k.allowedConnections) });
  }

  setAccess(id: string, scopes: readonly string[], allowedConnections: readonly string[]): void {
    this.stmts.access.run(JSON.stringify(scopes), JSON.stringify(allowedConnections), id);
  }

  revoke(id: string, at: number): boolean {
    return this.stmts.revoke.run(at, id).changes > 0;
  }

  touch(id: string, at: number): void {
    this.stmts.touch.run(at, id);
  }
}
