// The Clock port. Nothing in engine/ calls Date.now() or setTimeout directly: time is injected,
// so unit tests advance a fake clock instead of sleeping.

export type CancelTimer = () => void;

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Monotonic milliseconds for durations (ttfb, latency). */
  monotonic(): number;
  /** Runs fn after ms; returns a function that cancels it. Timers never keep the process alive. */
  setTimer(fn: () => void, ms: number): CancelTimer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return () => clearTimeout(t);
  },
};

/** Resolves after ms on the given clock, or rejects with the signal's reason when aborted. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
