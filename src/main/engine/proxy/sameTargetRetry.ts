// One request's same-target retries (routing/retryBudget.ts decides): which targets were already
// retried, the wait planned after a failure, and the mark on the attempt that retries. The pipeline
// offers each failed attempt here; when a retry is planned it waits (on the injected Clock, with
// the request's abort signal) and walks to the same target again, which passes the usual
// exclusion, admission and attempt-budget checks like any other attempt.
import type { AttemptEntry, AttemptRetry } from '../../../shared/model';
import { sleep, type Clock } from '../clock';
import type { Logger } from '../logger';
import type { AttemptVerdict, ResiliencePort, UpstreamFailure } from '../resilience/port';
import { decideRetry, type RetryBudgetSettings } from '../routing/retryBudget';
import type { Target } from '../routing/target';

export interface SameTargetRetryDeps {
  resilience: Pick<ResiliencePort, 'exclusion'>;
  clock: Clock;
  log: Logger;
}

/** What the walk knows when an attempt failed. */
export interface WalkState {
  /** Something already reached the client. */
  committed: boolean;
  /** Attempts made in this walk (its budget is per walk). */
  roundAttempts: number;
  /** Targets that failed (or were barred) in this walk. */
  spent: ReadonlySet<Target>;
}

export class SameTargetRetries {
  private readonly taken = new Map<Target, number>();
  private plan: { target: Target; retry: AttemptRetry } | null = null;

  constructor(
    private readonly deps: SameTargetRetryDeps,
    private readonly settings: RetryBudgetSettings,
    /** The plan's order: what the walk would try next. */
    private readonly order: readonly Target[],
    /** The walk's attempt budget (the retry is one of its attempts). */
    private readonly maxAttempts: number,
    /** Monotonic time by which every wait of the request must have ended. */
    private readonly waitDeadline: number,
    private readonly requestId: string,
  ) {}

  /** An attempt on `target` failed (already reported to the resilience layer): true when it is to be retried after wait(). */
  offer(target: Target, failure: UpstreamFailure, verdict: AttemptVerdict, walk: WalkState): boolean {
    const now = this.deps.clock.now();
    const d = decideRetry({
      settings: this.settings,
      retriesTaken: this.taken.get(target) ?? 0,
      status: failure.status,
      verdict,
      exclusion: this.deps.resilience.exclusion(target, now),
      now,
      committed: walk.committed,
      attemptsLeft: this.maxAttempts - walk.roundAttempts,
      sameModelNext: this.nextServesSameModel(target, walk.spent, now),
      budgetLeftMs: this.waitDeadline - this.deps.clock.monotonic(),
    });
    if (!d.retry) return false;
    this.taken.set(target, (this.taken.get(target) ?? 0) + 1);
    this.plan = { target, retry: { waitedMs: Math.round(d.waitMs), why: d.why, afterStatus: failure.status } };
    this.deps.log.info('retry.same_target', { requestId: this.requestId, connectionId: target.conn.id, model: target.model, ms: d.waitMs, why: d.why });
    return true;
  }

  /** A retry of this target is planned (offer answered true). */
  planned(target: Target): boolean {
    return this.plan?.target === target;
  }

  /** Waits the planned time. False when the request was aborted meanwhile (the client left). */
  async wait(signal: AbortSignal): Promise<boolean> {
    const ms = this.plan?.retry.waitedMs ?? 0;
    try {
      await sleep(this.deps.clock, ms, signal);
      return true;
    } catch {
      this.plan = null;
      return false;
    }
  }

  /** An attempt starts: marks it as the waited retry when it is one. Any other attempt drops the plan. */
  mark(target: Target, entry: AttemptEntry): void {
    if (this.plan?.target === target) entry.retry = this.plan.retry;
    this.plan = null;
  }

  /** The first target after this one that the walk could try now serves the same model. */
  private nextServesSameModel(target: Target, spent: ReadonlySet<Target>, now: number): boolean {
    for (let i = this.order.indexOf(target) + 1; i < this.order.length; i++) {
      const t = this.order[i]!;
      if (spent.has(t) || t === target || this.deps.resilience.exclusion(t, now) !== null) continue;
      return t.model === target.model;
    }
    return false;
  }
}
