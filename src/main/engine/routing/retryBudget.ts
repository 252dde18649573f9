// The same-target retry budget: after an attempt failed, is it worth waiting a little and sending
// the request again to the same connection and model, rather than moving on at once to the next
// target (for a combo, often another model)? A coding agent usually prefers a short wait for the
// model it asked for over an answer from a different one, so:
// - hinted: the upstream said when to come back (Retry-After, or the retry delay in its error
//   body, retryHints.ts) and that wait is at most `maxHintedWaitMs`;
// - unhinted: a plain 500/502/503/529 that said nothing, retried after `unhintedDelayMs`;
// at most `maxRetries` times per target and request, within the walk's attempt budget and the
// request's wait budget, and never once anything reached the client. Never on a failure no wait fixes (quota, credentials, not
// found) and never when the next target would serve the same model anyway (another key of it):
// that failover costs no wait. The retry also respects our own bookkeeping: when the failure put
// the target on hold (a cooldown, a lock, an open breaker) the wait must cover that hold too, and
// if the hold is longer than the retry may wait, there is no retry — a key known bad is never
// sent more than the upstream's own short wait asked for.
// Pure: the pipeline supplies the facts (proxy/sameTargetRetry.ts) and does the waiting.
import type { AttemptVerdict, Exclusion } from '../resilience/port';
import { waitNeverFixes } from './combos/waitPolicy';

export interface RetryBudgetSettings {
  /** Retries per target and request; 0 = off. */
  maxRetries: number;
  /** The longest upstream-hinted wait a retry takes. */
  maxHintedWaitMs: number;
  /** The wait before retrying a server error without a hint; 0 = such errors are not retried. */
  unhintedDelayMs: number;
}

/** Server errors that are often momentary: worth one more try after a short pause even without a hint. */
const UNHINTED_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 529]);

export interface RetryInput {
  settings: RetryBudgetSettings;
  /** Waited retries this request already sent to this target. */
  retriesTaken: number;
  /** The failed attempt's HTTP status (or the status of its in-band error); null for transport failures and stalls. */
  status: number | null;
  verdict: Pick<AttemptVerdict, 'failover' | 'reason' | 'hint'>;
  /** The target's exclusion now, after the failure was recorded. */
  exclusion: Exclusion | null;
  now: number;
  /** Something already reached the client (a committed stream): never retried. */
  committed: boolean;
  /** Attempts left in the walk's budget (the retry is one of them). */
  attemptsLeft: number;
  /** The target the walk would try next serves the same model: failing over costs no wait. */
  sameModelNext: boolean;
  /** What is left of the request's wait budget (comboCooldownWait.budgetMs from its arrival). */
  budgetLeftMs: number;
}

export type RetryRefusal =
  | 'committed'
  | 'not_retryable'
  | 'off'
  | 'spent'
  | 'attempts'
  | 'same_model_next'
  | 'not_transient'
  | 'no_hint'
  | 'hint_too_long'
  | 'held_back'
  | 'budget';

export type RetryDecision = { retry: true; waitMs: number; why: 'hinted' | 'unhinted' } | { retry: false; why: RetryRefusal };

export function decideRetry(i: RetryInput): RetryDecision {
  const no = (why: RetryRefusal): RetryDecision => ({ retry: false, why });
  if (i.committed) return no('committed');
  if (!i.verdict.failover) return no('not_retryable');
  if (i.settings.maxRetries <= 0) return no('off');
  if (i.retriesTaken >= i.settings.maxRetries) return no('spent');
  if (i.attemptsLeft <= 0) return no('attempts');
  if (i.sameModelNext) return no('same_model_next');
  if (waitNeverFixes(i.verdict.reason)) return no('not_transient');

  const hint = i.verdict.hint;
  let why: 'hinted' | 'unhinted';
  let waitMs: number;
  let cap: number;
  if (hint) {
    if (hint.ms > i.settings.maxHintedWaitMs) return no('hint_too_long');
    why = 'hinted';
    waitMs = Math.max(0, hint.ms);
    cap = i.settings.maxHintedWaitMs;
  } else {
    if (i.status === null || !UNHINTED_STATUSES.has(i.status) || i.settings.unhintedDelayMs <= 0) return no('no_hint');
    why = 'unhinted';
    waitMs = i.settings.unhintedDelayMs;
    cap = i.settings.unhintedDelayMs;
  }

  // Our own hold on the target, set by this failure or earlier: the retry waits it out when it is
  // no longer than the retry may wait, and is not taken otherwise.
  const ex = i.exclusion;
  if (ex !== null) {
    if (ex.until === null || waitNeverFixes(ex.cause)) return no('held_back');
    const lifts = ex.until - i.now;
    if (lifts > cap) return no('held_back');
    waitMs = Math.max(waitMs, lifts);
  }
  if (waitMs > i.budgetLeftMs) return no('budget');
  return { retry: true, waitMs, why };
}
