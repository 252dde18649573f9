// provider_connections: configuration and persisted health of each connection.
import type {
  AuthClass,
  ConnectionHealth,
  ConnectionKind,
  ConnectionTimeouts,
  ProviderSpecificData,
  RateLimitOverrides,
  RateLimitProtectionMode,
  TestStatus,
  WireProtocol,
} from '../../../shared/model';
import { z } from 'zod';
import { providerSpecificDataSchema, rateLimitOverridesSchema, timeoutsSchema } from '../../../shared/contract';
import { KIND_INFO, RATE_LIMIT_PROTECTION_MODES } from '../../../shared/model';
import type { Db } from './db';
import { readJsonColumn, UnreadableRows } from './unreadableRows';

const TABLE = 'provider_connections';

export interface ConnectionHealthState extends ConnectionHealth {
  /** Consecutive failed credential refreshes; `expired` becomes terminal at EXPIRED_RETRY_MAX. */
  expiredRetries: number;
}

/** The engine's in-memory form of a connection. `health` is mutated in place by the resilience layer. */
export interface ConnectionRecord {
  id: string;
  name: string;
  kind: ConnectionKind;
  protocol: WireProtocol;
  provider: string;
  authClass: AuthClass;
  baseUrl: string;
  priority: number;
  enabled: boolean;
  models: string[];
  passthroughModels: boolean;
  /** OpenAI protocol: Responses requests go to `/responses` natively (else through Chat). */
  servesResponses: boolean;
  maxConcurrent: number | null;
  rateLimitOverrides: RateLimitOverrides;
  /** Rate-limit protection: automatic (the safety net decides), on or off (admission/protection.ts). */
  protectionMode: RateLimitProtectionMode;
  disableCooling: boolean;
  providerSpecificData: ProviderSpecificData;
  timeouts: ConnectionTimeouts;
  secretEnc: string | null;
  secretMasked: string | null;
  /** Outbound proxy as shown (credentials masked); the plain URL when it has none. null: direct. */
  outboundProxy: string | null;
  /** The full outbound proxy URL, encrypted, when it carries credentials. */
  outboundProxyEnc: string | null;
  health: ConnectionHealthState;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: string;
  name: string;
  kind: string;
  provider: string;
  auth_class: string;
  base_url: string;
  priority: number;
  enabled: number;
  models: string;
  passthrough_models: number;
  serves_responses: number;
  max_concurrent: number | null;
  rate_limit_overrides: string;
  rate_limit_protection: number;
  rate_limit_protection_mode: string;
  disable_cooling: number;
  provider_specific_data: string;
  timeouts: string;
  secret_enc: string | null;
  secret_masked: string | null;
  outbound_proxy: string | null;
  outbound_proxy_enc: string | null;
  test_status: string;
  rate_limited_until: number | null;
  backoff_level: number;
  last_error: string | null;
  last_error_type: string | null;
  error_code: string | null;
  last_error_at: number | null;
  last_used_at: number | null;
  expired_retries: number;
  created_at: number;
  updated_at: number;
}

/**
 * Reads one JSON column and checks it against the schema the API accepts for it (shape, depth and
 * size), so what is served from the store is what could have been written through the API.
 */
function column<T>(name: string, text: string | null, schema: z.ZodType): { ok: true; value: T } | { ok: false; reason: string } {
  const parsed = readJsonColumn(name, text);
  if (!parsed.ok) return parsed;
  const r = schema.safeParse(parsed.value);
  if (r.success) return { ok: true, value: r.data as T };
  const issue = r.error.issues[0];
  const where = issue && issue.path.length ? ` at ${issue.path.join('.')}` : '';
  return { ok: false, reason: `${name}${where}: ${issue?.message ?? 'has the wrong shape'}` };
}

const modelListSchema = z.array(z.string());

/**
 * What configures a connection, as a team publishes and follows it: not its id, secret, proxy,
 * health or times, and not its protocol (the kind decides it).
 */
