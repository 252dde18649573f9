// The breakers of all providers: one persisted record each (domain_circuit_breakers, so an OPEN
// breaker survives a restart), the single probe claim per provider (process memory), and the
// eligibility read the proxy asks for every candidate. An OPEN breaker keeps out the connections
// whose failures opened it until it half-opens; a connection that did not fail may probe it early
// (one probe at a time), so a healthy key is never shut out for a whole reset timeout (issue 9).
// A key-level opening (a key succeeded within the quiet window, issue 19) holds each failing key
// only briefly after its own failure and never gates the others (providerBreaker.ts).
// Persistence happens when a failure or a state change alters a record; successes that only add
// to the window and reads never write.
import type { BreakerView, AuthClass } from '../../../shared/model';
import type { Logger } from '../logger';
import type { Target } from '../routing/target';
import type { BreakersRepo } from '../store/breakersRepo';
import type { Exclusion } from './port';
import {
  ANY_CONNECTION,
  CLOSED_RECORD,
  implicatedConnections,
  quietWindowMs,
  onConnectionTestOk,
  onProviderFailure,
  onProviderSuccess,
  parseBreakerRecord,
  settle,
  stateAt,
  windowSize,
  type BreakerProfile,
  type BreakerRecord,
} from './providerBreaker';

/** A probe claim older than this is presumed lost and another request may probe. */
export const PROBE_CLAIM_TTL_MS = 10 * 60_000;
/** Retry-After for a request that finds the probe already in flight. */
const PROBE_BUSY_RETRY_MS = 1_000;

interface ProbeClaim {
  holder: Target;
  claimedAt: number;
}

/**
 * Team mode (issue 26): told of every record change made here that is persisted (a failure, a
 * state change, a reset; null: the record is gone), `join` for a failure, `set` otherwise.
 */
export type BreakerObserver = (provider: string, record: BreakerRecord | null, op: 'join' | 'set') => void;

export interface BreakerProfiles {
  classOf(provider: string): AuthClass;
  profile(cls: AuthClass): BreakerProfile;
}

export class ProviderBreakers {
  private readonly records = new Map<string, BreakerRecord>();
  /** For each OPEN provider: the connections whose latest outcome in its window is a failure, and when. */
  private readonly implicated = new Map<string, ReadonlyMap<string, number>>();
  /** When any connection of each provider last succeeded (process memory). */
  private readonly lastSuccess = new Map<string, number>();
  private readonly probes = new Map<string, ProbeClaim>();
  /** Team mode: providers whose probe another instance holds, until when we believe so. */
  private readonly probesElsewhere = new Map<string, number>();
  /** Team mode: publishes local changes (null: alone). */
  observer: BreakerObserver | null = null;
  /** Team mode: an operator lifted a key-level hold here. */
  onKeyReleased: ((provider: string, connectionId: string) => void) | null = null;

  constructor(
    private readonly repo: Pick<BreakersRepo, 'all' | 'save' | 'delete'>,
    private readonly profiles: BreakerProfiles,
    private readonly changed: () => void,
    private readonly log?: Logger,
  ) {
    for (const [provider, raw] of repo.all()) {
      const r = parseBreakerRecord(raw);
      if (r) this.put(provider, r);
    }
  }

  private profileOf(provider: string): BreakerProfile {
    return this.profiles.profile(this.profiles.classOf(provider));
  }

  /** Number of providers whose breaker is stored OPEN (0 on the hot path almost always). */
  get openCount(): number {
    return this.implicated.size;
  }

  isOpen(provider: string): boolean {
    return this.implicated.has(provider);
  }

  /** When this connection's latest failure in the OPEN breaker's window happened; undefined = not implicated. */
  private failedAt(provider: string, connectionId: string): number | undefined {
    const s = this.implicated.get(provider);
    return s === undefined ? undefined : (s.get(connectionId) ?? s.get(ANY_CONNECTION));
  }

