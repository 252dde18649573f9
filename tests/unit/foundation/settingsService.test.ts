// SettingsService: patches are validated whole and written all-or-nothing to key_value, survive a
// new service on the same store, and tell subscribers what changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/main/engine/errors';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { SettingsService } from '../../../src/main/engine/settings/settingsService';
import { openStore, type Db } from '../../../src/main/engine/store/db';
import { KeyValueRepo } from '../../../src/main/engine/store/keyValueRepo';
import { settingDefs, type SettingKey } from '../../../src/shared/settings';
import { FakeClock } from '../../support/fakeClock';

const clock = new FakeClock();
let dir: string;
let db: Db;
let sink: MemorySink;

const dbPath = () => join(dir, 'switchyard.db');
const open = () => openStore({ path: dbPath(), now: () => clock.now() });
const service = (env: Record<string, string> = {}) =>
  new SettingsService(
    new KeyValueRepo(db, () => clock.now()),
    env,
    createLogger({ sinks: [sink], redactor: new SecretRedactor(), now: () => clock.now() }),
  );
const storedSettings = () =>
  Object.fromEntries(
    (db.prepare("SELECT key, value FROM key_value WHERE namespace = 'settings'").all() as { key: string; value: string }[]).map(
      (r) => [r.key, JSON.parse(r.value)],
    ),
  );
const sourceOf = (s: SettingsService, key: SettingKey) => s.view().settings.find((x) => x.key === key)!.source;

function expectBadInput(fn: () => unknown, field: string) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    expect((e as ApiError).field).toBe(field);
    expect((e as ApiError).message).toContain(field);
    return;
  }
  throw new Error('expected a 400 naming the field');
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-settings-'));
  db = open();
  sink = new MemorySink();
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SettingsService.patch', () => {
  it('writes nothing when one field of the patch is bad', () => {
    const s = service();
    expectBadInput(() => s.patch({ 'requestQueue.maxWaitMs': 5000, routing: { strategy: 'sometimes' } }), 'routing.strategy');
    expectBadInput(() => s.patch({ 'requestQueue.maxWaitMs': 5000, 'requestQueue.nope': 1 }), 'requestQueue.nope');
    expect(storedSettings()).toEqual({});
    expect(s.values['requestQueue.maxWaitMs']).toBe(30_000);
  });

  it('writes nothing when the cross-field rule fails against the saved values', () => {
    const s = service();
    s.patch({ 'modelLockout.baseCooldownMs': 60_000 });
    const before = storedSettings();
    expectBadInput(() => s.patch({ 'modelLockout.maxCooldownMs': 1_000, 'requestQueue.maxWaitMs': 5 }), 'modelLockout.maxCooldownMs');
    expect(storedSettings()).toEqual(before);
  });

  it('applies a good patch, answers the new values and lists clamps under adjusted', () => {
    const s = service();
    const r = s.patch({ requestQueue: { maxWaitMs: 0, maxQueueDepth: 200_000 }, 'routing.strategy': 'fill-first' });
    expect(r.adjusted).toEqual([
      { key: 'requestQueue.maxWaitMs', from: 0, to: 1 },
      { key: 'requestQueue.maxQueueDepth', from: 200_000, to: 100_000 },
    ]);
    expect(r.values).toMatchObject({ requestQueue: { maxWaitMs: 1, maxQueueDepth: 100_000 }, routing: { strategy: 'fill-first' } });
    expect(storedSettings()).toEqual({
      'requestQueue.maxWaitMs': 1,
      'requestQueue.maxQueueDepth': 100_000,
      'routing.strategy': 'fill-first',
    });
    expect(sourceOf(s, 'requestQueue.maxWaitMs')).toBe('persisted');
  });

  it('persists across a new service on a reopened store (source "persisted")', () => {
    service().patch({ 'requestQueue.maxWaitMs': 4321 });
    db.close();
    db = open();
    const again = service({ RATE_LIMIT_MAX_WAIT_MS: '9999' });
    expect(again.values['requestQueue.maxWaitMs']).toBe(4321);
    expect(sourceOf(again, 'requestQueue.maxWaitMs')).toBe('persisted');
  });

  it('null removes the saved value so env (or the default) applies again (R-GEN-03)', () => {
    const s = service({ PROVIDER_COOLDOWN_ENABLED: 'true' });
    s.patch({ 'providerCooldown.enabled': false });
    expect([s.values['providerCooldown.enabled'], sourceOf(s, 'providerCooldown.enabled')]).toEqual([false, 'persisted']);
    s.patch({ providerCooldown: { enabled: null } });
    expect([s.values['providerCooldown.enabled'], sourceOf(s, 'providerCooldown.enabled')]).toEqual([true, 'env']);
    expect(storedSettings()).toEqual({});
  });

  it('resilience patches change resilience settings only', () => {
    const s = service();
    const resilienceOnly = (k: SettingKey) => settingDefs[k].resilience === true;
    expectBadInput(() => s.patch({ 'proxy.port': 9000 }, resilienceOnly), 'proxy.port');
    expect(storedSettings()).toEqual({});
    const r = s.patch({ 'requestQueue.maxQueueDepth': 4 }, resilienceOnly);
    expect(r.settings.every((x) => x.resilience)).toBe(true);
  });

  it('tells subscribers exactly which keys changed, and nothing for a no-op', () => {
    const s = service();
    const seen: SettingKey[][] = [];
    s.onChange((keys) => seen.push(keys));
    s.patch({ 'requestQueue.maxWaitMs': 5000, 'routing.strategy': 'round-robin' });
    s.patch({ 'requestQueue.maxWaitMs': 5000 });
    expect(seen).toEqual([['requestQueue.maxWaitMs']]);
  });
});

