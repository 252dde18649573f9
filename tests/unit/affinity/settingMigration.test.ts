// R-SA-05: a saved codexSessionAffinityTtlMs becomes sessionAffinityTtlMs when the store
// migrates; a value already saved under the new name wins; a store without either gets the default.
import { describe, expect, it } from 'vitest';
import { defaultValues } from '../../../src/shared/settings';
import { migrate, openStore } from '../../../src/main/engine/store/db';
import { KeyValueRepo } from '../../../src/main/engine/store/keyValueRepo';
import { migrations } from '../../../src/main/engine/store/migrations';
import { SettingsService } from '../../../src/main/engine/settings/settingsService';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import Database from 'better-sqlite3';

const log = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => 0 });

function upgraded(saved: Record<string, unknown>) {
  const db = new Database(':memory:');
  migrate(db, migrations.filter((m) => m.version <= 3), () => 0);
  const put = db.prepare("INSERT INTO key_value (namespace, key, value, updated_at) VALUES ('settings', ?, ?, 0)");
  for (const [k, v] of Object.entries(saved)) put.run(k, JSON.stringify(v));
  migrate(db, migrations, () => 0);
  return { db, settings: new SettingsService(new KeyValueRepo(db, () => 0), {}, log) };
}

describe('sessionAffinityTtlMs migration', () => {
  it('takes over a saved codexSessionAffinityTtlMs', () => {
    const { db, settings } = upgraded({ codexSessionAffinityTtlMs: 1_234_000 });
    expect(settings.values.sessionAffinityTtlMs).toBe(1_234_000);
    expect(settings.view().settings.find((s) => s.key === 'sessionAffinityTtlMs')).toMatchObject({ source: 'persisted', value: 1_234_000 });
    expect(db.prepare("SELECT key FROM key_value WHERE key LIKE '%SessionAffinity%'").all()).toEqual([{ key: 'sessionAffinityTtlMs' }]);
  });

  it('keeps a value already saved under the new name, and the default without either', () => {
    expect(upgraded({ codexSessionAffinityTtlMs: 5, sessionAffinityTtlMs: 9_000 }).settings.values.sessionAffinityTtlMs).toBe(9_000);
    expect(upgraded({}).settings.values.sessionAffinityTtlMs).toBe(defaultValues().sessionAffinityTtlMs);
    expect(openStore({ path: ':memory:', now: () => 0 }).prepare("SELECT COUNT(*) AS n FROM key_value").get()).toEqual({ n: 0 });
  });
});
