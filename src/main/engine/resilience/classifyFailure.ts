// The one failure classifier: an upstream failure (status, headers, body, or a transport error)
// becomes a verdict that every layer reads: its reason, which layer owns it (provider, connection,
// model or just this request), the cooldown rule, the upstream's retry hint, whether it counts
// toward the provider breaker, and whether another connection should be tried. Pure: no settings,
// no state; the resilience service applies the verdict. The only outside fact it takes is how the
// connection's provider meters its limits (rateLimitScope.ts), which decides a 429's scope, and
// the provider error rules (errorRuleRegistry.ts): after the built-in detectors, an operator rule,
// a built-in catalog rule or the provider's default may name the reason, the scope and the
// cooldown instead (SPEC §7b).
import type { LockoutScope, TerminalStatus } from '../../../shared/model';
import type { ErrorRuleScope } from '../../../shared/settings';
import type { ErrorRuleRegistry, RuleMatch } from './errorRuleRegistry';
import { bodySignals, type BodySignals } from './failurePatterns';
import type { UpstreamFailure } from './port';
import { accountWideHeader, DEFAULT_METERING, rateLimitScope, type Metering, type RateLimitEvidence } from './rateLimitScope';
import { retryHintFrom, type RetryHint } from './retryHints';

export type FailureReason =
  | 'rate_limit_exceeded'
  | 'concurrency_limited'
  | 'quota_exhausted'
  | 'credits_exhausted'
  | 'banned'
  | 'auth_error'
  | 'forbidden'
  | 'request_rejected'
  | 'not_found'
  | 'not_supported'
  | 'bad_request'
  | 'request_timeout'
  | 'server_error'
  | 'overloaded'
  | 'connect_timeout'
  | 'timeout'
  | 'network_error'
  | 'stream_stall'
  | 'stream_error'
  | 'stream_truncated'
  | 'empty_response';

/** Which layer a failure belongs to (SPEC overview: provider / connection / model; or only this request). */
export type FailureScope = 'provider' | 'connection' | 'model' | 'request';

export type CooldownRule =
  /** Nothing is written to the connection (the request itself was at fault). */
  | { kind: 'none' }
  /** The error is recorded on the connection, but it stays eligible (provider-level, not-found). */
  | { kind: 'record' }
  /**
   * Rate limit / quota: the retry-delay precedence chain of R-CC-12 (hint first, backoff last),
   * never shorter than `minMs` when given (the egress-bucketed quota hour, R-EGR-02).
   */
  | { kind: 'rate_limit'; minMs?: number }
  /**
   * A fixed operator choice (an error rule's or default's cooldownMs): exactly `ms`, or with
   * `withHint` the larger of `ms` and the upstream's hint (R-PER-16). Resets the backoff level,
   * like the configured retry delays of R-CC-12.
   */
  | { kind: 'operator'; ms: number; withHint?: boolean }
  /** A recoverable account error: base · 2^n and one backoff step. */
  | { kind: 'backoff' }
  /** Credentials rejected: backoff, and the connection turns `expired` after EXPIRED_RETRY_MAX. */
  | { kind: 'credential' }
  /** Concurrency limit: a fixed short cooldown (or the hint), no backoff step (R-CC-17, R-CC-18). */
  | { kind: 'fixed'; ms: number }
  /** Stream stall: recorded; cools only when streamStallCooldown.enabled (R-CC-22, R-CC-23). */
  | { kind: 'stall' }
  /** A terminal state: not a cooldown, never expires by itself (R-CC-35). */
  | { kind: 'terminal'; status: TerminalStatus };

