// The management contract: every method (with its REST route and input schema) and every push
// event, declared once. The IPC handlers (desktop), the HTTP routes (headless) and the renderer's
// Bridge are all derived from this object; tests/unit/foundation/contractDrift.test.ts fails when they drift.
import { z } from 'zod';
import { MODEL_PATTERN_MAX_LENGTH, refinePattern } from './modelIds';
import type { HealthSnapshot, RemainingHold } from './health';
import type {
  AdmissionView,
  AppInfo,
  ClaudeAccountsView,
  ClaudeLoginStart,
  ClaudeLoginView,
  BreakerView,
  ClearCooldownsResult,
  ClientKeyView,
  ComboStrategy,
  ComboTestResult,
  ComboView,
  ComboWriteResult,
  CombosSnapshot,
  ConnectionTestResult,
  ConnectionView,
  CooldownsView,
  EgressProbeView,
  ErrorRuleTestResult,
  ErrorRulesView,
  HealthView,
  LeasesView,
  LogsPage,
  ModelCatalogEntry,
  ModelLockoutView,
  ModelMappingView,
  AgentRouteResult,
  ModelsView,
  RateLimitProtectionMode,
  RequestLogEntry,
  SessionsView,
  SettingsPatchResult,
  SettingsView,
} from './model';
import { jsonTooDeep, jsonValueProblem, MANAGEMENT_JSON_MAX_DEPTH, prototypeKeyPath, type JsonLimits } from './jsonBounds';
import { AUTH_CLASSES, CLIENT_KEY_SCOPES, COMBO_EXECUTION_SHAPES, COMBO_STRATEGIES, CONNECTION_KINDS, RATE_LIMIT_PROTECTION_MODES } from './model';
import { checkOutboundProxy } from './outboundProxy';
import { LOG_STATUS_CLASSES } from './logQuery';
import { AGENT_CONFIG_AGENTS, type AgentConfigStatus } from './agentConfig';
import type { NotificationsFeed } from './notifications';
import { TEAM_ROLES, type TeamView } from './team';
import { EXPORT_FORMATS, USAGE_GRAINS_NAMES, USAGE_RANGES, type ExportFile, type PriceCatalogueView, type PriceEntry, type StateTimelineView, type UsageReport } from './usage';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface MethodSpec<I extends z.ZodType = z.ZodType, O = unknown> {
  http: HttpMethod;
  /** REST path; ":name" segments fill the input field of the same name. */
  path: string;
  input: I;
  /** Where a JSON body goes: merged into the input (default) or under one input field. */
  bodyField?: string;
  /**
   * The method answers an ExportFile: over HTTP that is sent as the download itself (its content
   * type, an attachment with its file name), and the HTTP bridge reads it back into an ExportFile.
   */
  download?: boolean;
  summary: string;
  /** Phantom: the output type. */
  readonly _output?: O;
}

const method =
  <O>() =>
  <I extends z.ZodType>(spec: Omit<MethodSpec<I, O>, '_output'>): MethodSpec<I, O> =>
    spec as MethodSpec<I, O>;

const none = z.object({}).strict();
const id = z.string().min(1).max(200);

// ---- export input --------------------------------------------------------------------------------

/** A time: epoch ms, or an ISO 8601 date or date-time. */
const instant = z.union([z.number(), z.string().trim().min(1).max(40)]).transform((v, ctx) => {
  const ms = typeof v === 'number' ? v : /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms) || ms < 0) {
    ctx.addIssue({ code: 'custom', message: 'is not a time (epoch ms or an ISO date such as 2025-01-31T00:00Z)' });
    return z.NEVER;
  }
  return Math.floor(ms);
});
const exportRange = z.object({ from: instant, to: instant, format: z.enum(EXPORT_FORMATS).optional() });
const rangeInOrder = (v: { from: number; to: number }) => v.from <= v.to;
const rangeInOrderIssue = { message: 'the start of the time range is after its end', path: ['from'] };

// ---- connection input ------------------------------------------------------------------------

/**
 * Limits on the free-form JSON a connection stores. Anything stored is read back, cloned and
 * serialised on every list and push, so it must stay plain, shallow and small.
 */
export const PROVIDER_SPECIFIC_DATA_LIMITS: JsonLimits = { maxDepth: 8, maxChars: 64 * 1024 };
export const RATE_LIMIT_OVERRIDES_LIMITS: JsonLimits = { maxDepth: 3, maxChars: 256 * 1024 };

/** Refuses a value that is not plain JSON within `limits`; the message is prefixed with the field. */
const withinJsonLimits =
  (limits: JsonLimits) =>
  (value: unknown, ctx: z.RefinementCtx): void => {
    const problem = jsonValueProblem(value, limits);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  };

const positiveInt = z.number().int().min(1);
export const rateLimitOverridesSchema = z
  .object({
    maxConcurrent: positiveInt.max(100_000).optional(),
    modelConcurrency: z
      .record(z.string().min(1).max(200), positiveInt.max(100_000))
      .refine((r) => Object.keys(r).length <= 2_000, 'lists more than 2000 models')
      .optional(),
    maxWaitMs: z.number().int().min(1).max(86_400_000).optional(),
    executionMaxWaitMs: z.number().int().min(1).max(86_400_000).optional(),
    requestsPerMinute: positiveInt.max(1_000_000).optional(),
    minTimeMs: z.number().int().min(0).max(3_600_000).optional(),
  })
  .strict()
  .superRefine(withinJsonLimits(RATE_LIMIT_OVERRIDES_LIMITS));

