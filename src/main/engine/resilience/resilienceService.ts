// The resilience core behind the pipeline's port and the management API: it classifies every
// failed attempt once (classifyFailure) and hands the verdict to each layer — the provider breaker
// (§1), the optional window gate (§1a), outlier ejection, the connection cooldown and terminal
// states (§2), the model-scoped rate-limit cooldown and the model lockout (§3) — and answers the
// per-candidate eligibility read with map lookups only. The provider error rules (SPEC §7b) shape
// the verdict in the classifier; here a matched rule's scope picks the layer (model lock,
// connection cooldown, or every connection of the provider), and the egress-bucketed branch (§7c)
// cools the siblings that share the failing connection's egress IP.
import type { AuthClass, BreakerView, ModelLockoutView } from '../../../shared/model';
import type { Clock } from '../clock';
import { isTerminalStatus } from '../../../shared/model';
import { limiterScopeOf } from '../admission/limiterScope';
import type { ConnectionRecord, ConnectionRegistry } from '../connections/registry';
import { ApiError, notFound } from '../errors';
import type { Logger } from '../logger';
import type { Target } from '../routing/target';
import { effectiveFor } from '../settings/resolve';
import type { SettingsService } from '../settings/settingsService';
import type { BreakersRepo } from '../store/breakersRepo';
import { classifyFailure, type CooldownRule, type FailureClass } from './classifyFailure';
import { holdUntil, markedHealth, onConnectionFailure, onConnectionSuccess, operatorReset, rateLimitCooldown, type CooldownSettings, type HoldEvent } from './connectionCooldown';
import { egressBranchApplies, egressSiblings, EGRESS_QUOTA_COOLDOWN_MS, familyOthers, type EgressHistory } from './egressLockout';
import { ErrorRuleRegistry } from './errorRuleRegistry';
import { clearCooldowns, cooldownsView } from './cooldownManager';
import {
  lockoutDurationMs,
  ModelLockouts,
  REQUEST_REJECTED_BASE_COOLDOWN_MS,
  REQUEST_REJECTED_MAX_COOLDOWN_MS,
  type LockoutSettings,
} from './modelLockout';
import { ejectedHealth, OutlierDetector, type Ejection, type OutlierSettings } from './outlierEjection';
import type { AttemptVerdict, Exclusion, Resilience, UpstreamFailure } from './port';
import type { BreakerProfile } from './providerBreaker';
import { ProviderBreakers } from './providerBreakers';
import { ProviderCooldownGate, type WindowGateProfile } from './providerCooldownGate';
import { quotaFamilyOf } from './quotaFamily';
import { RecentFailures } from './recentFailures';
import type { ShareOp } from './shared/records';
import { ResilienceTeam, type ClaimKind } from './shared/teamShare';
import type { Team } from '../team';
import type { TeamIdentity } from '../team/identity';
import { meteredPerAccount, type Metering } from './rateLimitScope';
import { connectionRetrySeconds, MAX_HINT_COOLDOWN_MS, providerRetrySeconds, rateLimitRetryDelay, type RetryDelay } from './retryDelay';

export interface ResilienceDeps {
  settings: Pick<SettingsService, 'values' | 'snapshot' | 'onChange'>;
  registry: ConnectionRegistry;
  breakersRepo: Pick<BreakersRepo, 'all' | 'save' | 'delete'>;
  log?: Logger;
  /** Provider error rules (built-in catalog + the operator's, kept in step with the settings here). */
  errorRules?: ErrorRuleRegistry;
  /** Last known egress IPs, for the egress-bucketed lockout (absent: only the failing connection cools). */
  egress?: EgressHistory;
  /**
   * Team mode (issue 26): the team whose instances share this state, the connections' team ids and
   * the clock that dates records applied from the team. Absent or off: one process, as before.
   */
  team?: Team;
  teamIds?: Pick<TeamIdentity, 'of' | 'ofId' | 'localIds'>;
  clock?: Clock;
}

/**
 * A last-resort probe goes around our guesses only for a key whose last failure is at least this
 * old (a key that failed a moment ago is failing now; issue 19).
 */
export const GUESS_PROBE_AGE_MS = 250;
/** A key gets at most one last-resort probe per this long, however many requests find every target excluded. */
export const GUESS_PROBE_RATION_MS = 1_000;
/** A last-resort pick that has not reported back after this long no longer counts as in flight. */
const PROBE_IN_FLIGHT_TTL_MS = 10_000;

/** Retry-After for a request that finds a connection's probation call in flight. */
const PROBATION_RETRY_MS = 1_000;
/** Retry-After for a request that finds its provider's half-open probe in flight on another instance. */
const PROBE_BUSY_RETRY_MS = 1_000;

/** How often a success may write lastUsedAt when nothing else about the connection changed. */
const LAST_USED_PERSIST_MS = 60_000;

/** Which profile a provider's breaker and window gate use: API key if any connection is one, else OAuth, else Local. */
function providerClass(conns: readonly ConnectionRecord[], provider: string): AuthClass {
  let oauth = false;
  let local = false;
  for (const c of conns) {
    if (c.provider !== provider) continue;
    if (c.authClass === 'apikey') return 'apikey';
    if (c.authClass === 'oauth') oauth = true;
    else local = true;
  }
  return oauth ? 'oauth' : local ? 'local' : 'apikey';
}

/** Ascending order of two times that may be ±Infinity (no NaN from Infinity − Infinity). */
const cmp = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/** Keeps the more distant of two exclusions' end times (the first reason found is reported). */
function widen(a: Exclusion | null, b: Exclusion | null): Exclusion | null {
  if (a === null) return b;
  if (b === null) return a;
  if (a.until !== null && (b.until === null || b.until > a.until)) return { ...a, until: b.until };
  return a;
}

