// Ids and DTOs shared by the engine, the contract and the renderer. Plain data only.
import type { SettingGroup, SettingKey, SettingSource, SettingUnit } from './settings';
import type { RemainingHold } from './health';

export const CONNECTION_KINDS = ['anthropic', 'openai', 'openai-compatible', 'anthropic-compatible', 'local', 'claude-subscription', 'gemini'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];

export const AUTH_CLASSES = ['apikey', 'oauth', 'local'] as const;
/** Profile class of a connection: selects breaker thresholds and base cooldowns. */
export type AuthClass = (typeof AUTH_CLASSES)[number];

/** Wire protocol spoken to the upstream. */
export type WireProtocol = 'openai' | 'anthropic' | 'gemini';

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
  // A Claude Pro/Max account (issue 13): its secret is the encrypted OAuth token bundle, not a key.
  'claude-subscription': {
    kind: 'claude-subscription',
    label: 'Claude subscription',
    protocol: 'anthropic',
    defaultProvider: 'claude',
    defaultBaseUrl: 'https://api.anthropic.com',
    defaultAuthClass: 'oauth',
    secretRequired: true,
    baseUrlHint: 'https://api.anthropic.com (without /v1)',
    defaultServesResponses: false,
  },
  // Google AI Studio (Generative Language API) keys, spoken to natively (issue 24).
  gemini: {
    kind: 'gemini',
    label: 'Google AI Studio API key (Gemini)',
    protocol: 'gemini',
    defaultProvider: 'gemini',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    defaultAuthClass: 'apikey',
    secretRequired: true,
    baseUrlHint: 'https://generativelanguage.googleapis.com (without /v1beta)',
    defaultServesResponses: false,
  },
};

/** The connection kind whose requests go through the Claude account interceptor. */
export const CLAUDE_KIND = 'claude-subscription' satisfies ConnectionKind;

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
  /** Time to the first model output of a stream (overrides `streams.firstOutputTimeoutMs`; 0 = off). */
  firstOutputMs?: number;
  /** Longest time without model output in a stream (overrides `streams.contentStallTimeoutMs`; 0 = off). */
  contentStallMs?: number;
  /** Hard limit on one streamed attempt (overrides `streams.attemptDeadlineMs`; 0 = off). */
  attemptDeadlineMs?: number;
}

/**
 * Rate-limit protection of one connection (issue 22): `auto` lets the engine's rule decide (the
 * safety net protects enabled API-key connections), `on` always queues, `off` never does.
 */
export const RATE_LIMIT_PROTECTION_MODES = ['auto', 'on', 'off'] as const;
export type RateLimitProtectionMode = (typeof RATE_LIMIT_PROTECTION_MODES)[number];

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
  /** Protection switched on explicitly (mode `on`; SPEC R-RQ-25's boolean). Whether it is protected now: AdmissionView.protected. */
  rateLimitProtection: boolean;
  /** The stored protection mode: automatic (the engine's rule decides), on or off. */
  rateLimitProtectionMode: RateLimitProtectionMode;
  disableCooling: boolean;
  providerSpecificData: ProviderSpecificData;
  timeouts: ConnectionTimeouts;
  /** The secret, masked ("sk-a…9f3c"); never the value. */
  secret: { set: boolean; masked: string | null };
  /** Outbound proxy (http(s):// or socks5://) with any credentials masked; null: direct. */
  outboundProxy: string | null;
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
  /** Provider-wide failures in the sliding window. */
  failures: number;
  degradationThreshold: number;
  failureThreshold: number;
  /** Least share of failures among the window's outcomes (percent) for DEGRADED or OPEN. */
  failureRatePercent: number;
  /** Provider-level outcomes (failures and successes) in the sliding window. */
  windowOutcomes: number;
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

/**
 * Why a model lock exists: `status` the model-lockout status rule (§3.1, master switch);
 * `rate_limit` a 429 without account-wide evidence, cooling only that model on that connection
 * (connection-cooldown durations, independent of the switch); `queue` a long body-declared wait
 * (R-RQ-13); `request_rejected` R-CC-37; `no_cooling` a disableCooling connection's cooldown;
 * `rule` a provider error rule with scope "model" (SPEC §7b, independent of the switch).
 */
