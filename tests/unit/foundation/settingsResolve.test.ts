// Settings precedence and rules: default < env < persisted (< per-connection), each value with its
// source; env parsing; clamps; patch validation (R-GEN-01..03, R-RQ-22, R-RQ-24).
import { describe, expect, it } from 'vitest';
import {
  SETTING_KEYS,
  defaultValues,
  parseEnvValue,
  settingDefs,
  validatePatch,
  type SettingKey,
} from '../../../src/shared/settings';
import { effectiveFor, resolveSettings } from '../../../src/main/engine/settings/resolve';

/**
 * The defaults the spec states, written out (not read from settingDefs), so a changed default
 * fails here. Each entry names the requirement it comes from.
 */
const SPEC_DEFAULTS: [SettingKey, unknown, string][] = [
  ['providerBreaker.oauth.degradationThreshold', 5, 'R-CB-08'],
  ['providerBreaker.oauth.failureThreshold', 8, 'R-CB-08'],
  ['providerBreaker.oauth.resetTimeoutMs', 60_000, 'R-CB-08'],
  ['providerBreaker.apikey.degradationThreshold', 7, 'R-CB-08'],
  ['providerBreaker.apikey.failureThreshold', 12, 'R-CB-08'],
  ['providerBreaker.apikey.resetTimeoutMs', 30_000, 'R-CB-08'],
  ['providerBreaker.local.failureThreshold', 2, 'R-CB-08'],
  ['providerBreaker.local.resetTimeoutMs', 15_000, 'R-CB-08'],
  ['providerCooldown.enabled', false, 'R-PCW-01'],
  ['providerCooldown.oauth.failureThreshold', 10, 'R-PCW-04'],
  ['providerCooldown.oauth.failureWindowMs', 15 * 60_000, 'R-PCW-04'],
  ['providerCooldown.oauth.cooldownMs', 5 * 60_000, 'R-PCW-04'],
  ['providerCooldown.apikey.failureThreshold', 15, 'R-PCW-04'],
  ['providerCooldown.apikey.failureWindowMs', 30 * 60_000, 'R-PCW-04'],
  ['providerCooldown.apikey.cooldownMs', 10 * 60_000, 'R-PCW-04'],
  ['providerCooldown.local.failureThreshold', 2, 'R-PCW-04'],
  ['providerCooldown.local.failureWindowMs', 5 * 60_000, 'R-PCW-04'],
  ['providerCooldown.local.cooldownMs', 60_000, 'R-PCW-04'],
  ['connectionCooldown.oauthBaseMs', 5_000, 'R-CC-04'],
  ['connectionCooldown.apikeyBaseMs', 3_000, 'R-CC-04'],
  ['streamStallCooldown.enabled', false, 'R-CC-23'],
  ['p2cLatency.weight', 0, 'R-CC-25'],
  ['modelLockout.enabled', false, 'R-ML-06'],
  ['modelLockout.errorCodes', [403, 404, 429, 502, 503, 504], 'R-ML-07'],
  ['modelLockout.baseCooldownMs', 120_000, 'R-ML-08'],
  ['modelLockout.maxCooldownMs', 1_800_000, 'R-ML-09'],
  ['modelLockout.maxBackoffSteps', 10, 'R-ML-10'],
  ['modelLockout.useExponentialBackoff', true, 'R-ML-11'],
  ['quotaShareConcurrencyLimit.enabled', true, 'R-SQ-14'],
  ['requestQueue.maxWaitMs', 30_000, 'R-RQ-04'],
  ['requestQueue.executionMaxWaitMs', 600_000, 'R-RQ-05'],
  ['requestQueue.maxQueueDepth', 0, 'R-RQ-22'],
  ['requestQueue.autoEnableApiKeyProviders', true, 'R-RQ-23'],
  ['streamRecovery.throughputWatchdog.enabled', false, 'R-TW-07'],
  ['streamRecovery.enabled', false, 'R-GEN-01: opt-in'],
  ['streamRecovery.midstream.enabled', false, 'R-GEN-01: opt-in'],
];

