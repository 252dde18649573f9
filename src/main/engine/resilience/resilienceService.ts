// The resilience core behind the pipeline's port and the management API: it classifies every
// failed attempt once (classifyFailure) and hands the verdict to each layer — the provider breaker
// (§1), the optional window gate (§1a), the connection cooldown and terminal states (§2) and the
// model lockout (§3) — and answers the per-candidate eligibility read with map lookups only.
import type { AuthClass, BreakerView, ModelLockoutView } from '../../../shared/model';
import { isTerminalStatus } from '../../../shared/model';
import type { ConnectionRecord, ConnectionRegistry } from '../connections/registry';
import { ApiError, notFound } from '../errors';
import type { Logger } from '../logger';
import type { Target } from '../routing/target';
import { effectiveFor } from '../settings/resolve';
import type { SettingsService } from '../settings/settingsService';
import type { BreakersRepo } from '../store/breakersRepo';
import { classifyFailure, type FailureClass } from './classifyFailure';
import { markedHealth, onConnectionFailure, onConnectionSuccess, operatorReset, type CooldownSettings } from './connectionCooldown';
import { clearCooldowns, cooldownsView } from './cooldownManager';
import {
  lockoutDurationMs,
  ModelLockouts,
  REQUEST_REJECTED_BASE_COOLDOWN_MS,
  REQUEST_REJECTED_MAX_COOLDOWN_MS,
  type LockoutSettings,
} from './modelLockout';
import type { AttemptVerdict, Exclusion, Resilience, UpstreamFailure } from './port';
import type { BreakerProfile } from './providerBreaker';
import { ProviderBreakers } from './providerBreakers';
import { ProviderCooldownGate, type WindowGateProfile } from './providerCooldownGate';
import { connectionRetrySeconds, providerRetrySeconds, rateLimitRetryDelay, type RetryDelay } from './retryDelay';

