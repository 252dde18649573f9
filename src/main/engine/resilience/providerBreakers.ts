// The breakers of all providers: one persisted record each (domain_circuit_breakers, so an OPEN
// breaker survives a restart), the single HALF_OPEN probe claim per provider (process memory), and
// the eligibility read the proxy asks for every candidate. Persistence happens only when a record
// changes; reads never write.
import type { BreakerView, AuthClass } from '../../../shared/model';
import type { Logger } from '../logger';
import type { Target } from '../routing/target';
import type { BreakersRepo } from '../store/breakersRepo';
import type { Exclusion } from './port';
import {
  CLOSED_RECORD,
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
  private readonly probes = new Map<string, ProbeClaim>();

  constructor(
    private readonly repo: Pick<BreakersRepo, 'all' | 'save' | 'delete'>,
    private readonly profiles: BreakerProfiles,
    private readonly changed: () => void,
    private readonly log?: Logger,
  ) {
    for (const [provider, raw] of repo.all()) {
      const r = parseBreakerRecord(raw);
      if (r) this.records.set(provider, r);
    }
  }

  private profileOf(provider: string): BreakerProfile {
    return this.profiles.profile(this.profiles.classOf(provider));
  }

  /** Hot path: null when the provider may be called (CLOSED, DEGRADED, or HALF_OPEN with its probe free). */
  exclusion(provider: string, now: number): Exclusion | null {
    const r = this.records.get(provider);
    if (r === undefined || r.state !== 'OPEN') return null;
    if (now < r.halfOpenAt) {
      return { reason: 'circuit_open', until: r.halfOpenAt, detail: `${provider} breaker is OPEN after ${r.failures} provider failures` };
    }
    const c = this.probes.get(provider);
    if (c === undefined || now - c.claimedAt >= PROBE_CLAIM_TTL_MS) return null;
    return { reason: 'circuit_open', until: now + PROBE_BUSY_RETRY_MS, detail: `${provider} breaker is HALF_OPEN and its probe is in flight` };
  }

  /** Right before dispatch: in HALF_OPEN, claims the one probe for this attempt. */
  beginAttempt(target: Target, now: number): Exclusion | null {
    const provider = target.conn.provider;
    const r = this.records.get(provider);
    if (r === undefined || r.state !== 'OPEN') return null;
    const ex = this.exclusion(provider, now);
    if (ex) return ex;
    this.probes.set(provider, { holder: target, claimedAt: now });
    this.changed();
    return null;
  }

  /** Releases the probe if this attempt holds it (abandoned, or ended with a non-provider error). */
  release(target: Target): void {
    const provider = target.conn.provider;
    const c = this.probes.get(provider);
    if (c && c.holder === target) {
      this.probes.delete(provider);
      this.changed();
    }
  }

  recordFailure(provider: string, status: number | null, now: number): void {
    const r = this.records.get(provider) ?? CLOSED_RECORD;
    const next = onProviderFailure(r, now, status, this.profileOf(provider));
    if (next !== r) this.probes.delete(provider);
    this.store(provider, r, next);
  }

  /** Fast when nothing is stored for the provider (the common case). */
  recordSuccess(provider: string, now: number): void {
    const r = this.records.get(provider);
    if (r === undefined) return;
    if (r.state === 'CLOSED' && r.failures === 0) return;
    const next = onProviderSuccess(r, now, this.profileOf(provider));
    if (next.state !== 'OPEN') this.probes.delete(provider);
    this.store(provider, r, next);
  }

  connectionTestOk(provider: string, now: number): void {
    const r = this.records.get(provider);
    if (r === undefined) return;
    this.store(provider, r, onConnectionTestOk(r, now, this.profileOf(provider)));
  }

  /** Resets one provider's breaker, or every breaker. Returns the providers reset. */
  reset(provider: string | undefined, known: Iterable<string>): string[] {
    const targets = provider !== undefined ? [provider] : [...new Set([...known, ...this.records.keys()])].sort();
    for (const p of targets) {
      const had = this.records.has(p) || this.probes.has(p);
      this.records.delete(p);
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
      resetTimeoutMs: p.resetTimeoutMs,
      openedAt: r.state === 'OPEN' ? r.openedAt : null,
      halfOpenAt: r.state === 'OPEN' ? r.halfOpenAt : null,
      lastFailureAt: r.lastFailureAt,
      lastFailureStatus: r.lastFailureStatus,
      providerCooldownUntil,
    };
  }

  private store(provider: string, before: BreakerRecord, next: BreakerRecord): void {
    if (next === before) return;
    if (next.state !== before.state || (before.state === 'OPEN' && next.state === 'OPEN')) {
      this.log?.info('breaker.transition', { provider, from: before.state, to: next.state, failures: next.failures });
    }
    if (next.state === 'CLOSED' && next.failures === 0 && next.lastFailureAt === null) {
      this.records.delete(provider);
      this.repo.delete(provider);
    } else {
      this.records.set(provider, next);
      this.repo.save(provider, next);
    }
    this.changed();
  }
}
