// Remaining quota as the providers report it in rate-limit response headers, per connection and
// model, in memory: the signal behind the headroom, quota-weighted, reset-aware, reset-window,
// fill-first and auto strategies. Fed from every upstream response (success or failure) by an
// attempt interceptor. Reads are lazy: a budget whose reset time has passed reads as full again.
//
// Headers understood:
//   OpenAI and most OpenAI-compatible gateways: x-ratelimit-{limit,remaining,reset}-{requests,tokens}
//     (reset as a duration such as "6m0s", "1s", "20ms")
//   Anthropic: anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}
//     (reset as an RFC 3339 time), and the subscription's anthropic-ratelimit-unified-* utilisation
//   Generic: x-ratelimit-{limit,remaining,reset} and the IETF draft's ratelimit-{limit,remaining,reset}
//     (reset in seconds, or an epoch time)
import type { AttemptInterceptor } from '../../proxy/attempt';
import type { Clock } from '../../clock';

export interface Budget {
  limit: number | null;
  remaining: number;
  /** Epoch ms when the budget refills; null when not reported. */
  resetAt: number | null;
}

interface QuotaState {
  requests: Budget | null;
  tokens: Budget | null;
  at: number;
}

export interface QuotaReading {
  /** Share of the tightest known budget left, 0..1; null when no budget is known. */
  fraction: number | null;
  requestsRemaining: number | null;
  tokensRemaining: number | null;
  /** The soonest future reset of a budget that is not full; null when none is known. */
  resetAt: number | null;
  /** When the headers were read. */
  observedAt: number;
}

const MAX_ENTRIES = 10_000;
const ANY_MODEL = '\u0000*';

const num = (v: string | undefined): number | null => {
  if (v === undefined) return null;
  const n = Number(v.trim());
  return Number.isFinite(n) && n >= 0 ? n : null;
};

/** "6m0s", "1h2m3.5s", "20ms", "0.5s" -> ms; null when not a duration. */
export function durationMs(v: string): number | null {
  const s = v.trim();
  if (!/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(s)) return null;
  let ms = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    const n = Number(m[1]);
    ms += m[2] === 'h' ? n * 3_600_000 : m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1_000 : n;
  }
  return ms;
}