export interface ResilienceDeps {
  settings: Pick<SettingsService, 'values' | 'snapshot' | 'onChange'>;
  registry: ConnectionRegistry;
  breakersRepo: Pick<BreakersRepo, 'all' | 'save' | 'delete'>;
  log?: Logger;
}

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
    if (cls === 'local') {
      const failureThreshold = v['providerBreaker.local.failureThreshold'];
      // The guide derives the Local degrade threshold; here it is one failure before opening.
      return { degradationThreshold: Math.max(1, failureThreshold - 1), failureThreshold, resetTimeoutMs: v['providerBreaker.local.resetTimeoutMs'] };
    }
    return {
      degradationThreshold: v[`providerBreaker.${cls}.degradationThreshold`],
      failureThreshold: v[`providerBreaker.${cls}.failureThreshold`],
      resetTimeoutMs: v[`providerBreaker.${cls}.resetTimeoutMs`],
    };
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

  const breakers = new ProviderBreakers(deps.breakersRepo, { classOf, profile: breakerProfile }, changed, log);
  const gate = new ProviderCooldownGate(gateProfile, changed);
  const lockouts = new ModelLockouts(changed);

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

  const saveHealth = (conn: ConnectionRecord, now: number) => {
    lastUsedPersisted.set(conn.id, now);
    registry.saveHealth([conn.id]);
  };

  /** Connection cooldown / terminal state for one classified failure; returns the cooldown it called for. */
  const applyToConnection = (target: Target, c: FailureClass, f: UpstreamFailure, now: number, mySeq: number | null, rule = c.cooldown) => {
    const conn = target.conn;
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
      saveHealth(conn, now);
      if (becameTerminal) log?.warn('connection.terminal', { connectionId: conn.id, provider: conn.provider, status: h.testStatus, reason: c.reason });
    }
    return out.coolMs;
  };

  // Attempts whose failure was already applied through markConnection (the reason it reports).
  const marked = new WeakMap<Target, string>();

  const onFailure = (target: Target, f: UpstreamFailure, now: number): AttemptVerdict => {
    const pre = marked.get(target);
    if (pre !== undefined) {
      marked.delete(target);
      attemptSeq.delete(target);
      breakers.release(target);
      return { reason: pre, failover: true, retryAfterMs: null, hint: null };
    }
    const c = classifyFailure(f, now);
    const conn = target.conn;
    const mySeq = attemptSeq.get(target) ?? null;
    attemptSeq.delete(target);
    const v = settings.values;

    // §1: only provider-level failures reach the breaker; anything else frees a probe it held.
    if (c.tripsBreaker && !c.skipProviderBreaker) breakers.recordFailure(conn.provider, c.status, now);
    else breakers.release(target);
    // §1a
    if (c.countsForWindowGate && v['providerCooldown.enabled']) gate.recordFailure(conn.provider, now);

    const lockTarget = { provider: conn.provider, connectionId: conn.id, model: target.model };
    if (c.reason === 'request_rejected') {
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
    } else {
      // §3: a model-scoped status with lockout on locks the model; for rate-limit, quota and
      // permission errors the lock takes the place of the connection cooldown.
      const lockout =
        v['modelLockout.enabled'] &&
        c.status !== null &&
        c.cooldown.kind !== 'terminal' &&
        (c.modelScopable || c.scope === 'model' || c.scope === 'provider') &&
        v['modelLockout.errorCodes'].includes(c.status);
      if (lockout) {
        const s = lockoutSettings();
        lockouts.recordFailure(
          lockTarget,
          {
            scope: c.lockoutScope,
            reason: c.reason,
            status: c.status,
            origin: 'status',
            durationFor: (n) => lockoutDurationMs(n, s),
            escalationWindowMs: Math.max(s.maxCooldownMs, s.baseCooldownMs),
          },
          now,
        );
      }
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
    return { reason: c.reason, failover: c.failover, retryAfterMs: c.retryAfterMs, hint: c.hint };
  };

  const exclusion = (target: Target, now: number): Exclusion | null => {
    const conn = target.conn;
    const h = conn.health;
    if (isTerminalStatus(h.testStatus)) {
      return { reason: 'terminal', until: null, detail: `${h.testStatus}${h.lastError ? `: ${h.lastError}` : ''}` };
    }
    let ex = breakers.exclusion(conn.provider, now);
    if (settings.values['providerCooldown.enabled']) ex = widen(ex, gate.exclusion(conn.provider, now));
    if (h.rateLimitedUntil !== null && h.rateLimitedUntil > now) {
      ex = widen(ex, {
        reason: 'cooling_down',
        until: h.rateLimitedUntil,
        detail: `${h.lastErrorType ?? 'cooldown'}${h.backoffLevel > 0 ? ` (backoff level ${h.backoffLevel})` : ''}`,
      });
    }
    if (lockouts.size > 0) ex = widen(ex, lockouts.exclusion(conn.provider, conn.id, target.model, now));
    return ex;
  };

  const providersKnown = (): Set<string> => {
    const out = new Set<string>();
    for (const c of registry.all()) out.add(c.provider);
    return out;
  };

  const lockoutViews = (now: number): ModelLockoutView[] =>
    lockouts.list(now).map((e) => lockouts.toView(e, registry.get(e.connectionId)?.name ?? e.connectionId));

  registry.onChange((kind, ids) => {
    if (kind !== 'config') return;
    classes = null;
    for (const id of ids) {
      if (registry.get(id)) continue;
      lockouts.forgetConnection(id);
      cooldownSeq.delete(id);
      lastUsedPersisted.delete(id);
    }
  });
  settings.onChange((keys) => {
    const v = settings.values;
    if (keys.includes('modelLockout.enabled') && !v['modelLockout.enabled']) lockouts.dropOrigin('status');
    if (keys.includes('providerCooldown.enabled') && !v['providerCooldown.enabled']) gate.reset();
    if (keys.some((k) => k.startsWith('providerBreaker.') || k.startsWith('providerCooldown.'))) changed();
  });

  return {
    exclusion,

    beginAttempt(target, now) {
      const ex = breakers.beginAttempt(target, now);
      if (ex) return ex;
      attemptSeq.set(target, ++seq);
      return null;
    },

    onSuccess(target, now) {
      const conn = target.conn;
      attemptSeq.delete(target);
      breakers.recordSuccess(conn.provider, now);
      gate.recordSuccess(conn.provider);
      if (lockouts.size > 0) lockouts.onSuccess(conn.provider, conn.id, target.model, now);
      const h = conn.health;
      const next = onConnectionSuccess(h);
      h.lastUsedAt = now;
      if (next !== h) {
        Object.assign(h, next, { lastUsedAt: now });
        saveHealth(conn, now);
      } else if (now - (lastUsedPersisted.get(conn.id) ?? 0) >= LAST_USED_PERSIST_MS) {
        saveHealth(conn, now);
      }
    },

    onFailure,

    onAbandon(target) {
      attemptSeq.delete(target);
      breakers.release(target);
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
      saveHealth(conn, now);
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

    clearCooldowns: (input, now) => clearCooldowns(registry, lockouts, input, now),

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
      const next = operatorReset(conn.health);
      if (next !== conn.health) {
        Object.assign(conn.health, next);
        saveHealth(conn, now);
      }
    },

    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
