// Resilience settings (SPEC §0-§3b). Keys follow the spec's names where it gives them.
import { z } from 'zod';
import { bool, envNames, int, json, nullableInt, type IntDef } from './define';

const SEC = 1_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

type BreakerKeys<C extends string> =
  | `providerBreaker.${C}.degradationThreshold`
  | `providerBreaker.${C}.failureThreshold`
  | `providerBreaker.${C}.resetTimeoutMs`;

const breakerProfile = <C extends 'oauth' | 'apikey' | 'local'>(
  cls: C,
  envCls: 'OAUTH' | 'API_KEY' | 'LOCAL',
  label: string,
  d: { degradationThreshold?: number; failureThreshold: number; resetTimeoutMs: number },
) => {
  const out: Record<string, IntDef> = {};
  if (d.degradationThreshold !== undefined) {
    out[`providerBreaker.${cls}.degradationThreshold`] = int({
      group: 'providerBreaker',
      resilience: true,
      label: `${label}: degrade after`,
      description: `Provider failures (408/500/502/503/504) after which a ${label} provider is shown DEGRADED; traffic still flows.`,
      default: d.degradationThreshold,
      min: 1,
      max: 1000,
      unit: 'count',
      env: envNames(`CIRCUIT_BREAKER_${envCls}_DEGRADATION_THRESHOLD`),
    });
  }
  out[`providerBreaker.${cls}.failureThreshold`] = int({
    group: 'providerBreaker',
    resilience: true,
    label: `${label}: open after`,
    description: `Provider failures after which the ${label} breaker opens and the whole provider is skipped.`,
    default: d.failureThreshold,
    min: 1,
    max: 1000,
    unit: 'count',
    env: envNames(`CIRCUIT_BREAKER_${envCls}_FAILURE_THRESHOLD`),
  });
  out[`providerBreaker.${cls}.resetTimeoutMs`] = int({
    group: 'providerBreaker',
    resilience: true,
    label: `${label}: reset timeout`,
    description: `How long an open ${label} breaker waits before it lets one probe request through (HALF_OPEN).`,
    default: d.resetTimeoutMs,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
    env: envNames(`CIRCUIT_BREAKER_${envCls}_RESET_TIMEOUT_MS`),
  });
  return out as Record<BreakerKeys<C>, IntDef>;
};

type GateKeys<C extends string> =
  | `providerCooldown.${C}.failureThreshold`
  | `providerCooldown.${C}.failureWindowMs`
  | `providerCooldown.${C}.cooldownMs`;

const windowGate = <C extends 'oauth' | 'apikey' | 'local'>(
  cls: C,
  envCls: 'OAUTH' | 'API_KEY' | null,
  label: string,
  d: { failureThreshold: number; failureWindowMs: number; cooldownMs: number },
): Record<GateKeys<C>, IntDef> => ({
  [`providerCooldown.${cls}.failureThreshold`]: int({
    group: 'providerCooldown',
    resilience: true,
    label: `${label}: failures in window`,
    description: `Failures within the window after which a ${label} provider is skipped (window gate).`,
    default: d.failureThreshold,
    min: 1,
    max: 10_000,
    unit: 'count',
    ...(envCls ? { env: envNames(`PROVIDER_BREAKER_${envCls}_FAILURE_THRESHOLD`) } : {}),
  }),
  [`providerCooldown.${cls}.failureWindowMs`]: int({
    group: 'providerCooldown',
    resilience: true,
    label: `${label}: window`,
    description: `Window over which ${label} provider failures are counted.`,
    default: d.failureWindowMs,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
    ...(envCls ? { env: envNames(`PROVIDER_BREAKER_${envCls}_FAILURE_WINDOW_MS`) } : {}),
  }),
  [`providerCooldown.${cls}.cooldownMs`]: int({
    group: 'providerCooldown',
    resilience: true,
    label: `${label}: cooldown`,
    description: `How long a ${label} provider past the threshold is skipped.`,
    default: d.cooldownMs,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
    ...(envCls ? { env: envNames(`PROVIDER_BREAKER_${envCls}_COOLDOWN_MS`) } : {}),
  }),
}) as Record<GateKeys<C>, IntDef>;