export interface FailureClass {
  reason: FailureReason;
  scope: FailureScope;
  status: number | null;
  hint: RetryHint | null;
  cooldown: CooldownRule;
  /** Try another connection for this request. */
  failover: boolean;
  /**
   * Counts toward the provider breaker (R-CB-12: 408/500/502/503/504, and transport failures).
   * Never true for a 429 of any kind (R-CB-13, R-CC-19: concurrency-limited 429s included).
   */
  tripsBreaker: boolean;
  /**
   * Counts toward outlier ejection of this connection (a 5xx, 529 included, or a transport
   * failure: connect refused/reset/timeout, headers timeout).
   */
  outlier: boolean;
  /** For a 429: the account-wide signal that widened it to the connection (null: model-scoped). */
  scopeEvidence: RateLimitEvidence | null;
  /** Counts toward the optional provider window gate (§1a). */
  countsForWindowGate: boolean;
  /**
   * When model lockout is on and the status is one of its codes, this failure locks the model
   * (with this scope, R-ML-02..04) instead of cooling the whole connection.
   */
  lockoutScope: LockoutScope;
  /** A model lock may take the place of the connection cooldown for this reason. */
  modelScopable: boolean;
  /** What the client is told to wait when this error is the final answer. */
  retryAfterMs: number | null;
  /** The provider error rule behind this verdict, when one matched (null: the built-in classification). */
  rule: AppliedRule | null;
}

/** A matched provider error rule, as the resilience service applies it. */
export interface AppliedRule {
  source: RuleMatch['source'];
  id: string;
  scope: ErrorRuleScope;
  /** False: a built-in rule off the scope allowlist; the verdict is the built-in one (R-PER-04). */
  honored: boolean;
  cooldown: RuleMatch['cooldown'];
}

/** Which rules apply to a failure: the registry and the failing connection's provider. */
export interface RuleContext {
  registry: ErrorRuleRegistry;
  provider: string;
}

/** R-CB-12: the only statuses that count toward the provider breaker. */
export const BREAKER_TRIP_STATUSES: ReadonlySet<number> = new Set([408, 500, 502, 503, 504]);

/** R-CC-17: how long a busy (concurrency-limited) connection rests without an upstream hint. */
export const CONCURRENCY_LIMIT_COOLDOWN_MS = 1_000;

/** R-ML-02..04: 429/403/402 lock the quota family; 404 and everything else the exact model. */
export function lockoutScopeForStatus(status: number | null): LockoutScope {
  return status === 429 || status === 403 || status === 402 ? 'family' : 'exact';
}

interface Base {
  status: number | null;
  hint: RetryHint | null;
}

type VerdictFields = Omit<FailureClass, 'status' | 'hint' | 'retryAfterMs' | 'lockoutScope' | 'failover' | 'outlier' | 'scopeEvidence' | 'rule'> & {
  failover?: boolean;
  scopeEvidence?: RateLimitEvidence | null;
  rule?: AppliedRule | null;
};

function verdict(b: Base, v: VerdictFields): FailureClass {
  return {
    scopeEvidence: null,
    rule: null,
    ...v,
    outlier: v.scope === 'provider',
    status: b.status,
    hint: b.hint,
    failover: v.failover ?? v.scope !== 'request',
    lockoutScope: lockoutScopeForStatus(b.status),
    retryAfterMs: b.hint && b.hint.ms > 0 ? b.hint.ms : null,
  };
}

const providerLevel = (b: Base, reason: FailureReason, trips: boolean): FailureClass =>
  verdict(b, {
    reason,
    scope: 'provider',
    cooldown: { kind: 'record' },
    tripsBreaker: trips,
    countsForWindowGate: true,
    modelScopable: false,
  });

/** A 4xx that says nothing about the provider: no breaker, no window gate, no model lock. */
const clientSide = (b: Base, reason: FailureReason, scope: FailureScope, cooldown: CooldownRule, failover?: boolean): FailureClass =>
  verdict(b, {
    reason,
    scope,
    cooldown,
    tripsBreaker: false,
    countsForWindowGate: false,
    modelScopable: false,
    ...(failover !== undefined ? { failover } : {}),
  });

