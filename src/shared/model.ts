// Ids and DTOs shared by the engine, the contract and the renderer. Plain data only.
import type { SettingGroup, SettingKey, SettingSource, SettingUnit } from './settings';

export const CONNECTION_KINDS = ['anthropic', 'openai', 'openai-compatible', 'anthropic-compatible', 'local'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];

export const AUTH_CLASSES = ['apikey', 'oauth', 'local'] as const;
/** Profile class of a connection: selects breaker thresholds and base cooldowns. */
export type AuthClass = (typeof AUTH_CLASSES)[number];

/** Wire protocol spoken to the upstream. */
export type WireProtocol = 'openai' | 'anthropic';

export interface KindInfo {
  kind: ConnectionKind;
  label: string;
  protocol: WireProtocol;
  defaultProvider: string | null;
  defaultBaseUrl: string | null;
  defaultAuthClass: AuthClass;
  secretRequired: boolean;
  baseUrlHint: string;
  /** Whether a new connection of this kind serves the Responses API (`/responses`) by default. */
  defaultServesResponses: boolean;
}

export const KIND_INFO: Record<ConnectionKind, KindInfo> = {
  anthropic: {
    kind: 'anthropic',
    label: 'Anthropic API key',
    protocol: 'anthropic',
    defaultProvider: 'anthropic',
    defaultBaseUrl: 'https://api.anthropic.com',
    defaultAuthClass: 'apikey',
    secretRequired: true,
    baseUrlHint: 'https://api.anthropic.com (without /v1)',
    defaultServesResponses: false,
  },
  openai: {
    kind: 'openai',
    label: 'OpenAI API key',
    protocol: 'openai',
    defaultProvider: 'openai',
    defaultBaseUrl: 'https://api.openai.com/v1',
    defaultAuthClass: 'apikey',
    secretRequired: true,
    baseUrlHint: 'https://api.openai.com/v1',
    defaultServesResponses: true,
  },
  'openai-compatible': {
    kind: 'openai-compatible',
    label: 'OpenAI-compatible endpoint',
    protocol: 'openai',
    defaultProvider: null,
    defaultBaseUrl: null,
    defaultAuthClass: 'apikey',
    secretRequired: false,
    baseUrlHint: 'e.g. https://api.deepseek.com/v1 (the URL that precedes /chat/completions)',
    defaultServesResponses: false,
  },
  'anthropic-compatible': {
    kind: 'anthropic-compatible',
    label: 'Anthropic-compatible endpoint',
    protocol: 'anthropic',
    defaultProvider: null,
    defaultBaseUrl: null,
    defaultAuthClass: 'apikey',
    secretRequired: false,
    baseUrlHint: 'e.g. https://api.z.ai/api/anthropic (the URL that precedes /v1/messages)',
    defaultServesResponses: false,
  },
  local: {
    kind: 'local',
    label: 'Local server (Ollama, LM Studio)',
    protocol: 'openai',
    defaultProvider: 'ollama',
    defaultBaseUrl: 'http://127.0.0.1:11434/v1',
    defaultAuthClass: 'local',
    secretRequired: false,
    baseUrlHint: 'Ollama http://127.0.0.1:11434/v1, LM Studio http://127.0.0.1:1234/v1',
    defaultServesResponses: false,
  },
};

