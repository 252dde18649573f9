// Admission settings (SPEC §4-§5): request queue budgets and concurrency gates. The queue settings
// apply to queue-protected connections (explicit rateLimitProtection, or API-key connections while
// the safety net is on); the concurrency settings apply to every connection that declares a cap.
import { bool, int } from './define';

const DAY = 86_400_000;

export const admissionSettings = {
  'requestQueue.maxWaitMs': int({
    group: 'requestQueue',
    resilience: true,
    label: 'Queue wait budget',
    description:
      'Longest time a request to a protected connection may wait before dispatch (queue, pause and concurrency slots together); past it the request fails with RATE_LIMIT_QUEUE_TIMEOUT and never reaches the upstream. It never limits a response in progress.',
    default: 30_000,
    min: 1,
    max: DAY,
    unit: 'ms',
    env: ['RATE_LIMIT_MAX_WAIT_MS'],
    connectionOverride: 'rateLimitOverrides.maxWaitMs',
  }),
  'requestQueue.executionMaxWaitMs': int({
    group: 'requestQueue',
    resilience: true,
    label: 'Execution budget',
    description:
      'Safeguard on a dispatched request until its response starts (raised to the upstream response-headers timeout when that is longer). Expiry answers 504 RATE_LIMIT_EXECUTION_TIMEOUT; a response already streaming is never cut.',
    default: 600_000,
    min: 1,
    max: DAY,
    unit: 'ms',
    env: ['RATE_LIMIT_EXECUTION_MAX_WAIT_MS'],
    connectionOverride: 'rateLimitOverrides.executionMaxWaitMs',
  }),
  'requestQueue.maxQueueDepth': int({
    group: 'requestQueue',
    resilience: true,
    label: 'Queue depth cap',
    description: 'Most requests that may wait per protected connection; more are refused at once with RATE_LIMIT_QUEUE_FULL. 0 = no cap.',
    default: 0,
    min: 0,
    max: 100_000,
    unit: 'count',
    env: ['RATE_LIMIT_MAX_QUEUE_DEPTH'],
  }),
  'requestQueue.autoEnableApiKeyProviders': bool({
    group: 'requestQueue',
    resilience: true,
    label: 'Protect API-key connections automatically',
    description:
      'Route every API-key connection through its rate-limit queue. The env var RATE_LIMIT_AUTO_ENABLE, when set, wins over this value.',
    default: true,
    env: ['RATE_LIMIT_AUTO_ENABLE'],
    envOverridesPersisted: true,
  }),
  'quotaShareConcurrencyLimit.enabled': bool({
    group: 'concurrency',
    resilience: true,
    label: 'Shared-quota serialisation',
    description:
      'Serialise requests to a connection that sets Max concurrent instead of flooding the account. It fails open: a request that waits longer than the concurrency wait timeout, or finds the wait queue full, goes ahead without a slot.',
    default: true,
  }),
  'concurrency.waitTimeoutMs': int({
    group: 'concurrency',
    resilience: true,
    label: 'Concurrency wait timeout',
    description:
      'Longest wait for a concurrency slot (connection or per-model cap) before SEMAPHORE_TIMEOUT; on a protected connection the queue wait budget also applies. Shared-quota waits this long proceed without a slot.',
    default: 30_000,
    min: 1,
    max: DAY,
    unit: 'ms',
  }),
  'concurrency.maxWaiting': int({
    group: 'concurrency',
    resilience: true,
    label: 'Concurrency queue length',
    description: 'Most requests that may wait for one concurrency gate; more get SEMAPHORE_QUEUE_FULL at once (shared-quota waits proceed without a slot instead).',
    default: 1_000,
    min: 0,
    max: 100_000,
    unit: 'count',
  }),
} as const;