export const providerSpecificDataSchema = z
  .object({
    lowPriorityMode: z.boolean().optional(),
    autoLimitReset: z.boolean().optional(),
    organizationUUID: z.string().max(100).optional(),
    rotationOverrides: z
      .object({ rateLimitResetSeconds: z.number().int().min(1).max(21_600).optional() })
      .strict()
      .optional(),
  })
  .catchall(z.unknown())
  .superRefine(withinJsonLimits(PROVIDER_SPECIFIC_DATA_LIMITS));

export const timeoutsSchema = z
  .object({
    connectMs: z.number().int().min(100).max(600_000).optional(),
    headersMs: z.number().int().min(1_000).max(86_400_000).optional(),
    idleMs: z.number().int().min(1_000).max(3_600_000).optional(),
    /** Stream resilience (settings `streams.*`): 0 turns the deadline off for this connection. */
    firstOutputMs: z.number().int().min(0).max(3_600_000).optional(),
    contentStallMs: z.number().int().min(0).max(3_600_000).optional(),
    attemptDeadlineMs: z.number().int().min(0).max(86_400_000).optional(),
  })
  .strict();

const providerId = z
  .string()
  .trim()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'use lowercase letters, digits, ".", "_" or "-" (e.g. "glm")');

const httpUrl = z
  .string()
  .trim()
  .max(2_000)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// URL');

/** Write-only like the secret: omitted keeps it, null removes it; answers show it masked. */
const outboundProxyField = z
  .string()
  .trim()
  .max(2_000)
  .superRefine((v, ctx) => {
    const c = checkOutboundProxy(v);
    if (!c.ok) ctx.addIssue({ code: 'custom', message: c.message });
  })
  .nullable()
  .optional();

const connectionFields = {
  name: z.string().trim().min(1).max(100),
  kind: z.enum(CONNECTION_KINDS),
  provider: providerId.optional(),
  authClass: z.enum(AUTH_CLASSES).optional(),
  baseUrl: httpUrl.optional(),
  /** Write-only. Omitted on update: keep the stored secret; null: remove it. */
  secret: z.string().min(1).max(20_000).nullable().optional(),
  priority: z.number().int().min(0).max(1_000).optional(),
  enabled: z.boolean().optional(),
  models: z.array(z.string().trim().min(1).max(200)).max(2_000).optional(),
  passthroughModels: z.boolean().optional(),
  /** OpenAI protocol: serves /responses natively (default by kind: on for `openai`). */
  servesResponses: z.boolean().optional(),
  maxConcurrent: z.number().int().min(1).max(100_000).nullable().optional(),
  rateLimitOverrides: rateLimitOverridesSchema.optional(),
  disableCooling: z.boolean().optional(),
  providerSpecificData: providerSpecificDataSchema.optional(),
  timeouts: timeoutsSchema.optional(),
  outboundProxy: outboundProxyField,
};

/** Rate-limit protection: automatic (the engine's rule decides), on or off (issue 22). */
export const protectionModeSchema = z.enum(RATE_LIMIT_PROTECTION_MODES);

/**
 * POST /api/rate-limits: `mode` (automatic / on / off), or SPEC R-RQ-28's boolean `enabled`, kept
 * for compatibility: true sets `on`, false removes the explicit protection (back to `auto`, where
 * the safety net still applies, R-RQ-26). Exactly one of the two.
 */
export const rateLimitProtectionInputSchema = z
  .object({ connectionId: id, enabled: z.boolean().optional(), mode: protectionModeSchema.optional() })
  .strict()
  .superRefine((v, ctx) => {
    if ((v.enabled === undefined) === (v.mode === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['mode'], message: 'give either mode ("auto", "on" or "off") or enabled (true or false)' });
    }
  });

export interface RateLimitProtectionResult {
  connectionId: string;
  /** Explicitly on (mode `on`). */
  rateLimitProtection: boolean;
  mode: RateLimitProtectionMode;
  /** Whether its requests go through the rate-limit queue now. */
  protected: boolean;
  protectionSource: AdmissionView['protectionSource'];
}

/**
 * On create, protection is given as the mode, or as SPEC's boolean (true: on, false: automatic);
 * the mode wins when both are given.
 */
export const connectionCreateSchema = z
  .object({ ...connectionFields, rateLimitProtection: z.boolean().optional(), rateLimitProtectionMode: protectionModeSchema.optional() })
  .strict();
export type ConnectionCreateInput = z.input<typeof connectionCreateSchema>;

/**
 * PUT/PATCH body. `rateLimitProtection` and `rateLimitProtectionMode` are accepted and ignored:
 * only POST /api/rate-limits changes protection (R-RQ-29).
 */
export const connectionUpdateSchema = z
  .object({
    name: connectionFields.name.optional(),
    kind: connectionFields.kind.optional(),
    provider: connectionFields.provider,
    authClass: connectionFields.authClass,
    baseUrl: connectionFields.baseUrl,
    secret: connectionFields.secret,
    priority: connectionFields.priority,
    enabled: connectionFields.enabled,
    models: connectionFields.models,
    passthroughModels: connectionFields.passthroughModels,
    servesResponses: connectionFields.servesResponses,
    maxConcurrent: connectionFields.maxConcurrent,
    rateLimitOverrides: connectionFields.rateLimitOverrides,
    disableCooling: connectionFields.disableCooling,
    providerSpecificData: connectionFields.providerSpecificData,
    timeouts: connectionFields.timeouts,
    outboundProxy: connectionFields.outboundProxy,
    rateLimitProtection: z.unknown().optional(),
    rateLimitProtectionMode: z.unknown().optional(),
  })
  .strict();
export type ConnectionUpdateInput = z.input<typeof connectionUpdateSchema>;