  /** Is this connection's latest outcome in the window of the provider's OPEN breaker a failure? */
  isImplicated(provider: string, connectionId: string): boolean {
    return this.failedAt(provider, connectionId) !== undefined;
  }

  /** The provider's breaker is OPEN on key-level evidence (a key succeeded recently): its holds are a guess. */
  isKeyLevel(provider: string): boolean {
    const r = this.records.get(provider);
    return r !== undefined && r.state === 'OPEN' && !r.wide;
  }

  private probeBusy(provider: string, now: number): boolean {
    const c = this.probes.get(provider);
    if (c !== undefined && now - c.claimedAt < PROBE_CLAIM_TTL_MS) return true;
    return this.probesElsewhere.size > 0 && (this.probesElsewhere.get(provider) ?? 0) > now;
  }

  /**
   * Hot path: null when the target may be called (CLOSED, DEGRADED, HALF_OPEN with its probe
   * free, or OPEN for a connection that did not fail while its probe is free; key-level: any
   * connection not failing now, and a failing one once its own hold is over, one probe at a time).
   */
  exclusion(provider: string, connectionId: string, now: number): Exclusion | null {
    const r = this.records.get(provider);
    if (r === undefined || r.state !== 'OPEN') return null;
    if (!r.wide) {
      const at = this.failedAt(provider, connectionId);
      if (at === undefined) return null;
      if (now < at + r.holdMs) {
        return { reason: 'circuit_open', until: at + r.holdMs, detail: `${provider} breaker is open: this key failed ${now - at} ms ago` };
      }
    } else if (now < r.halfOpenAt && this.isImplicated(provider, connectionId)) {
      return { reason: 'circuit_open', until: r.halfOpenAt, detail: `${provider} breaker is open after ${r.failures} provider failures` };
    }
    if (!this.probeBusy(provider, now)) return null;
    return { reason: 'circuit_open', until: now + PROBE_BUSY_RETRY_MS, detail: `${provider} breaker is ${now < r.halfOpenAt ? 'open' : 'half-open'} and its one test request is under way` };
  }

  /**
   * Is this connection held out by a key-level opening's hold alone (no probe in flight)? Such a
   * hold is our guess: the last-resort probe may go around it (`beginAttempt(…, true)`).
   */
  heldByGuess(provider: string, connectionId: string, now: number): boolean {
    return this.isKeyLevel(provider) && this.isImplicated(provider, connectionId) && !this.probeBusy(provider, now);
  }

  /**
   * Right before dispatch: while OPEN or HALF_OPEN, claims the one probe for this attempt (key-level:
   * only a failing key's call is a probe). `lastResort`: a key-level hold does not stop it.
   */
  beginAttempt(target: Target, now: number, lastResort = false): Exclusion | null {
    const provider = target.conn.provider;
    const r = this.records.get(provider);
    if (r === undefined || r.state !== 'OPEN') return null;
    const guess = lastResort && this.heldByGuess(provider, target.conn.id, now);
    const ex = guess ? null : this.exclusion(provider, target.conn.id, now);
    if (ex) return ex;
    if (!r.wide && !this.isImplicated(provider, target.conn.id)) return null;
    this.probes.set(provider, { holder: target, claimedAt: now });
    this.changed();
    return null;
  }

  private holds(target: Target): boolean {
    return this.probes.get(target.conn.provider)?.holder === target;
  }

  /** Does this attempt hold its provider's probe (beginAttempt just gave it)? */
  claimedBy(target: Target): boolean {
    return this.probes.size > 0 && this.holds(target);
  }

  /**
   * Team mode: another instance holds this provider's probe; until `until` this instance answers
   * like a busy probe without asking the team again.
   */
  probeElsewhere(provider: string, until: number): void {
    this.probesElsewhere.set(provider, until);
    this.changed();
  }

  /** Releases the probe if this attempt holds it (abandoned, or ended with a non-provider error). */
  release(target: Target): void {
    if (this.holds(target)) {
      this.probes.delete(target.conn.provider);
      this.changed();
    }
  }