/** Defaults the spec leaves open and ARCHITECTURE.md decides. */
const DECIDED_DEFAULTS: [SettingKey, unknown, string][] = [
  ['proxy.port', 8480, 'ARCHITECTURE: loopback ports'],
  ['routing.strategy', 'round-robin', 'ARCHITECTURE: selection within a priority'],
  ['connectionCooldown.maxBackoffSteps', 10, 'ARCHITECTURE: connection cooldown'],
  ['connectionCooldown.useUpstreamRetryHints', true, 'ARCHITECTURE: connection cooldown'],
  ['providerQuotaOverrides', [], 'ARCHITECTURE: Automatic = no entry'],
  ['rotation.rateLimitResetSeconds', null, 'R-CC-12: unset, the backoff applies'],
  ['streams.firstOutputTimeoutMs', 60_000, 'ARCHITECTURE: stream resilience (fits reasoning models; thinking counts)'],
  ['streams.contentStallTimeoutMs', 120_000, 'ARCHITECTURE: stream resilience'],
  ['streams.attemptDeadlineMs', 1_800_000, 'ARCHITECTURE: stream resilience'],
  ['streams.holdBackBytes', 65_536, 'ARCHITECTURE: stream resilience'],
];

describe('built-in defaults', () => {
  it.each([...SPEC_DEFAULTS, ...DECIDED_DEFAULTS])('%s defaults to %j (%s)', (key, value) => {
    expect(defaultValues()[key]).toEqual(value);
    const r = resolveSettings({}, {});
    expect([r.values[key], r.sources[key]]).toEqual([value, 'default']);
  });
});

describe('resolveSettings precedence', () => {
  it('every value has source "default", and no warning, when nothing else is set', () => {
    const r = resolveSettings({}, {});
    for (const k of SETTING_KEYS) expect(r.sources[k], k).toBe('default');
    expect(r.warnings).toEqual([]);
  });

  it('lets an env value beat the default (source "env")', () => {
    const r = resolveSettings({ RATE_LIMIT_MAX_WAIT_MS: '5000' }, {});
    expect(r.values['requestQueue.maxWaitMs']).toBe(5000);
    expect(r.sources['requestQueue.maxWaitMs']).toBe('env');
    expect(r.envValues['requestQueue.maxWaitMs']).toBe(5000);
  });

  it('lets a persisted value beat both env and default (source "persisted")', () => {
    const r = resolveSettings({ RATE_LIMIT_MAX_WAIT_MS: '5000' }, { 'requestQueue.maxWaitMs': 7000 });
    expect(r.values['requestQueue.maxWaitMs']).toBe(7000);
    expect(r.sources['requestQueue.maxWaitMs']).toBe('persisted');
    // The env value stays visible so the UI can show what the saved value hides.
    expect(r.envValues['requestQueue.maxWaitMs']).toBe(5000);
  });

  it('resolves each key independently: one setting from env, one persisted, one default', () => {
    const r = resolveSettings(
      { RATE_LIMIT_MAX_QUEUE_DEPTH: '12' },
      { 'concurrency.maxWaiting': 5, 'requestQueue.maxWaitMs': 1234 },
    );
    expect([r.values['requestQueue.maxQueueDepth'], r.sources['requestQueue.maxQueueDepth']]).toEqual([12, 'env']);
    expect([r.values['concurrency.maxWaiting'], r.sources['concurrency.maxWaiting']]).toEqual([5, 'persisted']);
    expect([r.values['proxy.maxAttempts'], r.sources['proxy.maxAttempts']]).toEqual([4, 'default']);
  });

  it('reads the first env name that is set when a setting has several', () => {
    const key = SETTING_KEYS.find((k) => (settingDefs[k].env?.length ?? 0) > 1 && settingDefs[k].type === 'int')!;
    const [first, second] = settingDefs[key].env!;
    const def = settingDefs[key] as { min: number; max: number };
    const a = def.min;
    const b = Math.min(def.max, def.min + 1);
    const r = resolveSettings({ [first!]: String(a), [second!]: String(b) }, {});
    expect(r.values[key]).toBe(a);
    const r2 = resolveSettings({ [second!]: String(b) }, {});
    expect(r2.values[key]).toBe(b);
  });
});

