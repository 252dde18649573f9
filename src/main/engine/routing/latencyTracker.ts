// The p2c latency signal (R-CC-24): for each connection, the time to first byte and outcome of its
// recent attempts, a rolling window of the last 20 samples within 15 minutes, in memory only.

export const LATENCY_WINDOW_SAMPLES = 20;
export const LATENCY_WINDOW_MS = 15 * 60_000;
/** R-CC-27: below this many samples on either side, latency does not bias the choice. */
export const LATENCY_MIN_SAMPLES = 3;

interface Sample {
  at: number;
  ttfbMs: number | null;
  ok: boolean;
}

export interface LatencyStats {
  samples: number;
  /** Mean time to first byte of the successful samples; null when none succeeded. */
  meanTtfbMs: number | null;
  /** Share of failed samples, 0..1. */
  errorRate: number;
}

export class LatencyTracker {
  private readonly byConnection = new Map<string, Sample[]>();

  record(connectionId: string, now: number, ttfbMs: number | null, ok: boolean): void {
    let list = this.byConnection.get(connectionId);
    if (!list) this.byConnection.set(connectionId, (list = []));
    list.push({ at: now, ttfbMs, ok });
    if (list.length > LATENCY_WINDOW_SAMPLES) list.shift();
  }

  stats(connectionId: string, now: number): LatencyStats {
    const list = this.byConnection.get(connectionId);
    let samples = 0;
    let failed = 0;
    let ttfbSum = 0;
    let ttfbCount = 0;
    if (list) {
      for (const s of list) {
        if (now - s.at > LATENCY_WINDOW_MS) continue;
        samples++;
        if (!s.ok) failed++;
        else if (s.ttfbMs !== null) {
          ttfbSum += s.ttfbMs;
          ttfbCount++;
        }
      }
    }
    return { samples, meanTtfbMs: ttfbCount ? ttfbSum / ttfbCount : null, errorRate: samples ? failed / samples : 0 };
  }

  forget(connectionId: string): void {
    this.byConnection.delete(connectionId);
  }
}

/**
 * R-CC-26: up to `weight` penalty points for a candidate against the other one of its pair: half
 * from latency (linear from equal speed to twice as slow as the faster one, capped there), half
 * from its error rate. Both need LATENCY_MIN_SAMPLES samples, else no bias at all (R-CC-27).
 */
export function latencyPenalty(self: LatencyStats, other: LatencyStats, weight: number): number {
  if (weight <= 0 || self.samples < LATENCY_MIN_SAMPLES || other.samples < LATENCY_MIN_SAMPLES) return 0;
  const half = weight / 2;
  let latency = 0;
  if (self.meanTtfbMs !== null && other.meanTtfbMs !== null) {
    const fastest = Math.max(1, Math.min(self.meanTtfbMs, other.meanTtfbMs));
    latency = Math.min(1, Math.max(0, self.meanTtfbMs / fastest - 1));
  } else if (self.meanTtfbMs === null && other.meanTtfbMs !== null) {
    latency = 1;
  }
  return half * latency + half * self.errorRate;
}