export function createResilience(deps: ResilienceDeps): Resilience {
  const { settings, registry } = deps;
  const log = deps.log?.child('resilience');
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const fn of [...listeners]) fn();
  };

  // Provider -> profile class, rebuilt after a configuration change.
  let classes: Map<string, AuthClass> | null = null;
  const classOf = (provider: string): AuthClass => {
    if (classes === null) classes = new Map();
    let cls = classes.get(provider);
    if (cls === undefined) classes.set(provider, (cls = providerClass(registry.all(), provider)));
    return cls;
  };

  const breakerProfile = (cls: AuthClass): BreakerProfile => {
    const v = settings.values;
    const failureRatePercent = v['providerBreaker.failureRatePercent'];
    if (cls === 'local') {
      const failureThreshold = v['providerBreaker.local.failureThreshold'];
      // The guide derives the Local degrade threshold; here it is one failure before opening.
      return {
        degradationThreshold: Math.max(1, failureThreshold - 1),
        failureThreshold,
        resetTimeoutMs: v['providerBreaker.local.resetTimeoutMs'],
        failureRatePercent,
      };
    }
    return {
      degradationThreshold: v[`providerBreaker.${cls}.degradationThreshold`],
      failureThreshold: v[`providerBreaker.${cls}.failureThreshold`],
      resetTimeoutMs: v[`providerBreaker.${cls}.resetTimeoutMs`],
      failureRatePercent,
    };
  };

  // Outlier-ejection settings, read once per change (the success path asks for them).
  let outlierCfg: OutlierSettings | null = null;
  const outlierSettings = (): OutlierSettings => {
    if (outlierCfg !== null) return outlierCfg;
    const v = settings.values;
    return (outlierCfg = {
      enabled: v['outlierEjection.enabled'],
      consecutiveFailures: v['outlierEjection.consecutiveFailures'],
      baseEjectionMs: v['outlierEjection.baseEjectionMs'],
      maxEjectionMs: v['outlierEjection.maxEjectionMs'],
      siblingWindowMs: v['outlierEjection.siblingWindowMs'],
    });
  };

  // How each connection's provider meters its limits (decides a 429's scope), rebuilt after a configuration change.
  const meterings = new Map<string, Metering>();
  const meteringOf = (conn: ConnectionRecord): Metering => {
    let m = meterings.get(conn.id);
    if (m === undefined) {
      m = { perAccount: meteredPerAccount(conn), perModelQuota: limiterScopeOf(conn) === 'model' };
      meterings.set(conn.id, m);
    }
    return m;
  };

  /** Connections of a provider that can serve at all (enabled, not terminal): 1 = its failures are always provider-wide. */
  const usableConnections = (provider: string): number => {
    let n = 0;
    for (const c of registry.all()) if (c.provider === provider && c.enabled && !isTerminalStatus(c.health.testStatus)) n++;
    return n;
  };

  const gateProfile = (provider: string): WindowGateProfile => {
    const v = settings.values;
    const cls = classOf(provider);
    return {
      failureThreshold: v[`providerCooldown.${cls}.failureThreshold`],
      failureWindowMs: v[`providerCooldown.${cls}.failureWindowMs`],
      cooldownMs: v[`providerCooldown.${cls}.cooldownMs`],
    };
  };

  const rules = deps.errorRules ?? new ErrorRuleRegistry();
  const applyRules = () => rules.setOperator(settings.values.providerErrorRules, settings.values.providerErrorDefaults);
  applyRules();

  const breakers = new ProviderBreakers(deps.breakersRepo, { classOf, profile: breakerProfile }, changed, log);
  const gate = new ProviderCooldownGate(gateProfile, changed);
  const lockouts = new ModelLockouts(changed);
  const outliers = new OutlierDetector(outlierSettings);
  /**
   * A connection back from an outlier ejection with its failure streak unbroken is on probation:
   * one call at a time tests it until one succeeds (connection id -> the attempt testing it), so
   * a key that is still bad costs one call per ejection period even under concurrent load.
   */
  const probation = new Map<string, Target>();
  /** Team mode: connections whose probation call another instance makes, until when we believe so. */
  const probationElsewhere = new Map<string, number>();
  const probationBusyElsewhere = (until: number): Exclusion => ({
    reason: 'cooling_down',
    until,
    detail: 'back from an outlier ejection: one call is testing it on another instance of the team',
    cause: 'outlier_probation',
  });
  /** When each connection was last probed as a last resort (lastResort). */
  const lastResortAt = new Map<string, number>();
  /** The attempts lastResort picked (beginAttempt lets them past a key-level breaker hold). */
  const lastResortPicks = new WeakSet<Target>();
  /** The last-resort probe in flight per connection, settled by its outcome (probeInFlight). */
  const probing = new Map<string, { target: Target; at: number; done: Promise<void>; settle: () => void }>();
  const settleProbe = (target: Target) => {
    const p = probing.size > 0 ? probing.get(target.conn.id) : undefined;
    if (p === undefined || p.target !== target) return;
    probing.delete(target.conn.id);
    p.settle();
  };
  /** When each connection last failed a request (any failure that fails over). */
  const recent = new RecentFailures();

  // Stampede protection (R-CC-14): every dispatched attempt gets a sequence number; a connection
  // remembers the number current when its cooldown was last set. A failure of an attempt numbered
  // at or below it was already in flight then, so it neither adds a backoff step nor extends.
  let seq = 0;
  const attemptSeq = new WeakMap<Target, number>();
  const cooldownSeq = new Map<string, number>();
  const lastUsedPersisted = new Map<string, number>();

  const lockoutSettings = (): LockoutSettings => {
    const v = settings.values;
    return {
      baseCooldownMs: v['modelLockout.baseCooldownMs'],
      maxCooldownMs: v['modelLockout.maxCooldownMs'],
      maxBackoffSteps: v['modelLockout.maxBackoffSteps'],
      useExponentialBackoff: v['modelLockout.useExponentialBackoff'],
    };
  };

  const cooldownSettings = (conn: ConnectionRecord): CooldownSettings => {
    const snap = settings.snapshot;
    return {
      baseMs: effectiveFor(snap, conn.authClass === 'oauth' ? 'connectionCooldown.oauthBaseMs' : 'connectionCooldown.apikeyBaseMs', conn).value,
      maxBackoffSteps: effectiveFor(snap, 'connectionCooldown.maxBackoffSteps', conn).value,
      coolOnStall: effectiveFor(snap, 'streamStallCooldown.enabled', conn).value,
    };
  };

  const retryDelayFor = (conn: ConnectionRecord, c: FailureClass): RetryDelay => {
    const v = settings.values;
    return rateLimitRetryDelay({
      hint: c.hint,
      useUpstreamRetryHints: effectiveFor(settings.snapshot, 'connectionCooldown.useUpstreamRetryHints', conn).value,
      connectionSeconds: connectionRetrySeconds(conn),
      providerSeconds: providerRetrySeconds(v.providerQuotaOverrides, conn.provider),
      globalSeconds: v['rotation.rateLimitResetSeconds'],
    });
  };

  /** Upstream hints are honoured for this connection (connectionCooldown.useUpstreamRetryHints). */
  const hintMsFor = (conn: ConnectionRecord, c: FailureClass): number => {
    if (!c.hint || c.hint.ms <= 0) return 0;
    if (!effectiveFor(settings.snapshot, 'connectionCooldown.useUpstreamRetryHints', conn).value) return 0;
    return Math.min(c.hint.ms, MAX_HINT_COOLDOWN_MS);
  };

  /** Persists a health change; `op` (team mode): how the team gets it, null for a change that stays here. */
  const saveHealth = (conn: ConnectionRecord, now: number, op: ShareOp | null) => {
    lastUsedPersisted.set(conn.id, now);
    registry.saveHealth([conn.id]);
    if (op !== null) share?.publishHealth([conn], op);
  };

  /** Connection cooldown / terminal state for one classified failure; returns the cooldown it called for. */
  const applyToConnection = (target: Target, c: FailureClass, f: UpstreamFailure, now: number, mySeq: number | null, ruleIn: CooldownRule = c.cooldown) => {
    const conn = target.conn;
    // A default's cooldown is the larger of its own and the upstream's hint (R-PER-16).
    const rule: CooldownRule = ruleIn.kind === 'operator' && ruleIn.withHint ? { kind: 'operator', ms: Math.max(ruleIn.ms, hintMsFor(conn, c)) } : ruleIn;
    const h = conn.health;
    const concurrent =
      mySeq !== null ? mySeq <= (cooldownSeq.get(conn.id) ?? -1) : h.rateLimitedUntil !== null && h.rateLimitedUntil > now;
    const out = onConnectionFailure(
      h,
      {
        rule,
        reason: c.reason,
        status: c.status,
        message: f.message,
        now,
        delay: rule.kind === 'rate_limit' ? retryDelayFor(conn, c) : { source: 'backoff' },
        concurrent,
        disableCooling: conn.disableCooling,
      },
      cooldownSettings(conn),
    );
    if (out.health !== h) {
      const cooled = out.health.rateLimitedUntil !== h.rateLimitedUntil;
      const becameTerminal = isTerminalStatus(out.health.testStatus) && out.health.testStatus !== h.testStatus;
      Object.assign(h, out.health);
      if (cooled) cooldownSeq.set(conn.id, seq);
      saveHealth(conn, now, 'join');
      if (becameTerminal) log?.warn('connection.terminal', { connectionId: conn.id, provider: conn.provider, status: h.testStatus, reason: c.reason });
    }
    return out.coolMs;
  };


  /**
   * A 429 without account-wide evidence (issue 9): the connection cooldown of R-CC-04..14 (base
   * · 2^level, the retry-delay chain with the hint first, stampede protection), narrowed to this
   * model's quota family on this connection. Independent of the model-lockout switch.
   */
  const coolModel = (target: Target, c: FailureClass, now: number, mySeq: number | null) => {
    const conn = target.conn;
    const scope = c.lockoutScope;
    const key = scope === 'family' ? quotaFamilyOf(conn.provider, target.model) : target.model;
    const prev = lockouts.entry(conn.id, scope, key);
    const own = prev !== undefined && prev.origin === 'rate_limit' ? prev : undefined;
    const running = prev !== undefined && prev.expiresAt > now;
    const concurrent = mySeq !== null ? own !== undefined && mySeq <= own.seq : running;
    const delay = retryDelayFor(conn, c);
    const out = rateLimitCooldown(
      { until: prev?.expiresAt ?? null, level: own?.backoffLevel ?? 0 },
      { now, delay, concurrent },
      cooldownSettings(conn),
    );
    if (out === null || out.state.until === null) return;
    const failureCount = own === undefined || now >= own.forgetAt ? 1 : concurrent ? own.failureCount : own.failureCount + 1;
    lockouts.setCooldown(
      { provider: conn.provider, connectionId: conn.id, model: target.model },
      { scope, reason: c.reason, status: c.status, until: out.state.until, backoffLevel: out.state.level, failureCount, seq, guessed: delay.source === 'backoff' },
      now,
    );
  };

  /** Another connection of the same provider is in routing now (enabled, not terminal, not cooling). */
  const siblingInRouting = (conn: ConnectionRecord, now: number): boolean => {
    for (const c of registry.all()) {
      if (c === conn || c.provider !== conn.provider || !c.enabled || isTerminalStatus(c.health.testStatus)) continue;
      if (c.health.rateLimitedUntil === null || c.health.rateLimitedUntil <= now) return true;
    }
    return false;
  };

  /**
   * May this connection be ejected? Not when it opted out of cooldowns, and, like Envoy's
   * max-ejection share, never when it is its provider's last connection in routing.
   */
  const canEject = (conn: ConnectionRecord, now: number) => !conn.disableCooling && siblingInRouting(conn, now);
  // The success path's sweep asks this (one function, no closure per success).
  let sweepAt = 0;
  const canEjectAtSweep = (id: string) => {
    const sibling = registry.get(id);
    return sibling !== undefined && canEject(sibling, sweepAt);
  };
  /** Writes an outlier ejection to the connection's health (a cooldown the cooldown manager shows and clears). */
  const applyEjection = (conn: ConnectionRecord, e: Ejection, now: number) => {
    const next = ejectedHealth(conn.health, { now, ms: e.ms, consecutive: e.record.consecutive, ejections: e.record.ejections, provider: conn.provider });
    if (next === null) return;
    Object.assign(conn.health, next);
    cooldownSeq.set(conn.id, seq);
    saveHealth(conn, now, 'join');
    log?.info('connection.ejected', { connectionId: conn.id, provider: conn.provider, ms: e.ms, consecutive: e.record.consecutive, ejections: e.record.ejections });
  };

  /**
   * Holds other connections out of routing until `until` for this failure (egress siblings, a
   * provider-scoped rule): never a terminal state, never shorter than what runs (holdUntil).
   * `shared` false (team mode): the hold is this instance's own (an egress IP), not the team's.
   */
  const holdConnections = (conns: readonly ConnectionRecord[], e: HoldEvent, shared = true): string[] => {
    const held: string[] = [];
    for (const x of conns) {
      if (x.disableCooling) continue;
      const next = holdUntil(x.health, e);
      if (next === x.health) continue;
      Object.assign(x.health, next);
      cooldownSeq.set(x.id, seq);
      lastUsedPersisted.set(x.id, e.now);
      held.push(x.id);
    }
    if (held.length) {
      registry.saveHealth(held);
      if (shared) share?.publishHealth(held.map((id) => registry.get(id)!), 'join');
      else share?.noteLocalHold(held, e);
    }
    return held;
  };

  /**
   * §7c: the failing family connection cools as a whole (its own cooldown and backoff step, a
   * quota at least an hour), and the siblings that share its last known egress IP are held as long.
   */
  const applyEgressLockout = (target: Target, c: FailureClass, f: UpstreamFailure, now: number, mySeq: number | null) => {
    const conn = target.conn;
    const own: CooldownRule =
      c.rule !== null && c.rule.honored && c.rule.cooldown !== null
        ? c.cooldown
        : { kind: 'rate_limit', ...(c.reason === 'quota_exhausted' ? { minMs: EGRESS_QUOTA_COOLDOWN_MS } : {}) };
    applyToConnection(target, c, f, now, mySeq, own);
    const until = conn.health.rateLimitedUntil;
    if (until === null || until <= now || !deps.egress) return;
    const ip = deps.egress.lastKnown(conn.id, now);
    if (ip === null) return;
    // Team mode: the lockout is the IP's; each instance holds the family connections that leave through it there.
    share?.publishEgress(ip, { until, reason: c.reason, status: c.status, message: f.message.slice(0, 500), provider: conn.provider, from: teamIds?.of(conn) ?? null });
    const others = familyOthers(conn, registry.all());
    if (others.length === 0) return;
    const siblings = egressSiblings(conn, others, ip, deps.egress.lastKnownOf(others.map((x) => x.id), now));
    const held = holdConnections(
      siblings,
      {
        until,
        reason: c.reason,
        status: c.status,
        message: `shares egress IP ${ip} with ${conn.name}, which was rate-limited (${c.reason})`,
        now,
      },
      false,
    );
    if (held.length) log?.info('egress.siblings_cooled', { connectionId: conn.id, provider: conn.provider, ip, siblings: held, until });
  };

  /** A rule with scope "model": the model (its quota family for 429/403/402) is locked; the connection stays in routing. */
  const lockByRule = (target: Target, c: FailureClass, now: number) => {
    const conn = target.conn;
    const s = lockoutSettings();
    const max = Math.max(s.maxCooldownMs, s.baseCooldownMs);
    const hintMs = hintMsFor(conn, c);
    const cd = c.rule?.cooldown ?? null;
    const durationFor: (n: number) => number =
      cd === null
        ? (n) => Math.max(lockoutDurationMs(n, s), hintMs)
        : cd.mode === 'exact'
          ? () => cd.ms
          : cd.mode === 'capped'
            ? () => Math.min(cd.ms, max) // R-USR-10: the declared 6 h, capped by the lockout maximum
            : () => Math.max(cd.ms, hintMs);
    lockouts.recordFailure(
      { provider: conn.provider, connectionId: conn.id, model: target.model },
      {
        scope: c.lockoutScope,
        // A model lock is never an "auth error" (credentials belong to the connection): R-USR-10's "forbidden".
        reason: c.reason === 'auth_error' ? 'forbidden' : c.reason,
        status: c.status,
        origin: 'rule',
        durationFor,
        escalationWindowMs: max,
      },
      now,
    );
  };

  /** A rule with scope "provider" and a cooldown: every connection of the provider is held that long. */
  const holdProviderByRule = (target: Target, c: FailureClass, f: UpstreamFailure, now: number) => {
    const cd = c.rule?.cooldown ?? null;
    if (cd === null) return;
    const conn = target.conn;
    const ms = cd.mode === 'floor' ? Math.max(cd.ms, hintMsFor(conn, c)) : cd.ms;
    const held = holdConnections(
      registry.all().filter((x) => x.provider === conn.provider),
      { until: now + ms, reason: c.reason, status: c.status, message: f.message, now },
    );
    if (held.length) log?.info('provider.rule_cooldown', { provider: conn.provider, rule: c.rule?.id, ms, connections: held });
  };

  // Attempts whose failure was already applied through markConnection (the reason it reports).
  const marked = new WeakMap<Target, string>();

  const onFailure = (target: Target, fIn: UpstreamFailure, now: number): AttemptVerdict => {
    endProbation(target);
    settleProbe(target);
    const pre = marked.get(target);
    if (pre !== undefined) {
      marked.delete(target);
      attemptSeq.delete(target);
      breakers.release(target);
      share?.release(target);
      return { reason: pre, failover: true, retryAfterMs: null, hint: null };
    }
    const conn = target.conn;
    const c = classifyFailure(fIn, now, meteringOf(conn), { registry: rules, provider: conn.provider });
    // An honoured rule is named in the connection's last error (the cooldown manager shows it).
    const rule = c.rule !== null && c.rule.honored ? c.rule : null;
    const f = rule ? { ...fIn, message: `${fIn.message} [rule ${rule.id}]` } : fIn;
    const mySeq = attemptSeq.get(target) ?? null;
    attemptSeq.delete(target);
    const v = settings.values;
    if (c.failover) recent.onFailure(conn.id, now);

    // Evidence rule: a failure while a sibling connection of the provider is steadily succeeding
    // is that connection's problem (outlier ejection), not the provider's; while siblings fail
    // too, or only flap between failures and single successes, it is the provider's.
    const siblingSucceeding = c.outlier ? outliers.siblingSucceeding(conn.provider, conn.id, now) : false;
    const connections = c.tripsBreaker || c.countsForWindowGate ? usableConnections(conn.provider) : 0;
    const providerWide = connections <= 1 || !(siblingSucceeding && outliers.siblingSteady(conn.provider, conn.id, now));
    // §1: only provider-level, provider-wide failures reach the breaker; anything else frees a probe it held.
    if (c.tripsBreaker) breakers.recordFailure(target, c.status, now, { connections, evidence: providerWide });
    else breakers.release(target);
    // §1a, with the same evidence rule.
    if (c.countsForWindowGate && v['providerCooldown.enabled'] && providerWide) gate.recordFailure(conn.provider, now);

    const lockTarget = { provider: conn.provider, connectionId: conn.id, model: target.model };
    const hintMs = hintMsFor(conn, c);
    const statusLock = (status: number | null) =>
      v['modelLockout.enabled'] && status !== null && v['modelLockout.errorCodes'].includes(status);
    const lockoutRequest = () => {
      const s = lockoutSettings();
      return {
        scope: c.lockoutScope,
        reason: c.reason,
        status: c.status,
        origin: 'status' as const,
        // A lock honours the upstream's Retry-After: the longer of the lockout step and the hint (at most 24 h).
        durationFor: (n: number) => Math.max(lockoutDurationMs(n, s), hintMs),
        escalationWindowMs: Math.max(s.maxCooldownMs, s.baseCooldownMs),
        ...(hintMs > 0 ? { hintUntil: now + hintMs } : {}),
      };
    };

    if (egressBranchApplies(conn, c)) {
      // §7c: neither the per-model lock nor the generic path (R-EGR-06).
      applyEgressLockout(target, c, f, now, mySeq);
    } else if (rule !== null && rule.scope === 'model') {
      lockByRule(target, c, now);
      applyToConnection(target, c, f, now, mySeq, { kind: 'record' });
    } else if (rule !== null && rule.scope === 'provider') {
      applyToConnection(target, c, f, now, mySeq, { kind: 'record' });
      holdProviderByRule(target, c, f, now);
    } else if (c.reason === 'request_rejected') {
      // R-CC-37: never a ban; the model leaves rotation with a growing cooldown capped at 1 h.
      lockouts.recordFailure(
        lockTarget,
        {
          scope: 'exact',
          reason: c.reason,
          status: c.status,
          origin: 'request_rejected',
          durationFor: (n) => Math.min(REQUEST_REJECTED_MAX_COOLDOWN_MS, REQUEST_REJECTED_BASE_COOLDOWN_MS * 2 ** Math.min(n - 1, 20)),
          escalationWindowMs: REQUEST_REJECTED_MAX_COOLDOWN_MS,
        },
        now,
      );
      applyToConnection(target, c, f, now, mySeq, { kind: 'record' });
    } else if (c.scope === 'model' && c.cooldown.kind === 'rate_limit') {
      // Issue 9: a model-scoped 429 rests only this model here. With the lockout switch on (and
      // 429 among its codes) the status rule's lock applies instead, as before.
      if (statusLock(c.status)) lockouts.recordFailure(lockTarget, lockoutRequest(), now);
      else coolModel(target, c, now, mySeq);
      applyToConnection(target, c, f, now, mySeq, { kind: 'record' });
    } else {
      // §3: a model-scoped status with lockout on locks the model; for rate-limit, quota and
      // permission errors the lock takes the place of the connection cooldown.
      const lockout =
        statusLock(c.status) &&
        c.cooldown.kind !== 'terminal' &&
        (c.modelScopable || c.scope === 'model' || c.scope === 'provider');
      if (lockout) lockouts.recordFailure(lockTarget, lockoutRequest(), now);
      const rule = lockout && c.modelScopable ? ({ kind: 'record' } as const) : c.cooldown;
      const coolMs = applyToConnection(target, c, f, now, mySeq, rule);
      // A connection that opted out of cooldowns loses only the model, for as long as it would have cooled.
      if (conn.disableCooling && coolMs !== null && coolMs > 0) {
        lockouts.recordFailure(
          lockTarget,
          { scope: c.lockoutScope, reason: c.reason, status: c.status, origin: 'no_cooling', durationFor: () => coolMs, escalationWindowMs: 0 },
          now,
        );
      }
    }

    // Outlier ejection: N consecutive 5xx / transport failures while a sibling succeeds.
    if (c.outlier) {
      const ej = outliers.onFailure(conn.provider, conn.id, siblingSucceeding && canEject(conn, now), now);
      if (ej !== null) applyEjection(conn, ej, now);
    }
    // After the outcome is published, so that the next holder of a claim sees it.
    share?.release(target);
    return {
      reason: c.reason,
      failover: c.failover,
      // A restated status tells the client its own wait when the upstream gave none (R-USR-06).
      retryAfterMs: c.retryAfterMs ?? f.clientRetryAfterMs ?? null,
      hint: c.hint,
      scope: c.scope,
      ...(c.rule ? { rule: { source: c.rule.source, id: c.rule.id, honored: c.rule.honored } } : {}),
    };
  };

  /** Probe order for an OPEN/HALF_OPEN provider's targets: the connection most likely healthy first. */
  const probeRank = (t: Target, now: number): number => {
    const conn = t.conn;
    const h = conn.health;
    const blocked =
      isTerminalStatus(h.testStatus) ||
      (h.rateLimitedUntil !== null && h.rateLimitedUntil > now) ||
      (lockouts.size > 0 && lockouts.exclusion(conn.provider, conn.id, t.model, now) !== null);
    return (blocked ? 2 : 0) + (breakers.isImplicated(conn.provider, conn.id) ? 1 : 0);
  };

  const orderForProbe = (targets: Target[], now: number): Target[] => {
    if (breakers.openCount === 0 || targets.length < 2) return targets;
    let groups: Map<string, number[]> | null = null;
    for (let i = 0; i < targets.length; i++) {
      const p = targets[i]!.conn.provider;
      if (!breakers.isOpen(p)) continue;
      groups ??= new Map();
      let idx = groups.get(p);
      if (idx === undefined) groups.set(p, (idx = []));
      idx.push(i);
    }
    if (groups === null) return targets;
    for (const idx of groups.values()) {
      if (idx.length < 2) continue;
      const ranked = idx
        .map((i) => {
          const t = targets[i]!;
          return {
            t,
            rank: probeRank(t, now),
            failedAt: recent.failedAt(t.conn.id),
            streak: outliers.record(t.conn.provider, t.conn.id).consecutive,
            lastOk: outliers.lastSuccessAt(t.conn.provider, t.conn.id) ?? -Infinity,
          };
        })
        // Stable: equal candidates keep the selector's order. The oldest last failure first: the
        // key failing right now is the least likely to have recovered (issue 19).
        .sort((a, b) => a.rank - b.rank || cmp(a.failedAt, b.failedAt) || a.streak - b.streak || cmp(b.lastOk, a.lastOk));
      idx.forEach((i, k) => (targets[i] = ranked[k]!.t));
    }
    return targets;
  };

  const exclusion = (target: Target, now: number): Exclusion | null => {
    const conn = target.conn;
    const h = conn.health;
    if (isTerminalStatus(h.testStatus)) {
      return { reason: 'terminal', until: null, detail: `${h.testStatus}${h.lastError ? `: ${h.lastError}` : ''}` };
    }
    let ex = breakers.exclusion(conn.provider, conn.id, now);
    if (settings.values['providerCooldown.enabled']) ex = widen(ex, gate.exclusion(conn.provider, now));
    if (h.rateLimitedUntil !== null && h.rateLimitedUntil > now) {
      ex = widen(ex, {
        reason: 'cooling_down',
        until: h.rateLimitedUntil,
        detail: `${h.lastErrorType ?? 'cooldown'}${h.backoffLevel > 0 ? ` (backoff level ${h.backoffLevel})` : ''}`,
        ...(h.lastErrorType ? { cause: h.lastErrorType } : {}),
      });
    }
    if (lockouts.size > 0) ex = widen(ex, lockouts.exclusion(conn.provider, conn.id, target.model, now));
    if (probation.size > 0 && ex === null) {
      const holder = probation.get(conn.id);
      if (holder !== undefined && holder !== target) {
        return { reason: 'cooling_down', until: now + PROBATION_RETRY_MS, detail: 'back from an outlier ejection: one call is testing it', cause: 'outlier_probation' };
      }
    }
    if (probationElsewhere.size > 0 && ex === null) {
      const until = probationElsewhere.get(conn.id);
      if (until !== undefined && until > now) return probationBusyElsewhere(until);
    }
    return ex;
  };

  /** Ends the probation claim this attempt holds, if any. */
  const endProbation = (target: Target) => {
    if (probation.size > 0 && probation.get(target.conn.id) === target) probation.delete(target.conn.id);
  };

  const providersKnown = (): Set<string> => {
    const out = new Set<string>();
    for (const c of registry.all()) out.add(c.provider);
    return out;
  };

  const lockoutViews = (now: number): ModelLockoutView[] =>
    lockouts.list(now).map((e) => lockouts.toView(e, registry.get(e.connectionId)?.name ?? e.connectionId));

  // Team mode (issue 26): the state above shared with the team's other instances.
  const teamIds = deps.teamIds;
  const share =
    deps.team?.enabled && teamIds && deps.clock
      ? new ResilienceTeam(
          { team: deps.team, teamIds, clock: deps.clock, log },
          {
            registry,
            lockouts,
            breakers,
            gate,
            outliers,
            recent,
            egress: deps.egress,
            markCooled: (id) => cooldownSeq.set(id, seq),
            seq: () => seq,
            holdLocally: (conns, e) => holdConnections(conns, e, false),
            lockoutsEnabled: () => settings.values['modelLockout.enabled'],
            lastResortMs: GUESS_PROBE_RATION_MS,
            changed,
          },
        )
      : null;

  /**
   * Another instance of the team holds the claim this attempt was given here: the attempt gives
   * back what it took and is skipped like one that found the claim busy in this process.
   */
  const refuseClaim = (target: Target, kind: ClaimKind, now: number): Exclusion => {
    const conn = target.conn;
    breakers.release(target);
    endProbation(target);
    attemptSeq.delete(target);
    settleProbe(target);
    switch (kind) {
      case 'probe': {
        const until = now + PROBE_BUSY_RETRY_MS;
        breakers.probeElsewhere(conn.provider, until);
        return { reason: 'circuit_open', until, detail: `${conn.provider} breaker is half-open and its one test request is under way on another instance of the team` };
      }
      case 'probation': {
        const until = now + PROBATION_RETRY_MS;
        probationElsewhere.set(conn.id, until);
        return probationBusyElsewhere(until);
      }
      case 'lastResort':
        return { reason: 'cooling_down', until: now + GUESS_PROBE_RATION_MS, detail: 'another instance of the team is probing this key right now' };
    }
  };

  registry.onChange((kind, ids) => {
    if (kind !== 'config') return;
    classes = null;
    meterings.clear();
    for (const id of ids) {
      // A changed connection (key, URL, provider) starts a new outlier record.
      outliers.forget(id);
      probationElsewhere.delete(id);
      // New credentials reset the health: this instance's own marks and holds went with it.
      const changed = registry.get(id);
      if (!changed || !isTerminalStatus(changed.health.testStatus)) share?.forgetLocal(id);
      if (registry.get(id)) continue;
      lockouts.forgetConnection(id);
      cooldownSeq.delete(id);
      lastUsedPersisted.delete(id);
      lastResortAt.delete(id);
      probing.get(id)?.settle();
      probing.delete(id);
      recent.forget(id);
      probation.delete(id);
    }
  });
  settings.onChange((keys) => {
    const v = settings.values;
    if (keys.includes('modelLockout.enabled') && !v['modelLockout.enabled']) lockouts.dropOrigin('status');
    if (keys.includes('providerCooldown.enabled') && !v['providerCooldown.enabled']) gate.reset();
    if (keys.some((k) => k.startsWith('outlierEjection.'))) outlierCfg = null;
    if (keys.includes('providerErrorRules') || keys.includes('providerErrorDefaults')) applyRules();
    if (keys.some((k) => k.startsWith('providerBreaker.') || k.startsWith('providerCooldown.'))) changed();
  });

  return {
    exclusion,

    orderForProbe,

    lastResort(targets, now) {
      const v = settings.values;
      let best: Target | null = null;
      let bestFailedAt = Infinity;
      let bestUntil = Infinity;
      for (const t of targets) {
        const conn = t.conn;
        const h = conn.health;
        if (!conn.enabled || isTerminalStatus(h.testStatus)) continue;
        // The window gate has its own probe; so has a provider-wide breaker. A key-level breaker's
        // hold is a guess of ours (providerBreaker.ts), so it may be gone around.
        if (v['providerCooldown.enabled'] && gate.exclusion(conn.provider, now)) continue;
        let until = 0;
        const held = breakers.exclusion(conn.provider, conn.id, now);
        if (held) {
          if (!breakers.heldByGuess(conn.provider, conn.id, now)) continue;
          until = held.until ?? 0;
        }
        // Rationed: not a key that failed a moment ago, nor one probed a moment ago.
        const failedAt = recent.failedAt(conn.id);
        if (now - failedAt < GUESS_PROBE_AGE_MS || now - (lastResortAt.get(conn.id) ?? -Infinity) < GUESS_PROBE_RATION_MS) continue;
        if (probation.size > 0 && probation.has(conn.id)) continue;
        if (h.rateLimitedUntil !== null && h.rateLimitedUntil > now) {
          // Only an ejection is our guess; a cooldown set by the account's own answer is known.
          // (Read from the detector: a straggler's error may have overwritten lastErrorType since.)
          const r = outliers.record(conn.provider, conn.id);
          if (r.ejectedUntil === null || r.ejectedUntil < h.rateLimitedUntil) continue;
          until = Math.max(until, h.rateLimitedUntil);
        }
        let soft = true;
        for (const e of lockouts.size > 0 ? lockouts.covering(conn.provider, conn.id, t.model, now) : []) {
          if (e.origin !== 'rate_limit' || e.guessed !== true) soft = false;
          else until = Math.max(until, e.expiresAt);
        }
        if (!soft) continue;
        // The key whose last failure is oldest is the likeliest to have recovered; then the soonest-lifting.
        if (failedAt < bestFailedAt || (failedAt === bestFailedAt && until < bestUntil)) {
          best = t;
          bestFailedAt = failedAt;
          bestUntil = until;
        }
      }
      if (best) {
        lastResortAt.set(best.conn.id, now);
        lastResortPicks.add(best);
        let settle!: () => void;
        const done = new Promise<void>((resolve) => (settle = resolve));
        probing.get(best.conn.id)?.settle();
        probing.set(best.conn.id, { target: best, at: now, done, settle });
      }
      return best;
    },

    probeInFlight(targets, now) {
      if (probing.size === 0) return null;
      const waits: Promise<void>[] = [];
      for (const t of targets) {
        const p = probing.get(t.conn.id);
        // A pick that never reported back (refused before dispatch) stops counting after PROBE_IN_FLIGHT_TTL_MS.
        if (p !== undefined && now - p.at < PROBE_IN_FLIGHT_TTL_MS) waits.push(p.done);
      }
      return waits.length === 0 ? null : Promise.race(waits);
    },

    beginAttempt(target, now) {
      const guess = lastResortPicks.has(target);
      const ex = breakers.beginAttempt(target, now, guess);
      if (ex) return ex;
      const conn = target.conn;
      let tested = false;
      if (outliers.onProbation(conn.provider, conn.id, now)) {
        const holder = probation.get(conn.id);
        if (holder !== undefined && holder !== target) {
          breakers.release(target);
          return { reason: 'cooling_down', until: now + PROBATION_RETRY_MS, detail: 'back from an outlier ejection: one call is testing it', cause: 'outlier_probation' };
        }
        const elsewhere = probationElsewhere.size > 0 ? probationElsewhere.get(conn.id) : undefined;
        if (elsewhere !== undefined && elsewhere > now) {
          breakers.release(target);
          return probationBusyElsewhere(elsewhere);
        }
        probation.set(conn.id, target);
        tested = true;
      }
      attemptSeq.set(target, ++seq);
      if (share === null) return null;
      // Team mode: what the local rule just gave this attempt is claimed across the team too.
      const probe = breakers.claimedBy(target);
      if (!probe && !tested && !guess) return null;
      return share.claim(target, { probe, probation: tested, lastResort: guess }).then((refused) => (refused === null ? null : refuseClaim(target, refused, now)));
    },

    onSuccess(target, now) {
      const conn = target.conn;
      attemptSeq.delete(target);
      endProbation(target);
      settleProbe(target);
      breakers.recordSuccess(target, now);
      gate.recordSuccess(conn.provider);
      if (lockouts.size > 0) lockouts.onSuccess(conn.provider, conn.id, target.model, now);
      const h = conn.health;
      const next = onConnectionSuccess(h);
      h.lastUsedAt = now;
      if (next !== h) {
        Object.assign(h, next, { lastUsedAt: now });
        saveHealth(conn, now, 'set');
      } else if (now - (lastUsedPersisted.get(conn.id) ?? 0) >= LAST_USED_PERSIST_MS) {
        // lastUsedAt is each instance's own: nothing for the team.
        saveHealth(conn, now, null);
      }
      // A sibling whose failure streak already reached N is ejected now that this one succeeds.
      sweepAt = now;
      const ejections = outliers.onSuccess(conn.provider, conn.id, now, canEjectAtSweep);
      for (const e of ejections) applyEjection(registry.get(e.connectionId)!, e, now);
      // Team claims go back once the outcome is published.
      share?.release(target);
    },

    onFailure,

    onAbandon(target) {
      attemptSeq.delete(target);
      endProbation(target);
      settleProbe(target);
      breakers.release(target);
      share?.release(target);
    },

    lockModel(target, durationMs, reason, now) {
      lockouts.lock({ provider: target.conn.provider, connectionId: target.conn.id, model: target.model }, durationMs, reason, 'queue', now);
    },

    markConnection(connectionId, mark, now, attempt) {
      if (attempt) marked.set(attempt, mark.reason);
      const conn = registry.get(connectionId);
      if (!conn) return;
      const next = markedHealth(conn.health, mark, now);
      if (next === conn.health) return;
      Object.assign(conn.health, next);
      // Team mode: a mark is about this instance's sign-in, not the account: it stays here.
      share?.noteLocalMark(conn.id, mark);
      saveHealth(conn, now, null);
      if (mark.kind === 'terminal') log?.warn('connection.terminal', { connectionId, provider: conn.provider, status: mark.status, reason: mark.reason });
    },

    breakers(now): BreakerView[] {
      const names = providersKnown();
      for (const p of breakers.providers()) names.add(p);
      for (const p of gate.providers()) names.add(p);
      const gateOn = settings.values['providerCooldown.enabled'];
      return [...names]
        .sort()
        .map((p) => breakers.view(p, now, gateOn ? gate.coolingUntil(p, now) : null));
    },

    cooldowns: (now, provider) => cooldownsView(registry, lockouts, now, provider),

    clearCooldowns: (input, now) =>
      clearCooldowns(
        registry,
        lockouts,
        input,
        now,
        (id) => {
          outliers.clear(id);
          probation.delete(id);
          probationElsewhere.delete(id);
          const conn = registry.get(id);
          // A key-level breaker hold is ours to lift with the connection; a provider-wide one is not.
          return conn !== undefined && breakers.releaseKey(conn.provider, id);
        },
        (ids) => {
          registry.saveHealth(ids);
          // An operator's clear is a change like any other: the team gets it.
          share?.publishHealth(ids.map((id) => registry.get(id)!), 'set');
        },
      ),

    healthLayers(now) {
      const failureStreaks: Record<string, number> = {};
      for (const c of registry.all()) {
        const n = outliers.record(c.provider, c.id).consecutive;
        if (n > 0) failureStreaks[c.id] = n;
      }
      return { breakerHolds: breakers.heldKeys(now), failureStreaks };
    },

    lockouts: lockoutViews,

    clearLockout({ provider, connection, model }, now) {
      const conn =
        registry.get(connection) ?? registry.all().find((c) => c.provider === provider && c.name === connection);
      if (!conn) throw notFound('connection', connection);
      if (conn.provider !== provider) {
        throw new ApiError(400, 'invalid_input', `connection ${connection} belongs to provider "${conn.provider}", not "${provider}"`, 'provider');
      }
      return lockouts.clear(provider, conn.id, model, now);
    },

    resetBreakers(provider) {
      const known = providersKnown();
      if (provider !== undefined && !known.has(provider) && ![...breakers.providers()].includes(provider)) {
        throw new ApiError(404, 'not_found', `no provider "${provider}" is configured`, 'provider');
      }
      const reset = breakers.reset(provider, known);
      gate.reset(provider);
      log?.info('breaker.reset', { providers: reset });
      return reset;
    },

    onConnectionTestOk(connectionId, now) {
      const conn = registry.get(connectionId);
      if (!conn) return;
      breakers.connectionTestOk(conn.provider, now);
      outliers.clear(conn.id);
      share?.forgetLocal(conn.id);
      const next = operatorReset(conn.health);
      if (next !== conn.health) {
        Object.assign(conn.health, next);
        saveHealth(conn, now, 'set');
      }
    },

    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