describe('opt-in switches: env only supplies the default (R-GEN-01..03)', () => {
  it('PROVIDER_COOLDOWN_ENABLED=true turns the window gate on when nothing is saved', () => {
    const r = resolveSettings({ PROVIDER_COOLDOWN_ENABLED: 'true' }, {});
    expect(r.values['providerCooldown.enabled']).toBe(true);
    expect(r.sources['providerCooldown.enabled']).toBe('env');
    expect(resolveSettings({}, {}).values['providerCooldown.enabled']).toBe(false);
  });

  it('a saved false beats PROVIDER_COOLDOWN_ENABLED=true (env true is a no-op)', () => {
    const r = resolveSettings({ PROVIDER_COOLDOWN_ENABLED: 'true' }, { 'providerCooldown.enabled': false });
    expect(r.values['providerCooldown.enabled']).toBe(false);
    expect(r.sources['providerCooldown.enabled']).toBe('persisted');
  });

  it('holds for every boolean switch with an env var except RATE_LIMIT_AUTO_ENABLE', () => {
    const switches = SETTING_KEYS.filter(
      (k) => settingDefs[k].type === 'boolean' && settingDefs[k].env?.length && !settingDefs[k].envOverridesPersisted,
    );
    expect(switches).toContain('providerCooldown.enabled');
    for (const k of switches) {
      const envName = settingDefs[k].env![0]!;
      for (const saved of [true, false]) {
        const r = resolveSettings({ [envName]: String(!saved) }, { [k]: saved });
        expect([k, r.values[k], r.sources[k]]).toEqual([k, saved, 'persisted']);
      }
    }
  });
});

describe('RATE_LIMIT_AUTO_ENABLE beats the saved value (R-RQ-24)', () => {
  const key: SettingKey = 'requestQueue.autoEnableApiKeyProviders';

  it.each([
    ['off', true, false],
    ['false', true, false],
    ['0', true, false],
    ['on', false, true],
    ['true', false, true],
    ['1', false, true],
  ])('env %s with saved %s resolves to %s from env', (env, saved, expected) => {
    const r = resolveSettings({ RATE_LIMIT_AUTO_ENABLE: env }, { [key]: saved });
    expect(r.values[key]).toBe(expected);
    expect(r.sources[key]).toBe('env');
  });

  it('the saved value applies when the env var is absent', () => {
    const r = resolveSettings({}, { [key]: false });
    expect([r.values[key], r.sources[key]]).toEqual([false, 'persisted']);
  });
});

describe('env parsing', () => {
  const boolDef = settingDefs['providerCooldown.enabled'];
  const intDef = settingDefs['requestQueue.maxWaitMs'];

  it.each(['true', '1', 'on', 'TRUE', ' On '])('reads %j as true', (raw) => {
    expect(parseEnvValue(boolDef, raw)).toEqual({ ok: true, value: true });
  });

  it.each(['false', '0', 'off', 'OFF'])('reads %j as false', (raw) => {
    expect(parseEnvValue(boolDef, raw)).toEqual({ ok: true, value: false });
  });

  it('reads integers', () => {
    expect(parseEnvValue(intDef, '2500')).toEqual({ ok: true, value: 2500 });
  });

  it.each([
    ['PROVIDER_COOLDOWN_ENABLED', 'maybe', 'providerCooldown.enabled'],
    ['RATE_LIMIT_MAX_WAIT_MS', 'soon', 'requestQueue.maxWaitMs'],
    ['RATE_LIMIT_MAX_WAIT_MS', '12ms', 'requestQueue.maxWaitMs'],
    ['RATE_LIMIT_AUTO_ENABLE', 'sometimes', 'requestQueue.autoEnableApiKeyProviders'],
  ] as const)('ignores %s=%j with a warning naming the variable', (name, raw, key) => {
    const r = resolveSettings({ [name]: raw }, {});
    expect(r.sources[key]).toBe('default');
    expect(r.values[key]).toEqual(settingDefs[key].default);
    expect(r.warnings.some((w) => w.includes(name) && w.includes(key))).toBe(true);
  });

  it('treats an empty env var as unset', () => {
    const r = resolveSettings({ RATE_LIMIT_MAX_WAIT_MS: '' }, {});
    expect(r.sources['requestQueue.maxWaitMs']).toBe('default');
    expect(r.warnings).toEqual([]);
  });

  it('falls back to the default with a warning when a saved value has the wrong type', () => {
    const r = resolveSettings({}, { 'requestQueue.maxWaitMs': 'fast' });
    expect(r.sources['requestQueue.maxWaitMs']).toBe('default');
    expect(r.warnings.join('\n')).toMatch(/requestQueue\.maxWaitMs/);
  });
});

