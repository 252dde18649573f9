// Cooldown-aware waits for combos (SPEC §4.4, R-SQ-16..25) and the answer when nothing could be
// sent (R-DBG-01..03). After a walk over a combo's targets served nothing, the walk asks here:
// when no target can be tried now — each is excluded by a resilience timer or has just failed —
// and the earliest self-lifting exclusion ends within comboCooldownWait.maxWaitMs, the request
// waits for it and walks again, at most maxAttempts times and only while the request stays within
// budgetMs. It never waits on quota exhaustion, credential or not-found reasons, and never after
// an error that another attempt would repeat (a malformed request, a refused prompt).
// Pure functions; the pipeline supplies the exclusions and does the sleeping.
import type { Exclusion } from '../../resilience/port';

export interface WaitSettings {
  enabled: boolean;
  maxWaitMs: number;
  maxAttempts: number;
  budgetMs: number;
}

/** Failure reasons (the `cause` of an exclusion) that a short wait never fixes (R-SQ-18/25). */
const NEVER_WAIT = new Set([
  'quota_exhausted',
  'credits_exhausted',
  'banned',
  'expired',
  'auth_error',
  'forbidden',
  'not_found',
  'not_found_local',
  'not_supported',
  'request_rejected',
]);

/** Causes that are rate limits: an answer made of them is a 429 (R-SQ-24). */
const RATE_LIMIT = new Set(['rate_limit_exceeded', 'concurrency_limited']);

/** A failure reason (or an exclusion's cause) that no short wait fixes. */
export const waitNeverFixes = (reason: string | undefined): boolean => reason !== undefined && NEVER_WAIT.has(reason);

/** A timer that lifts by itself and is worth waiting for. */
export function isTransient(ex: Exclusion, now: number): boolean {
  return ex.until !== null && ex.until > now && !waitNeverFixes(ex.cause);
}

export interface WaitInput {
  settings: WaitSettings;
  /** The combo's options.comboCooldownWaitEnabled is a literal false (R-SQ-19). */
  optedOut: boolean;
  /** Waits this request already took. */
  waitsTaken: number;
  /** Time since the request arrived. */
  elapsedMs: number;
  now: number;
  /** Nothing failed yet, or the last failure may succeed elsewhere or later. */
  retryable: boolean;
  /** Each target of the plan: its exclusion now, and whether it already failed (or was barred) in this walk. */
  targets: readonly { ex: Exclusion | null; spent: boolean }[];
}

export type WaitRefusal =
  | 'not_retryable'
  | 'target_available'
  | 'nothing_transient'
  | 'disabled'
  | 'opted_out'
  | 'too_long'
  | 'attempts'
  | 'budget';

/** `first`: the index (in `targets`) of the target whose exclusion lifts first. */
export type WaitDecision = { wait: true; ms: number; until: number; first: number } | { wait: false; why: WaitRefusal; until: number | null };

export function decideWait(i: WaitInput): WaitDecision {
  if (!i.retryable) return { wait: false, why: 'not_retryable', until: null };
  // A target that may be called now and has not failed yet: nothing to wait for (it was skipped
  // for another reason, e.g. the attempt budget or the request queue).
  if (i.targets.some((t) => t.ex === null && !t.spent)) return { wait: false, why: 'target_available', until: null };
  let until: number | null = null;
  let first = -1;
  for (let n = 0; n < i.targets.length; n++) {
    const ex = i.targets[n]!.ex;
    if (ex && isTransient(ex, i.now) && (until === null || ex.until! < until)) {
      until = ex.until;
      first = n;
    }
  }
  if (until === null) return { wait: false, why: 'nothing_transient', until: null };
  const ms = until - i.now;
  const refuse = (why: WaitRefusal): WaitDecision => ({ wait: false, why, until });
  // R-SQ-20: a combo's `true` cannot turn on what is off globally; only a literal false opts out.
  if (!i.settings.enabled) return refuse('disabled');
  if (i.optedOut) return refuse('opted_out');
  if (ms > i.settings.maxWaitMs) return refuse('too_long');
  if (i.waitsTaken >= i.settings.maxAttempts) return refuse('attempts');
  if (i.elapsedMs + ms > i.settings.budgetMs) return refuse('budget');
  return { wait: true, ms, until, first };
}

/** How a combo answers when every target was excluded before dispatch. */
export type ExcludedAnswer =
  /** Self-lifting rate limits: 429 rate_limit_error with Retry-After (R-SQ-24). */
  | { kind: 'rate_limited'; until: number }
  /** Other self-lifting timers (open breaker, provider cooldown, backoff): 503 (R-DBG-01). */
  | { kind: 'cooling'; until: number }
  /** Only timers a wait never fixes (quota, credentials, not found): 503 ALL_TARGETS_SKIPPED, no hint (R-SQ-25). */
  | { kind: 'skipped' }
  /** No timer at all (terminal, disabled, nothing to execute): 404 no_executable_targets (R-DBG-03). */
  | { kind: 'none' };

/**
 * When waiting is refused, the earliest transient exclusion decides the answer: a rate limit
 * (429/concurrency cause, or a model lockout from one) makes it a 429, anything else a 503. A mix
 * of transient and non-transient exclusions answers as the transient ones (they lift first).
 */
export function excludedAnswer(exclusions: readonly Exclusion[], now: number): ExcludedAnswer {
  let first: Exclusion | null = null;
  for (const ex of exclusions) if (isTransient(ex, now) && (first === null || ex.until! < first.until!)) first = ex;
  if (first) {
    const rateLimited = first.cause !== undefined && RATE_LIMIT.has(first.cause);
    return rateLimited ? { kind: 'rate_limited', until: first.until! } : { kind: 'cooling', until: first.until! };
  }
  if (exclusions.some((ex) => ex.until !== null && ex.until > now)) return { kind: 'skipped' };
  return { kind: 'none' };
}
