// The SQLite store: WAL, numbered migrations recorded in schema_migrations, idempotent re-open.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, openStore, schemaVersion } from '../../../src/main/engine/store/db';
import { KeyValueRepo } from '../../../src/main/engine/store/keyValueRepo';
import { migrations } from '../../../src/main/engine/store/migrations';
import { FakeClock } from '../../support/fakeClock';

const EXPECTED_TABLES = [
  'client_keys',
  'domain_circuit_breakers',
  'key_value',
  'provider_connections',
  'proxy_log_attempts',
  'proxy_logs',
  'schema_migrations',
];

const clock = new FakeClock();
let dir: string;
const path = () => join(dir, 'nested', 'switchyard.db');
const open = () => openStore({ path: path(), now: () => clock.now() });
const tables = (db: ReturnType<typeof open>) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]).map(
    (r) => r.name,
  );

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('openStore', () => {
  it('creates the data directory and every table on a fresh database', () => {
    const db = open();
    try {
      expect(tables(db)).toEqual(expect.arrayContaining(EXPECTED_TABLES));
    } finally {
      db.close();
    }
  });

  it('runs in WAL mode with foreign keys on', () => {
    const db = open();
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });

  it('records each migration version, name and time in schema_migrations', () => {
    const db = open();
    try {
      const rows = db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all();
      expect(rows).toEqual(migrations.map((m) => ({ version: m.version, name: m.name, applied_at: clock.now() })));
      expect(schemaVersion(db)).toBe(Math.max(...migrations.map((m) => m.version)));
    } finally {
      db.close();
    }
  });

  it('is idempotent on re-open: nothing re-runs and the data survives', () => {
    const first = open();
    new KeyValueRepo(first, () => clock.now()).set('settings', 'requestQueue.maxWaitMs', 1234);
    const before = first.prepare('SELECT * FROM schema_migrations').all();
    first.close();

    const second = open();
    try {
      expect(second.prepare('SELECT * FROM schema_migrations').all()).toEqual(before);
      expect(migrate(second, migrations, () => clock.now())).toEqual([]);
      expect(new KeyValueRepo(second, () => clock.now()).get('settings', 'requestQueue.maxWaitMs')).toBe(1234);
    } finally {
      second.close();
    }
  });

  it('applies only the migrations that are new, in version order', () => {
    const db = open();
    try {
      const extra = [
        { version: 1001, name: 'second extra', sql: 'ALTER TABLE extra_a ADD COLUMN b TEXT' },
        { version: 1000, name: 'first extra', sql: 'CREATE TABLE extra_a (a TEXT)' },
      ];
      expect(migrate(db, [...migrations, ...extra], () => clock.now())).toEqual([1000, 1001]);
      expect(migrate(db, [...migrations, ...extra], () => clock.now())).toEqual([]);
      expect(schemaVersion(db)).toBe(1001);
    } finally {
      db.close();
    }
  });

  it('rolls back a failing migration as a whole and does not record it', () => {
    const db = open();
    try {
      const broken = { version: 2000, name: 'broken', sql: 'CREATE TABLE half_done (a TEXT); SELECT * FROM no_such_table;' };
      expect(() => migrate(db, [...migrations, broken], () => clock.now())).toThrow();
      expect(tables(db)).not.toContain('half_done');
      expect(schemaVersion(db)).toBe(Math.max(...migrations.map((m) => m.version)));
    } finally {
      db.close();
    }
  });

  it('has unique, positive migration versions', () => {
    const versions = migrations.map((m) => m.version);
    expect(new Set(versions).size).toBe(versions.length);
    expect(versions.every((v) => Number.isInteger(v) && v > 0)).toBe(true);
  });
});

describe('KeyValueRepo', () => {
  it('stores JSON values by namespace and key, overwrites, deletes, and keeps namespaces apart', () => {
    const db = open();
    try {
      const kv = new KeyValueRepo(db, () => clock.now());
      kv.set('settings', 'a', { x: [1, 2] });
      kv.set('settings', 'a', { x: [3] });
      kv.set('other', 'a', true);
      expect(kv.all('settings')).toEqual({ a: { x: [3] } });
      expect(kv.get('other', 'a')).toBe(true);
      kv.delete('settings', 'a');
      expect(kv.get('settings', 'a')).toBeUndefined();
      expect(kv.all('other')).toEqual({ a: true });
    } finally {
      db.close();
    }
  });

  it('skips a row that is not valid JSON instead of failing', () => {
    const db = open();
    try {
      db.prepare("INSERT INTO key_value (namespace, key, value, updated_at) VALUES ('settings', 'bad', '{oops', 0)").run();
      const kv = new KeyValueRepo(db, () => clock.now());
      expect(kv.all('settings')).toEqual({});
      expect(kv.get('settings', 'bad')).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('rolls a transaction back as a whole when one write throws', () => {
    const db = open();
    try {
      const kv = new KeyValueRepo(db, () => clock.now());
      expect(() =>
        kv.transaction(() => {
          kv.set('settings', 'a', 1);
          throw new Error('midway');
        }),
      ).toThrow('midway');
      expect(kv.all('settings')).toEqual({});
    } finally {
      db.close();
    }
  });
});
