// Rate-limit protection mode on the connection row (issue 22): migration 10 maps the old boolean
// (true: on, false: automatic), the repository stores and reads each of the three modes, and a row
// with an unknown mode is skipped and reported, never fatal.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, openStore, type Db } from '../../../src/main/engine/store/db';
import { migrations } from '../../../src/main/engine/store/migrations';
import { ConnectionsRepo } from '../../../src/main/engine/store/connectionsRepo';
import { UnreadableRows } from '../../../src/main/engine/store/unreadableRows';
import { connectionRecord } from '../../support/builders';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-protection-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const open = (only?: (v: number) => boolean): Db =>
  openStore({ path: join(dir, 'db.sqlite'), now: () => 0, migrations: only ? migrations.filter((m) => only(m.version)) : migrations });

describe('protection mode migration', () => {
  it('maps the old boolean: protected rows become on, the others automatic', () => {
    const db = open((v) => v < 10);
    const insert = db.prepare(
      `INSERT INTO provider_connections (id, name, kind, provider, auth_class, base_url, priority, enabled, models, passthrough_models,
         rate_limit_overrides, rate_limit_protection, disable_cooling, provider_specific_data, timeouts, test_status, backoff_level,
         expired_retries, created_at, updated_at)
       VALUES (?, ?, 'openai-compatible', 'p', 'apikey', 'http://x', 1, 1, '[]', 1, '{}', ?, 0, '{}', '{}', 'untested', 0, 0, 0, 0)`,
    );
    insert.run('was-on', 'was-on', 1);
    insert.run('was-off', 'was-off', 0);
    migrate(db, migrations, () => 0);
    const byId = new Map(new ConnectionsRepo(db).all().map((c) => [c.id, c.protectionMode]));
    expect(byId).toEqual(new Map([['was-on', 'on'], ['was-off', 'auto']]));
    db.close();
  });
});

describe('ConnectionsRepo protection mode', () => {
  it('stores and reads back each mode, and keeps the old boolean column true only for on', () => {
    const db = open();
    const repo = new ConnectionsRepo(db);
    for (const mode of ['auto', 'on', 'off'] as const) repo.insert(connectionRecord({ id: `c-${mode}`, name: mode, protectionMode: mode }));
    expect(new Map(repo.all().map((c) => [c.id, c.protectionMode]))).toEqual(
      new Map([['c-auto', 'auto'], ['c-on', 'on'], ['c-off', 'off']]),
    );
    const flags = db.prepare('SELECT id, rate_limit_protection AS f FROM provider_connections ORDER BY id').all();
    expect(flags).toEqual([
      { id: 'c-auto', f: 0 },
      { id: 'c-off', f: 0 },
      { id: 'c-on', f: 1 },
    ]);
    const changed = { ...repo.all().find((c) => c.id === 'c-on')!, protectionMode: 'off' as const };
    repo.saveConfig(changed);
    expect(new ConnectionsRepo(db).all().find((c) => c.id === 'c-on')?.protectionMode).toBe('off');
    db.close();
  });

  it('skips a row with an unknown mode and reports it', () => {
    const db = open();
    const unreadable = new UnreadableRows();
    const repo = new ConnectionsRepo(db, unreadable);
    repo.insert(connectionRecord({ id: 'good' }));
    repo.insert(connectionRecord({ id: 'bad', name: 'bad' }));
    db.prepare("UPDATE provider_connections SET rate_limit_protection_mode = 'sometimes' WHERE id = 'bad'").run();
    expect(repo.all().map((c) => c.id)).toEqual(['good']);
    expect(repo.isUnreadable('bad')).toBe(true);
    db.close();
  });
});
