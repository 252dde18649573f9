// The breakers of all providers: one persisted record each (domain_circuit_breakers, so an OPEN
// breaker survives a restart), the single probe claim per provider (process memory), and the
// eligibility read the proxy asks for every candidate. An OPEN breaker keeps out the connections
// whose failures opened it until it half-opens; a connection that did not fail may probe it early
// (one probe at a time), so a healthy key is never shut out for a whole reset timeout (issue 9).
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
  onConnectionTestOk,
  onProviderFailure,
  onProviderSuccess,
  parseBreakerRecord,
  settle,
  stateAt,
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

export interface BreakerProfiles {
  classOf(provider: string): AuthClass;
  profile(cls: AuthClass): BreakerProfile;
}

export class ProviderBreakers {
  private readonly records = new Map<string, BreakerRecord>();
  /** For each OPEN provider: the connections whose failures are in its window. */
  private readonly implicated = new Map<string, ReadonlySet<string>>();
  private readonly probes = new Map<string, ProbeClaim>();

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

  /** Did this connection fail in the window of the provider's OPEN breaker? */
  isImplicated(provider: string, connectionId: string): boolean {
    const s = this.implicated.get(provider);
    return s !== undefined && (s.has(connectionId) || s.has(ANY_CONNECTION));
  }

  /**
   * Hot path: null when the target may be called (CLOSED, DEGRADED, HALF_OPEN with its probe
   * free, or OPEN for a connection that did not fail while its probe is free).
   */
  exclusion(provider: string, connectionId: string, now: number): Exclusion | null {
    const r = this.records.get(provider);
    if (r === undefined || r.state !== 'OPEN') return null;
    if (now < r.halfOpenAt && this.isImplicated(provider, connectionId)) {
      return { reason: 'circuit_open', until: r.halfOpenAt, detail: `${provider} breaker is OPEN after ${r.failures} provider failures` };
    }
    const c = this.probes.get(provider);
    if (c === undefined || now - c.claimedAt >= PROBE_CLAIM_TTL_MS) return null;
    return { reason: 'circuit_open', until: now + PROBE_BUSY_RETRY_MS, detail: `${provider} breaker is ${now < r.halfOpenAt ? 'OPEN' : 'HALF_OPEN'} and its probe is in flight` };
  }

  /** Right before dispatch: while OPEN or HALF_OPEN, claims the one probe for this attempt. */
  beginAttempt(target: Target, now: number): Exclusion | null {
    const provider = target.conn.provider;
    const r = this.records.get(provider);
    if (r === undefined || r.state !== 'OPEN') return null;
    const ex = this.exclusion(provider, target.conn.id, now);
    if (ex) return ex;
    this.probes.set(provider, { holder: target, claimedAt: now });
    this.changed();
    return null;
  }

  private holds(target: Target): boolean {
    return this.probes.get(target.conn.provider)?.holder === target;
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
    const next = onProviderFailure(r, now, { status, conn: target.conn.id, probe, connections: o.connections }, this.profileOf(provider));
    if (next !== r || probe) this.probes.delete(provider);
    this.store(provider, r, next, true);
  }

  /** Fast when nothing is stored for the provider (the common case). */
  recordSuccess(target: Target, now: number): void {
    const provider = target.conn.provider;
    const r = this.records.get(provider);
    if (r === undefined) return;
    if (r.state === 'CLOSED' && r.window.length === 0) return;
    const next = onProviderSuccess(r, now, target.conn.id, this.profileOf(provider));
    if (next.state !== 'OPEN') this.probes.delete(provider);
    this.store(provider, r, next, next.state !== r.state || next.failures !== r.failures);
  }

  connectionTestOk(provider: string, now: number): void {
    const r = this.records.get(provider);
    if (r === undefined) return;
    this.store(provider, r, onConnectionTestOk(r, now, this.profileOf(provider)), true);
  }

  /** Resets one provider's breaker, or every breaker. Returns the providers reset. */
  reset(provider: string | undefined, known: Iterable<string>): string[] {
    const targets = provider !== undefined ? [provider] : [...new Set([...known, ...this.records.keys()])].sort();
    for (const p of targets) {
      const had = this.records.has(p) || this.probes.has(p);
      this.records.delete(p);
      this.implicated.delete(p);
      this.probes.delete(p);
      if (had) this.repo.delete(p);
    }
    this.changed();
    return targets;
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

  private store(provider: string, before: BreakerRecord, next: BreakerRecord, persist: boolean): void {
    if (next === before) return;
    if (next.state !== before.state || (before.state === 'OPEN' && next.state === 'OPEN')) {
      this.log?.info('breaker.transition', { provider, from: before.state, to: next.state, failures: next.failures });
    }
    if (next.state === 'CLOSED' && next.window.length === 0 && next.lastFailureAt === null) {
      this.records.delete(provider);
      this.implicated.delete(provider);
      this.repo.delete(provider);
    } else {
      this.put(provider, next);
      if (persist) this.repo.save(provider, next);
    }
    if (persist) this.changed();
  }
}
