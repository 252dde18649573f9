// Model lockout (SPEC §3): takes one model (or its quota family) of one connection out of routing
// while the connection keeps serving its other models. Lockouts escalate (base · 2^(n-1), capped)
// for failures within the escalation window, decay by halving on a success (and are removed at 0),
// and live in memory only (R-ML-17). Lookups on the hot path are two map reads with no allocation.
// The same store holds the model-scoped rate-limit cooldown (origin `rate_limit`, issue 9): a
// connection cooldown narrowed to one model, with its own backoff level, cleared by a success.
import type { LockOrigin, LockoutScope, ModelLockoutView } from '../../../shared/model';
import type { Exclusion } from './port';
import { quotaFamilyOf } from './quotaFamily';

export interface LockoutSettings {
  baseCooldownMs: number;
  maxCooldownMs: number;
  maxBackoffSteps: number;
  useExponentialBackoff: boolean;
}

export type { LockOrigin };

export interface LockEntry {
  provider: string;
  connectionId: string;
  /** The model that failed (for a family lock, the family key, e.g. "gpt-5*"). */
  model: string;
  family: string;
  scope: LockoutScope;
  reason: string;
  status: number | null;
  origin: LockOrigin;
  failureCount: number;
  /** Backoff level of a `rate_limit` cooldown (as a connection's backoffLevel); 0 for other origins. */
  backoffLevel: number;
  /** Attempt sequence number current when a `rate_limit` cooldown was last set (stampede protection, R-CC-14). */
  seq: number;
  lockedAt: number;
  expiresAt: number;
  /** After this, the entry is forgotten and the next failure starts again at count 1. */
  forgetAt: number;
  /**
   * A `rate_limit` cooldown whose length is our own backoff, not the upstream's word (no
   * Retry-After or reset hint): a guess a last-resort probe may test (see resilienceService).
   */
  guessed?: boolean;
}

interface ConnLocks {
  exact: Map<string, LockEntry>;
  family: Map<string, LockEntry>;
}

/** How long an ended model-scoped rate-limit cooldown keeps its backoff level without a success. */
export const RATE_LIMIT_FORGET_MS = 24 * 60 * 60_000;

/** R-CC-37: per-request denials lock the model for 1 min, doubling, at most REQUEST_REJECTED_MAX_COOLDOWN_MS. */
export const REQUEST_REJECTED_BASE_COOLDOWN_MS = 60_000;
export const REQUEST_REJECTED_MAX_COOLDOWN_MS = 60 * 60_000;

/** Lockout length for the n-th failure (n >= 1) in a row (R-ML-08..11). */
export function lockoutDurationMs(failureCount: number, s: LockoutSettings): number {
  const max = Math.max(s.maxCooldownMs, s.baseCooldownMs);
  if (!s.useExponentialBackoff) return s.baseCooldownMs;
  const steps = Math.min(Math.max(0, failureCount - 1), s.maxBackoffSteps);
  return Math.min(max, s.baseCooldownMs * 2 ** steps);
}

export interface LockTarget {
  provider: string;
  connectionId: string;
  model: string;
}

export interface LockRequest {
  scope: LockoutScope;
  reason: string;
  status: number | null;
  origin: LockOrigin;
  /** Lock length for the resulting failure count. */
  durationFor: (failureCount: number) => number;
  /** How long after expiry a further failure still escalates (the escalation window). */
  escalationWindowMs: number;
  /**
   * An upstream hint's end: a failure while the lock runs (an attempt already in flight) changes
   * nothing, except that a hint asking for longer extends the lock (as R-CC-14 does for cooldowns).
   */
  hintUntil?: number;
}

/**
 * Team mode (issue 26): told of every change made here (not of records applied from the team), with
 * the entry's key; `join` for a lock set or extended, `set` for one decayed or removed.
 */
export type LockObserver = (connectionId: string, scope: LockoutScope, key: string, entry: LockEntry | null, op: 'join' | 'set') => void;

export class ModelLockouts {
  private readonly byConn = new Map<string, ConnLocks>();
  /** Team mode: publishes local changes (null: alone). */
  observer: LockObserver | null = null;

