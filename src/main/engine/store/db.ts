// Opens the SQLite store (better-sqlite3, WAL) and applies pending migrations.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrations as allMigrations, type Migration } from './migrations';

export type Db = Database.Database;

export interface OpenStoreOptions {
  /** File path, or ":memory:". */
  path: string;
  /** Path to a better_sqlite3.node built for another ABI (the Electron build on the desktop). */
  nativeBinding?: string;
  migrations?: Migration[];
  /** Epoch ms, for the applied_at column. */
  now: () => number;
}

export function openStore(opts: OpenStoreOptions): Db {
  if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
  const db = new Database(opts.path, opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {});
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, opts.migrations ?? allMigrations, opts.now);
  return db;
}

/** An empty in-memory connection, for work that needs SQLite but no store (memory/mallocTrim.ts). */
export function openScratch(nativeBinding?: string): Db {
  return new Database(':memory:', nativeBinding ? { nativeBinding } : {});
}

export function migrate(db: Db, migrations: Migration[], now: () => number): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const ran: number[] = [];
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  for (const m of sorted) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        now(),
      );
    })();
    ran.push(m.version);
  }
  return ran;
}

export function schemaVersion(db: Db): number {
  const r = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return r.v ?? 0;
}