export const CONNECTION_CONFIG_FIELDS = [
  'name',
  'kind',
  'provider',
  'authClass',
  'baseUrl',
  'priority',
  'enabled',
  'models',
  'passthroughModels',
  'servesResponses',
  'maxConcurrent',
  'rateLimitOverrides',
  'protectionMode',
  'disableCooling',
  'providerSpecificData',
  'timeouts',
] as const satisfies readonly (keyof ConnectionRecord)[];

export type ConnectionConfig = Pick<ConnectionRecord, (typeof CONNECTION_CONFIG_FIELDS)[number]>;

/** A connection's configuration fields, in CONNECTION_CONFIG_FIELDS's order (its model list copied). */
export function connectionConfigOf(c: ConnectionConfig): ConnectionConfig {
  const out: Record<string, unknown> = {};
  for (const k of CONNECTION_CONFIG_FIELDS) out[k] = c[k];
  out.models = [...c.models];
  return out as unknown as ConnectionConfig;
}

export const emptyHealth = (): ConnectionHealthState => ({
  testStatus: 'untested',
  rateLimitedUntil: null,
  backoffLevel: 0,
  lastError: null,
  lastErrorType: null,
  errorCode: null,
  lastErrorAt: null,
  lastUsedAt: null,
  expiredRetries: 0,
});

