// What the request queue does with an upstream's declared wait on a 429 (SPEC R-RQ-10..17): a wait
// that fits the queue-wait budget is spacing (pause the limiter that long); a longer wait from a
// typed Google RetryInfo on a model-scoped limiter becomes a model lockout (at most 24 h) and leaves
// the limiter running; any other long wait (prose, untyped retryDelay, a header, or a limiter
// shared by the whole connection) pauses the limiter, also at most 24 h.
import type { RetryHint } from '../resilience/retryHints';
import type { LimiterScope } from './limiterScope';

export const MAX_DECLARED_WAIT_MS = 86_400_000;

export type DeclaredWaitDecision =
  | { kind: 'none' }
  | { kind: 'pause'; ms: number; why: 'spacing' | 'long_wait' }
  | { kind: 'lock_model'; ms: number };

export function decideDeclaredWait(
  status: number | null,
  hint: RetryHint | null,
  maxWaitMs: number,
  scope: LimiterScope,
): DeclaredWaitDecision {
  if (status !== 429 || hint === null || !(hint.ms > 0)) return { kind: 'none' };
  const ms = Math.min(hint.ms, MAX_DECLARED_WAIT_MS);
  // "Fits" is inclusive: a wait equal to the budget is still spacing.
  if (hint.ms <= maxWaitMs) return { kind: 'pause', ms, why: 'spacing' };
  if (hint.source === 'google_rpc_retry_info' && scope === 'model') return { kind: 'lock_model', ms };
  return { kind: 'pause', ms, why: 'long_wait' };
}