describe('clamps', () => {
  it.each([
    ['RATE_LIMIT_MAX_WAIT_MS', '0', 'requestQueue.maxWaitMs', 1],
    ['RATE_LIMIT_MAX_WAIT_MS', '10000000000', 'requestQueue.maxWaitMs', 86_400_000],
    ['RATE_LIMIT_MAX_QUEUE_DEPTH', '200000', 'requestQueue.maxQueueDepth', 100_000],
  ] as const)('env %s=%s (%s) is clamped to %s and the clamp is reported', (name, raw, key, to) => {
    const r = resolveSettings({ [name]: raw }, {});
    expect(r.values[key]).toBe(to);
    expect(r.sources[key]).toBe('env');
    expect(r.adjusted).toContainEqual({ key, source: 'env', from: Number(raw), to });
    expect(r.warnings.some((w) => w.includes(name) && w.includes(String(to)))).toBe(true);
  });

  it('clamps a saved value that is out of range and reports it', () => {
    const r = resolveSettings({}, { 'requestQueue.maxQueueDepth': 200_000 });
    expect(r.values['requestQueue.maxQueueDepth']).toBe(100_000);
    expect(r.adjusted).toContainEqual({ key: 'requestQueue.maxQueueDepth', source: 'persisted', from: 200_000, to: 100_000 });
  });

  it.each([
    ['requestQueue.maxWaitMs', 0, 1],
    ['requestQueue.maxWaitMs', 10_000_000_000, 86_400_000],
    ['requestQueue.maxQueueDepth', 200_000, 100_000],
  ] as const)('a patch of %s=%s is clamped to %s and listed under adjusted', (key, from, to) => {
    const v = validatePatch({ [key]: from });
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.entries).toEqual([{ key, value: to }]);
    expect(v.adjusted).toEqual([{ key, from, to }]);
  });

  it('reports no adjustment for a value inside the range', () => {
    const v = validatePatch({ 'requestQueue.maxQueueDepth': 50 });
    expect(v.ok && v.adjusted).toEqual([]);
  });
});