/**
 * Where new Claude credentials go: an existing Claude subscription connection (`connectionId`,
 * "Sign in again"), or a new one with these fields (all optional: "Claude subscription",
 * provider "claude", https://api.anthropic.com, priority 1).
 */
const claudeTarget = {
  connectionId: id.optional(),
  name: connectionFields.name.optional(),
  provider: providerId.optional(),
  baseUrl: httpUrl.optional(),
  priority: connectionFields.priority,
};

const cooldownClearSchema = z.union([
  z.object({ connectionIds: z.array(id).min(1).max(10_000) }).strict(),
  z.object({ all: z.literal(true), provider: z.string().min(1).max(100).optional() }).strict(),
]);

// ---- combo input -------------------------------------------------------------------------------

/** Characters of a model id (and so of a combo name): what agents send as "model". */
const MODEL_ID_CHARS = /^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$/;

export const comboNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(MODEL_ID_CHARS, 'use letters, digits and . _ : @ + / - (it is sent as the "model" of a request)')
  .refine((s) => !s.toLowerCase().startsWith('combo/'), 'leave out the "combo/" prefix: clients may add it, the name is what follows');

export const comboStrategySchema = z
  .string()
  .superRefine((v, ctx) => {
    if ((COMBO_STRATEGIES as readonly string[]).includes(v)) return;
    const shape = (COMBO_EXECUTION_SHAPES as readonly string[]).includes(v);
    ctx.addIssue({
      code: 'custom',
      message: shape
        ? `"${v}" is an execution shape (several upstream calls per request), not an ordering; it is not available yet`
        : `must be one of ${COMBO_STRATEGIES.join(', ')}`,
    });
  })
  .transform((v) => v as ComboStrategy);

export const comboTargetSchema = z
  .object({
    /** Optional when connectionId is given (the connection's provider). */
    provider: providerId.optional(),
    model: z.string().trim().min(1).max(200),
    connectionId: id.nullable().optional(),
    weight: z.number().int().min(1).max(1_000).optional(),
  })
  .strict();
export type ComboTargetInput = z.input<typeof comboTargetSchema>;

export const comboOptionsSchema = z
  .object({
    comboCooldownWaitEnabled: z.boolean().optional(),
    targetTimeoutMs: z.number().int().min(100).max(86_400_000).optional(),
    maxAttempts: z.number().int().min(1).max(20).optional(),
    resetWindowMs: z.number().int().min(1_000).max(7 * 86_400_000).optional(),
    sameTargetRetries: z.number().int().min(0).max(5).optional(),
  })
  .strict();

const comboTargets = z.array(comboTargetSchema).min(1, 'a combo needs at least one target').max(50);

export const comboCreateSchema = z
  .object({
    name: comboNameSchema,
    strategy: comboStrategySchema.optional(),
    targets: comboTargets,
    options: comboOptionsSchema.optional(),
  })
  .strict();
export type ComboCreateInput = z.input<typeof comboCreateSchema>;

/** PATCH body: any subset. PUT requires name and targets (checked by the service). */
export const comboUpdateSchema = z
  .object({
    name: comboNameSchema.optional(),
    strategy: comboStrategySchema.optional(),
    targets: comboTargets.optional(),
    options: comboOptionsSchema.optional(),
  })
  .strict();
export type ComboUpdateInput = z.input<typeof comboUpdateSchema>;

export const modelMappingSchema = z
  .object({
    pattern: z
      .string()
      .trim()
      .min(1)
      .max(MODEL_PATTERN_MAX_LENGTH)
      .regex(/^[A-Za-z0-9*?._:@+/-]+$/, 'use model-id characters and the wildcards * (any run) and ? (one character)')
      .superRefine(refinePattern),
    /** The combo's name or id. */
    combo: z.string().trim().min(1).max(200),
  })
  .strict();
export type ModelMappingInput = z.input<typeof modelMappingSchema>;

/** "Route this agent's model ids to …": a pattern (e.g. claude-*) to one connection and model. */
export const agentRouteSchema = z
  .object({
    pattern: modelMappingSchema.shape.pattern,
    connectionId: id,
    model: z.string().trim().min(1).max(200),
  })
  .strict();
export type AgentRouteInput = z.input<typeof agentRouteSchema>;

// ---- client key input ------------------------------------------------------------------------

/** What a client key may do beyond the proxy, and the connections its exclusive leases may hold (R-LS-01). */
export const clientKeyAccessSchema = {
  scopes: z
    .array(z.enum(CLIENT_KEY_SCOPES))
    .max(CLIENT_KEY_SCOPES.length)
    .refine((a) => new Set(a).size === a.length, 'lists a scope twice')
    .optional(),
  allowedConnections: z
    .array(id)
    .max(500)
    .refine((a) => new Set(a).size === a.length, 'lists a connection twice')
    .optional(),
};

// ---- team input --------------------------------------------------------------------------------

/** PATCH /api/team/settings: any subset; null removes a saved value (the address, the name, the key). */
export const teamSettingsPatchSchema = z
  .object({
    redisUrl: z.string().trim().max(2_000).nullable().optional(),
    name: z.string().trim().max(64).nullable().optional(),
    /** Write-only: a pasted team key (base64 or hex of 32 bytes). */
    key: z.string().trim().max(200).nullable().optional(),
    role: z.enum(TEAM_ROLES).optional(),
    displayName: z.string().trim().max(100).nullable().optional(),
  })
  .strict();
export type TeamSettingsPatchInput = z.input<typeof teamSettingsPatchSchema>;

// ---- the contract ------------------------------------------------------------------------------

