// A stored row that cannot be read never breaks a list: rows corrupted directly in SQLite (JSON
// that does not parse, a providerSpecificData nested thousands of levels deep as an older build
// let through) are skipped, left in the database untouched, named in a warning without their
// content, and listed in GET /api/monitoring/health under store.unreadable, across restarts.
// Deleting the connection removes the row.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UnreadableRecord } from '../../../src/shared/model';
import { openStore } from '../../../src/main/engine/store/db';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { openEventStream } from './http';

const MARKER = 'glm-row-content-marker-7c1d';
const DEEP = `{"note":"${MARKER}","deep":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
const BROKEN = `{"note":"${MARKER}",`;

describe('unreadable stored rows', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-unreadable-'));
  let t: TestEngine;
  const ids = { good: '', broken: '', deep: '' };

  const withDb = <T>(fn: (db: ReturnType<typeof openStore>) => T): T => {
    const db = openStore({ path: join(dataDir, 'switchyard.db'), now: () => 0 });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const column = (id: string) =>
    withDb((db) => (db.prepare('SELECT provider_specific_data AS v FROM provider_connections WHERE id = ?').get(id) as { v: string } | undefined)?.v);

  beforeAll(async () => {
    const first = await startTestEngine({ dataDir });
    for (const name of Object.keys(ids) as (keyof typeof ids)[]) {
      ids[name] = (await first.addConnection({ name, kind: 'local', baseUrl: 'http://127.0.0.1:9/v1' })).id;
    }
    await first.stop();
    withDb((db) => {
      const set = db.prepare('UPDATE provider_connections SET provider_specific_data = ? WHERE id = ?');
      set.run(BROKEN, ids.broken);
      set.run(DEEP, ids.deep);
      db.prepare("INSERT INTO domain_circuit_breakers (provider, state, updated_at) VALUES ('local', ?, 0)").run(`{"${MARKER}"`);
      db.prepare("INSERT INTO key_value (namespace, key, value, updated_at) VALUES ('settings', 'logs.retentionDays', ?, 0)").run(`"${MARKER}`);
      const log = db.prepare(
        "INSERT INTO proxy_logs (id, started_at, protocol, path, status, skipped) VALUES (?, ?, 'openai-chat', '/v1/chat/completions', 200, ?)",
      );
      log.run('req_readable', Date.now() - 2, '[]');
      log.run('req_unreadable', Date.now() - 1, `[{"${MARKER}"`);
    });
    t = await startTestEngine({ dataDir });
  });
  afterAll(async () => {
    await t.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const expected: UnreadableRecord[] = [];
  beforeAll(() => {
    expected.push(
      { table: 'provider_connections', id: ids.broken, reason: 'provider_specific_data is not valid JSON' },
      { table: 'provider_connections', id: ids.deep, reason: 'provider_specific_data: nests deeper than 8 levels' },
      { table: 'domain_circuit_breakers', id: 'local', reason: 'state is not valid JSON' },
      { table: 'key_value', id: 'settings/logs.retentionDays', reason: 'value is not valid JSON' },
    );
  });

  it('lists the readable connections and skips the others', async () => {
    const list = await t.api.listConnections();
    expect(list.map((c) => c.id)).toEqual([ids.good]);
    expect((await t.api.getConnection({ id: ids.good })).name).toBe('good');
  });

  it('keeps the event stream working', async () => {
    const stream = await openEventStream(t.managementUrl, t.token);
    try {
      const conns = await stream.until((e) => e.event === 'connections');
      expect((conns.data as { id: string }[]).map((c) => c.id)).toEqual([ids.good]);
      await stream.until((e) => e.event === 'health');
    } finally {
      await stream.close();
    }
  });

  it('reports each skipped row in health, which is degraded', async () => {
    const h = await t.api.getHealth();
    expect(h.status).toBe('degraded');
    expect(h.store.unreadable).toEqual(expect.arrayContaining(expected));
    expect(h.store.unreadable).toHaveLength(expected.length);
    // The unreadable setting falls back to its default.
    expect(t.engine.settings.values['logs.retentionDays']).toBe(7);
  });

  it('warns in the log with table and id, never the row content', () => {
    const warnings = t.logs.lines.filter((l) => l.includes('store.unreadableRow'));
    expect(warnings).toHaveLength(expected.length);
    for (const e of expected) expect(warnings.some((l) => l.includes(e.id) && l.includes(e.table))).toBe(true);
    expect(t.logs.lines.join('')).not.toContain(MARKER);
  });

  it('leaves the rows in the database untouched while other connections change', async () => {
    await t.api.updateConnection({ id: ids.good, patch: { priority: 3 } });
    const extra = await t.api.createConnection({ name: 'extra', kind: 'local', baseUrl: 'http://127.0.0.1:9/v1' });
    await t.api.deleteConnection({ id: extra.id });
    expect(column(ids.broken)).toBe(BROKEN);
    expect(column(ids.deep)).toBe(DEEP);
  });

  it('still skips and reports them after another restart', async () => {
    await t.stop();
    t = await startTestEngine({ dataDir });
    expect((await t.api.listConnections()).map((c) => c.id)).toEqual([ids.good]);
    expect((await t.api.getHealth()).store.unreadable).toEqual(expect.arrayContaining(expected));
  });

  it('leaves an unreadable request out of the log page and reports it', async () => {
    const page = await t.api.listLogs({ limit: 10 });
    expect(page.entries.map((e) => e.id)).toEqual(['req_readable']);
    const h = await t.api.getHealth();
    expect(h.store.unreadable).toContainEqual({ table: 'proxy_logs', id: 'req_unreadable', reason: 'skipped is not valid JSON' });
  });

  it('deletes an unreadable connection on request, and health stops listing it', async () => {
    expect(await t.api.deleteConnection({ id: ids.broken })).toEqual({ deleted: true });
    expect(column(ids.broken)).toBeUndefined();
    const h = await t.api.getHealth();
    expect(h.store.unreadable.map((r) => r.id)).not.toContain(ids.broken);
    expect(h.store.unreadable.map((r) => r.id)).toContain(ids.deep);
    // A saved setting replaces the unreadable value (settings are the engine's own state).
    await t.api.patchSettings({ patch: { 'logs.retentionDays': 5 } });
    expect((await t.api.getHealth()).store.unreadable.map((r) => r.table)).not.toContain('key_value');
  });
});
