// Reads the `anthropic-ratelimit-unified-*` response headers of a Claude subscription account:
// the usage windows (5-hour, 7-day), the limit status, overage, and the low-priority lane's
// `slow-*` headers. Liberal in what it accepts (any case, arrays, "42%", epoch s / ms / ISO),
// strict in what it returns (known enum values or null, fractions in [0, 1], epoch ms).
import { parseInstant } from './tokenBundle';

export type UnifiedStatus = 'allowed' | 'allowed_warning' | 'rejected';

export const SLOW_STATUSES = ['active', 'not_needed', 'slot_busy', 'weekly_limit', 'budget_exhausted', 'off', 'ineligible'] as const;
export type SlowStatus = (typeof SLOW_STATUSES)[number];

export interface WindowHeaders {
  status: UnifiedStatus | null;
  /** Fraction of the window used, 0..1. */
  utilization: number | null;
  /** Epoch ms at which the window resets. */
  resetsAt: number | null;
}

export interface UnifiedHeaders {
  /** True when any `anthropic-ratelimit-unified-*` header was present. */
  present: boolean;
  status: UnifiedStatus | null;
  /** `anthropic-ratelimit-unified-reset`, epoch ms. */
  reset: number | null;
  fiveHour: WindowHeaders | null;
  sevenDay: WindowHeaders | null;
  /** Which window binds (e.g. "five_hour", "seven_day", "seven_day_opus"). */
  representativeClaim: string | null;
  overage: { status: UnifiedStatus | null; inUse: boolean | null; resetsAt: number | null } | null;
  /** Share of the normal rate served in fallback, 0..1. */
  fallbackPercentage: number | null;
  slow: {
    /** e.g. "treatment" when the account is offered the low-priority lane. */
    offer: string | null;
    status: SlowStatus | null;
    /** Seconds as announced (not yet clamped). */
    retryAfterSec: number | null;
    maxWaitSec: number | null;
    /** When a `budget_exhausted` lane budget comes back, epoch ms. */
    budgetResetAt: number | null;
  };
}

const P = 'anthropic-ratelimit-unified-';

type HeaderBag = Record<string, string | string[] | undefined>;

/** Lower-cased header lookup that accepts arrays (first value) and trims. */
function reader(headers: HeaderBag): (name: string) => string | null {
  const map = new Map<string, string>();
  for (const [k, v] of Object.entries(headers)) {
    const val = Array.isArray(v) ? v[0] : v;
    if (typeof val === 'string' && val.trim() !== '') map.set(k.toLowerCase(), val.trim());
  }
  return (name) => map.get(name) ?? null;
}

const enumWord = (v: string | null): string | null => (v ? v.toLowerCase().replace(/[\s-]+/g, '_') : null);

function status(v: string | null): UnifiedStatus | null {
  const w = enumWord(v);
  return w === 'allowed' || w === 'allowed_warning' || w === 'rejected' ? w : null;
}

function slowStatus(v: string | null): SlowStatus | null {
  const w = enumWord(v);
  return (SLOW_STATUSES as readonly string[]).includes(w ?? '') ? (w as SlowStatus) : null;
}

/** A number from "0.42", "42%", " 7 "; null when unreadable. */
function num(v: string | null): { n: number; percent: boolean } | null {
  if (v === null) return null;
  const m = /^([+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*(%)?$/i.exec(v);
  if (!m) return null;
  const n = Number(m[1]);
  return Number.isFinite(n) ? { n, percent: m[2] === '%' } : null;
}

/**
 * A usage fraction. The headers send fractions ("0.42"); "42%" and plain numbers above 2 are read
 * as percentages. Stored clamped to [0, 1].
 */
export function fraction(v: string | null): number | null {
  const x = num(v);
  if (!x) return null;
  const f = x.percent || x.n > 2 ? x.n / 100 : x.n;
  return Math.min(1, Math.max(0, f));
}

function seconds(v: string | null): number | null {
  const x = num(v?.replace(/s$/i, '') ?? null);
  return x && !x.percent && x.n >= 0 ? x.n : null;
}

function instant(v: string | null): number | null {
  const t = parseInstant(v ?? undefined);
  return typeof t === 'number' ? t : null;
}

function bool(v: string | null): boolean | null {
  const w = enumWord(v);
  if (w === 'true' || w === '1' || w === 'yes') return true;
  if (w === 'false' || w === '0' || w === 'no') return false;
  return null;
}

function claim(v: string | null): string | null {
  const w = enumWord(v);
  if (!w) return null;
  if (w === '5h') return 'five_hour';
  if (w === '7d') return 'seven_day';
  return /^[a-z0-9_]{1,40}$/.test(w) ? w : null;
}

function windowOf(get: (n: string) => string | null, w: '5h' | '7d'): WindowHeaders | null {
  const s = status(get(`${P}${w}-status`));
  const u = fraction(get(`${P}${w}-utilization`));
  const r = instant(get(`${P}${w}-reset`));
  return s === null && u === null && r === null ? null : { status: s, utilization: u, resetsAt: r };
}

export function parseUnifiedHeaders(headers: HeaderBag): UnifiedHeaders {
  const get = reader(headers);
  const present = Object.keys(headers).some((k) => k.toLowerCase().startsWith(P));
  const overStatus = status(get(`${P}overage-status`));
  const overInUse = bool(get(`${P}overage-in-use`));
  const overReset = instant(get(`${P}overage-reset`));
  const offer = enumWord(get(`${P}slow-offer`));
  return {
    present,
    status: status(get(`${P}status`)),
    reset: instant(get(`${P}reset`)),
    fiveHour: windowOf(get, '5h'),
    sevenDay: windowOf(get, '7d'),
    representativeClaim: claim(get(`${P}representative-claim`)),
    overage: overStatus === null && overInUse === null && overReset === null ? null : { status: overStatus, inUse: overInUse, resetsAt: overReset },
    fallbackPercentage: fraction(get(`${P}fallback-percentage`)),
    slow: {
      offer: offer && /^[a-z0-9_]{1,40}$/.test(offer) ? offer : null,
      status: slowStatus(get(`${P}slow-status`)),
      retryAfterSec: seconds(get(`${P}slow-retry-after`)),
      maxWaitSec: seconds(get(`${P}slow-max-wait`)),
      budgetResetAt: instant(get(`${P}slow-budget-reset`) ?? get(`${P}slow-reset`)),
    },
  };
}

/** The 5-hour usage limit (R-CLA-02): a 429 with `unified-status: rejected`. */
export function isLimit429(status: number | null, u: UnifiedHeaders): boolean {
  return status === 429 && u.status === 'rejected';
}
