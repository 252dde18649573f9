// Outlier ejection per connection (issue 9), as Envoy does per host: N consecutive 5xx or
// transport failures (connect refused/reset/timeout, headers timeout) on one connection while a
// sibling connection of the same provider is succeeding take that connection out of routing for
// base × (ejection count), at most max. A success on the connection resets its streak; the
// ejection count is forgiven one step per `baseEjectionMs` without an ejection. While ejected, a
// failure (an attempt that was already in flight) extends nothing. A connection whose streak is
// still at N or more when its ejection ends is ejected again by its next failure, so a key that
// stays bad costs one call per ejection period.
//
// Pure transitions over an OutlierRecord, plus OutlierDetector: the records of every provider's
// connections in memory, each connection's last success, and the "is a sibling succeeding?" read
// that the breaker also uses for its evidence rule. The ejection itself is written to the
// connection's health (a cooldown with lastErrorType `outlier_ejected`), so every view, the
// eligibility read and the cooldown manager's Clear treat it like any other cooldown.
import { isTerminalStatus } from '../../../shared/model';
import type { ConnectionHealthState } from '../store/connectionsRepo';

export interface OutlierSettings {
  enabled: boolean;
  /** Consecutive failures that eject (N). */
  consecutiveFailures: number;
  baseEjectionMs: number;
  maxEjectionMs: number;
  /** How recent a sibling's success must be to count as "succeeding". */
  siblingWindowMs: number;
}

export interface OutlierRecord {
  /** Consecutive 5xx / transport failures since the connection's last success. */
  consecutive: number;
  lastFailureAt: number | null;
  /** Ejections counted for the next ejection's length (see ejectionsAt). */
  ejections: number;
  /** When the current (or last) ejection ends. */
  ejectedUntil: number | null;
}

export const CLEAN_OUTLIER: OutlierRecord = Object.freeze({ consecutive: 0, lastFailureAt: null, ejections: 0, ejectedUntil: null });

export const OUTLIER_EJECTED = 'outlier_ejected';

/**
 * Successes in a row that make a sibling "steady": its success says the provider is fine. One
 * success is not enough: a flapping provider (every other call fails) gives every key one
 * success between failures, and its failures must still count for the breaker.
 */
export const STEADY_SUCCESSES = 2;

export interface Outcome {
  record: OutlierRecord;
  /** Set when this event ejects the connection: for how long. */
  ejectMs: number | null;
}

/** Length of the n-th ejection (n >= 1): base × n, capped at max (never below base). */
export function ejectionMs(n: number, s: Pick<OutlierSettings, 'baseEjectionMs' | 'maxEjectionMs'>): number {
  return Math.min(Math.max(s.maxEjectionMs, s.baseEjectionMs), s.baseEjectionMs * Math.max(1, n));
}

/** Ejections still counted at `now`: one is forgiven per baseEjectionMs since the last ejection ended. */
export function ejectionsAt(r: OutlierRecord, now: number, s: Pick<OutlierSettings, 'baseEjectionMs'>): number {
  if (r.ejections === 0 || r.ejectedUntil === null || now <= r.ejectedUntil) return r.ejections;
  return Math.max(0, r.ejections - Math.floor((now - r.ejectedUntil) / Math.max(1, s.baseEjectionMs)));
}

export const isEjected = (r: OutlierRecord, now: number) => r.ejectedUntil !== null && r.ejectedUntil > now;

function eject(r: OutlierRecord, now: number, s: OutlierSettings): Outcome {
  const n = ejectionsAt(r, now, s) + 1;
  const ms = ejectionMs(n, s);
  return { record: { ...r, ejections: n, ejectedUntil: now + ms }, ejectMs: ms };
}

/** A 5xx / transport failure on the connection. */
export function onOutlierFailure(r: OutlierRecord, now: number, siblingSucceeding: boolean, s: OutlierSettings): Outcome {
  const next: OutlierRecord = { ...r, consecutive: r.consecutive + 1, lastFailureAt: now };
  if (!s.enabled || isEjected(r, now) || next.consecutive < s.consecutiveFailures || !siblingSucceeding) {
    return { record: next, ejectMs: null };
  }
  return eject(next, now, s);
}

/** A success on the connection: the streak is over (an ejection still running ends with it). */
export function onOutlierSuccess(r: OutlierRecord, now: number): OutlierRecord {
  if (r.consecutive === 0 && !isEjected(r, now)) return r;
  return { ...r, consecutive: 0, ejectedUntil: isEjected(r, now) ? now : r.ejectedUntil };
}