export type LockOrigin = 'status' | 'rate_limit' | 'queue' | 'request_rejected' | 'no_cooling' | 'rule';

export interface ModelLockoutView {
  provider: string;
  connectionId: string;
  connectionName: string;
  model: string;
  scope: LockoutScope;
  reason: string;
  status: number | null;
  origin: LockOrigin;
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
  /** Connections whose request-queue pause (on the upstream's Retry-After) was lifted with them. */
  pausesLifted?: number;
  /** What still holds the cleared connections, and when it lifts (e.g. a provider-wide breaker). */
  remaining?: RemainingHold[];
}

export interface AdmissionView {
  connectionId: string;
  /** Whether requests pass through the rate-limit queue (explicit or auto-enabled). */
  protected: boolean;
  protectionSource: 'explicit' | 'auto' | 'off';
  /** The connection's stored mode; with `protected` and `protectionSource` it says what automatic decided. */
  protectionMode: RateLimitProtectionMode;
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
  /** The command-line flag that sets this value for this run (source `cli`); it cannot be saved meanwhile. */
  cliFlag: string | null;
  /** The environment variable `envValue` was read from (null when none of `env` is set). */
  envName: string | null;
  /** An environment variable of this setting that is set but unreadable, so it was ignored. */
  envRejected: string | null;
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

/** What a client key may do beyond calling the proxy. `lease:exclusive`: take exclusive connection leases (R-LS-01). */
export const CLIENT_KEY_SCOPES = ['lease:exclusive'] as const;
export type ClientKeyScope = (typeof CLIENT_KEY_SCOPES)[number];

export interface ClientKeyView {
  id: string;
  name: string;
  masked: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  scopes: ClientKeyScope[];
  /** The connections this key's exclusive leases may hold (R-LS-01); empty = no leases. */
  allowedConnections: string[];
}

export type InboundProtocol = 'anthropic-messages' | 'anthropic-count-tokens' | 'openai-chat' | 'openai-responses' | 'gemini' | 'gemini-count-tokens' | 'models';

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
  | 'protocol_mismatch'
  | 'context_too_small'
  /** The model is known to take fewer tools than the request sends (routing/toolLimits.ts). */
  | 'too_many_tools'
  | 'no_connection'
  /** The request cannot be expressed in this target's protocol (a translation refused a field). */
  | 'untranslatable'
  | 'leased_elsewhere'
  | 'outside_lease_pool';

export interface SkipEntry {
  connectionId: string;
  connectionName: string;
  provider: string;
  reason: SkipReason;
  /** When the reason lifts by itself (cooldown end, half-open time, lockout expiry). */
  until: number | null;
  detail: string | null;
  /** The upstream model of the skipped target (combos route to several models). */
  model?: string;
  /** The combo target (index in the combo's list) this skip belongs to. */
  target?: number;
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
  /** Every target was excluded, and this one was probed because its exclusion was only our guess. */
  lastResort?: boolean;
  /** Set when the attempt was translated: inbound → upstream API shape, e.g. `anthropic-messages→openai-chat`. */
  translated?: string | null;
  /** Inbound fields the translation accepted but did not send, each `path: why`. */
  dropped?: string[];
  /** Why this connection was tried first: the session's pin, or the request's exclusive lease. */
  via?: 'pin' | 'lease' | null;
  /** The connection's egress IP when the attempt started (egress probe, SPEC §7c); null: not known. */
  egressIp?: string | null;
  /** Streams: ms from sending the request to the first model output (text, tool call or thinking); null: none came. */
  firstOutputMs?: number | null;
  /** Streams: bytes of the upstream body read. */
  bytes?: number | null;
  /** Streams: SSE frames read (comments included), and how many of them carried model output. */
  frames?: number | null;
  outputFrames?: number | null;
  /** Which stream watchdog abandoned the attempt, if one did. */
  watchdog?: StreamWatchdog | null;
  /** This attempt's broken answer was continued by a later attempt (mid-stream recovery). */
  continuedElsewhere?: boolean;
  /** This attempt continued an earlier attempt's answer: with an assistant prefill, or a "continue" turn. */
  continuation?: 'prefill' | 'continue' | null;
  /** The target refused the prefill (400), and the continuation was sent again as a "continue" turn. */
  prefillRefused?: boolean;
  /**
   * This attempt sent the request again to the same connection and model after the previous
   * attempt failed: how long it waited first, and why (`hinted`: the upstream said when; `unhinted`:
   * a server error that said nothing, retried after the short default delay).
   */
  retry?: AttemptRetry | null;
}

/** A waited retry of the same target (see AttemptEntry.retry). */
export interface AttemptRetry {
  waitedMs: number;
  why: 'hinted' | 'unhinted';
  /** The status of the failure it retried (null: not an HTTP answer). */
  afterStatus: number | null;
}

/** The stream watchdogs: time to first output, content stall, throughput, the hard attempt deadline. */
export type StreamWatchdog = 'first_output' | 'content_stall' | 'throughput' | 'attempt_deadline';

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
  /** Prompt tokens read from, and written to, the provider's prompt cache (issue 23); null when not reported. */
  cacheReadTokens?: number | null;
  cacheWriteTokens?: number | null;
  /** Estimated cost in USD from the price catalogue when the request finished; null when the model has no price. */
  costUsd?: number | null;
  attempts: AttemptEntry[];
  skipped: SkipEntry[];
  /** The combo that routed the request, the strategy's order and each target's outcome. */
  combo?: ComboTrace | null;
  /** The session the request belongs to and what its pin did (session affinity). */
  affinity?: AffinityTrace | null;
  /** The exclusive lease the request presented and what it did. */
  lease?: LeaseTrace | null;
  /** The client key's name (resolved when read or pushed; null: no key, or one no longer known). */
  clientKeyName?: string | null;
  /** The client key was revoked since (its name is still shown). */
  clientKeyRevoked?: boolean;
  /** Every wait the request took before an attempt or before walking its targets again, with why. */
  waits?: RequestWait[];
}