export const contract = {
  getHealth: method<HealthView>()({
    http: 'GET',
    path: '/api/monitoring/health',
    input: none,
    summary: 'Engine status, version, uptime, proxy port and provider breakers.',
  }),
  getAppInfo: method<AppInfo>()({
    http: 'GET',
    path: '/api/app',
    input: none,
    summary: 'Shell, version, data directory and proxy URL.',
  }),
  getManagementToken: method<{ token: string }>()({
    http: 'GET',
    path: '/api/app/management-token',
    input: none,
    summary: 'The local management token (for scripts and the browser dashboard).',
  }),

  getSettings: method<SettingsView>()({
    http: 'GET',
    path: '/api/settings',
    input: none,
    summary: 'Every setting with its value, source (default/env/persisted) and range.',
  }),
  patchSettings: method<SettingsPatchResult>()({
    http: 'PATCH',
    path: '/api/settings',
    input: z.object({ patch: z.record(z.string(), z.unknown()) }).strict(),
    bodyField: 'patch',
    summary: 'Change settings (nested or dotted keys; null removes the saved value). All or nothing.',
  }),
  getResilience: method<SettingsView>()({
    http: 'GET',
    path: '/api/resilience',
    input: none,
    summary: 'Resilience settings.',
  }),
  patchResilience: method<SettingsPatchResult>()({
    http: 'PATCH',
    path: '/api/resilience',
    input: z.object({ patch: z.record(z.string(), z.unknown()) }).strict(),
    bodyField: 'patch',
    summary: 'Change resilience settings, e.g. {"p2cLatency": {"weight": 10}}.',
  }),
  resetResilience: method<{ providers: string[]; remaining: RemainingHold[] }>()({
    http: 'POST',
    path: '/api/resilience/reset',
    input: z.object({ provider: z.string().min(1).max(100).optional() }).strict(),
    summary: 'Reset provider breakers (one provider, or all) and their window-gate memory.',
  }),
  listBreakers: method<BreakerView[]>()({
    http: 'GET',
    path: '/api/resilience/breakers',
    input: none,
    summary: 'Provider breakers with state and time to half-open.',
  }),
  listCooldowns: method<CooldownsView>()({
    http: 'GET',
    path: '/api/resilience/cooldowns',
    input: z.object({ provider: z.string().min(1).max(100).optional() }).strict(),
    summary: 'Connections with status, remaining cooldown, backoff level, last error type and model lockouts.',
  }),
  clearCooldowns: method<ClearCooldownsResult>()({
    http: 'POST',
    path: '/api/resilience/cooldowns',
    input: cooldownClearSchema,
    summary: 'Clear cooldowns for connections ({connectionIds}) or all ({all: true, provider?}); terminal states stay.',
  }),
  listModelCooldowns: method<{ now: number; lockouts: ModelLockoutView[] }>()({
    http: 'GET',
    path: '/api/resilience/model-cooldowns',
    input: none,
    summary: 'Active model lockouts.',
  }),
  clearModelCooldown: method<{ removed: number; pausesLifted: number; remaining: RemainingHold[] }>()({
    http: 'DELETE',
    path: '/api/resilience/model-cooldowns',
    input: z.object({ provider: z.string().min(1), connection: z.string().min(1), model: z.string().min(1) }).strict(),
    summary: "Re-enable a locked model on a connection: its lockout and its own queue pause; returns what still holds it.",
  }),
  getConnectionHealth: method<HealthSnapshot>()({
    http: 'GET',
    path: '/api/resilience/health',
    input: none,
    summary: 'The health of every connection and model as the dashboard shows it, with reasons and when each hold lifts.',
  }),

  listConnections: method<ConnectionView[]>()({
    http: 'GET',
    path: '/api/providers',
    input: none,
    summary: 'Provider connections (secrets masked) with their health.',
  }),
  getConnection: method<ConnectionView>()({
    http: 'GET',
    path: '/api/providers/:id',
    input: z.object({ id }).strict(),
    summary: 'One connection.',
  }),
  createConnection: method<ConnectionView>()({
    http: 'POST',
    path: '/api/providers',
    input: connectionCreateSchema,
    summary: 'Add a connection.',
  }),
  replaceConnection: method<ConnectionView>()({
    http: 'PUT',
    path: '/api/providers/:id',
    input: z.object({ id, patch: connectionUpdateSchema }).strict(),
    bodyField: 'patch',
    summary: 'Update a connection (rateLimitProtection is ignored here).',
  }),
  updateConnection: method<ConnectionView>()({
    http: 'PATCH',
    path: '/api/providers/:id',
    input: z.object({ id, patch: connectionUpdateSchema }).strict(),
    bodyField: 'patch',
    summary: 'Change some fields of a connection (rateLimitProtection is ignored here).',
  }),
  deleteConnection: method<{ deleted: boolean }>()({
    http: 'DELETE',
    path: '/api/providers/:id',
    input: z.object({ id }).strict(),
    summary: 'Delete a connection.',
  }),
  testConnection: method<ConnectionTestResult>()({
    http: 'POST',
    path: '/api/providers/:id/test',
    input: z.object({ id }).strict(),
    summary: 'Check that the upstream answers with these credentials (lists its models when it can).',
  }),

  setRateLimitProtection: method<RateLimitProtectionResult>()({
    http: 'POST',
    path: '/api/rate-limits',
    input: rateLimitProtectionInputSchema,
    summary: 'Set a connection\'s rate-limit queue protection: mode automatic, on or off (or SPEC\'s enabled: true = on, false = automatic).',
  }),
  getAdmission: method<AdmissionView[]>()({
    http: 'GET',
    path: '/api/rate-limits',
    input: none,
    summary: 'Queue depth, in-flight requests and protection per connection.',
  }),

  listClientKeys: method<ClientKeyView[]>()({
    http: 'GET',
    path: '/api/keys',
    input: none,
    summary: 'Client keys that agents use to call the proxy (masked).',
  }),
  createClientKey: method<{ key: ClientKeyView; secret: string }>()({
    http: 'POST',
    path: '/api/keys',
    input: z.object({ name: z.string().trim().min(1).max(100), ...clientKeyAccessSchema }).strict(),
    summary: 'Create a client key (optionally with scopes and the connections its leases may hold).',
  }),
  updateClientKey: method<ClientKeyView>()({
    http: 'PATCH',
    path: '/api/keys/:id',
    input: z.object({ id, patch: z.object(clientKeyAccessSchema).strict() }).strict(),
    bodyField: 'patch',
    summary: 'Change a client key\'s scopes (lease:exclusive) and allowed connections.',
  }),
  revealClientKey: method<{ secret: string }>()({
    http: 'POST',
    path: '/api/keys/:id/reveal',
    input: z.object({ id }).strict(),
    summary: 'The full value of a client key (for copy-paste setup).',
  }),
  revokeClientKey: method<{ revoked: boolean }>()({
    http: 'DELETE',
    path: '/api/keys/:id',
    input: z.object({ id }).strict(),
    summary: 'Revoke a client key.',
  }),

  listAgentConfigs: method<AgentConfigStatus[]>()({
    http: 'GET',
    path: '/api/agent-configs',
    input: none,
    summary: "Whether Switchyard's keys are in each CLI agent's own configuration file.",
  }),
  applyAgentConfig: method<AgentConfigStatus>()({
    http: 'POST',
    path: '/api/agent-configs/:agent/apply',
    input: z
      .object({ agent: z.enum(AGENT_CONFIG_AGENTS), keyId: id, model: z.string().trim().min(1).max(200).nullable().optional() })
      .strict(),
    summary: "Write the proxy address, a client key and a model into the agent's configuration file (merged, with a backup).",
  }),
  restoreAgentConfig: method<AgentConfigStatus>()({
    http: 'POST',
    path: '/api/agent-configs/:agent/restore',
    input: z.object({ agent: z.enum(AGENT_CONFIG_AGENTS) }).strict(),
    summary: "Put back what Apply replaced in the agent's configuration file; keys changed since stay.",
  }),

  listLogs: method<LogsPage>()({
    http: 'GET',
    path: '/api/logs',
    input: z
      .object({
        limit: z.coerce.number().int().min(1).max(500).optional(),
        before: z.coerce.number().int().optional(),
        connectionId: z.string().max(200).optional(),
        errorsOnly: z
          .union([z.boolean(), z.enum(['true', 'false'])])
          .transform((v) => v === true || v === 'true')
          .optional(),
        status: z.enum(LOG_STATUS_CLASSES).optional(),
        requestId: z.string().trim().min(1).max(200).optional(),
        search: z.string().trim().max(200).optional(),
        from: z.coerce.number().int().min(0).optional(),
        to: z.coerce.number().int().min(0).optional(),
      })
      .strict()
      .refine((v) => v.from === undefined || v.to === undefined || v.from <= v.to, { message: 'the start of the time range is after its end', path: ['from'] }),
    summary:
      'Recent requests, newest first, with their attempts and skipped connections; filtered by connection, status class, exact request id, text (model, connection, client key, error) and time range.',
  }),
  getLog: method<RequestLogEntry>()({
    http: 'GET',
    path: '/api/logs/:id',
    input: z.object({ id }).strict(),
    summary: 'One request with every attempt.',
  }),
  getUsage: method<UsageReport>()({
    http: 'GET',
    path: '/api/usage',
    input: z.object({ range: z.enum(USAGE_RANGES).optional() }).strict(),
    summary:
      'Usage over the last hour, day (default), week or month: totals, a time series and breakdowns by connection, provider, model, combo and client key (from the usage roll-ups, which outlive the request log).',
  }),
  exportUsage: method<ExportFile>()({
    http: 'GET',
    path: '/api/export/usage',
    input: exportRange.extend({ grain: z.enum(USAGE_GRAINS_NAMES).optional() }).strict().refine(rangeInOrder, rangeInOrderIssue),
    download: true,
    summary:
      'The usage roll-up rows of a time range (by minute, hour or day; chosen by the range when not given) as a CSV or JSON download; at most 200000 rows.',
  }),
  exportLogs: method<ExportFile>()({
    http: 'GET',
    path: '/api/export/logs',
    input: exportRange.strict().refine(rangeInOrder, rangeInOrderIssue),
    download: true,
    summary: 'The request log rows of a time range as a CSV or JSON download, oldest first; at most the newest 100000 rows.',
  }),
  listModels: method<ModelsView>()({
    http: 'GET',
    path: '/api/models',
    input: none,
    summary: 'Models the proxy can route, by connection.',
  }),

  listCombos: method<ComboView[]>()({
    http: 'GET',
    path: '/api/combos',
    input: none,
    summary: 'Combos: named routing pools of provider/model targets with a strategy.',
  }),
  getCombo: method<ComboView>()({
    http: 'GET',
    path: '/api/combos/:id',
    input: z.object({ id }).strict(),
    summary: 'One combo (by id or name).',
  }),
  createCombo: method<ComboWriteResult>()({
    http: 'POST',
    path: '/api/combos',
    input: comboCreateSchema,
    summary: 'Add a combo; warnings say when its name is also a model id.',
  }),
  replaceCombo: method<ComboWriteResult>()({
    http: 'PUT',
    path: '/api/combos/:id',
    input: z.object({ id, patch: comboUpdateSchema }).strict(),
    bodyField: 'patch',
    summary: 'Replace a combo (name and targets required; omitted strategy and options reset).',
  }),
  updateCombo: method<ComboWriteResult>()({
    http: 'PATCH',
    path: '/api/combos/:id',
    input: z.object({ id, patch: comboUpdateSchema }).strict(),
    bodyField: 'patch',
    summary: 'Change some fields of a combo.',
  }),
  deleteCombo: method<{ deleted: boolean; mappingsRemoved: number }>()({
    http: 'DELETE',
    path: '/api/combos/:id',
    input: z.object({ id }).strict(),
    summary: 'Delete a combo and the model mappings that point at it.',
  }),
  testCombo: method<ComboTestResult>()({
    http: 'POST',
    path: '/api/combos/:id/test',
    input: z.object({ id }).strict(),
    summary: 'Send one small request through the proxy to this combo and report which target served it.',
  }),
  listModelMappings: method<ModelMappingView[]>()({
    http: 'GET',
    path: '/api/model-mappings',
    input: none,
    summary: 'Model-id patterns routed to combos (e.g. claude-sonnet-* to combo "sonnet").',
  }),
  createModelMapping: method<ModelMappingView>()({
    http: 'POST',
    path: '/api/model-mappings',
    input: modelMappingSchema,
    summary: 'Route every model id matching a pattern to a combo.',
  }),
  updateModelMapping: method<ModelMappingView>()({
    http: 'PUT',
    path: '/api/model-mappings/:id',
    input: z.object({ id, patch: modelMappingSchema }).strict(),
    bodyField: 'patch',
    summary: 'Change a mapping\'s pattern or combo.',
  }),
  routeAgentModels: method<AgentRouteResult>()({
    http: 'POST',
    path: '/api/agent-routes',
    input: agentRouteSchema,
    summary: "Route every model id matching a pattern (e.g. claude-*) to one connection's model: adds or updates the combo and the mapping that do it.",
  }),
  deleteModelMapping: method<{ deleted: boolean }>()({
    http: 'DELETE',
    path: '/api/model-mappings/:id',
    input: z.object({ id }).strict(),
    summary: 'Delete a model mapping.',
  }),
  listSessions: method<SessionsView>()({
    http: 'GET',
    path: '/api/sessions',
    input: none,
    summary: 'Session affinity pins: which session is pinned to which connection (or combo target), since when, until when.',
  }),
  forgetSession: method<{ forgotten: boolean }>()({
    http: 'DELETE',
    path: '/api/sessions/:id',
    input: z.object({ id }).strict(),
    summary: 'Forget a session pin; its next request is routed as a new session.',
  }),
  listLeases: method<LeasesView>()({
    http: 'GET',
    path: '/api/leases',
    input: none,
    summary: 'Active exclusive connection leases: which client key holds which connection, generation and expiry.',
  }),
  releaseLease: method<{ released: boolean }>()({
    http: 'DELETE',
    path: '/api/leases/:id',
    input: z.object({ id }).strict(),
    summary: 'Release a lease now (its holder\'s next request is refused as lease_not_found).',
  }),
  getModelCatalog: method<ModelCatalogEntry[]>()({
    http: 'GET',
    path: '/api/model-catalog',
    input: none,
    summary: 'Context windows and prices the combo strategies use (built-in, plus the settings that override them).',
  }),
  // The price catalogue (issue 23): USD per million tokens, built-in and edited.
  listPrices: method<PriceCatalogueView>()({
    http: 'GET',
    path: '/api/prices',
    input: none,
    summary: 'Model prices per million tokens (input, output, cache reads and writes), each with its date and whether it is built in or edited.',
  }),
  setPrice: method<PriceEntry>()({
    http: 'PUT',
    path: '/api/prices',
    input: z
      .object({
        model: z.string().max(200),
        price: z
          .object({
            input: z.number(),
            output: z.number(),
            cacheRead: z.number().nullable().optional(),
            cacheWrite: z.number().nullable().optional(),
          })
          .strict(),
        asOf: z.string().max(20).nullable().optional(),
      })
      .strict(),
    summary: 'Set the price of a model or of every model whose name starts with it; it overrides the built-in price. The date defaults to today.',
  }),
  resetPrice: method<{ reset: boolean; entry: PriceEntry | null }>()({
    http: 'POST',
    path: '/api/prices/reset',
    input: z.object({ model: z.string().max(200) }).strict(),
    summary: 'Remove an edited price: the built-in price (if there is one) applies again.',
  }),
  // Claude subscription accounts (issue 13).
  startClaudeLogin: method<ClaudeLoginStart>()({
    http: 'POST',
    path: '/api/oauth/claude/start',
    input: z.object({ mode: z.enum(['loopback', 'paste']).optional(), ...claudeTarget }).strict(),
    summary: 'Start "Sign in with Claude" (PKCE): a loopback callback, or a code to paste. Nothing is stored until it finishes.',
  }),
  completeClaudeLogin: method<ConnectionView>()({
    http: 'POST',
    path: '/api/oauth/claude/complete',
    input: z.object({ loginId: id, code: z.string().trim().min(1).max(4_000) }).strict(),
    summary: 'Finish a sign-in with the pasted code ("code#state", the callback URL, or the code).',
  }),
  getClaudeLogin: method<ClaudeLoginView>()({
    http: 'GET',
    path: '/api/oauth/claude/logins/:loginId',
    input: z.object({ loginId: id }).strict(),
    summary: 'Where a sign-in stands: pending, done (with its connection) or failed.',
  }),
  cancelClaudeLogin: method<{ cancelled: boolean }>()({
    http: 'DELETE',
    path: '/api/oauth/claude/logins/:loginId',
    input: z.object({ loginId: id }).strict(),
    summary: 'Cancel an open sign-in (its loopback listener stops).',
  }),
  importClaudeCredentials: method<ConnectionView>()({
    http: 'POST',
    path: '/api/oauth/claude/import',
    input: z.object(claudeTarget).strict(),
    summary: "Import the account Claude Code is signed in with (~/.claude/.credentials.json).",
  }),
  listClaudeAccounts: method<ClaudeAccountsView>()({
    http: 'GET',
    path: '/api/oauth/claude/accounts',
    input: none,
    summary: 'Claude subscription accounts: sign-in, usage windows, low-priority lane and limit reset.',
  }),
  refreshClaudeUsage: method<ClaudeAccountsView>()({
    http: 'GET',
    path: '/api/oauth/usage',
    input: z.object({ connectionId: id.optional() }).strict(),
    summary: "Reads the usage windows from Claude's usage API now (one account, or all).",
  }),

  listErrorRules: method<ErrorRulesView>()({
    http: 'GET',
    path: '/api/error-rules',
    input: none,
    summary: 'Built-in provider error rules, status restatements and allowlists (operator rules and defaults are settings).',
  }),
  testErrorRule: method<ErrorRuleTestResult>()({
    http: 'POST',
    path: '/api/error-rules/test',
    input: z
      .object({
        provider: providerId,
        status: z.number().int().min(400).max(599),
        body: z.string().max(64 * 1024),
        headers: z.record(z.string().min(1).max(200), z.string().max(2_000)).optional(),
      })
      .strict(),
    summary: 'Which rule an upstream error (provider, status, body) matches and what it would do, through the real matcher.',
  }),
  probeEgressIp: method<EgressProbeView>()({
    http: 'POST',
    path: '/api/providers/:id/egress-ip',
    input: z.object({ id }).strict(),
    summary: 'Ask the egress-IP probe URL through this connection\'s route (its outbound proxy, if any) now.',
  }),

  // Notifications and the state timeline (issue 23).
  listNotifications: method<NotificationsFeed>()({
    http: 'GET',
    path: '/api/notifications',
    input: none,
    summary: 'The notification feed, newest first, with the unread count and the muted kinds.',
  }),
  markNotificationsRead: method<{ marked: number; unread: number }>()({
    http: 'POST',
    path: '/api/notifications/read',
    input: z.union([
      z.object({ ids: z.array(id).min(1).max(500) }).strict(),
      z.object({ all: z.literal(true) }).strict(),
    ]),
    summary: 'Mark notifications read: some ({ids}) or every one ({all: true}).',
  }),
  getStateTimeline: method<StateTimelineView>()({
    http: 'GET',
    path: '/api/monitoring/state-timeline',
    input: z
      .object({
        from: z.coerce.number().int().min(0),
        to: z.coerce.number().int().min(0),
      })
      .strict()
      .refine((v) => v.from <= v.to, { message: 'the start of the time range is after its end', path: ['from'] }),
    summary: 'Each connection\'s state spans (cooldown, breaker, lockout, out of service, turned off) overlapping a time range.',
  }),

  // Team mode (issue 26): the link's status, the team settings and configuration sharing.
  getTeam: method<TeamView>()({
    http: 'GET',
    path: '/api/team',
    input: none,
    summary: "Team mode: the link to Redis (state, since when, why), the team settings (secrets masked, each with where it comes from), who publishes the configuration and what is managed by the team here.",
  }),
  updateTeamSettings: method<TeamView>()({
    http: 'PATCH',
    path: '/api/team/settings',
    input: z.object({ patch: teamSettingsPatchSchema }).strict(),
    bodyField: 'patch',
    summary: 'Change the team settings: the Redis address, the team name, the team key (pasted), this instance\'s role (off, publish, follow) and display name.',
  }),
  generateTeamKey: method<TeamView>()({
    http: 'POST',
    path: '/api/team/key',
    input: none,
    summary: 'Replace the team key with a new random one (followers need the new key to apply what is published next).',
  }),
  revealTeamKey: method<{ key: string }>()({
    http: 'POST',
    path: '/api/team/key/reveal',
    input: none,
    summary: 'The full team key, to paste on another workstation of the team.',
  }),
  publishTeamConfig: method<TeamView>()({
    http: 'POST',
    path: '/api/team/publish',
    input: none,
    summary: "Publish this instance's configuration to the team now (publisher role only).",
  }),
} as const;