export const TERMINAL_STATUSES = ['banned', 'expired', 'credits_exhausted'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export const isTerminalStatus = (s: string | null | undefined): s is TerminalStatus =>
  s === 'banned' || s === 'expired' || s === 'credits_exhausted';

/** Persisted per-connection test status (R-CC-02). "unavailable" = in a transient cooldown. */
export type TestStatus = 'untested' | 'active' | 'unavailable' | TerminalStatus;

export interface RateLimitOverrides {
  maxConcurrent?: number;
  modelConcurrency?: Record<string, number>;
  maxWaitMs?: number;
  executionMaxWaitMs?: number;
  /** Optional configured rate: at most this many requests per minute through the queue. */
  requestsPerMinute?: number;
  /** Optional configured spacing between two dispatches. */
  minTimeMs?: number;
}

export interface ProviderSpecificData {
  /** Claude OAuth: accept the low-priority lane on the 5-hour limit (R-CLA-01). */
  lowPriorityMode?: boolean;
  /** Claude OAuth: try the session-limit reset (R-CLA-01). */
  autoLimitReset?: boolean;
  organizationUUID?: string;
  rotationOverrides?: { rateLimitResetSeconds?: number };
  [key: string]: unknown;
}

export interface ConnectionTimeouts {
  connectMs?: number;
  headersMs?: number;
  idleMs?: number;
}

/** Runtime health of one connection (persisted on the connection row). */
export interface ConnectionHealth {
  testStatus: TestStatus;
  /** Epoch ms at which the transient cooldown ends; null when not cooling. */
  rateLimitedUntil: number | null;
  backoffLevel: number;
  lastError: string | null;
  lastErrorType: string | null;
  errorCode: string | null;
  lastErrorAt: number | null;
  lastUsedAt: number | null;
}

export interface ConnectionView {
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
  /**
   * OpenAI protocol: the connection serves the Responses API (`/responses`), so Responses requests
   * go there natively; off, they are translated to Chat Completions. Default on for kind `openai`.
   */
  servesResponses: boolean;
  maxConcurrent: number | null;
  rateLimitOverrides: RateLimitOverrides;
  rateLimitProtection: boolean;
  disableCooling: boolean;
  providerSpecificData: ProviderSpecificData;
  timeouts: ConnectionTimeouts;
  /** The secret, masked ("sk-a…9f3c"); never the value. */
  secret: { set: boolean; masked: string | null };
  health: ConnectionHealth;
  createdAt: number;
  updatedAt: number;
}

export interface ConnectionTestResult {
  ok: boolean;
  status: number | null;
  latencyMs: number | null;
  models: string[];
  message: string;
}

export type BreakerState = 'CLOSED' | 'DEGRADED' | 'OPEN' | 'HALF_OPEN';

export interface BreakerView {
  provider: string;
  profile: AuthClass;
  state: BreakerState;
  failures: number;
  degradationThreshold: number;
  failureThreshold: number;
  resetTimeoutMs: number;
  openedAt: number | null;
  /** When an OPEN breaker admits its probe (reported lazily as HALF_OPEN from then on). */
  halfOpenAt: number | null;
  lastFailureAt: number | null;
  lastFailureStatus: number | null;
  /** Window gate (§1a): provider skipped until this time, when that layer is on. */
  providerCooldownUntil: number | null;
}

export type LockoutScope = 'family' | 'exact';

export interface ModelLockoutView {
  provider: string;
  connectionId: string;
  connectionName: string;
  model: string;
  scope: LockoutScope;
  reason: string;
  status: number | null;
  failureCount: number;
  lockedAt: number;
  expiresAt: number;
}

export interface CooldownEntry {
  connectionId: string;
  name: string;
  provider: string;
  authClass: AuthClass;
  enabled: boolean;
  /** active | cooling | banned | expired | credits_exhausted */
  status: 'active' | 'cooling' | TerminalStatus;
  terminal: boolean;
  rateLimitedUntil: number | null;
  remainingMs: number;
  backoffLevel: number;
  lastErrorType: string | null;
  lastError: string | null;
  errorCode: string | null;
  lastErrorAt: number | null;
  lockouts: ModelLockoutView[];
}

export interface CooldownsView {
  now: number;
  connections: CooldownEntry[];
}

export interface ClearCooldownsResult {
  /** Ids whose cooldown (or error state) was cleared. */
  cleared: string[];
  /** Ids that had nothing to clear. */
  unchanged: string[];
  /** Ids in a terminal state: shown, never cleared here (R-CM-09). */
  skippedTerminal: string[];
  /** Number of model lockouts removed with them. */
  lockoutsCleared: number;
}

export interface AdmissionView {
  connectionId: string;
  /** Whether requests pass through the rate-limit queue (explicit or auto-enabled). */
  protected: boolean;
  protectionSource: 'explicit' | 'auto' | 'off';
  queued: number;
  inFlight: number;
  /** The queue is paused by an upstream retry hint until this time. */
  pausedUntil: number | null;
  /** The strictest connection-wide cap in force (strict cap or shared-quota serialisation). */
  maxConcurrent: number | null;
  /** Models with a cap, activity or (model-scoped limiter) a pause. cap null = no per-model cap. */
  models: { model: string; inFlight: number; queued: number; cap: number | null; pausedUntil: number | null }[];
}

/** A stored row the engine skipped because it cannot be read (it stays in the database). */
export interface UnreadableRecord {
  /** SQLite table, e.g. "provider_connections". */
  table: string;
  /** The row's key in that table (a connection id, a provider, "namespace/key", a request id). */
  id: string;
  /** What is wrong, naming the column (never its content). */
  reason: string;
}

export interface HealthView {
  status: 'ok' | 'degraded';
  version: string;
  /** Seconds since the engine started. */
  uptime: number;
  now: number;
  proxy: { port: number | null; url: string | null; listening: boolean; error: string | null };
  breakers: BreakerView[];
  connections: { total: number; enabled: number; active: number; cooling: number; terminal: number };
  /** Stored rows skipped because they cannot be read; any makes the status "degraded". */
  store: { unreadable: UnreadableRecord[] };
}

export interface AppInfo {
  name: string;
  version: string;
  shell: 'desktop' | 'headless';
  dataDir: string;
  proxyUrl: string | null;
  proxyPort: number | null;
  managementUrl: string | null;
  startedAt: number;
}

export interface SettingView {
  key: SettingKey;
  group: SettingGroup;
  label: string;
  description: string;
  type: 'int' | 'int?' | 'boolean' | 'enum' | 'json';
  /** The choices of an enum setting. */
  options: { value: string; label: string }[] | null;
  value: unknown;
  source: SettingSource;
  default: unknown;
  persisted: unknown;
  envValue: unknown;
  env: readonly string[];
  envOverridesPersisted: boolean;
  min: number | null;
  max: number | null;
  unit: SettingUnit | null;
  shape: string | null;
  resilience: boolean;
  restartRequired: boolean;
}

export interface SettingsView {
  settings: SettingView[];
  /** Effective values nested by dotted key ({"requestQueue": {"maxWaitMs": 30000}}). */
  values: Record<string, unknown>;
}

export interface SettingsPatchResult extends SettingsView {
  /** Values that were clamped into range on the way in. */
  adjusted: { key: string; from: unknown; to: unknown }[];
}

export interface ClientKeyView {
  id: string;
  name: string;
  masked: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export type InboundProtocol = 'anthropic-messages' | 'anthropic-count-tokens' | 'openai-chat' | 'openai-responses' | 'models';

export type SkipReason =
  | 'disabled'
  | 'cooling_down'
  | 'terminal'
  | 'circuit_open'
  | 'provider_cooldown'
  | 'model_lockout'
  | 'model_not_served'
  | 'admission_rejected'
  | 'attempt_budget'
  /** The request cannot be expressed in this target's protocol (a translation refused a field). */
  | 'untranslatable';

export interface SkipEntry {
  connectionId: string;
  connectionName: string;
  provider: string;
  reason: SkipReason;
  /** When the reason lifts by itself (cooldown end, half-open time, lockout expiry). */
  until: number | null;
  detail: string | null;
}

export interface AttemptEntry {
  attempt: number;
  connectionId: string;
  connectionName: string;
  provider: string;
  model: string;
  startedAt: number;
  status: number | null;
  /** Failure verdict reason (rate_limit_exceeded, server_error, timeout, ...) or null on success. */
  errorClass: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  ttfbMs: number | null;
  durationMs: number | null;
  /** Whether the proxy moved on to another connection after this attempt. */
  failedOver: boolean;
  queuedMs: number | null;
  /** Set when the attempt was translated: inbound → upstream API shape, e.g. `anthropic-messages→openai-chat`. */
  translated?: string | null;
  /** Inbound fields the translation accepted but did not send, each `path: why`. */
  dropped?: string[];
}

export interface RequestLogEntry {
  id: string;
  startedAt: number;
  protocol: InboundProtocol;
  path: string;
  clientKeyId: string | null;
  requestedModel: string | null;
  model: string | null;
  stream: boolean;
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  connectionId: string | null;
  connectionName: string | null;
  provider: string | null;
  ttfbMs: number | null;
  durationMs: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  attempts: AttemptEntry[];
  skipped: SkipEntry[];
}

export interface LogsPage {
  entries: RequestLogEntry[];
  /** Pass as `before` to read the next (older) page; null at the end. */
  nextBefore: number | null;
}

export interface ModelsView {
  models: { id: string; provider: string; connectionIds: string[] }[];
  passthroughConnections: { id: string; provider: string; protocol: WireProtocol }[];
}
