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
  who: string,
  d: { degradationThreshold?: number; failureThreshold: number; resetTimeoutMs: number },
) => {
  const out: Record<string, IntDef> = {};
  if (d.degradationThreshold !== undefined) {
    out[`providerBreaker.${cls}.degradationThreshold`] = int({
      group: 'providerBreaker',
      resilience: true,
      label: `Show as degraded after (${who})`,
      description: `For ${who}: after this many timeouts or server errors (408, 500, 502, 503, 504) their provider is shown as degraded; requests still go through.`,
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
    label: `Open the breaker after (${who})`,
    description: `For ${who}: after this many timeouts or server errors the breaker opens and their whole provider is left out of routing.`,
    default: d.failureThreshold,
    min: 1,
    max: 1000,
    unit: 'count',
    env: envNames(`CIRCUIT_BREAKER_${envCls}_FAILURE_THRESHOLD`),
  });
  out[`providerBreaker.${cls}.resetTimeoutMs`] = int({
    group: 'providerBreaker',
    resilience: true,
    label: `Breaker pause (${who})`,
    description: `For ${who}: how long an open breaker keeps their provider out before it lets one trial request through; a success closes it again.`,
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
  who: string,
  d: { failureThreshold: number; failureWindowMs: number; cooldownMs: number },
): Record<GateKeys<C>, IntDef> => ({
  [`providerCooldown.${cls}.failureThreshold`]: int({
    group: 'providerCooldown',
    resilience: true,
    label: `Failures that pause the provider (${who})`,
    description: `For ${who}, while the provider pause is on: this many failures within the time window below leave their provider out for the pause below.`,
    default: d.failureThreshold,
    min: 1,
    max: 10_000,
    unit: 'count',
    ...(envCls ? { env: envNames(`PROVIDER_BREAKER_${envCls}_FAILURE_THRESHOLD`) } : {}),
  }),
  [`providerCooldown.${cls}.failureWindowMs`]: int({
    group: 'providerCooldown',
    resilience: true,
    label: `Time window for counting failures (${who})`,
    description: `For ${who}: the stretch of time over which their provider's failures are counted.`,
    default: d.failureWindowMs,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
    ...(envCls ? { env: envNames(`PROVIDER_BREAKER_${envCls}_FAILURE_WINDOW_MS`) } : {}),
  }),
  [`providerCooldown.${cls}.cooldownMs`]: int({
    group: 'providerCooldown',
    resilience: true,
    label: `Provider pause (${who})`,
    description: `For ${who}: how long their provider is left out once its failures reach the count above.`,
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
  ...breakerProfile('oauth', 'OAUTH', 'sign-in accounts', { degradationThreshold: 5, failureThreshold: 8, resetTimeoutMs: 60 * SEC }),
  ...breakerProfile('apikey', 'API_KEY', 'API-key connections', { degradationThreshold: 7, failureThreshold: 12, resetTimeoutMs: 30 * SEC }),
  // The Local degrade threshold is derived (failureThreshold - 1, at least 1), so it has no setting.
  ...(breakerProfile('local', 'LOCAL', 'local servers', { failureThreshold: 2, resetTimeoutMs: 15 * SEC }) as Record<
    Exclude<BreakerKeys<'local'>, 'providerBreaker.local.degradationThreshold'>,
    IntDef
  >),

  'providerBreaker.failureRatePercent': int({
    group: 'providerBreaker',
    resilience: true,
    label: 'Share of failures that trips a breaker (%)',
    description:
      'A breaker shows degraded or opens only when the failure counts below are reached and the failures are also at least this share of the provider\'s recent answers (those within one breaker pause). 50: a provider failing every other request trips.',
    default: 50,
    min: 1,
    max: 100,
    env: envNames('CIRCUIT_BREAKER_FAILURE_RATE_PERCENT'),
  }),

  'providerCooldown.enabled': bool({
    group: 'providerCooldown',
    resilience: true,
    label: 'Pause a provider after many failures',
    description:
      'Off by default. When on, a provider with many failures within a time window is left out of routing for a while, in addition to the circuit breaker.',
    default: false,
    env: ['PROVIDER_COOLDOWN_ENABLED'],
  }),
  ...windowGate('oauth', 'OAUTH', 'sign-in accounts', { failureThreshold: 10, failureWindowMs: 15 * MIN, cooldownMs: 5 * MIN }),
  ...windowGate('apikey', 'API_KEY', 'API-key connections', { failureThreshold: 15, failureWindowMs: 30 * MIN, cooldownMs: 10 * MIN }),
  ...windowGate('local', null, 'local servers', { failureThreshold: 2, failureWindowMs: 5 * MIN, cooldownMs: 1 * MIN }),

  'connectionCooldown.oauthBaseMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'First cooldown (sign-in accounts)',
    description:
      'How long a sign-in (OAuth) account rests after its first rate limit or recoverable failure; each further one in a row doubles it. A rate limit on one model rests only that model.',
    default: 5 * SEC,
    min: 100,
    max: DAY,
    unit: 'ms',
  }),
  'connectionCooldown.apikeyBaseMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'First cooldown (API-key and local connections)',
    description:
      'How long an API-key or local connection rests after its first rate limit or recoverable failure; each further one in a row doubles it. A rate limit on one model rests only that model.',
    default: 3 * SEC,
    min: 100,
    max: DAY,
    unit: 'ms',
  }),
  'connectionCooldown.maxBackoffSteps': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Most doublings of a cooldown',
    description: 'A repeated cooldown doubles at most this many times: at most the first cooldown times 2 to this power.',
    default: 10,
    min: 0,
    max: 30,
    unit: 'count',
  }),
  'connectionCooldown.useUpstreamRetryHints': bool({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Follow the provider\'s retry time',
    description:
      'When a rate-limited answer says how long to wait (a Retry-After or reset header, or the error text), rest that long: just the limited model on that connection, or the whole connection when the answer shows the account itself is out of allowance. A model lockout is also made at least that long. Off: the delays below apply.',
    default: true,
  }),
  'streamStallCooldown.enabled': bool({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Cool a connection whose stream stalls',
    description: 'A stalled stream is always noted on its connection; when on, the connection also rests, as after a failure.',
    default: false,
  }),
  'outlierEjection.enabled': bool({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Take out a connection that fails alone',
    description:
      'Take a connection out of routing when it fails (server errors, refused, reset or timed out) several times in a row while another connection of the same provider succeeds.',
    default: true,
  }),
  'outlierEjection.consecutiveFailures': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Failures in a row that take it out',
    description: 'Server errors or failed connections in a row on one connection that take it out; a success starts the count again.',
    default: 2,
    min: 1,
    max: 100,
    unit: 'count',
  }),
  'outlierEjection.baseEjectionMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'First time out',
    description: 'How long a connection is out the first time; the second time lasts twice this, the third three times, and so on (one step is forgiven for each such stretch without one).',
    default: 10 * SEC,
    min: 100,
    max: HOUR,
    unit: 'ms',
  }),
  'outlierEjection.maxEjectionMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Longest time out',
    description: 'The growing time out never passes this (and is never shorter than the first one).',
    default: 5 * MIN,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
  }),
  'outlierEjection.siblingWindowMs': int({
    group: 'connectionCooldown',
    resilience: true,
    label: 'How recent another connection\'s success must be',
    description: 'Another connection of the provider counts as succeeding when its latest answer is a success no older than this.',
    default: 60 * SEC,
    min: 1 * SEC,
    max: HOUR,
    unit: 'ms',
  }),
  providerQuotaOverrides: json<ProviderQuotaOverride[]>({
    group: 'connectionCooldown',
    resilience: true,
    label: 'Retry delay per provider',
    description:
      'For a rate limit that gives no wait of its own, rest this many seconds for the listed provider instead of the doubling cooldown (a connection\'s own retry delay comes first). Providers not listed use the delay for all providers.',
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
    label: 'Retry delay for all providers',
    description: 'For a rate limit that gives no wait of its own and has no delay per provider or connection, rest this many seconds. Empty: the doubling cooldown.',
    default: null,
    min: 1,
    max: 21_600,
    unit: 's',
    env: envNames('ROTATION_RATE_LIMIT_RESET_SECONDS'),
  }),

  'modelLockout.enabled': bool({
    group: 'modelLockout',
    resilience: true,
    label: 'Lock a model on the statuses below',
    description:
      'Off by default. When on, an answer with one of the statuses below takes just that model out of routing on that connection, for the lockout times below, while its other models keep serving. It does not govern plain rate limits: a 429 without account-wide evidence always pauses just that model on that connection, on or off (with this on and 429 listed, the lockout times set that pause).',
    default: false,
  }),
  'modelLockout.errorCodes': json<number[]>({
    group: 'modelLockout',
    resilience: true,
    label: 'Statuses that lock a model',
    description: 'Only while the switch above is on: the answer statuses that lock the model that received them. A 429 that shows the whole account is out of allowance cools the connection instead.',
    default: [403, 404, 429, 502, 503, 504],
    schema: z.array(z.number().int().min(400).max(599)).max(50),
    shape: 'list of HTTP statuses (400-599)',
  }),
  'modelLockout.baseCooldownMs': int({
    group: 'modelLockout',
    resilience: true,
    label: 'First lockout',
    description: 'How long a model stays locked after its first error. Also used by your error rules that hold a model without a time of their own.',
    default: 120 * SEC,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
  }),
  'modelLockout.maxCooldownMs': int({
    group: 'modelLockout',
    resilience: true,
    label: 'Longest lockout',
    description: 'A repeated lockout never grows past this (and is never shorter than the first lockout).',
    default: 30 * MIN,
    min: 1 * SEC,
    max: DAY,
    unit: 'ms',
  }),
  'modelLockout.maxBackoffSteps': int({
    group: 'modelLockout',
    resilience: true,
    label: 'Most doublings of a lockout',
    description: 'A repeated lockout doubles at most this many times.',
    default: 10,
    min: 0,
    max: 30,
    unit: 'count',
  }),
  'modelLockout.useExponentialBackoff': bool({
    group: 'modelLockout',
    resilience: true,
    label: 'Lengthen repeated lockouts',
    description: 'Each further error soon after a lockout (within the longest lockout\'s time) doubles the next one. Off: every lockout lasts the first lockout\'s time.',
    default: true,
  }),

  'p2cLatency.weight': int({
    group: 'routing',
    resilience: true,
    label: 'Prefer faster connections',
    description: 'With "Power of two choices" selection: how strongly recent speed and errors sway the pick between the two. 0 turns it off.',
    default: 0,
    min: 0,
    max: 20,
    unit: 'points',
  }),
} as const;
