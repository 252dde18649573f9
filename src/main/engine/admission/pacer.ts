// Dispatch pacing behind a small port, implemented with Bottleneck. The request queue hands it one
// job per dispatch it wants and the pacer says when that dispatch may happen (minTime spacing).
// Bottleneck keeps real time and schedules through timers, so the queue only uses it when something
// actually has to wait; unit tests drive the queue with a pacer of their own.
import Bottleneck from 'bottleneck';

export interface Pacer {
  /** Minimum spacing between two dispatches (0 = none). */
  setMinTime(ms: number): void;
  /** Calls `permit` when the pace allows the next dispatch: always exactly once, even on failure. */
  submit(permit: () => void): void;
  close(): Promise<void>;
}

export type PacerFactory = (minTimeMs: number) => Pacer;

export const bottleneckPacer: PacerFactory = (minTimeMs) => {
  const limiter = new Bottleneck({ minTime: minTimeMs, maxConcurrent: null });
  let minTime = minTimeMs;
  let closed = false;
  return {
    setMinTime(ms) {
      if (ms === minTime || closed) return;
      minTime = ms;
      // Typed as synchronous, but it returns a promise in this version.
      Promise.resolve(limiter.updateSettings({ minTime: ms })).catch(() => {});
    },
    submit(permit) {
      let called = false;
      const once = () => {
        if (called) return;
        called = true;
        permit();
      };
      if (closed) return once();
      // A limiter failure must never strand a waiting request: the permit is given either way.
      limiter
        .schedule(() => {
          once();
          return Promise.resolve();
        })
        .catch(once);
    },
    async close() {
      if (closed) return;
      closed = true;
      await limiter.stop({ dropWaitingJobs: true }).catch(() => {});
    },
  };
};