/**
 * A sibling of the same provider succeeded: a connection whose recent streak already reached N
 * (while no sibling was succeeding yet) is ejected now. A streak an ejection already answered (no
 * failure since that ejection ended) is not: the connection gets its next call to show whether it
 * recovered, instead of being ejected again on old evidence.
 */
export function onSiblingSuccess(r: OutlierRecord, now: number, s: OutlierSettings): Outcome {
  if (
    !s.enabled ||
    r.consecutive < s.consecutiveFailures ||
    isEjected(r, now) ||
    r.lastFailureAt === null ||
    now - r.lastFailureAt >= s.siblingWindowMs ||
    (r.ejectedUntil !== null && r.lastFailureAt <= r.ejectedUntil)
  ) {
    return { record: r, ejectMs: null };
  }
  return eject(r, now, s);
}

/** Nothing left worth keeping: no streak, no ejection in force, nothing counted for the next one. */
const forgettable = (r: OutlierRecord, now: number, s: OutlierSettings) =>
  r.consecutive === 0 && !isEjected(r, now) && ejectionsAt(r, now, s) === 0;

/** The health an ejection writes (a cooldown the cooldown manager shows and clears). Null: leave it. */
export function ejectedHealth(
  h: ConnectionHealthState,
  e: { now: number; ms: number; consecutive: number; ejections: number; provider: string },
): ConnectionHealthState | null {
  if (isTerminalStatus(h.testStatus)) return null;
  const until = e.now + e.ms;
  const running = h.rateLimitedUntil !== null && h.rateLimitedUntil > e.now ? h.rateLimitedUntil : null;
  const last = [h.lastErrorType, h.errorCode].filter((x) => x !== null).join(' ');
  return {
    ...h,
    testStatus: 'unavailable',
    rateLimitedUntil: running !== null && running > until ? running : until,
    lastErrorType: OUTLIER_EJECTED,
    lastError: `ejected for ${Math.round(e.ms / 1000)}s after ${e.consecutive} consecutive failures${last ? ` (last: ${last})` : ''} while another ${e.provider} connection succeeds (ejection ${e.ejections})`,
    lastErrorAt: e.now,
  };
}

export interface Ejection {
  connectionId: string;
  ms: number;
  record: OutlierRecord;
}

const NONE: readonly Ejection[] = Object.freeze([]);

/** The outlier records of every provider's connections (process memory; ejections persist in health). */
/** Team mode (issue 26): told of every record changed here (null: forgotten after a success or a clear). */
export type OutlierObserver = (provider: string, connectionId: string, record: OutlierRecord | null) => void;

export class OutlierDetector {
  private readonly byProvider = new Map<string, Map<string, OutlierRecord>>();
  /** Team mode: publishes local changes (null: alone). */
  observer: OutlierObserver | null = null;
  /** provider -> connection -> time of its last success. */
  private readonly lastSuccess = new Map<string, Map<string, number>>();
  /** connection -> successes in a row since its last 5xx / transport failure. */
  private readonly streaks = new Map<string, number>();

  constructor(private readonly settings: () => OutlierSettings) {}

  /** Is another connection of `provider` succeeding (latest outcome a success, recent, not ejected)? */
  siblingSucceeding(provider: string, connectionId: string, now: number): boolean {
    const successes = this.lastSuccess.get(provider);
    if (successes === undefined) return false;
    const window = this.settings().siblingWindowMs;
    const recs = this.byProvider.get(provider);
    for (const [id, at] of successes) {
      if (id === connectionId || now - at >= window) continue;
      const r = recs?.get(id);
      if (r === undefined || (r.consecutive === 0 && !isEjected(r, now))) return true;
    }
    return false;
  }

  /**
   * Is another connection of `provider` steadily succeeding: succeeding as above, with at least
   * STEADY_SUCCESSES in a row? The breaker's evidence rule asks this: a failure while a sibling
   * is steady is that connection's problem; a failure while siblings flap is the provider's.
   */
  siblingSteady(provider: string, connectionId: string, now: number): boolean {
    const successes = this.lastSuccess.get(provider);
    if (successes === undefined) return false;
    const window = this.settings().siblingWindowMs;
    const recs = this.byProvider.get(provider);
    for (const [id, at] of successes) {
      if (id === connectionId || now - at >= window || (this.streaks.get(id) ?? 0) < STEADY_SUCCESSES) continue;
      const r = recs?.get(id);
      if (r === undefined || (r.consecutive === 0 && !isEjected(r, now))) return true;
    }
    return false;
  }

