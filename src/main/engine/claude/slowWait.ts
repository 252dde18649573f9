// How long the low-priority lane waits on `slot_busy` / 529 (R-CLA-09, R-CLA-11): the server's
// `slow-retry-after` (default 20 s, clamped to 5-600 s, then +-30 % jitter), all waits of one request
// together within `slow-max-wait` (default 20 min, clamped to 1 min-6 h) and within the request's
// own fetch-start deadline minus 5 s.
import type { Random } from '../random';

const SEC = 1_000;
const MIN = 60 * SEC;

export const SLOW_RETRY_AFTER = { defaultMs: 20 * SEC, minMs: 5 * SEC, maxMs: 600 * SEC, jitter: 0.3 } as const;
export const SLOW_MAX_WAIT = { defaultMs: 20 * MIN, minMs: 1 * MIN, maxMs: 6 * 60 * MIN } as const;
/** Kept free before the request's own deadline, so the lane ends controlled instead of by a timeout. */
export const DEADLINE_MARGIN_MS = 5 * SEC;

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));

/** The announced retry-after clamped to 5-600 s (20 s when absent), jittered by +-30 %. */
export function slowRetryDelayMs(retryAfterSec: number | null, random: Random): number {
  const base = retryAfterSec === null ? SLOW_RETRY_AFTER.defaultMs : clamp(retryAfterSec * SEC, SLOW_RETRY_AFTER.minMs, SLOW_RETRY_AFTER.maxMs);
  const factor = 1 + SLOW_RETRY_AFTER.jitter * (2 * random.next() - 1);
  return Math.round(base * factor);
}

/** The announced max-wait clamped to 1 min-6 h (20 min when absent). */
export function slowMaxWaitMs(maxWaitSec: number | null): number {
  return maxWaitSec === null ? SLOW_MAX_WAIT.defaultMs : clamp(maxWaitSec * SEC, SLOW_MAX_WAIT.minMs, SLOW_MAX_WAIT.maxMs);
}

/**
 * Wait time one request still has: the max-wait counted from its first busy answer, and the time
 * left before its deadline minus the margin (R-CLA-11). 0 or less means "stop waiting now".
 */
export function waitBudgetMs(p: { now: number; firstBusyAt: number; maxWaitMs: number; deadlineAt: number | null }): number {
  const byMaxWait = p.firstBusyAt + p.maxWaitMs - p.now;
  const byDeadline = p.deadlineAt === null ? Infinity : p.deadlineAt - DEADLINE_MARGIN_MS - p.now;
  return Math.min(byMaxWait, byDeadline);
}