export type Contract = typeof contract;
export type MethodName = keyof Contract;
export const METHOD_NAMES = Object.keys(contract) as MethodName[];

export type InputOf<M extends MethodName> = z.input<Contract[M]['input']>;
export type ParsedInputOf<M extends MethodName> = z.output<Contract[M]['input']>;
export type OutputOf<M extends MethodName> = Contract[M] extends MethodSpec<any, infer O> ? O : never;

/** What the engine implements (one function per method, input already validated). */
export type Handlers = { [M in MethodName]: (input: ParsedInputOf<M>) => Promise<OutputOf<M>> };

/** What the renderer calls (over IPC or HTTP). Methods without required input take no argument. */
export type ClientMethods = {
  [M in MethodName]: {} extends InputOf<M>
    ? (input?: InputOf<M>) => Promise<OutputOf<M>>
    : (input: InputOf<M>) => Promise<OutputOf<M>>;
};

// ---- push events -------------------------------------------------------------------------------

export interface ResilienceSnapshot {
  now: number;
  breakers: BreakerView[];
  cooldowns: CooldownsView;
  lockouts: ModelLockoutView[];
  /** The one health model (src/shared/health.ts): what every page shows. Always sent by the engine. */
  health?: HealthSnapshot;
}

const event = <P>() => ({}) as { readonly _payload?: P };

