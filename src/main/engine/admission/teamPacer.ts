// Team mode (issue 26): a request queue's spacing (minTime / requests per minute) held for the whole
// team. The queue's pacer becomes a clustered Bottleneck limiter keyed by the connection's team id
// (and model, for a model-scoped queue): Redis spaces dispatches of every instance. Without spacing
// there is nothing to share and the local pacer is used (no round trip). While Redis is not
// connected, or a permit's first call goes unanswered or fails, the permit comes from the local
// pacer instead, so spacing still holds per instance and a queue never waits on Redis.
import type { CancelTimer, Clock } from '../clock';
import type { Pacer, PacerFactory } from './pacer';
import type { ClusterLimiters } from './teamLimiters';

/** A pacing job ends as soon as it starts; its expiration only matters if this instance dies meanwhile. */
const PACE_JOB_EXPIRATION_MS = 60_000;

export interface TeamPacerOptions {
  limiters: ClusterLimiters;
  clock: Clock;
  /** The pacer used when the team cannot be asked. */
  local: PacerFactory;
  /** The clustered limiter's id now (null: this connection is not shared with the team). */
  idOf: () => string | null;
  /** Prefix of this instance's job ids. */
  instanceId: string;
}

let seq = 0;

/** A PacerFactory whose pacers space dispatches across the team. */
export function teamPacerFactory(o: TeamPacerOptions): PacerFactory {
  return (minTimeMs) => new TeamPacer(o, minTimeMs);
}

class TeamPacer implements Pacer {
  private local: Pacer | null = null;
  /** Permits asked of Redis and not yet given: each can fall back to the local pacer once. */
  private readonly pending = new Set<(err: unknown | null) => void>();
  private readonly offDown: () => void;
  private closed = false;

  constructor(
    private readonly o: TeamPacerOptions,
    private minTime: number,
  ) {
    this.offDown = o.limiters.onDown(() => {
      for (const fallback of [...this.pending]) fallback(null);
    });
  }

  setMinTime(ms: number): void {
    if (ms === this.minTime) return;
    this.minTime = ms;
    this.local?.setMinTime(ms);
    // The clustered limiter takes it with the next permit (configure writes it once).
  }

  submit(permit: () => void): void {
    let given = false;
    const once = () => {
      if (given) return;
      given = true;
      permit();
    };
    if (this.closed) return once();
    const id = this.minTime > 0 && this.o.limiters.up ? this.o.idOf() : null;
    if (id === null) return this.localPacer().submit(once);

    const settings = { maxConcurrent: null, minTime: this.minTime };
    const limiter = this.o.limiters.limiter(id, settings);
    limiter.configure(settings);
    const jobId = `${this.o.instanceId}:pace:${++seq}`;
    let guard: CancelTimer | null = null;
    let unwatch = () => {};
    const settle = (): boolean => {
      if (!this.pending.delete(fallback)) return false;
      guard?.();
      unwatch();
      return true;
    };
    const fallback = (err: unknown | null) => {
      if (!settle()) return;
      if (err !== null) this.o.limiters.failed(err);
      if (this.closed) once();
      else this.localPacer().submit(once);
    };
    this.pending.add(fallback);
    unwatch = limiter.watch({ error: () => fallback(null) });
    limiter
      .schedule({ id: jobId, expiration: PACE_JOB_EXPIRATION_MS }, () => {
        if (settle()) once();
        return Promise.resolve();
      })
      .catch((err: unknown) => fallback(err));
    // Redis registers a pacing job at once (there is no cap): still received or queued after the
    // bound means it did not answer. Bottleneck has no cancel; a late job runs empty.
    guard = this.o.clock.setTimer(() => {
      const s = limiter.jobStatus(jobId);
      if (s === 'RECEIVED' || s === 'QUEUED') fallback(new Error('Redis did not answer in time'));
    }, this.o.limiters.boundMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.offDown();
    // Every permit is given exactly once, even now (the queue has rejected its waiters already).
    for (const fallback of [...this.pending]) fallback(null);
    await this.local?.close();
  }

  private localPacer(): Pacer {
    return (this.local ??= this.o.local(this.minTime));
  }
}