  /**
   * A provider-level failure of `target`. `evidence` says whether it speaks for the provider (see
   * the resilience service: not while a sibling connection is succeeding); a failed probe always does.
   */
  recordFailure(target: Target, status: number | null, now: number, o: { connections: number; evidence: boolean }): void {
    const provider = target.conn.provider;
    const probe = this.holds(target);
    if (!o.evidence && !probe) return;
    const r = this.records.get(provider) ?? CLOSED_RECORD;
    const p = this.profileOf(provider);
    const recentSuccess = now - (this.lastSuccess.get(provider) ?? -Infinity) < quietWindowMs(p);
    const next = onProviderFailure(r, now, { status, conn: target.conn.id, probe, connections: o.connections, recentSuccess }, p);
    // A key-level record also changes on a failure that is not the probe's: that keeps the claim.
    const reopened = next.state === 'OPEN' && (r.state !== 'OPEN' || next.openedAt !== r.openedAt);
    if (probe || reopened || (next !== r && r.state !== 'OPEN')) this.probes.delete(provider);
    this.store(provider, r, next, true, 'join');
  }

  /** Fast when nothing is stored for the provider (the common case). */
  recordSuccess(target: Target, now: number): void {
    const provider = target.conn.provider;
    this.lastSuccess.set(provider, now);
    const r = this.records.get(provider);
    if (r === undefined) return;
    if (r.state === 'CLOSED' && r.window.length === 0) return;
    const next = onProviderSuccess(r, now, target.conn.id, this.profileOf(provider));
    if (next.state !== 'OPEN') this.probes.delete(provider);
    this.store(provider, r, next, next.state !== r.state || next.failures !== r.failures, 'set');
  }

  connectionTestOk(provider: string, now: number): void {
    const r = this.records.get(provider);
    if (r === undefined) return;
    this.store(provider, r, onConnectionTestOk(r, now, this.profileOf(provider)), true, 'set');
  }

  /** Resets one provider's breaker, or every breaker. Returns the providers reset. */
  reset(provider: string | undefined, known: Iterable<string>): string[] {
    const targets = provider !== undefined ? [provider] : [...new Set([...known, ...this.records.keys()])].sort();
    for (const p of targets) {
      const had = this.records.has(p) || this.probes.has(p);
      this.records.delete(p);
      this.implicated.delete(p);
      this.probes.delete(p);
      this.probesElsewhere.delete(p);
      this.lastSuccess.delete(p);
      if (had) this.repo.delete(p);
      this.observer?.(p, null, 'set');
    }
    this.changed();
    return targets;
  }

  /**
   * The keys an OPEN breaker holds out now (a probe in flight aside): provider-wide until its
   * half-open time, or key-level until each key's own hold ends. For the health model (read when
   * a push is built, never per request).
   */
  heldKeys(now: number): { provider: string; connectionId: string; until: number; wide: boolean }[] {
    const out: { provider: string; connectionId: string; until: number; wide: boolean }[] = [];
    for (const [provider, implicated] of this.implicated) {
      const r = this.records.get(provider);
      if (r === undefined || r.state !== 'OPEN') continue;
      for (const [connectionId, at] of implicated) {
        const until = r.wide ? r.halfOpenAt : at + r.holdMs;
        if (until > now) out.push({ provider, connectionId, until, wide: r.wide });
      }
    }
    return out;
  }

  /**
   * The operator cleared this connection: a key-level opening stops holding it (its failures stay
   * in the window). A provider-wide opening is not a key's to clear: it needs a breaker reset.
   * Returns whether a hold was lifted.
   */
  releaseKey(provider: string, connectionId: string): boolean {
    const r = this.records.get(provider);
    const implicated = this.implicated.get(provider);
    if (r === undefined || r.state !== 'OPEN' || r.wide || implicated === undefined || !implicated.has(connectionId)) return false;
    this.unhold(provider, connectionId);
    this.onKeyReleased?.(provider, connectionId);
    return true;
  }

