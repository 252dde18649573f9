// What the proxy pipeline needs from admission control: a slot per attempt, released when the
// attempt (including a streamed body) ends. Typed errors carry a stable code.
import type { AdmissionView, RequestWait } from '../../../shared/model';
import type { UpstreamFailure, AttemptVerdict } from '../resilience/port';
import type { Target } from '../routing/target';

/**
 * The signal of a lease that can never expire. Leases without an execution budget should use it:
 * the pipeline then skips watching for expiry (one listener less per attempt).
 */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

export interface AdmissionLease {
  /** Time spent waiting before dispatch. */
  queuedMs: number;
  /** Aborted when the execution budget (executionMaxWaitMs) runs out. */
  signal: AbortSignal;
  /**
   * What the wait was for, when there was one (the request log shows each with its reason): the
   * queue's pause, its spacing, requests queued first, a full concurrency cap. Null: no wait.
   */
  waits?: readonly RequestWait[] | null;
  release(): void;
}

export type AdmissionCode =
  | 'RATE_LIMIT_QUEUE_FULL'
  | 'RATE_LIMIT_QUEUE_TIMEOUT'
  | 'RATE_LIMIT_EXECUTION_TIMEOUT'
  | 'SEMAPHORE_TIMEOUT'
  | 'SEMAPHORE_QUEUE_FULL';

export class AdmissionError extends Error {
  constructor(
    readonly code: AdmissionCode,
    readonly status: number,
    message: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'AdmissionError';
  }
}

export interface AdmissionPort {
  /** Waits for a slot for this target. Rejects with AdmissionError, or the signal's reason on abort. */
  acquire(target: Target, signal: AbortSignal): Promise<AdmissionLease>;
  /**
   * The slot at once when one is free and nothing needs waiting for (no queue ahead, no pause, no
   * team slot to claim), without a turn of the event loop; null otherwise, and then acquire() decides
   * (waits, or refuses with the reason). Optional: without it every request goes through acquire().
   */
  acquireNow?(target: Target, signal: AbortSignal): AdmissionLease | null;
  /** Sees each upstream outcome (retry hints pause or space the queue). */
  observe(target: Target, failure: UpstreamFailure | null, verdict: AttemptVerdict | null): void;
  /**
   * An operator cleared these connections' cooldowns: lift the queue pauses their upstream hints
   * set too, so the next request can reach them at once.
   */
  resume(connectionIds: string[]): string[];
  /**
   * An operator re-enabled one model on a connection: lift the pause that holds that model only
   * (its own queue on a model-scoped limiter, or its own pause in the connection's queue). A pause
   * of the whole connection stays (it is the connection's to clear). Returns whether one was lifted.
   */
  resumeModel(connectionId: string, model: string): boolean;
  /** Subscribe to pauses starting or ending early (the health model's push); not called per request. */
  onPauseChange(fn: () => void): () => void;
  views(): AdmissionView[];
  /** Requests in flight or waiting on a connection right now (the p2c load signal; cheap). */
  load(connectionId: string): number;
  onChange(fn: () => void): () => void;
  close(): Promise<void>;
}