export const events = {
  connections: event<ConnectionView[]>(),
  resilience: event<ResilienceSnapshot>(),
  admission: event<AdmissionView[]>(),
  /** New request log entries, batched as they are written. */
  logs: event<RequestLogEntry[]>(),
  settings: event<SettingsView>(),
  health: event<HealthView>(),
  combos: event<CombosSnapshot>(),
  /** Claude subscription accounts (usage windows, lane, reset, sign-in state). */
  claude: event<ClaudeAccountsView>(),
  /** A sign-in finished or failed. */
  claudeLogin: event<ClaudeLoginView>(),
  /** Session pins, when one is created, moves or ends (a pin's sliding expiry at a slower pace). */
  sessions: event<SessionsView>(),
  /** Exclusive leases, when one is acquired, renewed, moved or ends. */
  leases: event<LeasesView>(),
  /** The notification feed, when an item is raised, folded or read (coalesced). */
  notifications: event<NotificationsFeed>(),
  /** Team mode: the link's state, the settings, configuration sharing (coalesced). */
  team: event<TeamView>(),
} as const;

export type EventName = keyof typeof events;
export const EVENT_NAMES = Object.keys(events) as EventName[];
export type EventPayload<E extends EventName> = (typeof events)[E] extends { readonly _payload?: infer P } ? P : never;
export type EventListener<E extends EventName> = (payload: EventPayload<E>) => void;

