// Builders for the DTOs the renderer's stores receive, with sensible defaults per field.
import type {
  ConnectionView,
  CooldownEntry,
  ModelLockoutView,
  RequestLogEntry,
  SettingsView,
  SettingView,
} from '../../../src/shared/model';
import { nest, settingDefs, SETTING_KEYS, type SettingKey } from '../../../src/shared/settings';
import { USAGE_RANGE_SPEC, type UsageBreakdownRow, type UsagePoint, type UsageReport, type UsageTotals } from '../../../src/shared/usage';

export function connection(p: Partial<ConnectionView> = {}): ConnectionView {
  return {
    id: 'c1',
    name: 'Alpha',
    kind: 'anthropic',
    protocol: 'anthropic',
    provider: 'anthropic',
    authClass: 'apikey',
    baseUrl: 'https://api.anthropic.com',
    priority: 1,
    enabled: true,
    models: [],
    passthroughModels: true,
    servesResponses: false,
    maxConcurrent: null,
    rateLimitOverrides: {},
    rateLimitProtection: false,
    rateLimitProtectionMode: 'auto',
    disableCooling: false,
    providerSpecificData: {},
    timeouts: {},
    secret: { set: true, masked: 'sk-a…9f3c' },
    outboundProxy: null,
    health: {
      testStatus: 'active',
      rateLimitedUntil: null,
      backoffLevel: 0,
      lastError: null,
      lastErrorType: null,
      errorCode: null,
      lastErrorAt: null,
      lastUsedAt: null,
    },
    createdAt: 1,
    updatedAt: 1,
    ...p,
  };
}

export function cooldownEntry(p: Partial<CooldownEntry> = {}): CooldownEntry {
  return {
    connectionId: 'c1',
    name: 'Alpha',
    provider: 'anthropic',
    authClass: 'apikey',
    enabled: true,
    status: 'active',
    terminal: false,
    rateLimitedUntil: null,
    remainingMs: 0,
    backoffLevel: 0,
    lastErrorType: null,
    lastError: null,
    errorCode: null,
    lastErrorAt: null,
    lockouts: [],
    ...p,
  };
}

export function lockout(p: Partial<ModelLockoutView> = {}): ModelLockoutView {
  return {
    provider: 'anthropic',
    connectionId: 'c1',
    connectionName: 'Alpha',
    model: 'claude-x',
    scope: 'exact',
    reason: 'model_not_found',
    status: 404,
    origin: 'status',
    failureCount: 1,
    lockedAt: 0,
    expiresAt: 2_000_000,
    ...p,
  };
}

export function logEntry(p: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    id: 'r1',
    startedAt: 1_000,
    protocol: 'anthropic-messages',
    path: '/v1/messages',
    clientKeyId: 'k1',
    requestedModel: 'claude-x',
    model: 'claude-x',
    stream: false,
    status: 200,
    errorCode: null,
    errorMessage: null,
    connectionId: 'c1',
    connectionName: 'Alpha',
    provider: 'anthropic',
    ttfbMs: 10,
    durationMs: 20,
    inputTokens: 1,
    outputTokens: 2,
    attempts: [],
    skipped: [],
    ...p,
  };
}

/** Every setting at its default, with per-key overrides of value/source. */
export function settingsView(over: Partial<Record<SettingKey, Partial<SettingView>>> = {}): SettingsView {
  const settings: SettingView[] = SETTING_KEYS.map((key) => {
    const d = settingDefs[key];
    const base: SettingView = {
      key,
      group: d.group,
      label: d.label,
      description: d.description,
      type: d.type,
      options: d.type === 'enum' ? d.options.map((o) => ({ ...o })) : null,
      value: structuredClone(d.default),
      source: 'default',
      default: structuredClone(d.default),
      persisted: null,
      envValue: null,
      env: d.env ?? [],
      envOverridesPersisted: d.envOverridesPersisted === true,
      min: 'min' in d ? d.min : null,
      max: 'max' in d ? d.max : null,
      unit: 'unit' in d ? (d.unit ?? null) : null,
      shape: d.type === 'json' ? d.shape : null,
      resilience: d.resilience === true,
      restartRequired: d.restartRequired === true,
      cliFlag: null,
      envName: null,
      envRejected: null,
    };
    return { ...base, ...over[key] };
  });
  return { settings, values: nest(Object.fromEntries(settings.map((s) => [s.key, s.value]))) };
}

/** Usage totals with every figure zero (override the ones a test reads). */
export function usageTotals(p: Partial<UsageTotals> = {}): UsageTotals {
  return {
    requests: 0,
    successes: 0,
    errors: 0,
    rescued: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0,
    unpricedRequests: 0,
    ttfbMs: { p50: null, p95: null },
    durationMs: { p50: null, p95: null },
    ...p,
  };
}

export function usagePoint(p: Partial<UsagePoint> & { t: number }): UsagePoint {
  return { requests: 0, errors: 0, rescued: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, ttfbMs: { p50: null, p95: null }, durationMs: { p50: null, p95: null }, ...p };
}

export function usageRow(p: Partial<UsageBreakdownRow> & { key: string }): UsageBreakdownRow {
  return { ...usageTotals(p), label: p.key, ...p };
}

/** A usage report for the last day ending at engine time 1,000,000,000 (no requests unless given). */
export function usageReport(p: Partial<UsageReport> = {}): UsageReport {
  const range = p.range ?? 'day';
  const to = p.to ?? 1_000_000_000;
  return {
    range,
    from: to - USAGE_RANGE_SPEC[range].spanMs,
    to,
    bucketMs: USAGE_RANGE_SPEC[range].bucketMs,
    totals: usageTotals(),
    series: [],
    breakdown: { connection: [], provider: [], model: [], combo: [], clientKey: [] },
    ...p,
  };
}