  /**
   * Back from an ejection with its streak unbroken (no success since): the next call tests it.
   * Hot path: one map read when the provider has no failing connection.
   */
  onProbation(provider: string, connectionId: string, now: number): boolean {
    const r = this.byProvider.get(provider)?.get(connectionId);
    return r !== undefined && r.ejectedUntil !== null && r.ejectedUntil <= now && r.consecutive >= this.settings().consecutiveFailures;
  }

  lastSuccessAt(provider: string, connectionId: string): number | null {
    return this.lastSuccess.get(provider)?.get(connectionId) ?? null;
  }

  record(provider: string, connectionId: string): OutlierRecord {
    return this.byProvider.get(provider)?.get(connectionId) ?? CLEAN_OUTLIER;
  }

  /** A 5xx / transport failure. Returns the ejection it causes, if any. */
  onFailure(provider: string, connectionId: string, siblingSucceeding: boolean, now: number): Ejection | null {
    let recs = this.byProvider.get(provider);
    if (recs === undefined) this.byProvider.set(provider, (recs = new Map()));
    this.streaks.delete(connectionId);
    const out = onOutlierFailure(recs.get(connectionId) ?? CLEAN_OUTLIER, now, siblingSucceeding, this.settings());
    recs.set(connectionId, out.record);
    this.observer?.(provider, connectionId, out.record);
    return out.ejectMs !== null ? { connectionId, ms: out.ejectMs, record: out.record } : null;
  }

  /**
   * A success: resets the connection's streak and ejects siblings whose streak reached N (those
   * `canEject` allows). Hot path: two map reads when the provider has no failing connection.
   */
  onSuccess(provider: string, connectionId: string, now: number, canEject: (connectionId: string) => boolean = () => true): readonly Ejection[] {
    let successes = this.lastSuccess.get(provider);
    if (successes === undefined) this.lastSuccess.set(provider, (successes = new Map()));
    successes.set(connectionId, now);
    this.streaks.set(connectionId, (this.streaks.get(connectionId) ?? 0) + 1);
    const recs = this.byProvider.get(provider);
    if (recs === undefined) return NONE;
    const s = this.settings();
    const own = recs.get(connectionId);
    if (own !== undefined) {
      const next = onOutlierSuccess(own, now);
      if (forgettable(next, now, s)) {
        recs.delete(connectionId);
        this.observer?.(provider, connectionId, null);
      } else if (next !== own) {
        recs.set(connectionId, next);
        this.observer?.(provider, connectionId, next);
      }
    }
    if (recs.size === 0) {
      this.byProvider.delete(provider);
      return NONE;
    }
    let out: Ejection[] | null = null;
    for (const [id, r] of recs) {
      if (id === connectionId || r.consecutive < s.consecutiveFailures || !canEject(id)) continue;
      const res = onSiblingSuccess(r, now, s);
      if (res.ejectMs === null) continue;
      recs.set(id, res.record);
      this.observer?.(provider, id, res.record);
      (out ??= []).push({ connectionId: id, ms: res.ejectMs, record: res.record });
    }
    return out ?? NONE;
  }

  /** The operator cleared the connection (cooldown manager, passing test): forget its record. */
  clear(connectionId: string): void {
    for (const p of this.drop(connectionId)) this.observer?.(p, connectionId, null);
  }

  private drop(connectionId: string): string[] {
    const from: string[] = [];
    for (const [p, recs] of this.byProvider) {
      if (!recs.delete(connectionId)) continue;
      from.push(p);
      if (recs.size === 0) this.byProvider.delete(p);
    }
    return from;
  }

  /** Team mode: a record another instance published (null: forgotten there); nothing is published again. */
  applyRemote(provider: string, connectionId: string, r: OutlierRecord | null): void {
    if (r === null) {
      const recs = this.byProvider.get(provider);
      if (recs?.delete(connectionId) && recs.size === 0) this.byProvider.delete(provider);
      return;
    }
    let recs = this.byProvider.get(provider);
    if (recs === undefined) this.byProvider.set(provider, (recs = new Map()));
    recs.set(connectionId, r);
  }

  /** The connection is gone (or changed provider): a local matter, never the team's. */
  forget(connectionId: string): void {
    this.drop(connectionId);
    this.streaks.delete(connectionId);
    for (const [p, successes] of this.lastSuccess) {
      if (successes.delete(connectionId) && successes.size === 0) this.lastSuccess.delete(p);
    }
  }
}