/**
 * Why a request waited (request log): the connection's request queue was paused by the upstream's
 * retry hint until `until`; rate-limit protection spaces its requests; earlier requests were queued
 * first; a concurrency cap was full; or every target was cooling down and it waited for the first
 * to lift (the cooldown-aware wait of combos and plain models).
 */
export const REQUEST_WAIT_REASONS = ['queue_paused', 'queue_spacing', 'queue_busy', 'concurrency_cap', 'all_cooling'] as const;
export type RequestWaitReason = (typeof REQUEST_WAIT_REASONS)[number];

export interface RequestWait {
  reason: RequestWaitReason;
  ms: number;
  /** When the pause or cooldown it waited for was due to lift (epoch ms), when known. */
  until?: number | null;
  /** concurrency_cap: which cap was full (the strict connection cap, one model's cap, or the shared-quota slots). */
  cap?: 'connection' | 'model' | 'shared' | null;
  /** all_cooling: why the target that lifted first was held back. */
  heldBy?: SkipReason | null;
  /** The connection (and upstream model) waited for, and the attempt the wait came before. */
  connectionId?: string | null;
  connectionName?: string | null;
  model?: string | null;
  attempt?: number | null;
}

export interface LogsPage {
  entries: RequestLogEntry[];
  /** Pass as `before` to read the next (older) page; null at the end. */
  nextBefore: number | null;
}

export interface ModelsView {
  models: { id: string; provider: string; connectionIds: string[] }[];
  passthroughConnections: { id: string; provider: string; protocol: WireProtocol }[];
  /** Combos, which clients ask for by name like a model. */
  combos?: { name: string; strategy: string; targets: number }[];
}

// ---- combos ----------------------------------------------------------------------------------

/** Orderings a combo can use (R-OTH-01), each a ranking of its targets. */
export const COMBO_STRATEGIES = [
  'priority',
  'weighted',
  'round-robin',
  'fill-first',
  'p2c',
  'random',
  'strict-random',
  'least-used',
  'lkgp',
  'cost-optimized',
  'headroom',
  'quota-weighted',
  'reset-aware',
  'reset-window',
  'context-optimized',
  'cache-optimized',
  'auto',
] as const;
export type ComboStrategy = (typeof COMBO_STRATEGIES)[number];