export function classifyFailure(f: UpstreamFailure, now: number, metering: Metering = DEFAULT_METERING, rules?: RuleContext): FailureClass {
  switch (f.kind) {
    case 'connect_timeout':
      return providerLevel({ status: null, hint: null }, 'connect_timeout', true);
    case 'headers_timeout':
      return providerLevel({ status: null, hint: null }, 'timeout', true);
    case 'network':
      return providerLevel({ status: null, hint: null }, 'network_error', true);
    case 'idle_timeout':
    case 'stall':
      return verdict(
        { status: null, hint: null },
        {
          reason: 'stream_stall',
          scope: 'connection',
          cooldown: { kind: 'stall' },
          tripsBreaker: false,
          countsForWindowGate: false,
          modelScopable: false,
        },
      );
    case 'truncated':
      // The upstream cut its answer short (no terminal event): a break in the provider's service,
      // like a reset connection, so it counts toward the breaker and outlier ejection.
      return providerLevel({ status: null, hint: null }, 'stream_truncated', true);
    case 'empty':
      // A stream that ended properly with nothing in it: this request's answer was lost; the
      // account is fine. Recorded, and the request fails over.
      return verdict(
        { status: null, hint: null },
        {
          reason: 'empty_response',
          scope: 'connection',
          cooldown: { kind: 'record' },
          tripsBreaker: false,
          countsForWindowGate: false,
          modelScopable: false,
        },
      );
    case 'stream_error':
      if (f.status === null) {
        // The stream broke after the response was committed: the request is lost, the account is fine.
        return verdict(
          { status: null, hint: null },
          {
            reason: 'stream_error',
            scope: 'connection',
            cooldown: { kind: 'record' },
            tripsBreaker: false,
            countsForWindowGate: false,
            modelScopable: false,
          },
        );
      }
      return classifyStatus(f.status, f.headers, f.body, now, metering, rules);
    case 'http':
      return classifyStatus(f.status ?? 500, f.headers, f.body, now, metering, rules);
  }
}

/**
 * An HTTP error (or the error event a 200 stream opened with): the built-in detectors, then the
 * provider error rules when `rules` is given, then the built-in classification by status and body.
 */
export function classifyStatus(
  status: number,
  headers: Record<string, string>,
  body: string,
  now: number,
  metering: Metering = DEFAULT_METERING,
  rules?: RuleContext,
): FailureClass {
  const b: Base = { status, hint: retryHintFrom(headers, body, now) };
  const s = bodySignals(body);
  const builtIn = classifyBuiltIn(b, status, headers, s, metering);
  // R-PER-18: the built-in detectors keep their own phrases, whatever a rule says.
  if (rules === undefined || isDetectorVerdict(builtIn, s)) return builtIn;
  const { registry, provider } = rules;
  const m = registry.match(provider, status, body) ?? registry.defaultFor(provider, status);
  if (m === null) return builtIn;
  const applied: AppliedRule = { source: m.source, id: m.id, scope: m.scope, honored: m.honored, cooldown: m.cooldown };
  // R-PER-04: off the scope allowlist a built-in rule only travels with the verdict.
  if (!m.honored) return { ...builtIn, rule: applied };
  return ruleVerdict(b, builtIn, m, applied);
}

/** Verdicts of the built-in body detectors (ban, credits, per-request denial, concurrency), which no rule overrides. */
export function isDetectorVerdict(v: FailureClass, s: BodySignals): boolean {
  return (
    v.reason === 'banned' ||
    v.reason === 'request_rejected' ||
    v.reason === 'concurrency_limited' ||
    (v.reason === 'credits_exhausted' && s.credits)
  );
}

/** R-PER-14: a rule or default without a reason takes the status's; a cooldown is never terminal. */
const derivedReason = (builtIn: FailureReason): FailureReason =>
  builtIn === 'credits_exhausted' || builtIn === 'banned' ? 'quota_exhausted' : builtIn;

/** The verdict of an honoured rule: its reason, its scope, and its cooldown for the layer it names. */
function ruleVerdict(b: Base, builtIn: FailureClass, m: RuleMatch, rule: AppliedRule): FailureClass {
  const reason: FailureReason = m.reason ?? derivedReason(builtIn.reason);
  const common = { reason, tripsBreaker: false, countsForWindowGate: false, modelScopable: false, failover: true, rule };
  switch (m.scope) {
    case 'model':
      // The model is locked (resilienceService); the connection only records the error.
      return verdict(b, { ...common, scope: 'model', cooldown: { kind: 'record' } });
    case 'provider':
      // Provider-wide evidence: breaker and window gate; a rule cooldown holds every connection.
      return verdict(b, { ...common, scope: 'provider', cooldown: { kind: 'record' }, tripsBreaker: true, countsForWindowGate: true });
    case 'connection': {
      const c = m.cooldown;
      let cooldown: CooldownRule;
      if (c !== null) cooldown = { kind: 'operator', ms: c.ms, ...(c.mode === 'floor' ? { withHint: true } : {}) };
      else if (reason === 'rate_limit_exceeded' || reason === 'quota_exhausted') cooldown = { kind: 'rate_limit' };
      else if (reason === 'concurrency_limited') cooldown = { kind: 'fixed', ms: b.hint && b.hint.ms > 0 ? b.hint.ms : CONCURRENCY_LIMIT_COOLDOWN_MS };
      else cooldown = { kind: 'backoff' };
      return verdict(b, { ...common, scope: 'connection', cooldown });
    }
  }
}

