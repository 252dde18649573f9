// The built-in provider error-rule catalog (SPEC §7b) and the three allowlists that decide who gets
// what. A built-in rule names the reason and the scope (model / connection / provider) a matching
// error stands for. Two allowlists gate the catalog, independently (R-PER-01..04):
//   - FULL_TEXT_RULE_PROVIDERS: only these providers' rules see the error text; every other
//     provider's rules see just the structured `{code, type}` of the error (status-, code- and
//     type-based rules still work, body text markers never match);
//   - HONORS_RULE_LOCK_SCOPE_PROVIDERS: only for these is a built-in rule acted on; elsewhere a
//     match is informational (it travels in the verdict and the tester, nothing changes).
// An operator rule or default for a provider bypasses both (R-PER-05, R-PER-15).
// EGRESS_BUCKETED_LOCK_PROVIDERS is the egress-bucketed family of §7c (R-EGR-01, R-EGR-09).
// Adding a provider to any of these lists is an explicit maintainer decision: no generic hook.
import type { ErrorRuleReason, ErrorRuleScope } from '../../../shared/settings';

const HOUR = 60 * 60_000;

export interface BuiltInErrorRule {
  id: string;
  /** Provider ids the rule belongs to. */
  providers: readonly string[];
  /** Statuses it applies to (omitted: any). */
  statuses?: readonly number[];
  /** Case-insensitive substrings of the error text; need the full text (FULL_TEXT_RULE_PROVIDERS). */
  textMarkers?: readonly string[];
  /** Structured error `code` or `type` values (exact, case-insensitive); seen for every provider. */
  codes?: readonly string[];
  reason: ErrorRuleReason;
  scope: ErrorRuleScope;
  /** A declared cooldown; for scope "model" it is capped by the lockout maximum (R-USR-10). */
  baseCooldownMs?: number;
  /** What the rule is for (shown on the Error rules page). */
  note: string;
}

export const BUILT_IN_ERROR_RULES: readonly BuiltInErrorRule[] = [
  {
    id: 'agentrouter-model-access-denied',
    providers: ['agentrouter'],
    textMarkers: ['无权访问模型'],
    reason: 'auth_error',
    scope: 'model',
    baseCooldownMs: 6 * HOUR,
    note: '"No access to this model" (无权访问模型): permanent for that model on that key. The model is locked (at most the lockout maximum, reason "forbidden"); the connection keeps serving its other models.',
  },
  {
    id: 'agentrouter-user-quota-exhausted',
    providers: ['agentrouter'],
    textMarkers: ['用户额度不足', '额度不足'],
    reason: 'quota_exhausted',
    scope: 'connection',
    note: 'Account quota spent (用户额度不足 / 额度不足, restated from 403/400 to 429): a self-recovering cooldown of the whole connection with the usual backoff, never a terminal state.',
  },
  {
    id: 'opencode-rate-limit',
    providers: ['opencode', 'opencode-zen'],
    statuses: [429],
    reason: 'rate_limit_exceeded',
    scope: 'connection',
    note: 'A 429 from the opencode gateway. Informational (opencode is not on the scope allowlist); the egress-bucketed lockout is what cools opencode connections.',
  },
];

/** R-PER-01: providers whose built-in rules see the full error text. */
export const FULL_TEXT_RULE_PROVIDERS: readonly string[] = ['agentrouter'];

/** R-PER-04: providers whose built-in rule scopes are acted on. */
export const HONORS_RULE_LOCK_SCOPE_PROVIDERS: readonly string[] = ['agentrouter'];

/**
 * R-EGR-01: upstreams that bucket their free tier per IP, not per account (opencode, #9611). The
 * subscription flavour (opencode-go) meters per account and is deliberately not listed.
 */
export const EGRESS_BUCKETED_LOCK_PROVIDERS: readonly string[] = ['opencode', 'opencode-zen'];