describe('validatePatch', () => {
  it('accepts nested and dotted keys alike', () => {
    const nested = validatePatch({ requestQueue: { maxWaitMs: 5000, maxQueueDepth: 3 }, routing: { strategy: 'fill-first' } });
    const dotted = validatePatch({ 'requestQueue.maxWaitMs': 5000, 'requestQueue.maxQueueDepth': 3, 'routing.strategy': 'fill-first' });
    expect(nested.ok && dotted.ok).toBe(true);
    if (!nested.ok || !dotted.ok) return;
    const byKey = (es: { key: string }[]) => [...es].sort((a, b) => a.key.localeCompare(b.key));
    expect(byKey(nested.entries)).toEqual(byKey(dotted.entries));
    expect(nested.entries).toContainEqual({ key: 'requestQueue.maxWaitMs', value: 5000 });
  });

  it('accepts a mix of nesting and dots ({"providerBreaker": {"apikey.failureThreshold": n}})', () => {
    const key = SETTING_KEYS.find((k) => k.startsWith('providerBreaker.apikey.'))!;
    const [group, ...rest] = key.split('.');
    const def = settingDefs[key] as { min: number };
    const v = validatePatch({ [group!]: { [rest.join('.')]: def.min } });
    expect(v.ok && v.entries).toEqual([{ key, value: def.min }]);
  });

  it('rejects an unknown key, naming the field', () => {
    expect(validatePatch({ requestQueue: { maxWaitMss: 5 } })).toMatchObject({ ok: false, field: 'requestQueue.maxWaitMss' });
    expect(validatePatch({ nonsense: 1 })).toMatchObject({ ok: false, field: 'nonsense' });
  });

  it.each([
    ['requestQueue.maxWaitMs', '5000'],
    ['requestQueue.maxWaitMs', 12.5],
    ['requestQueue.maxWaitMs', true],
    ['modelLockout.enabled', 'yes'],
    ['modelLockout.enabled', 1],
    ['routing.strategy', 'fastest'],
    ['routing.strategy', 2],
    ['providerQuotaOverrides', { provider: 'glm' }],
  ] as const)('rejects %s = %j as the wrong type, naming the field', (key, value) => {
    const v = validatePatch({ [key]: value });
    expect(v).toMatchObject({ ok: false, field: key });
    if (!v.ok) expect(v.message).toContain(key);
  });

  it('fails the whole patch on one bad field (no partial entries)', () => {
    const v = validatePatch({ 'requestQueue.maxWaitMs': 5000, 'routing.strategy': 'nope' });
    expect(v).toEqual({ ok: false, field: 'routing.strategy', message: expect.any(String) });
  });

  it('turns null into "remove the saved value"', () => {
    const v = validatePatch({ providerCooldown: { enabled: null } });
    expect(v.ok && v.entries).toEqual([{ key: 'providerCooldown.enabled', value: null }]);
  });

  it('rejects a body that is not an object', () => {
    for (const body of [null, [], 'x', 3]) expect(validatePatch(body)).toMatchObject({ ok: false, field: '(body)' });
  });

  it('restricts keys to the allowed set (resilience patches cannot change the proxy port)', () => {
    const resilienceOnly = (k: SettingKey) => settingDefs[k].resilience === true;
    expect(validatePatch({ 'requestQueue.maxWaitMs': 10 }, resilienceOnly).ok).toBe(true);
    const v = validatePatch({ 'proxy.port': 9000 }, resilienceOnly);
    expect(v).toMatchObject({ ok: false, field: 'proxy.port' });
    if (!v.ok) expect(v.message).toMatch(/\/api\/settings/);
  });

  it('rejects a longest model lockout shorter than the first one', () => {
    const v = validatePatch({ modelLockout: { baseCooldownMs: 60_000, maxCooldownMs: 1_000 } });
    expect(v).toMatchObject({ ok: false, field: 'modelLockout.maxCooldownMs' });
  });
});

describe('effectiveFor (per-connection overrides)', () => {
  const resolved = resolveSettings({ RATE_LIMIT_MAX_WAIT_MS: '9000' }, {});

  it('uses the connection override with source "connection"', () => {
    const conn = { rateLimitOverrides: { maxWaitMs: 1500 } };
    expect(effectiveFor(resolved, 'requestQueue.maxWaitMs', conn)).toEqual({ value: 1500, source: 'connection' });
  });

  it('falls back to the resolved global value and its source when the connection does not set it', () => {
    expect(effectiveFor(resolved, 'requestQueue.maxWaitMs', { rateLimitOverrides: {} })).toEqual({ value: 9000, source: 'env' });
    expect(effectiveFor(resolved, 'requestQueue.maxWaitMs', null)).toEqual({ value: 9000, source: 'env' });
  });

  it('reads timeouts overrides', () => {
    const conn = { timeouts: { connectMs: 250 } };
    expect(effectiveFor(resolved, 'upstream.connectTimeoutMs', conn)).toEqual({ value: 250, source: 'connection' });
  });

  it('ignores connection fields for settings that have no per-connection override', () => {
    const conn = { rateLimitOverrides: { maxQueueDepth: 1 }, maxQueueDepth: 1 };
    expect(effectiveFor(resolved, 'requestQueue.maxQueueDepth', conn)).toEqual({ value: 0, source: 'default' });
  });
});