/** The built-in classification: terminal detectors, then the status, then the body wording. */
function classifyBuiltIn(b: Base, status: number, headers: Record<string, string>, s: BodySignals, metering: Metering): FailureClass {
  const connection = (reason: FailureReason, cooldown: CooldownRule, extra: Partial<VerdictFields> = {}): FailureClass =>
    verdict(b, {
      reason,
      scope: 'connection',
      cooldown,
      tripsBreaker: false,
      countsForWindowGate: false,
      modelScopable: false,
      ...extra,
    });

  // Built-in terminal detectors come first: a terminal body is never read as a cooldown.
  if ((status === 400 || status === 401 || status === 402 || status === 403) && s.banned) {
    return connection('banned', { kind: 'terminal', status: 'banned' });
  }
  if (s.credits && (status === 400 || status === 401 || status === 402 || status === 403 || status === 429)) {
    return connection('credits_exhausted', { kind: 'terminal', status: 'credits_exhausted' });
  }

  switch (status) {
    case 429: {
      // R-CC-20: a quota body wins over a concurrency phrase.
      if (s.concurrency && !s.quota) {
        // R-CC-15..19: the account is healthy but busy; a short rest of the connection, never the breaker.
        const ms = b.hint && b.hint.ms > 0 ? b.hint.ms : CONCURRENCY_LIMIT_COOLDOWN_MS;
        return connection('concurrency_limited', { kind: 'fixed', ms });
      }
      // Issue 9: the scope follows the evidence. Without an account-wide signal only this model
      // (its quota family) on this connection rests; with one, the whole connection cools.
      const sc = rateLimitScope({ header: accountWideHeader(headers), accountWording: s.accountLimit, quotaWording: s.quota }, metering);
      return verdict(b, {
        reason: s.quota ? 'quota_exhausted' : 'rate_limit_exceeded',
        scope: sc.scope,
        scopeEvidence: sc.evidence,
        cooldown: { kind: 'rate_limit' },
        tripsBreaker: false,
        countsForWindowGate: false,
        // An account-wide limit may not be narrowed to a model lock (the other models share it).
        modelScopable: sc.scope === 'model',
      });
    }
    case 401:
      return connection('auth_error', { kind: 'credential' });
    case 402:
      // Payment required without any credits wording: the account cannot pay.
      return connection('credits_exhausted', { kind: 'terminal', status: 'credits_exhausted' });
    case 403:
      if (s.requestRejected) {
        return verdict(b, {
          reason: 'request_rejected',
          scope: 'model',
          cooldown: { kind: 'record' },
          tripsBreaker: false,
          countsForWindowGate: false,
          modelScopable: true,
        });
      }
      if (s.quota) return connection('quota_exhausted', { kind: 'rate_limit' }, { modelScopable: true });
      // R-CB-13: a generic 403 is recoverable, cooled with backoff, never terminal.
      return connection('forbidden', { kind: 'backoff' }, { modelScopable: true });
    case 404:
      // Model (or path) not found on this connection: another connection may serve it.
      return clientSide(b, 'not_found', 'model', { kind: 'record' });
    case 405:
    case 501:
      // This connection does not offer the endpoint (e.g. count_tokens); another one may.
      return clientSide(b, 'not_supported', 'request', { kind: 'none' }, true);
    case 408:
      return providerLevel(b, 'request_timeout', true);
    case 500:
    case 502:
    case 503:
    case 504:
      return providerLevel(b, 'server_error', true);
    case 529:
      // Overloaded: provider-wide and transient; not one of the breaker's trip statuses.
      return providerLevel(b, 'overloaded', false);
  }
  if (status >= 500) return providerLevel(b, 'server_error', false);
  // 400, 409, 413, 422, ...: the request itself is wrong; another connection would say the same.
  return clientSide(b, 'bad_request', 'request', { kind: 'none' });
}
