// key_value table: JSON values by (namespace, key). Settings live in namespace "settings".
import type { Db } from './db';
import { readJsonColumn, UnreadableRows } from './unreadableRows';

const TABLE = 'key_value';

export class KeyValueRepo {
  private readonly stmts;

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
    private readonly unreadable: UnreadableRows = new UnreadableRows(),
  ) {
    this.stmts = {
      all: db.prepare('SELECT key, value FROM key_value WHERE namespace = ?'),
      get: db.prepare('SELECT value FROM key_value WHERE namespace = ? AND key = ?'),
      set: db.prepare(
        `INSERT INTO key_value (namespace, key, value, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
      del: db.prepare('DELETE FROM key_value WHERE namespace = ? AND key = ?'),
    };
  }

  all(namespace: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const row of this.stmts.all.all(namespace) as { key: string; value: string }[]) {
      const v = readJsonColumn('value', row.value);
      // An unreadable row is skipped (the setting falls back to env or default) and reported.
      if (v.ok) out[row.key] = v.value;
      else this.unreadable.report(TABLE, `${namespace}/${row.key}`, v.reason);
    }
    return out;
  }

  get<T = unknown>(namespace: string, key: string): T | undefined {
    const row = this.stmts.get.get(namespace, key) as { value: string } | undefined;
    if (!row) return undefined;
    const v = readJsonColumn('value', row.value);
    if (v.ok) return v.value as T;
    this.unreadable.report(TABLE, `${namespace}/${key}`, v.reason);
    return undefined;
  }

  set(namespace: string, key: string, value: unknown): void {
    this.stmts.set.run(namespace, key, JSON.stringify(value), this.now());
    this.unreadable.resolve(TABLE, `${namespace}/${key}`);
  }

  delete(namespace: string, key: string): void {
    this.stmts.del.run(namespace, key);
    this.unreadable.resolve(TABLE, `${namespace}/${key}`);
  }

  transaction(fn: () => void): void {
    this.db.transaction(fn)();
  }
}
