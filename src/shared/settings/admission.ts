// Admission settings (SPEC §4-§5): request queue budgets and concurrency gates.
import { bool, int } from './define';

const DAY = 86_400_000;

export const admissionSettings = {
  'requestQueue.maxWaitMs': int({
    group: 'requestQueue',
    resilience: true,
    label: 'Queue wait budget',
    description:
      'Longest time a request may wait for a slot before dispatch. It never limits a response already in progress.',
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
      'Safeguard on a dispatched request (raised to the upstream response-headers timeout when that is longer). Expiry answers 504 RATE_LIMIT_EXECUTION_TIMEOUT.',
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
    description: 'Most requests that may wait per connection; more are refused at once with RATE_LIMIT_QUEUE_FULL. 0 = no cap.',
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
    description: 'Serialise requests to a connection with a max-concurrent cap instead of flooding the account (fails open).',
    default: true,
  }),
  'concurrency.waitTimeoutMs': int({
    group: 'concurrency',
    resilience: true,
    label: 'Concurrency wait timeout',
    description: 'Longest wait for a concurrency slot (account or model cap) before SEMAPHORE_TIMEOUT.',
    default: 30_000,
    min: 1,
    max: DAY,
    unit: 'ms',
  }),
  'concurrency.maxWaiting': int({
    group: 'concurrency',
    resilience: true,
    label: 'Concurrency queue length',
    description: 'Most requests that may wait for one concurrency gate; more get SEMAPHORE_QUEUE_FULL at once.',
    default: 1_000,
    min: 0,
    max: 100_000,
    unit: 'count',
  }),
} as const;