/** A reset value as an epoch-ms time: a duration, seconds from now, an epoch (s or ms) or a date. */
export function resetTime(v: string | undefined, now: number): number | null {
  if (v === undefined || v.trim() === '') return null;
  const d = durationMs(v);
  if (d !== null) return now + d;
  const n = num(v);
  if (n !== null) {
    if (n > 1e12) return n; // epoch ms
    if (n > 1e9) return n * 1_000; // epoch seconds
    return now + n * 1_000; // seconds from now
  }
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

function budget(h: Record<string, string>, limit: string, remaining: string, reset: string, now: number): Budget | null {
  const r = num(h[remaining]);
  if (r === null) return null;
  return { limit: num(h[limit]), remaining: r, resetAt: resetTime(h[reset], now) };
}

/** Of several budgets, the one with the least share left (absolute remaining when no limit is known). */
function tightest(list: (Budget | null)[]): Budget | null {
  let best: Budget | null = null;
  let bestShare = Infinity;
  for (const b of list) {
    if (!b) continue;
    const share = b.limit ? b.remaining / b.limit : b.remaining === 0 ? 0 : 1;
    if (share < bestShare) {
      best = b;
      bestShare = share;
    }
  }
  return best;
}

/** The rate-limit budgets a response reports, or null when it reports none. */
export function parseQuotaHeaders(h: Record<string, string>, now: number): { requests: Budget | null; tokens: Budget | null } | null {
  let requests =
    budget(h, 'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', now) ??
    budget(h, 'anthropic-ratelimit-requests-limit', 'anthropic-ratelimit-requests-remaining', 'anthropic-ratelimit-requests-reset', now) ??
    budget(h, 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', now) ??
    budget(h, 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', now);
  let tokens = tightest([
    budget(h, 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens', now),
    budget(h, 'anthropic-ratelimit-tokens-limit', 'anthropic-ratelimit-tokens-remaining', 'anthropic-ratelimit-tokens-reset', now),
    budget(h, 'anthropic-ratelimit-input-tokens-limit', 'anthropic-ratelimit-input-tokens-remaining', 'anthropic-ratelimit-input-tokens-reset', now),
    budget(h, 'anthropic-ratelimit-output-tokens-limit', 'anthropic-ratelimit-output-tokens-remaining', 'anthropic-ratelimit-output-tokens-reset', now),
  ]);
  // Subscription (OAuth) limits report utilisation instead of counts: read them as a share left.
  const utilisation = Math.max(
    num(h['anthropic-ratelimit-unified-5h-utilization']) ?? -1,
    num(h['anthropic-ratelimit-unified-7d-utilization']) ?? -1,
  );
  if (requests === null && utilisation >= 0) {
    const used = Math.min(1, utilisation > 1 ? utilisation / 100 : utilisation);
    requests = { limit: 1_000, remaining: Math.round((1 - used) * 1_000), resetAt: resetTime(h['anthropic-ratelimit-unified-reset'], now) };
  }
  if (requests === null && h['anthropic-ratelimit-unified-status'] === 'rejected') {
    requests = { limit: 1, remaining: 0, resetAt: resetTime(h['anthropic-ratelimit-unified-reset'], now) };
  }
  if (requests === null && tokens === null) return null;
  tokens ??= null;
  return { requests, tokens };
}

export class QuotaSignals {
  private readonly states = new Map<string, QuotaState>();

  /** Reads a response's rate-limit headers for this connection and model (cheap when it has none). */
  observe(connectionId: string, model: string, headers: Record<string, string>, now: number): void {
    const parsed = parseQuotaHeaders(headers, now);
    if (!parsed) return;
    if (this.states.size >= MAX_ENTRIES) this.states.clear();
    const state: QuotaState = { ...parsed, at: now };
    this.states.set(`${connectionId}\u0000${model}`, state);
    this.states.set(`${connectionId}${ANY_MODEL}`, state);
  }

  /** What is known about the quota of this connection for this model (or, failing that, for any model). */
  reading(connectionId: string, model: string, now: number): QuotaReading | null {
    const s = this.states.get(`${connectionId}\u0000${model}`) ?? this.states.get(`${connectionId}${ANY_MODEL}`);
    if (!s) return null;
    let fraction: number | null = null;
    let resetAt: number | null = null;
    const live = (b: Budget | null): Budget | null => {
      if (!b) return null;
      // Lazy refill: past its reset, a budget is full again.
      if (b.resetAt !== null && b.resetAt <= now) return { limit: b.limit, remaining: b.limit ?? b.remaining, resetAt: null };
      return b;
    };
    const req = live(s.requests);
    const tok = live(s.tokens);
    for (const b of [req, tok]) {
      if (!b) continue;
      const share = b.limit ? Math.min(1, b.remaining / b.limit) : b.remaining === 0 ? 0 : null;
      if (share !== null) fraction = fraction === null ? share : Math.min(fraction, share);
      const full = b.limit !== null && b.remaining >= b.limit;
      if (!full && b.resetAt !== null && (resetAt === null || b.resetAt < resetAt)) resetAt = b.resetAt;
    }
    return { fraction, requestsRemaining: req?.remaining ?? null, tokensRemaining: tok?.remaining ?? null, resetAt, observedAt: s.at };
  }

  forget(connectionId: string): void {
    for (const k of [...this.states.keys()]) if (k.startsWith(`${connectionId}\u0000`)) this.states.delete(k);
  }
}

/** The attempt interceptor that feeds the tracker from every upstream answer. */
export function quotaSignalsInterceptor(quota: QuotaSignals, clock: Clock): AttemptInterceptor {
  return (next) => async (ctx) => {
    const outcome = await next(ctx);
    const headers = outcome.kind === 'ready' ? outcome.response.headers : outcome.kind === 'failed' ? outcome.failure.headers : null;
    if (headers) quota.observe(ctx.target.conn.id, ctx.target.model, headers, clock.now());
    return outcome;
  };
}