  private unhold(provider: string, connectionId: string): boolean {
    const implicated = this.implicated.get(provider);
    if (implicated === undefined || !implicated.has(connectionId)) return false;
    const next = new Map(implicated);
    next.delete(connectionId);
    this.implicated.set(provider, next);
    this.changed();
    return true;
  }

  /** Team mode: the stored record of a provider (undefined: none, i.e. CLOSED and empty). */
  record(provider: string): BreakerRecord | undefined {
    return this.records.get(provider);
  }

  /** Team mode: how many outcomes this provider's window keeps. */
  windowCap(provider: string): number {
    return windowSize(this.profileOf(provider));
  }

  /**
   * Team mode: a record another instance published (null: reset there), held and persisted here as
   * a local change would be, and announced; nothing is published again.
   */
  applyRemote(provider: string, r: BreakerRecord | null): void {
    if (r === null || (r.state === 'CLOSED' && r.window.length === 0 && r.lastFailureAt === null)) {
      const had = this.records.delete(provider);
      this.implicated.delete(provider);
      if (r === null) {
        this.probes.delete(provider);
        this.probesElsewhere.delete(provider);
      }
      if (had) this.repo.delete(provider);
    } else {
      this.put(provider, r);
      this.repo.save(provider, r);
    }
    // Not OPEN any more: no probe to wait for.
    if (r === null || r.state !== 'OPEN') this.probesElsewhere.delete(provider);
    this.changed();
  }

  /** Team mode: an operator lifted this key's key-level hold on another instance. */
  applyKeyRelease(provider: string, connectionId: string): void {
    const r = this.records.get(provider);
    if (r !== undefined && r.state === 'OPEN' && !r.wide) this.unhold(provider, connectionId);
  }

  providers(): Iterable<string> {
    return this.records.keys();
  }

  view(provider: string, now: number, providerCooldownUntil: number | null): BreakerView {
    const cls = this.profiles.classOf(provider);
    const p = this.profiles.profile(cls);
    const raw = this.records.get(provider) ?? CLOSED_RECORD;
    const r = settle(raw, now, p);
    const state = stateAt(raw, now, p);
    return {
      provider,
      profile: cls,
      state,
      failures: r.failures,
      degradationThreshold: Math.min(p.degradationThreshold, p.failureThreshold),
      failureThreshold: p.failureThreshold,
      failureRatePercent: p.failureRatePercent,
      windowOutcomes: r.window.length,
      resetTimeoutMs: p.resetTimeoutMs,
      openedAt: r.state === 'OPEN' ? r.openedAt : null,
      halfOpenAt: r.state === 'OPEN' ? r.halfOpenAt : null,
      lastFailureAt: r.lastFailureAt,
      lastFailureStatus: r.lastFailureStatus,
      providerCooldownUntil,
    };
  }

  private put(provider: string, r: BreakerRecord): void {
    this.records.set(provider, r);
    if (r.state === 'OPEN') this.implicated.set(provider, implicatedConnections(r));
    else this.implicated.delete(provider);
  }

  private store(provider: string, before: BreakerRecord, next: BreakerRecord, persist: boolean, op: 'join' | 'set'): void {
    if (next === before) return;
    if (next.state !== before.state || (before.state === 'OPEN' && next.state === 'OPEN' && next.openedAt !== before.openedAt)) {
      this.log?.info('breaker.transition', { provider, from: before.state, to: next.state, failures: next.failures });
    }
    const gone = next.state === 'CLOSED' && next.window.length === 0 && next.lastFailureAt === null;
    if (gone) {
      this.records.delete(provider);
      this.implicated.delete(provider);
      this.repo.delete(provider);
    } else {
      this.put(provider, next);
      if (persist) this.repo.save(provider, next);
    }
    if (next.state !== 'OPEN' && this.probesElsewhere.size > 0) this.probesElsewhere.delete(provider);
    if (persist) {
      this.changed();
      this.observer?.(provider, gone ? null : next, op);
    }
  }
}
