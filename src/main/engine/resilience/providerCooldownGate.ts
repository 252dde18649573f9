// The optional provider cooldown window gate (SPEC §1a): a provider counts as cooling only after
// `failureThreshold` provider-level failures within `failureWindowMs`, and is then skipped for
// `cooldownMs`. Below the threshold nothing is skipped; a success clears the window. It is separate
// from the breaker (its values never change breaker behaviour, R-PCW-08) and lives in memory.
import type { Exclusion } from './port';

export interface WindowGateProfile {
  failureThreshold: number;
  failureWindowMs: number;
  cooldownMs: number;
}

export interface GateEntry {
  /** Failure times inside the window, oldest first (at most `failureThreshold` kept). */
  failures: readonly number[];
  coolingUntil: number | null;
}

/** Pure transition: one provider-level failure at `now`. */
export function gateOnFailure(e: GateEntry | undefined, now: number, p: WindowGateProfile): GateEntry {
  if (e && e.coolingUntil !== null && e.coolingUntil > now) return e; // already cooling: in-flight stragglers
  const recent = (e?.failures ?? []).filter((t) => now - t < p.failureWindowMs);
  recent.push(now);
  if (recent.length >= p.failureThreshold) return { failures: [], coolingUntil: now + p.cooldownMs };
  return { failures: recent.slice(-p.failureThreshold), coolingUntil: null };
}

/** Team mode (issue 26): told of every change made here (null: the entry is gone); `join` for a failure. */
export type GateObserver = (provider: string, entry: GateEntry | null, op: 'join' | 'set') => void;

export class ProviderCooldownGate {
  private readonly entries = new Map<string, GateEntry>();
  /** Team mode: publishes local changes (null: alone). */
  observer: GateObserver | null = null;

  constructor(
    private readonly profileOf: (provider: string) => WindowGateProfile,
    private readonly changed: () => void,
  ) {}

  /** Hot path: the caller checks the enabled switch first. */
  exclusion(provider: string, now: number): Exclusion | null {
    const e = this.entries.get(provider);
    if (e === undefined || e.coolingUntil === null || e.coolingUntil <= now) return null;
    return {
      reason: 'provider_cooldown',
      until: e.coolingUntil,
      detail: `${provider} had ${this.profileOf(provider).failureThreshold} provider failures within the window`,
    };
  }

  coolingUntil(provider: string, now: number): number | null {
    const e = this.entries.get(provider);
    return e && e.coolingUntil !== null && e.coolingUntil > now ? e.coolingUntil : null;
  }

  recordFailure(provider: string, now: number): void {
    const before = this.entries.get(provider);
    const next = gateOnFailure(before, now, this.profileOf(provider));
    if (next === before) return;
    this.entries.set(provider, next);
    if (next.coolingUntil !== null && before?.coolingUntil !== next.coolingUntil) this.changed();
    this.observer?.(provider, next, 'join');
  }

  /** R-PCW-05: a success clears the window (and any cooling). */
  recordSuccess(provider: string): void {
    if (this.entries.size === 0) return;
    const e = this.entries.get(provider);
    if (!e) return;
    this.entries.delete(provider);
    if (e.coolingUntil !== null) this.changed();
    this.observer?.(provider, null, 'set');
  }

  reset(provider?: string): void {
    const gone = provider === undefined ? [...this.entries.keys()] : this.entries.has(provider) ? [provider] : [];
    if (provider === undefined) this.entries.clear();
    else this.entries.delete(provider);
    this.changed();
    for (const p of gone) this.observer?.(p, null, 'set');
  }

  /** Team mode: the entry held for a provider. */
  entry(provider: string): GateEntry | undefined {
    return this.entries.get(provider);
  }

  /** Team mode: how many failure times an entry keeps for this provider. */
  cap(provider: string): number {
    return Math.max(1, this.profileOf(provider).failureThreshold);
  }

  /** Team mode: an entry another instance published (null: gone there); announced, not published again. */
  applyRemote(provider: string, e: GateEntry | null): void {
    const before = this.entries.get(provider);
    if (e === null) this.entries.delete(provider);
    else this.entries.set(provider, e);
    if ((before?.coolingUntil ?? null) !== (e?.coolingUntil ?? null)) this.changed();
  }

  providers(): Iterable<string> {
    return this.entries.keys();
  }
}
