// Waiting on another request's last-resort probe (issue 19): when every target of a request is
// excluded and the only one that could be probed is already being probed by a concurrent
// request, the request waits for that probe's outcome (bounded) instead of answering a 503 built
// from our guesses; if the probe succeeded, its target is eligible again and serves this request.
import { sleep, type Clock } from '../clock';
import type { ResiliencePort } from '../resilience/port';
import type { Target } from '../routing/target';

/** The longest a request waits on another request's probe before it answers. */
export const PROBE_WAIT_MAX_MS = 3_000;

/** Resolves when `pending` settles, PROBE_WAIT_MAX_MS passes, or `signal` aborts; never rejects. */
export async function awaitProbe(clock: Clock, pending: Promise<void>, signal: AbortSignal): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.race([pending, sleep(clock, PROBE_WAIT_MAX_MS, stop.signal).catch(() => undefined)]);
  } finally {
    signal.removeEventListener('abort', onAbort);
    stop.abort();
  }
}

/**
 * Nothing to probe among `candidates`: waits on another request's probe of one of them, if any,
 * then returns a candidate that is eligible again (freed by that probe, or by anything), or null.
 */
export async function afterProbe(
  deps: { resilience: Pick<ResiliencePort, 'probeInFlight' | 'exclusion'>; clock: Clock },
  candidates: readonly Target[],
  signal: AbortSignal,
): Promise<Target | null> {
  const pending = deps.resilience.probeInFlight(candidates, deps.clock.now());
  if (pending !== null) await awaitProbe(deps.clock, pending, signal);
  if (signal.aborted) return null;
  const now = deps.clock.now();
  return candidates.find((t) => deps.resilience.exclusion(t, now) === null) ?? null;
}
