// Provider error rules (SPEC §7b, issue 15): the operator's own classification rules
// (`providerErrorRules`), the general per-provider defaults (`providerErrorDefaults`) and the URL
// of the egress-IP probe (§7c). Plain data and zod schemas; the engine's matcher lives in
// src/main/engine/resilience/errorRules/. Out-of-range values are rejected (never clamped): a rule
// is a list item, and an item is refused whole, like providerQuotaOverrides.
import { z } from 'zod';
import { json } from './define';

const SEC = 1_000;
const MIN = 60 * SEC;
const DAY = 24 * 60 * MIN;

/** Which layer a matched rule's failure is held against. */
export const ERROR_RULE_SCOPES = ['model', 'connection', 'provider'] as const;
export type ErrorRuleScope = (typeof ERROR_RULE_SCOPES)[number];

/**
 * The reasons a rule may give. All are transient: a rule or default sets a cooldown, never a
 * terminal state (banned / credits_exhausted come only from the built-in detectors).
 */
export const ERROR_RULE_REASONS = [
  'rate_limit_exceeded',
  'quota_exhausted',
  'concurrency_limited',
  'auth_error',
  'forbidden',
  'server_error',
  'overloaded',
  'request_timeout',
] as const;
export type ErrorRuleReason = (typeof ERROR_RULE_REASONS)[number];

/** R-PER-09: at most this many operator rules. */
export const MAX_OPERATOR_RULES = 50;
/** R-PER-09 / R-CM-06: the longest cooldown a rule or default may ask for (30 days = 43,200 min). */
export const RULE_COOLDOWN_MAX_MS = 30 * DAY;
/** The shortest cooldown an operator rule may ask for (the spec gives no minimum; 1 s). */
export const RULE_COOLDOWN_MIN_MS = SEC;
/** R-PER-11: the shortest general default (1 minute). */
export const DEFAULT_COOLDOWN_MIN_MS = MIN;
/** At most this many providers with a general default. */
export const MAX_PROVIDER_DEFAULTS = 200;
/** Longest `match` text. */
export const RULE_MATCH_MAX_CHARS = 500;

const providerKey = z
  .string()
  .trim()
  .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'must be a provider id (lowercase letters, digits, ".", "_" or "-")');

const cooldownMs = (minMs: number, minLabel: string) =>
  z
    .number({ error: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(minMs, `must be at least ${minLabel} (${minMs} ms)`)
    .max(RULE_COOLDOWN_MAX_MS, `must be at most 30 days (${RULE_COOLDOWN_MAX_MS} ms)`);

export const operatorErrorRuleSchema = z
  .object({
    provider: providerKey,
    /** HTTP status the error must have (omitted: any). */
    status: z.number({ error: 'must be an HTTP status' }).int('must be an HTTP status').min(400, 'must be 400-599').max(599, 'must be 400-599').optional(),
    /** Plain, case-insensitive substring of the error text (never a RegExp). Omitted: any text. */
    match: z
      .string({ error: 'must be text' })
      .max(RULE_MATCH_MAX_CHARS, `must be at most ${RULE_MATCH_MAX_CHARS} characters`)
      .refine((s) => s.trim().length > 0, 'must not be empty (leave it out to match any text)')
      .optional(),
    reason: z.enum(ERROR_RULE_REASONS, { error: `must be one of ${ERROR_RULE_REASONS.join(', ')}` }).optional(),
    /** Default "connection". */
    scope: z.enum(ERROR_RULE_SCOPES, { error: 'must be model, connection or provider' }).optional(),
    /** Exact cooldown (R-PER-10). Omitted: the reason's usual cooldown. */
    cooldownMs: cooldownMs(RULE_COOLDOWN_MIN_MS, '1 second').optional(),
  })
  .strict()
  .refine((r) => r.status !== undefined || r.match !== undefined, {
    message: 'needs a status, a match text, or both',
    path: ['match'],
  });
export type OperatorErrorRule = z.infer<typeof operatorErrorRuleSchema>;

export const operatorErrorRulesSchema = z
  .array(operatorErrorRuleSchema)
  .max(MAX_OPERATOR_RULES, `lists more than ${MAX_OPERATOR_RULES} rules`);

export const providerErrorDefaultSchema = z
  .object({
    cooldownMs: cooldownMs(DEFAULT_COOLDOWN_MIN_MS, '1 minute'),
    /** Default "connection" (R-PER-15). */
    scope: z.enum(ERROR_RULE_SCOPES, { error: 'must be model, connection or provider' }).optional(),
    /** Omitted: derived from the status (R-PER-14). */
    reason: z.enum(ERROR_RULE_REASONS, { error: `must be one of ${ERROR_RULE_REASONS.join(', ')}` }).optional(),
  })
  .strict();
export type ProviderErrorDefault = z.infer<typeof providerErrorDefaultSchema>;

export const providerErrorDefaultsSchema = z
  .record(providerKey, providerErrorDefaultSchema)
  .refine((r) => Object.keys(r).length <= MAX_PROVIDER_DEFAULTS, `lists more than ${MAX_PROVIDER_DEFAULTS} providers`);
export type ProviderErrorDefaults = z.infer<typeof providerErrorDefaultsSchema>;

/** "providerErrorRules[3].cooldownMs", "providerErrorDefaults.glm.cooldownMs": the rule and the field. */
const pathOf = (key: string, path: readonly PropertyKey[]) =>
  path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : `${s}.${String(p)}`), key);

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2_000);

export const errorRuleSettings = {
  providerErrorRules: json<OperatorErrorRule[]>({
    group: 'errorRules',
    label: 'Your error rules',
    description:
      'Your own rules for provider errors, checked first (the first match wins): a status and/or a case-insensitive piece of the error text, the reason, what it holds against (model, connection or provider) and for how long. They see the full error text and their scope is always honoured.',
    default: [],
    schema: operatorErrorRulesSchema,
    shape: `list (at most ${MAX_OPERATOR_RULES}) of { provider, status? (400-599), match? (text), reason?, scope? (model | connection | provider), cooldownMs? (1 s - 30 days) }, each with a status or a match`,
    describeIssue: (path, message) => `${pathOf('providerErrorRules', path)} ${message}`,
  }),
  providerErrorDefaults: json<ProviderErrorDefaults>({
    group: 'errorRules',
    label: 'Error handling per provider',
    description:
      'For a provider, how long a 402, 403, 408, 429 or 5xx that no rule matched holds the connection (or model, or provider): the longer of this and the upstream\'s own retry hint. Request errors (400, 404, 409, 413, 422) and 401 keep their own handling.',
    default: {},
    schema: providerErrorDefaultsSchema,
    shape: '{ [provider]: { cooldownMs (1 min - 30 days), scope? (model | connection | provider), reason? } }',
    describeIssue: (path, message) => `${pathOf('providerErrorDefaults', path)} ${message}`,
  }),
  'egress.probeUrl': json<string>({
    group: 'errorRules',
    label: 'Address that tells a connection\'s outgoing IP',
    description:
      'An IP-echo service (answers the caller\'s IP as text or JSON, e.g. https://api.ipify.org) asked through each connection\'s own route (its outbound proxy, if any) at most every 5 minutes while it serves traffic. The IP is shown per attempt in the request log and lets a rate limit on one connection also rest the others that share its IP. Empty: off (nothing is asked).',
    default: '',
    schema: z.union([z.literal(''), httpUrl]),
    shape: 'an http(s) URL string, or "" for off',
  }),
};
