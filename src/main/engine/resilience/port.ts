// What the proxy pipeline needs from the resilience layer, and what the management API reads.
// The pipeline never decides eligibility or cooldowns itself: it asks here before each attempt and
// reports each outcome here.
import type { ClearCooldownsResult, CooldownsView, BreakerView, ModelLockoutView, SkipReason, TerminalStatus } from '../../../shared/model';
import type { Target } from '../routing/target';
import type { RetryHint } from './retryHints';
import type { BreakerHold } from '../health/healthModel';

/** One failed upstream attempt, as the classifier sees it. */
export interface UpstreamFailure {
  /**
   * `stall`: no model output in time (a watchdog or the idle timeout); `truncated`: the stream
   * ended without its protocol's terminal event; `empty`: it ended properly with no output at all;
   * `stream_error`: an in-band error frame (with its status) or, status null, a committed stream
   * that broke.
   */
  kind: 'http' | 'connect_timeout' | 'headers_timeout' | 'idle_timeout' | 'network' | 'stall' | 'stream_error' | 'truncated' | 'empty';
  /** HTTP status for kind "http" (also for an error event at the start of a 200 stream, mapped). */
  status: number | null;
  /** Response headers, lower-case names. */
  headers: Record<string, string>;
  /** Up to 64 KiB of the error body; '' when none. */
  body: string;
  message: string;
  /** Status restatement (statusRestatement.ts): what the upstream really answered. */
  restatedFrom?: number;
  /** Status restatement: what the client is told to wait when no upstream hint says otherwise. */
  clientRetryAfterMs?: number;
}

export interface AttemptVerdict {
  /** Failure reason (rate_limit_exceeded, quota_exhausted, server_error, auth_error, timeout, ...). */
  reason: string;
  /** Try another connection for this request (only ever before any byte reached the client). */
  failover: boolean;
  /** Retry-After to relay (ms) when this error is what the client gets. */
  retryAfterMs: number | null;
  /** The upstream's own retry hint and where it came from (the request queue reads this). */
  hint: RetryHint | null;
  /**
   * Which layer the failure was held against: `model` for a 429 without account-wide evidence
   * (only that model on that connection rests), `connection`, `provider`, or `request`.
   */
  scope?: 'provider' | 'connection' | 'model' | 'request';
  /** The provider error rule that matched (errorRuleRegistry.ts); `honored` false = informational. */
  rule?: { source: 'operator' | 'builtin' | 'default'; id: string; honored: boolean };
}

export interface Exclusion {
  reason: SkipReason;
  /** When it lifts by itself; null for states that need an operator (terminal) or never lift. */
  until: number | null;
  detail: string | null;
  /** The failure reason behind it (quota_exhausted, auth_error, not_found, ...), when known. */
  cause?: string;
}

/** A connection state decided outside any upstream answer (e.g. a Claude sign-in that cannot refresh). */
export type ConnectionMark =
  | { kind: 'terminal'; status: TerminalStatus; reason: string; message: string }
  | { kind: 'cooling'; until: number; reason: string; message: string };

export interface ResiliencePort {
  /** Lazy eligibility read: null when the target may be called now. Never mutates state. */
  exclusion(target: Target, now: number): Exclusion | null;
  /**
   * Right after selection: when a provider's breaker is OPEN or HALF_OPEN, reorders that
   * provider's targets in place (within the positions they already hold) so the connection most
   * likely healthy comes first and gets the probe: not cooling/ejected/locked, did not fail in the
   * breaker's window, shortest failure streak, latest success. Returns the same array; when no
   * breaker is open it returns at once without looking at the targets.
   */
  orderForProbe(targets: Target[], now: number): Target[];
  /**
   * Every target of a request was excluded. When some of them are out only on a guess of ours —
   * a model rate-limit backoff the upstream gave no time for, an outlier ejection, a key-level
   * breaker hold — returns the one to probe now: the oldest last failure first (at most one pick
   * per connection per second, never within 250 ms of its last failure), else null. The pipeline
   * may ask again while its probes fail. Known exclusions (an upstream hint, a terminal state, a
   * provider-wide breaker, the window gate) are never probed.
   */
  lastResort(targets: readonly Target[], now: number): Target | null;
  /**
   * A last-resort probe of one of these targets' connections is in flight (another request's):
   * resolves when the first of them reports its outcome; null when none is. A request that found
   * nothing to probe waits on it rather than answer an error built from our guesses.
   */
  probeInFlight(targets: readonly Target[], now: number): Promise<void> | null;
  /**
   * Right before dispatch: claims the single HALF_OPEN probe. null = go; an Exclusion = skip. In
   * team mode a claim that must hold across instances answers with a promise (a bounded round trip
   * to Redis); alone it answers at once.
   */
  beginAttempt(target: Target, now: number): Exclusion | null | Promise<Exclusion | null>;
  onSuccess(target: Target, now: number, info: { ttfbMs: number | null }): void;
  onFailure(target: Target, failure: UpstreamFailure, now: number): AttemptVerdict;
  /** The attempt ended with no outcome (client went away): release anything beginAttempt claimed. */
  onAbandon(target: Target, now: number): void;
  /**
   * Locks one model on one connection for a while, outside the lockout settings' escalation: used
   * by the request queue for long body-declared waits it cannot absorb (R-RQ-13, exact scope).
   */
  lockModel(target: Target, durationMs: number, reason: string, now: number): void;
  /**
   * Marks a connection from outside an upstream answer: terminal, or cooling until `until` (no
   * breaker, no model lock, no backoff step). With `attempt`, the failure that attempt reports next
   * was this mark: onFailure changes nothing more and answers "fail over".
   */
  markConnection(connectionId: string, mark: ConnectionMark, now: number, attempt?: Target): void;
}

export interface ResilienceManagement {
  breakers(now: number): BreakerView[];
  cooldowns(now: number, provider?: string): CooldownsView;
  clearCooldowns(input: { connectionIds: string[] } | { all: true; provider?: string }, now: number): ClearCooldownsResult;
  lockouts(now: number): ModelLockoutView[];
  /**
   * What the health model reads besides the views above: the keys an OPEN breaker holds out, and
   * each connection's failures in a row (connection id -> count, only those above 0).
   */
  healthLayers(now: number): { breakerHolds: BreakerHold[]; failureStreaks: Record<string, number> };
  clearLockout(input: { provider: string; connection: string; model: string }, now: number): number;
  /** Resets breakers (one provider or all). Returns the providers reset. */
  resetBreakers(provider: string | undefined, now: number): string[];
  /** A successful "test connection": counts as a good connection test (R-CB-05). */
  onConnectionTestOk(connectionId: string, now: number): void;
  /** Subscribe to state changes (for push events). */
  onChange(fn: () => void): () => void;
}

export type Resilience = ResiliencePort & ResilienceManagement;
