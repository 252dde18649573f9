// Waiting on another request's last-resort probe (issue 19): when every target of a request is
// excluded and the only one that could be probed is already being probed by a concurrent
// request, the request waits for that probe's outcome (bounded) instead of answering a 503 built
// from our guesses; if the probe succeeded, its target is eligible again and serves this request.
import { sleep, type Clock } from '../clock';

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