describe('SettingsService at start-up', () => {
  it('logs a warning for an unusable env value and keeps the default', () => {
    const s = service({ RATE_LIMIT_MAX_WAIT_MS: 'later' });
    expect(s.values['requestQueue.maxWaitMs']).toBe(30_000);
    expect(sink.lines.join('')).toMatch(/WARN .*RATE_LIMIT_MAX_WAIT_MS/);
    expect(s.view().settings.find((x) => x.key === 'requestQueue.maxWaitMs')).toMatchObject({ source: 'default', envName: null, envRejected: 'RATE_LIMIT_MAX_WAIT_MS' });
  });

  it('names the environment variable a value came from (the first of its names that is set)', () => {
    const s = service({ OMNIROUTE_SESSION_AFFINITY_TTL_MS: '60000' });
    expect(s.view().settings.find((x) => x.key === 'sessionAffinityTtlMs')).toMatchObject({
      source: 'env',
      value: 60_000,
      envName: 'OMNIROUTE_SESSION_AFFINITY_TTL_MS',
      envRejected: null,
    });
    expect(s.view().settings.find((x) => x.key === 'logs.maxRows')).toMatchObject({ source: 'default', envName: null });
  });

  it('shows env, persisted and default side by side in the view', () => {
    const s = service({ RATE_LIMIT_MAX_WAIT_MS: '2000' });
    s.patch({ 'requestQueue.maxWaitMs': 3000 });
    const v = s.view().settings.find((x) => x.key === 'requestQueue.maxWaitMs')!;
    expect(v).toMatchObject({ value: 3000, source: 'persisted', persisted: 3000, envValue: 2000, default: 30_000, min: 1, max: 86_400_000 });
  });

  it('a command-line value wins over env and saved ones, shows as such, and saving that key is refused with nothing written', () => {
    const first = service();
    first.patch({ 'proxy.port': 9100 });
    const s = new SettingsService(
      new KeyValueRepo(db, () => clock.now()),
      { SWITCHYARD_PROXY_PORT: '9200' },
      createLogger({ sinks: [sink], redactor: new SecretRedactor(), now: () => clock.now() }),
      { 'proxy.port': { value: 9300, flag: '--proxy-port' } },
    );
    expect(s.values['proxy.port']).toBe(9300);
    expect(s.view().settings.find((x) => x.key === 'proxy.port')).toMatchObject({ source: 'cli', cliFlag: '--proxy-port', persisted: 9100, envValue: 9200, envName: 'SWITCHYARD_PROXY_PORT' });
    let err: unknown = null;
    try {
      s.patch({ 'proxy.port': 9400, 'logs.maxRows': 5000 });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ status: 409, code: 'set_on_command_line', field: 'proxy.port' });
    expect(storedSettings()).toEqual({ 'proxy.port': 9100 });
    expect(s.values['proxy.port']).toBe(9300);
    expect(sourceOf(first, 'proxy.port')).toBe('persisted');
  });
});