/** R-OTH-01 names that are execution shapes (several calls per request), not orderings: not available yet. */
export const COMBO_EXECUTION_SHAPES = ['context-relay', 'fusion', 'pipeline'] as const;

/** One entry of a combo: a provider's model, or a model on one pinned connection. */
export interface ComboTarget {
  provider: string;
  /** Upstream model id. */
  model: string;
  /** Pinned connection; null = any enabled connection of the provider that serves the model. */
  connectionId: string | null;
  /** Relative share for weighted strategies (1-1000). */
  weight: number;
}

export interface ComboOptions {
  /** Only a literal false opts this combo out of the cooldown-aware waits (R-SQ-19/20). */
  comboCooldownWaitEnabled?: boolean;
  /** Time allowed for each target's response headers; wins over the connection's timeout (R-SQ-21). */
  targetTimeoutMs?: number;
  /** Upstream attempts per walk over the targets (default: the proxy's "Attempts per request"). */
  maxAttempts?: number;
  /** reset-window: how soon a quota reset must come to put that target first. */
  resetWindowMs?: number;
  /** Same-target retries before moving to the next target (default: the proxy's "Same-target retries"; 0 = none). */
  sameTargetRetries?: number;
}

export interface ComboView {
  id: string;
  name: string;
  strategy: ComboStrategy;
  targets: ComboTarget[];
  options: ComboOptions;
  createdAt: number;
  updatedAt: number;
}

export interface ComboWriteResult {
  combo: ComboView;
  /** Things worth knowing that did not stop the write (e.g. the name is also a model id). */
  warnings: string[];
}

/** A model-id pattern (glob: * and ?) whose requests go to a combo. */
export interface ModelMappingView {
  id: string;
  pattern: string;
  comboId: string;
  comboName: string;
  createdAt: number;
  updatedAt: number;
}

/** What "Route model ids" wrote: the one-target combo and the mapping that sends the pattern to it. */
export interface AgentRouteResult {
  combo: ComboView;
  mapping: ModelMappingView;
  warnings: string[];
}

export interface CombosSnapshot {
  combos: ComboView[];
  mappings: ModelMappingView[];
}

export interface ComboTestResult {
  ok: boolean;
  status: number;
  /** Which target answered (from the response headers). */
  connectionId: string | null;
  connectionName: string | null;
  servedModel: string | null;
  latencyMs: number;
  requestId: string | null;
  message: string;
}

export interface ModelCatalogEntry {
  /** Model id or id prefix ("claude-sonnet-4-5" covers "claude-sonnet-4-5-20250929"). */
  model: string;
  contextWindow: number | null;
  /** USD per million tokens. */
  price: { input: number; output: number } | null;
  source: 'built-in' | 'setting';
}

export interface ComboTraceRow {
  /** Index of the combo target this row expands. */
  target: number;
  provider: string;
  model: string;
  connectionId: string | null;
  connectionName: string | null;
  outcome: 'served' | 'failed' | 'skipped' | 'not_tried';
  /** Failure class or skip reason. */
  reason: string | null;
  status: number | null;
}

export interface ComboTrace {
  id: string;
  name: string;
  strategy: ComboStrategy;
  /** How the requested model found the combo. */
  via: 'name' | 'prefix' | 'mapping';
  /** The mapping pattern, when via = mapping. */
  pattern: string | null;
  /** The strategy's order (one row per target and connection), then the targets it could not use. */
  order: ComboTraceRow[];
  /** Cooldown-aware waits taken (R-SQ-16/23). */
  waits: { ms: number; reason: string }[];
}

// ---- Claude subscription accounts (issue 13) -------------------------------------------------

/** One usage window (5-hour or 7-day) as last observed. */
export interface ClaudeUsageWindowView {
  /** Fraction used, 0..1 (0 once the window has reset). */
  utilization: number;
  /** Epoch ms; null when unknown or already reset. */
  resetsAt: number | null;
  /** allowed | allowed_warning | rejected, when the headers said so. */
  status: string | null;
  observedAt: number;
  source: 'headers' | 'usage_api';
}

