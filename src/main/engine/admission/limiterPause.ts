// Fast rejection while a limiter is paused by an upstream retry hint (SPEC R-RQ-18): a caller whose
// queue-wait budget ends before the pause does cannot be dispatched in time, so it is told at once
// instead of waiting out its budget.

export type PauseCheck = { wait: true } | { wait: false; pauseLeftMs: number };

/**
 * `pausedUntil` is the recorded pause end (null when not paused), `deadline` the end of the
 * caller's queue-wait budget. A budget that ends exactly when the pause does still waits.
 */
export function checkLimiterPause(pausedUntil: number | null, now: number, deadline: number): PauseCheck {
  if (pausedUntil === null || pausedUntil <= now) return { wait: true };
  if (deadline < pausedUntil) return { wait: false, pauseLeftMs: pausedUntil - now };
  return { wait: true };
}