/** The renderer's view of the engine: methods plus event subscription. */
export type Bridge = ClientMethods & {
  on<E extends EventName>(event: E, listener: EventListener<E>): () => void;
};

// ---- errors and channels -----------------------------------------------------------------------

export interface ApiErrorBody {
  error: { code: string; message: string; field?: string };
}

export const IPC_PREFIX = 'switchyard:';
export const ipcChannel = (m: MethodName) => `${IPC_PREFIX}${m}`;
export const ipcEventChannel = (e: EventName) => `${IPC_PREFIX}event:${e}`;
/** Server-sent events stream of the headless shell. */
export const EVENTS_PATH = '/api/events';
/** The headless shell's browser session: POST (token in a header) sets the cookie, DELETE clears it. */
export const SESSION_PATH = '/api/session';
/**
 * Control event on that stream (not a topic): the engine dropped pushes for a client that stopped
 * reading; the client should read every topic again.
 */
export const RESYNC_EVENT = 'resync';

type Issue = z.core.$ZodIssue;

/** For a union, the issue of the branch that came closest (fewest problems), so the field is named. */
function closestIssue(issue: Issue | undefined): Issue | undefined {
  if (!issue || issue.code !== 'invalid_union') return issue;
  const branches = (issue as { errors?: Issue[][] }).errors ?? [];
  const best = [...branches].sort((a, b) => a.length - b.length)[0];
  const inner = best?.[0];
  return inner ? closestIssue({ ...inner, path: [...issue.path, ...inner.path] } as Issue) : issue;
}