  constructor(private readonly changed: () => void) {}

  get size(): number {
    return this.byConn.size;
  }

  /** Hot path: is this model (or its family) locked on this connection now? */
  exclusion(provider: string, connectionId: string, model: string, now: number): Exclusion | null {
    const locks = this.byConn.get(connectionId);
    if (locks === undefined) return null;
    const exact = locks.exact.get(model);
    const family = locks.family.size > 0 ? locks.family.get(quotaFamilyOf(provider, model)) : undefined;
    const e =
      exact !== undefined && exact.expiresAt > now
        ? family !== undefined && family.expiresAt > exact.expiresAt
          ? family
          : exact
        : family !== undefined && family.expiresAt > now
          ? family
          : undefined;
    if (e === undefined) return null;
    const what = e.scope === 'family' && e.family !== model ? `${e.family} (quota family)` : model;
    const why = `${e.reason}${e.status !== null ? ` ${e.status}` : ''}`;
    return {
      reason: 'model_lockout',
      until: e.expiresAt,
      detail:
        e.origin === 'rate_limit'
          ? `${what} rate-limited on this connection (${why}, backoff level ${e.backoffLevel}); its other models are served`
          : `${what} locked after ${why} (×${e.failureCount})`,
      cause: e.reason,
    };
  }

  /** The stored entry for one key, expired or not (the caller reads its cooldown state). */
  entry(connectionId: string, scope: LockoutScope, key: string): LockEntry | undefined {
    return this.byConn.get(connectionId)?.[scope].get(key);
  }

  /**
   * Sets (or extends) a model-scoped rate-limit cooldown computed by the connection-cooldown rules
   * (issue 9). `until` never shortens a running lock; the entry is forgotten a day after it ends.
   */
  setCooldown(
    t: LockTarget,
    c: {
      scope: LockoutScope;
      reason: string;
      status: number | null;
      until: number;
      backoffLevel: number;
      failureCount: number;
      seq: number;
      guessed?: boolean;
    },
    now: number,
  ): LockEntry {
    const family = c.scope === 'family' ? quotaFamilyOf(t.provider, t.model) : t.model;
    const map = this.locksFor(t.connectionId)[c.scope];
    const prev = map.get(family);
    const expiresAt = Math.max(prev && prev.expiresAt > now ? prev.expiresAt : 0, c.until);
    const entry: LockEntry = {
      provider: t.provider,
      connectionId: t.connectionId,
      model: family,
      family,
      scope: c.scope,
      reason: c.reason,
      status: c.status,
      origin: 'rate_limit',
      failureCount: c.failureCount,
      backoffLevel: c.backoffLevel,
      seq: c.seq,
      lockedAt: now,
      expiresAt,
      forgetAt: expiresAt + RATE_LIMIT_FORGET_MS,
      // A guess only while no running hinted lock is kept (a longer running one wins above).
      guessed: c.guessed === true && !(prev && prev.expiresAt > c.until && prev.guessed !== true),
    };
    map.set(family, entry);
    this.changed();
    this.observer?.(t.connectionId, c.scope, family, entry, 'join');
    return entry;
  }

  /**
   * A model-scoped failure. Within the escalation window the count grows and so does the lock; a
   * failure while the lock is still running (an attempt already in flight) changes nothing.
   */
  recordFailure(t: LockTarget, req: LockRequest, now: number): LockEntry {
    const family = req.scope === 'family' ? quotaFamilyOf(t.provider, t.model) : t.model;
    const map = this.locksFor(t.connectionId)[req.scope];
    const key = req.scope === 'family' ? family : t.model;
    const prev = map.get(key);
    if (prev && prev.expiresAt > now) {
      if (req.hintUntil === undefined || req.hintUntil <= prev.expiresAt) return prev;
      const extended = { ...prev, expiresAt: req.hintUntil, forgetAt: Math.max(prev.forgetAt, req.hintUntil + req.escalationWindowMs) };
      map.set(key, extended);
      this.changed();
      this.observer?.(t.connectionId, req.scope, key, extended, 'join');
      return extended;
    }
    const count = prev && now < prev.forgetAt ? prev.failureCount + 1 : 1;
    const duration = req.durationFor(count);
    const entry: LockEntry = {
      provider: t.provider,
      connectionId: t.connectionId,
      model: req.scope === 'family' ? family : t.model,
      family,
      scope: req.scope,
      reason: req.reason,
      status: req.status,
      origin: req.origin,
      failureCount: count,
      backoffLevel: 0,
      seq: 0,
      lockedAt: now,
      expiresAt: now + duration,
      forgetAt: now + duration + req.escalationWindowMs,
    };
    map.set(key, entry);
    this.changed();
    this.observer?.(t.connectionId, req.scope, key, entry, 'join');
    return entry;
  }

