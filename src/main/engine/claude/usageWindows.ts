// Per-account usage windows of Claude subscriptions (5-hour and 7-day), fed by the
// `anthropic-ratelimit-unified-*` headers of every response and by `GET /api/oauth/usage`. This is
// what the dashboard's usage bars and the combos' headroom / reset-aware strategies read. Reads are
// lazy: a window whose reset time has passed reads as fresh (nothing used) without a timer.
import type { UnifiedHeaders, UnifiedStatus } from './unifiedHeaders';

export interface UsageWindow {
  /** Fraction used, 0..1. */
  utilization: number;
  /** Epoch ms; null when not announced. */
  resetsAt: number | null;
  status: UnifiedStatus | null;
  /** When this window was last observed (epoch ms). */
  observedAt: number;
  source: 'headers' | 'usage_api';
}

export interface UsageSnapshot {
  fiveHour: UsageWindow | null;
  sevenDay: UsageWindow | null;
  status: UnifiedStatus | null;
  representativeClaim: string | null;
  overage: { status: UnifiedStatus | null; inUse: boolean | null; resetsAt: number | null } | null;
  fallbackPercentage: number | null;
  updatedAt: number;
}

/** One window as a strategy reads it. */
export interface WindowHeadroom {
  /** Fraction left, 0..1 (1 once the window has reset). */
  remaining: number;
  /** When it resets; null when unknown or already reset. */
  resetsAt: number | null;
}

export interface Headroom {
  fiveHour: WindowHeadroom | null;
  sevenDay: WindowHeadroom | null;
  /** The binding window: the lower remaining of the two (the later reset on a tie). */
  remaining: number;
  resetsAt: number | null;
  /** How old the newest observation is, in ms (strategies may distrust old data). */
  ageMs: number;
}

/** The usage answer's windows, already parsed (see accountApi.ts). */
export interface UsageWindowsAnswer {
  fiveHour: { utilization: number; resetsAt: number | null } | null;
  sevenDay: { utilization: number; resetsAt: number | null } | null;
}

export class UsageBook {
  private readonly byAccount = new Map<string, UsageSnapshot>();

  /** Records a response's unified headers. Returns false when it carried none. */
  recordHeaders(accountId: string, u: UnifiedHeaders, now: number): boolean {
    if (!u.present) return false;
    const prev = this.byAccount.get(accountId);
    const win = (w: UnifiedHeaders['fiveHour'], old: UsageWindow | null | undefined): UsageWindow | null => {
      if (!w || (w.utilization === null && w.resetsAt === null)) return old ?? null;
      const sameWindow = old && w.resetsAt !== null && old.resetsAt === w.resetsAt;
      return {
        utilization: w.utilization ?? (sameWindow ? old.utilization : 0),
        resetsAt: w.resetsAt ?? old?.resetsAt ?? null,
        status: w.status,
        observedAt: now,
        source: 'headers',
      };
    };
    this.byAccount.set(accountId, {
      fiveHour: win(u.fiveHour, prev?.fiveHour),
      sevenDay: win(u.sevenDay, prev?.sevenDay),
      status: u.status ?? prev?.status ?? null,
      representativeClaim: u.representativeClaim ?? prev?.representativeClaim ?? null,
      overage: u.overage ?? prev?.overage ?? null,
      fallbackPercentage: u.fallbackPercentage ?? prev?.fallbackPercentage ?? null,
      updatedAt: now,
    });
    return true;
  }

  /** Records `GET /api/oauth/usage` (refreshes the windows on demand). */
  recordUsageAnswer(accountId: string, a: UsageWindowsAnswer, now: number): void {
    const prev = this.byAccount.get(accountId);
    const win = (w: UsageWindowsAnswer['fiveHour'], old: UsageWindow | null | undefined): UsageWindow | null =>
      w ? { utilization: w.utilization, resetsAt: w.resetsAt, status: old?.status ?? null, observedAt: now, source: 'usage_api' } : (old ?? null);
    this.byAccount.set(accountId, {
      fiveHour: win(a.fiveHour, prev?.fiveHour),
      sevenDay: win(a.sevenDay, prev?.sevenDay),
      status: prev?.status ?? null,
      representativeClaim: prev?.representativeClaim ?? null,
      overage: prev?.overage ?? null,
      fallbackPercentage: prev?.fallbackPercentage ?? null,
      updatedAt: now,
    });
  }

  /** The stored snapshot, with windows whose reset has passed read as fresh. */
  snapshot(accountId: string, now: number): UsageSnapshot | null {
    const s = this.byAccount.get(accountId);
    if (!s) return null;
    const lazy = (w: UsageWindow | null): UsageWindow | null =>
      w && w.resetsAt !== null && w.resetsAt <= now ? { ...w, utilization: 0, resetsAt: null, status: null } : w;
    return { ...s, fiveHour: lazy(s.fiveHour), sevenDay: lazy(s.sevenDay) };
  }

  /** What headroom / reset-aware strategies read: remaining fraction and reset time per window. */
  headroom(accountId: string, now: number): Headroom | null {
    const s = this.snapshot(accountId, now);
    if (!s || (!s.fiveHour && !s.sevenDay)) return null;
    const h = (w: UsageWindow | null): WindowHeadroom | null => (w ? { remaining: 1 - w.utilization, resetsAt: w.resetsAt } : null);
    const five = h(s.fiveHour);
    const seven = h(s.sevenDay);
    const all = [five, seven].filter((x): x is WindowHeadroom => x !== null);
    const binding = all.reduce((a, b) =>
      b.remaining < a.remaining || (b.remaining === a.remaining && (b.resetsAt ?? 0) > (a.resetsAt ?? 0)) ? b : a,
    );
    return { fiveHour: five, sevenDay: seven, remaining: binding.remaining, resetsAt: binding.resetsAt, ageMs: Math.max(0, now - s.updatedAt) };
  }

  forget(accountId: string): void {
    this.byAccount.delete(accountId);
  }
}