/** A Claude account's sign-in as the token manager sees it. */
export interface ClaudeTokenView {
  expiresAt: number | null;
  /** `expired` is terminal ("Sign in again"); `refresh_failing` means transient refresh errors. */
  status: 'valid' | 'refresh_due' | 'refresh_failing' | 'expired';
  message: string | null;
  lastRefreshAt: number | null;
  /** While refresh_failing: when the refresh is tried again. */
  retryAt: number | null;
  canRefresh: boolean;
}

export interface ClaudeAccountView {
  connectionId: string;
  /** The sign-in: null when the connection has no readable credentials. */
  token: ClaudeTokenView | null;
  subscriptionType: string | null;
  usage: {
    fiveHour: ClaudeUsageWindowView | null;
    sevenDay: ClaudeUsageWindowView | null;
    /** The unified status of the last answer (allowed, allowed_warning, rejected). */
    status: string | null;
    representativeClaim: string | null;
    overage: { status: string | null; inUse: boolean | null; resetsAt: number | null } | null;
    updatedAt: number;
  } | null;
  /** The low-priority lane (R-CLA-05..15), in memory. */
  lane: {
    state: 'idle' | 'active' | 'blocked';
    /** active: when the lane ends; blocked: when the offer may be accepted again. */
    until: number | null;
    slowStatus: string | null;
    blockedBy: string | null;
    lastEnd: { reason: string; at: number } | null;
  };
  /** The session-limit reset (R-CLA-16..21): null before the first attempt. */
  reset: {
    nextAvailableAt: number | null;
    backoffUntil: number | null;
    lastResult: string | null;
    lastAttemptAt: number | null;
    lastError: string | null;
  } | null;
}

export interface ClaudeAccountsView {
  now: number;
  accounts: ClaudeAccountView[];
}

export interface ClaudeLoginStart {
  loginId: string;
  /** Open this in a browser (the engine already did when `opened`). */
  authorizeUrl: string;
  redirectUri: string;
  mode: 'loopback' | 'paste';
  expiresAt: number;
  /** The engine opened the system browser itself (desktop shell). */
  opened: boolean;
}

/** Where a sign-in stands (pushed as it changes). */
export interface ClaudeLoginView {
  loginId: string;
  status: 'pending' | 'done' | 'failed';
  /** done: the connection that now holds the account. */
  connectionId: string | null;
  error: { code: string; message: string } | null;
}

// ---- session affinity and exclusive leases ---------------------------------------------------

/** Where a request's session id came from, in precedence order (routing/affinity/sessionKey.ts). */
export const SESSION_SOURCES = [
  'x-switchyard-session',
  'x-omniroute-session',
  'x-session-id',
  'x-codex-session-id',
  'x-claude-code-session-id',
  'session-id',
  'session_id',
  'thread-id',
  'x-opencode-session',
  'metadata.user_id',
  'client_metadata.session_id',
  'prompt_cache_key',
  'metadata.sessionId',
  'gemini.conversation',
] as const;
export type SessionSource = (typeof SESSION_SOURCES)[number];

export interface AffinityTrace {
  /** The session id as sent (at most 200 characters). */
  session: string;
  source: SessionSource;
  /** The combo whose target the pin names; null for a plain model. */
  comboId: string | null;
  /** The pin when the request arrived. */
  pinnedConnectionId: string | null;
  pinnedConnectionName: string | null;
  /**
   * followed: the pinned target went first; bypassed: it was not eligible (see reason), so the
   * normal order decided; not_candidate: it cannot serve this request (another model); none: no pin yet.
   */
  pin: 'followed' | 'bypassed' | 'not_candidate' | 'none';
  reason: string | null;
  /** What this request did to the pin: created it (first success), moved it to the connection that served, or kept it. */
  result: 'created' | 'moved' | 'kept';
}