  /** A fixed lock from outside the escalation rules (the queue's long waits, R-RQ-13): exact scope. */
  lock(t: LockTarget, durationMs: number, reason: string, origin: LockOrigin, now: number): LockEntry {
    const map = this.locksFor(t.connectionId).exact;
    const prev = map.get(t.model);
    const expiresAt = Math.max(prev && prev.expiresAt > now ? prev.expiresAt : 0, now + Math.max(0, durationMs));
    const entry: LockEntry = {
      provider: t.provider,
      connectionId: t.connectionId,
      model: t.model,
      family: t.model,
      scope: 'exact',
      reason,
      status: prev?.status ?? null,
      origin,
      failureCount: Math.max(1, prev?.failureCount ?? 1),
      backoffLevel: 0,
      seq: 0,
      lockedAt: now,
      expiresAt,
      forgetAt: Math.max(prev?.forgetAt ?? 0, expiresAt),
    };
    map.set(t.model, entry);
    this.changed();
    this.observer?.(t.connectionId, 'exact', t.model, entry, 'join');
    return entry;
  }

  /**
   * R-ML-13/14: a success of this model on this connection halves the count of the locks that
   * cover it; at 0 the lock is removed, otherwise it stops blocking (the model has recovered).
   */
  onSuccess(provider: string, connectionId: string, model: string, now: number): void {
    const locks = this.byConn.get(connectionId);
    if (locks === undefined) return;
    const family = locks.family.size > 0 ? quotaFamilyOf(provider, model) : null;
    const exact = decay(locks.exact, model, now);
    const fam = family !== null && decay(locks.family, family, now);
    this.dropIfEmpty(connectionId, locks);
    if (!exact && !fam) return;
    this.changed();
    if (this.observer) {
      if (exact) this.observer(connectionId, 'exact', model, locks.exact.get(model) ?? null, 'set');
      if (fam && family !== null) this.observer(connectionId, 'family', family, locks.family.get(family) ?? null, 'set');
    }
  }

  /** Active locks, soonest expiry first. Forgotten entries are pruned here. */
  list(now: number): LockEntry[] {
    const out: LockEntry[] = [];
    for (const [id, locks] of this.byConn) {
      for (const map of [locks.exact, locks.family]) {
        for (const [k, e] of map) {
          if (now >= e.forgetAt && now >= e.expiresAt) map.delete(k);
          else if (e.expiresAt > now) out.push(e);
        }
      }
      this.dropIfEmpty(id, locks);
    }
    return out.sort((a, b) => a.expiresAt - b.expiresAt);
  }

  /** The active locks that keep `model` (exact, or its quota family) out on this connection. */
  covering(provider: string, connectionId: string, model: string, now: number): LockEntry[] {
    const locks = this.byConn.get(connectionId);
    if (!locks) return [];
    const out: LockEntry[] = [];
    const exact = locks.exact.get(model);
    if (exact !== undefined && exact.expiresAt > now) out.push(exact);
    const family = locks.family.size > 0 ? locks.family.get(quotaFamilyOf(provider, model)) : undefined;
    if (family !== undefined && family.expiresAt > now) out.push(family);
    return out;
  }

  activeFor(connectionId: string, now: number): LockEntry[] {
    const locks = this.byConn.get(connectionId);
    if (!locks) return [];
    return [...locks.exact.values(), ...locks.family.values()].filter((e) => e.expiresAt > now);
  }