export const providerQuotaOverrideSchema = z
  .object({
    provider: z.string().min(1).max(100),
    rateLimitCooldownSeconds: z.number().int().min(1).max(21_600),
  })
  .strict();
export type ProviderQuotaOverride = z.infer<typeof providerQuotaOverrideSchema>;

export const resilienceSettings = {
  ...breakerProfile('oauth', 'OAUTH', 'OAuth', { degradationThreshold: 5, failureThreshold: 8, resetTimeoutMs: 60 * SEC }),
  ...breakerProfile('apikey', 'API_KEY', 'API key', { degradationThreshold: 7, failureThreshold: 12, resetTimeoutMs: 30 * SEC }),
  // The Local degrade threshold is derived (failureThreshold - 1, at least 1), so it has no setting.
  ...(breakerProfile('local', 'LOCAL', 'Local', { failureThreshold: 2, resetTimeoutMs: 15 * SEC }) as Record<
    Exclude<BreakerKeys<'local'>, 'providerBreaker.local.degradationThreshold'>,
    IntDef
  >),

  'providerBreaker.failureRatePercent': int({
    group: 'providerBreaker',
    resilience: true,
    label: 'Failure rate to trip (%)',
    description:
      'Failures are counted in a sliding window (the last outcomes within one reset timeout); the breaker degrades or opens only when they reach the thresholds above AND make up at least this share of the outcomes. 50 trips a provider that fails every other request.',
    default: 50,
    min: 1,
    max: 100,
    env: envNames('CIRCUIT_BREAKER_FAILURE_RATE_PERCENT'),
  }),

  'providerCooldown.enabled': bool({
    group: 'providerCooldown',
    resilience: true,
    label: 'Provider cooldown window gate',
    description:
      'Skip a provider for a while after many failures within a window (an optional fourth layer beside the breaker). The env var only sets the default; a saved value wins.',
    default: false,
    env: ['PROVIDER_COOLDOWN_ENABLED'],
  }),
  ...windowGate('oauth', 'OAUTH', 'OAuth', { failureThreshold: 10, failureWindowMs: 15 * MIN, cooldownMs: 5 * MIN }),
  ...windowGate('apikey', 'API_KEY', 'API key', { failureThreshold: 15, failureWindowMs: 30 * MIN, cooldownMs: 10 * MIN }),
  ...windowGate('local', null, 'Local', { failureThreshold: 2, failureWindowMs: 5 * MIN, cooldownMs: 1 * MIN }),

  'connectionCooldown.oauthBaseMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'OAuth base cooldown',
    description: 'First cooldown of an OAuth connection after a recoverable failure; repeated failures double it.',
    default: 5 * SEC,
    min: 100,
    max: DAY,
    unit: 'ms',
  }),
  'connectionCooldown.apikeyBaseMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'API-key base cooldown',
    description: 'First cooldown of an API-key (or local) connection after a recoverable failure; repeated failures double it.',
    default: 3 * SEC,
    min: 100,
    max: DAY,
    unit: 'ms',
  }),
  'connectionCooldown.maxBackoffSteps': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Maximum backoff steps',
    description: 'How many times the cooldown may double (base x 2^steps at most).',
    default: 10,
    min: 0,
    max: 30,
    unit: 'count',
  }),
  'connectionCooldown.useUpstreamRetryHints': bool({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Use upstream retry hints',
    description: 'Cool a rate-limited connection for as long as Retry-After, x-ratelimit-reset or the error text says.',
    default: true,
  }),
  'streamStallCooldown.enabled': bool({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Cool connections on stream stalls',
    description: 'A stalled stream is recorded on its connection; when on, it also cools that connection.',
    default: false,
  }),
  'outlierEjection.enabled': bool({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Outlier ejection',
    description:
      'Take a connection out of routing when it fails (5xx, refused, reset or timed out) several times in a row while another connection of the same provider succeeds.',
    default: true,
  }),
  'outlierEjection.consecutiveFailures': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Outlier: failures in a row',
    description: 'Consecutive 5xx or transport failures on one connection that eject it (a success resets the count).',
    default: 2,
    min: 1,
    max: 100,
    unit: 'count',
  }),
  'outlierEjection.baseEjectionMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Outlier: first ejection',
    description: 'Length of the first ejection; the n-th ejection lasts n times this (one step is forgiven per this long without an ejection).',
    default: 10 * SEC,
    min: 100,
    max: HOUR,
    unit: 'ms',
  }),
  'outlierEjection.maxEjectionMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Outlier: longest ejection',
    description: 'Cap on the growing ejection (never below the first ejection).',
    default: 5 * MIN,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
  }),
  'outlierEjection.siblingWindowMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Outlier: sibling success window',
    description: 'A sibling connection counts as succeeding when its latest outcome is a success no older than this.',
    default: 60 * SEC,
    min: 1 * SEC,
    max: HOUR,
    unit: 'ms',
  }),
  providerQuotaOverrides: json<ProviderQuotaOverride[]>({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Per-provider retry delay',
    description:
      'For a rate-limit error without an upstream hint, cool the connection for this many seconds instead of the scaled backoff.',
    default: [],
    schema: z
      .array(providerQuotaOverrideSchema)
      .max(500)
      .refine((list) => new Set(list.map((o) => o.provider)).size === list.length, {
        message: 'lists a provider more than once',
      }),
    shape: 'list of { provider, rateLimitCooldownSeconds (1-21600) }; omit a provider for Automatic',
  }),
  'rotation.rateLimitResetSeconds': nullableInt({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Global rate-limit retry delay',
    description: 'Fallback retry delay for rate-limit errors without any hint or override (empty = scaled backoff).',
    default: null,
    min: 1,
    max: 21_600,
    unit: 's',
    env: envNames('ROTATION_RATE_LIMIT_RESET_SECONDS'),
  }),

  'modelLockout.enabled': bool({
    group: 'modelLockout',
    resilience: true,
    label: 'Model lockout',
    description: 'Take only the failing model of a connection out of routing for model-scoped errors.',
    default: false,
  }),
  'modelLockout.errorCodes': json<number[]>({
    group: 'modelLockout',
    resilience: true,
    label: 'Model-scoped status codes',
    description: 'Upstream statuses that count as a model-scoped failure.',
    default: [403, 404, 429, 502, 503, 504],
    schema: z.array(z.number().int().min(400).max(599)).max(50),
    shape: 'list of HTTP statuses (400-599)',
  }),
  'modelLockout.baseCooldownMs': int({
    group: 'modelLockout',
    resilience: true,
    label: 'First lockout',
    description: 'Lockout length for the first failure.',
    default: 120 * SEC,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
  }),
  'modelLockout.maxCooldownMs': int({
    group: 'modelLockout',
    resilience: true,
    label: 'Longest lockout',
    description: 'Cap on the escalated lockout (never below the first lockout).',
    default: 30 * MIN,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
  }),
  'modelLockout.maxBackoffSteps': int({
    group: 'modelLockout',
    resilience: true,
    label: 'Lockout escalation steps',
    description: 'Maximum number of doublings of the lockout.',
    default: 10,
    min: 0,
    max: 30,
    unit: 'count',
  }),
  'modelLockout.useExponentialBackoff': bool({
    group: 'modelLockout',
    resilience: true,
    label: 'Escalate repeated lockouts',
    description: 'Double the lockout for each failure within the escalation window.',
    default: true,
  }),

  'p2cLatency.weight': int({
    group: 'routing',
    resilience: true,
    label: 'Latency weight (p2c)',
    description: 'Points of latency and error-rate bias in power-of-two-choices selection; 0 turns it off.',
    default: 0,
    min: 0,
    max: 20,
    unit: 'points',
  }),
} as const;
