// Admission settings (SPEC §4-§5): request queue budgets and concurrency gates. The queue settings
// apply to queue-protected connections (explicit rateLimitProtection, or API-key connections while
// the safety net is on); the concurrency settings apply to every connection that declares a cap.
import { bool, int } from './define';

const DAY = 86_400_000;

export const admissionSettings = {
  'requestQueue.maxWaitMs': int({
    group: 'requestQueue',
    resilience: true,
    label: 'Longest wait before sending',
    description:
      'Longest a request to a connection with rate-limit protection may wait before it is sent (queue, pauses and concurrency slots together); past it the request fails with a queue timeout and never reaches the provider. A response under way is never cut.',
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
    label: 'Longest wait for a response to start',
    description:
      'A safeguard on a sent request until its response starts (never shorter than the time for a provider to start answering); past it the client gets a 504 timeout. A response already streaming is never cut.',
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
    label: 'Most requests waiting per connection',
    description: 'Most requests that may wait for one protected connection; more are refused at once with a queue-full error. 0: no limit.',
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
      'Send the requests of every API-key connection through its rate-limit queue. Its environment variable, when set, wins over the value saved here.',
    default: true,
    env: ['RATE_LIMIT_AUTO_ENABLE'],
    envOverridesPersisted: true,
  }),
  'quotaShareConcurrencyLimit.enabled': bool({
    group: 'concurrency',
    resilience: true,
    label: 'Take turns on connections with a concurrency limit',
    description:
      'A connection that sets "Max concurrent" gets its requests that many at a time instead of all at once. A request that waits longer than the wait below, or finds too many waiting, goes ahead anyway.',
    default: true,
  }),
  'concurrency.waitTimeoutMs': int({
    group: 'concurrency',
    resilience: true,
    label: 'Longest wait for a concurrency slot',
    description:
      'Longest wait for a free slot under a connection\'s or a model\'s concurrency limit before the request fails with a timeout (the queue\'s longest wait also applies on a protected connection). A take-turns wait this long goes ahead anyway.',
    default: 30_000,
    min: 1,
    max: DAY,
    unit: 'ms',
  }),
  'concurrency.maxWaiting': int({
    group: 'concurrency',
    resilience: true,
    label: 'Most requests waiting for a slot',
    description: 'Most requests that may wait for one concurrency limit; more are refused at once (a take-turns wait goes ahead anyway instead).',
    default: 1_000,
    min: 0,
    max: 100_000,
    unit: 'count',
  }),
} as const;