  /** Removes every lock of a connection (cooldown manager clear). Returns how many were active. */
  clearConnection(connectionId: string, now: number): number {
    const locks = this.byConn.get(connectionId);
    if (!locks) return 0;
    const active = [...locks.exact.values(), ...locks.family.values()].filter((e) => e.expiresAt > now).length;
    this.byConn.delete(connectionId);
    this.changed();
    if (this.observer) {
      for (const k of locks.exact.keys()) this.observer(connectionId, 'exact', k, null, 'set');
      for (const k of locks.family.keys()) this.observer(connectionId, 'family', k, null, 'set');
    }
    return active;
  }

  /** Manual re-enable (R-ML-20): the locks of this connection that cover `model`. */
  clear(provider: string, connectionId: string, model: string, now: number): number {
    const locks = this.byConn.get(connectionId);
    if (!locks) return 0;
    let removed = 0;
    for (const scope of ['exact', 'family'] as const) {
      const map = locks[scope];
      for (const [k, e] of map) {
        if (e.provider !== provider) continue;
        if (e.model === model || e.family === model || (e.scope === 'family' && e.family === quotaFamilyOf(provider, model))) {
          map.delete(k);
          this.observer?.(connectionId, scope, k, null, 'set');
          if (e.expiresAt > now) removed++;
        }
      }
    }
    this.dropIfEmpty(connectionId, locks);
    if (removed > 0) this.changed();
    return removed;
  }

  /** Drops the locks made by one origin (e.g. the status rule when the master switch goes off). */
  dropOrigin(origin: LockOrigin): void {
    let changed = false;
    for (const [id, locks] of this.byConn) {
      for (const map of [locks.exact, locks.family]) {
        for (const [k, e] of map) {
          if (e.origin === origin) {
            map.delete(k);
            changed = true;
          }
        }
      }
      this.dropIfEmpty(id, locks);
    }
    if (changed) this.changed();
  }

  forgetConnection(connectionId: string): void {
    if (this.byConn.delete(connectionId)) this.changed();
  }

  /**
   * Team mode: a lockout another instance published (null: it is gone), held here as it came; the
   * dashboard is told, nothing is published again.
   */
  applyRemote(connectionId: string, scope: LockoutScope, key: string, entry: LockEntry | null): void {
    if (entry === null) {
      const locks = this.byConn.get(connectionId);
      if (!locks || !locks[scope].delete(key)) return;
      this.dropIfEmpty(connectionId, locks);
    } else {
      this.locksFor(connectionId)[scope].set(key, entry);
    }
    this.changed();
  }

  toView(e: LockEntry, connectionName: string): ModelLockoutView {
    return {
      provider: e.provider,
      connectionId: e.connectionId,
      connectionName,
      model: e.model,
      scope: e.scope,
      reason: e.reason,
      status: e.status,
      origin: e.origin,
      failureCount: e.failureCount,
      lockedAt: e.lockedAt,
      expiresAt: e.expiresAt,
    };
  }

  private locksFor(connectionId: string): ConnLocks {
    let l = this.byConn.get(connectionId);
    if (!l) this.byConn.set(connectionId, (l = { exact: new Map(), family: new Map() }));
    return l;
  }

  private dropIfEmpty(connectionId: string, locks: ConnLocks): void {
    if (locks.exact.size === 0 && locks.family.size === 0) this.byConn.delete(connectionId);
  }
}

function decay(map: Map<string, LockEntry>, key: string, now: number): boolean {
  const e = map.get(key);
  if (!e) return false;
  // A rate-limit cooldown is cleared by a success like a connection's (R-CC-40), backoff level and all.
  if (e.origin === 'rate_limit') {
    map.delete(key);
    return true;
  }
  const failureCount = Math.floor(e.failureCount / 2);
  if (failureCount === 0) {
    map.delete(key);
    return true;
  }
  map.set(key, { ...e, failureCount, expiresAt: Math.min(e.expiresAt, now) });
  return true;
}
