// The admission numbers in force for one connection, resolved from settings with the spec's
// precedence (env < persisted < per-connection rateLimitOverrides, R-RQ-09) and read on every
// acquire, so a settings patch or a connection edit applies to the next request.
import type { ResolvedSettings } from '../settings/resolve';
import { effectiveFor } from '../settings/resolve';
import type { ConnectionRecord } from '../store/connectionsRepo';

const DAY = 86_400_000;

export interface QueueBudgets {
  /** Queue-wait budget: the longest wait before dispatch (R-RQ-02). */
  maxWaitMs: number;
  /** Execution budget after dispatch: executionMaxWaitMs raised to the headers timeout (R-RQ-05, R-RQ-06). */
  executionMs: number;
  /** 0 = no cap on waiting requests (R-RQ-22). */
  maxQueueDepth: number;
  /** Configured spacing between two dispatches (minTimeMs and requestsPerMinute, the stricter). */
  minTimeMs: number;
}

export interface ConcurrencyBudgets {
  waitTimeoutMs: number;
  maxWaiting: number;
}

const clampMs = (v: unknown, fallback: number): number =>
  typeof v === 'number' && Number.isFinite(v) ? Math.min(DAY, Math.max(1, Math.round(v))) : fallback;

type Snapshot = Pick<ResolvedSettings, 'values' | 'sources'>;

export function queueBudgetsFor(snapshot: Snapshot, conn: ConnectionRecord): QueueBudgets {
  const maxWaitMs = clampMs(effectiveFor(snapshot, 'requestQueue.maxWaitMs', conn).value, snapshot.values['requestQueue.maxWaitMs']);
  const execution = clampMs(
    effectiveFor(snapshot, 'requestQueue.executionMaxWaitMs', conn).value,
    snapshot.values['requestQueue.executionMaxWaitMs'],
  );
  const headers = clampMs(effectiveFor(snapshot, 'upstream.headersTimeoutMs', conn).value, snapshot.values['upstream.headersTimeoutMs']);
  return {
    maxWaitMs,
    executionMs: Math.max(execution, headers),
    maxQueueDepth: snapshot.values['requestQueue.maxQueueDepth'],
    minTimeMs: configuredSpacingMs(conn),
  };
}

/** Spacing from rateLimitOverrides: requestsPerMinute becomes even spacing, so no minute sees more. */
export function configuredSpacingMs(conn: Pick<ConnectionRecord, 'rateLimitOverrides'>): number {
  const o = conn.rateLimitOverrides ?? {};
  const minTime = typeof o.minTimeMs === 'number' && o.minTimeMs > 0 ? Math.min(3_600_000, Math.round(o.minTimeMs)) : 0;
  const rpm = typeof o.requestsPerMinute === 'number' && o.requestsPerMinute > 0 ? o.requestsPerMinute : 0;
  const fromRate = rpm > 0 ? Math.ceil(60_000 / rpm) : 0;
  return Math.max(minTime, fromRate);
}

export function concurrencyBudgets(snapshot: Snapshot): ConcurrencyBudgets {
  return {
    waitTimeoutMs: snapshot.values['concurrency.waitTimeoutMs'],
    maxWaiting: snapshot.values['concurrency.maxWaiting'],
  };
}