/** The record for a row, or why it cannot be read. */
function fromRow(r: Row): ConnectionRecord | { reason: string } {
  const kind = (r.kind in KIND_INFO ? r.kind : 'openai-compatible') as ConnectionKind;
  const models = column<string[]>('models', r.models, modelListSchema);
  if (!models.ok) return models;
  const overrides = column<RateLimitOverrides>('rate_limit_overrides', r.rate_limit_overrides, rateLimitOverridesSchema);
  if (!overrides.ok) return overrides;
  const specific = column<ProviderSpecificData>('provider_specific_data', r.provider_specific_data, providerSpecificDataSchema);
  if (!specific.ok) return specific;
  const timeouts = column<ConnectionTimeouts>('timeouts', r.timeouts, timeoutsSchema);
  if (!timeouts.ok) return timeouts;
  const protectionMode = r.rate_limit_protection_mode as RateLimitProtectionMode;
  if (!RATE_LIMIT_PROTECTION_MODES.includes(protectionMode)) {
    return { reason: `rate_limit_protection_mode: must be one of ${RATE_LIMIT_PROTECTION_MODES.join(', ')}` };
  }
  return {
    id: r.id,
    name: r.name,
    kind,
    protocol: KIND_INFO[kind].protocol,
    provider: r.provider,
    authClass: r.auth_class as AuthClass,
    baseUrl: r.base_url,
    priority: r.priority,
    enabled: r.enabled === 1,
    models: models.value,
    passthroughModels: r.passthrough_models === 1,
    servesResponses: r.serves_responses === 1,
    maxConcurrent: r.max_concurrent,
    rateLimitOverrides: overrides.value,
    protectionMode,
    disableCooling: r.disable_cooling === 1,
    providerSpecificData: specific.value,
    timeouts: timeouts.value,
    secretEnc: r.secret_enc,
    secretMasked: r.secret_masked,
    outboundProxy: r.outbound_proxy ?? null,
    outboundProxyEnc: r.outbound_proxy_enc ?? null,
    health: {
      testStatus: r.test_status as TestStatus,
      rateLimitedUntil: r.rate_limited_until,
      backoffLevel: r.backoff_level,
      lastError: r.last_error,
      lastErrorType: r.last_error_type,
      errorCode: r.error_code,
      lastErrorAt: r.last_error_at,
      lastUsedAt: r.last_used_at,
      expiredRetries: r.expired_retries,
    },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toParams(c: ConnectionRecord) {
  return {
    ...healthParams(c),
    name: c.name,
    kind: c.kind,
    provider: c.provider,
    auth_class: c.authClass,
    base_url: c.baseUrl,
    priority: c.priority,
    enabled: c.enabled ? 1 : 0,
    models: JSON.stringify(c.models),
    passthrough_models: c.passthroughModels ? 1 : 0,
    serves_responses: c.servesResponses ? 1 : 0,
    max_concurrent: c.maxConcurrent,
    rate_limit_overrides: JSON.stringify(c.rateLimitOverrides),
    rate_limit_protection: c.protectionMode === 'on' ? 1 : 0,
    rate_limit_protection_mode: c.protectionMode,
    disable_cooling: c.disableCooling ? 1 : 0,
    provider_specific_data: JSON.stringify(c.providerSpecificData),
    timeouts: JSON.stringify(c.timeouts),
    secret_enc: c.secretEnc,
    secret_masked: c.secretMasked,
    outbound_proxy: c.outboundProxy,
    outbound_proxy_enc: c.outboundProxyEnc,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

function healthParams(c: ConnectionRecord) {
  const h = c.health;
  return {
    id: c.id,
    test_status: h.testStatus,
    rate_limited_until: h.rateLimitedUntil,
    backoff_level: h.backoffLevel,
    last_error: h.lastError,
    last_error_type: h.lastErrorType,
    error_code: h.errorCode,
    last_error_at: h.lastErrorAt,
    last_used_at: h.lastUsedAt,
    expired_retries: h.expiredRetries,
  };
}

const CONFIG_COLS = [
  'name',
  'kind',
  'provider',
  'auth_class',
  'base_url',
  'priority',
  'enabled',
  'models',
  'passthrough_models',
  'serves_responses',
  'max_concurrent',
  'rate_limit_overrides',
  'rate_limit_protection',
  'rate_limit_protection_mode',
  'disable_cooling',
  'provider_specific_data',
  'timeouts',
  'secret_enc',
  'secret_masked',
  'outbound_proxy',
  'outbound_proxy_enc',
  'updated_at',
];
const HEALTH_COLS = [
  'test_status',
  'rate_limited_until',
  'backoff_level',
  'last_error',
  'last_error_type',
  'error_code',
  'last_error_at',
  'last_used_at',
  'expired_retries',
];

export class ConnectionsRepo {
  private readonly stmts;

  constructor(
    private readonly db: Db,
    private readonly unreadable: UnreadableRows = new UnreadableRows(),
  ) {
    const all = ['id', ...CONFIG_COLS, 'created_at', ...HEALTH_COLS];
    this.stmts = {
      all: db.prepare('SELECT * FROM provider_connections ORDER BY priority, created_at'),
      insert: db.prepare(
        `INSERT INTO provider_connections (${all.join(', ')}) VALUES (${all.map((c) => `@${c}`).join(', ')})`,
      ),
      updateConfig: db.prepare(
        `UPDATE provider_connections SET ${CONFIG_COLS.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`,
      ),
      updateHealth: db.prepare(
        `UPDATE provider_connections SET ${HEALTH_COLS.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`,
      ),
      delete: db.prepare('DELETE FROM provider_connections WHERE id = ?'),
    };
  }

  /** Every readable connection; a row that cannot be read is skipped and reported, never fatal. */
  all(): ConnectionRecord[] {
    const out: ConnectionRecord[] = [];
    for (const row of this.stmts.all.all() as Row[]) {
      const rec = fromRow(row);
      if ('reason' in rec) this.unreadable.report(TABLE, row.id, rec.reason);
      else out.push(rec);
    }
    return out;
  }

  /** True for a row all() skipped (it can still be deleted). */
  isUnreadable(id: string): boolean {
    return this.unreadable.has(TABLE, id);
  }

  insert(c: ConnectionRecord): void {
    this.stmts.insert.run(toParams(c));
  }

  /** Writes configuration columns (health is written separately by saveHealth). */
  saveConfig(c: ConnectionRecord): void {
    const p = toParams(c);
    const params: Record<string, unknown> = { id: p.id };
    for (const col of CONFIG_COLS) params[col] = (p as Record<string, unknown>)[col];
    this.stmts.updateConfig.run(params);
  }

  saveHealth(c: ConnectionRecord): void {
    this.stmts.updateHealth.run(healthParams(c));
  }

  saveHealthMany(cs: ConnectionRecord[]): void {
    this.db.transaction(() => {
      for (const c of cs) this.stmts.updateHealth.run(healthParams(c));
    })();
  }

  delete(id: string): boolean {
    this.unreadable.resolve(TABLE, id);
    return this.stmts.delete.run(id).changes > 0;
  }
}