/**
 * Validates input at the boundary. Returns the parsed value or a field-named error, shaped the same
 * for IPC and HTTP callers.
 */
export function parseInput<M extends MethodName>(
  name: M,
  raw: unknown,
): { ok: true; value: ParsedInputOf<M> } | { ok: false; error: ApiErrorBody['error'] } {
  const spec = contract[name] as MethodSpec;
  const fieldOf = (p: string[]) => {
    const inBody = spec.bodyField && p[0] === spec.bodyField;
    return (inBody ? p.slice(1) : p).join('.') || (inBody ? '(body)' : '(input)');
  };
  // Before the schema: zod drops a "__proto__" key silently, and nothing below may recurse on
  // hostile depth (IPC callers have no HTTP body limits in front of them).
  if (jsonTooDeep(raw, MANAGEMENT_JSON_MAX_DEPTH + 1)) {
    return { ok: false, error: { code: 'invalid_input', message: `nests deeper than ${MANAGEMENT_JSON_MAX_DEPTH} levels`, field: '(input)' } };
  }
  const protoKey = prototypeKeyPath(raw, MANAGEMENT_JSON_MAX_DEPTH + 1);
  if (protoKey) {
    const field = fieldOf(protoKey);
    return { ok: false, error: { code: 'invalid_input', message: `${field}: a key named "${protoKey.at(-1)}" is not allowed`, field } };
  }
  const r = contract[name].input.safeParse(raw ?? {});
  if (r.success) return { ok: true, value: r.data as ParsedInputOf<M> };
  const issue = closestIssue(r.error.issues[0]);
  let path = issue?.path.map(String) ?? [];
  const field = fieldOf(path);
  if (spec.bodyField && path[0] === spec.bodyField) path = path.slice(1);
  let message = issue?.message ?? 'invalid input';
  if (issue?.code === 'unrecognized_keys') {
    const keys = (issue as { keys?: string[] }).keys ?? [];
    const full = keys.map((k) => (path.length ? `${path.join('.')}.${k}` : k));
    return {
      ok: false,
      error: { code: 'invalid_input', message: `unknown field ${full.join(', ')}`, field: full[0] ?? field },
    };
  }
  if (issue?.code === 'invalid_union') message = 'does not match any accepted shape';
  return { ok: false, error: { code: 'invalid_input', message: `${field}: ${message}`, field } };
}
