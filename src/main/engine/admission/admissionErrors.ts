// The typed admission errors in one place: each has a stable code, an HTTP status and, where it
// helps the agent, a Retry-After. Rejections before dispatch are 429s (back off and retry); only
// the execution budget running out after dispatch is a 504.
import { AdmissionError } from './port';

/** Retry-After for a saturated queue or gate when the upstream gave no hint of its own. */
export const SATURATED_RETRY_AFTER_MS = 1_000;

const seconds = (ms: number) => `${Math.max(1, Math.ceil(ms / 1000))}s`;

/** The queue already holds maxQueueDepth requests (R-RQ-21). */
export function queueFull(connectionName: string, depth: number, pauseLeftMs: number | null): AdmissionError {
  return new AdmissionError(
    'RATE_LIMIT_QUEUE_FULL',
    429,
    `the rate-limit queue of "${connectionName}" is full: ${depth} requests are already waiting (the "Queue depth cap" setting)`,
    pauseLeftMs ?? SATURATED_RETRY_AFTER_MS,
  );
}

/** The queue-wait budget (maxWaitMs) ran out before dispatch, or cannot outlast a pause (R-RQ-03, R-RQ-18). */
export function queueTimeout(connectionName: string, maxWaitMs: number, pauseLeftMs: number | null): AdmissionError {
  const why =
    pauseLeftMs !== null
      ? `the upstream asked for a ${seconds(pauseLeftMs)} pause, longer than a request may wait in the rate-limit queue (${seconds(maxWaitMs)}, the "Queue wait budget" setting)`
      : `no turn came up in the rate-limit queue within ${seconds(maxWaitMs)} (the "Queue wait budget" setting)`;
  return new AdmissionError(
    'RATE_LIMIT_QUEUE_TIMEOUT',
    429,
    `"${connectionName}": ${why}`,
    pauseLeftMs ?? SATURATED_RETRY_AFTER_MS,
  );
}

/** The execution budget (executionMaxWaitMs, raised to the headers timeout) ran out after dispatch (R-RQ-07). */
export function executionTimeout(connectionName: string, executionMs: number): AdmissionError {
  return new AdmissionError(
    'RATE_LIMIT_EXECUTION_TIMEOUT',
    504,
    `"${connectionName}": the upstream did not start answering within ${seconds(executionMs)} (the "Execution budget" setting)`,
  );
}

/** No concurrency slot freed within concurrency.waitTimeoutMs (R-SQ-07). */
export function semaphoreTimeout(connectionName: string, gate: string, waitMs: number): AdmissionError {
  return new AdmissionError(
    'SEMAPHORE_TIMEOUT',
    429,
    `"${connectionName}": all its ${gate} slots stayed busy for ${seconds(waitMs)} (the "Concurrency wait timeout" setting)`,
    SATURATED_RETRY_AFTER_MS,
  );
}

/** Too many requests already wait for this concurrency gate (R-SQ-07). */
export function semaphoreQueueFull(connectionName: string, gate: string, waiting: number): AdmissionError {
  return new AdmissionError(
    'SEMAPHORE_QUEUE_FULL',
    429,
    `"${connectionName}": ${waiting} requests already wait for a ${gate} slot (the "Concurrency queue length" setting)`,
    SATURATED_RETRY_AFTER_MS,
  );
}