export interface LeaseTrace {
  /** null when the presented owner holds no lease. */
  leaseId: string | null;
  /** The generation the request presented. */
  generation: number | null;
  /** The lease's connection when the request arrived. */
  connectionId: string | null;
  connectionName: string | null;
  /**
   * held: served on the leased connection; moved: the leased connection was not eligible and the
   * lease moved, same generation, to the free connection that served (R-LS-09); refused: answered
   * with `code` before any upstream call; unserved: nothing served.
   */
  result: 'held' | 'moved' | 'refused' | 'unserved';
  movedToConnectionId?: string | null;
  code?: string | null;
}

export interface SessionPinView {
  id: string;
  session: string;
  source: SessionSource;
  clientKeyId: string | null;
  clientKeyName: string | null;
  comboId: string | null;
  comboName: string | null;
  /** Index of the pinned combo target. */
  target: number | null;
  /** The upstream model that served the session last. */
  model: string | null;
  connectionId: string;
  connectionName: string | null;
  createdAt: number;
  /** When the pin last moved to this connection. */
  pinnedAt: number;
  lastUsedAt: number;
  /** lastUsedAt + the TTL (it slides with every request). */
  expiresAt: number;
}

export interface SessionsView {
  now: number;
  /** sessionAffinityTtlMs; 0 = affinity off. */
  ttlMs: number;
  sessions: SessionPinView[];
}

export interface LeaseView {
  id: string;
  clientKeyId: string;
  clientKeyName: string | null;
  connectionId: string;
  connectionName: string | null;
  provider: string | null;
  generation: number;
  label: string | null;
  acquiredAt: number;
  renewedAt: number;
  expiresAt: number;
  ttlMs: number;
}

export interface LeasesView {
  now: number;
  leases: LeaseView[];
}

// ---- provider error rules (SPEC §7, §7b, §7c) ------------------------------------------------

/** A built-in classification rule, as the Error rules page lists it (read-only). */
export interface BuiltInErrorRuleView {
  id: string;
  providers: string[];
  statuses: number[] | null;
  textMarkers: string[] | null;
  codes: string[] | null;
  reason: string;
  scope: 'model' | 'connection' | 'provider';
  baseCooldownMs: number | null;
  note: string;
}

/** A built-in status restatement rule (read-only). */
export interface RestatementRuleView {
  id: string;
  provider: string;
  fromStatuses: number[];
  toStatus: number;
  textMarkers: string[];
  excludeMarkers: string[];
  defaultRetryAfterMs: number | null;
}

export interface ErrorRulesView {
  builtIn: BuiltInErrorRuleView[];
  restatements: RestatementRuleView[];
  /** Providers whose built-in rules see the error text (others: only {code, type}). */
  fullTextProviders: string[];
  /** Providers whose built-in rule scopes are acted on (others: informational). */
  honorsScopeProviders: string[];
  /** The egress-bucketed family (§7c). */
  egressBucketedProviders: string[];
  /** Providers that have an operator rule or default (they bypass both allowlists). */
  operatorProviders: string[];
}

/** What one error would do: the real restatement and classification, described. */
export interface ErrorRuleTestResult {
  /** The status restatement that applied, if any. */
  restated: { ruleId: string; fromStatus: number; toStatus: number; clientRetryAfterMs: number | null } | null;
  /** The status after restatement. */
  status: number;
  /** Which rule decided: an operator rule, a built-in catalog rule, a provider default, a built-in detector, or none. */
  matched: {
    source: 'operator' | 'builtin' | 'default' | 'detector' | 'none';
    id: string | null;
    /** The operator rule's index in providerErrorRules. */
    index: number | null;
    /** False: the rule matched but is not acted on for this provider. */
    honored: boolean;
  };
  reason: string;
  /** What it is held against. */
  scope: 'model' | 'connection' | 'provider' | 'request';
  /** In words: what happens to the connection, the model or the provider. */
  effect: string;
  /** A fixed cooldown the rule sets (ms), when it has one. */
  cooldownMs: number | null;
  /** The terminal state it causes, if any. */
  terminal: string | null;
  failover: boolean;
  tripsBreaker: boolean;
  /** Retry-After the client would be told (ms), when known without a connection. */
  clientRetryAfterMs: number | null;
  notes: string[];
}

export interface EgressProbeView {
  connectionId: string;
  ip: string | null;
  probedAt: number;
  error: string | null;
}
