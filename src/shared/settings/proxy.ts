// Proxy, upstream transport, request log and routing settings.
import { int, oneOf } from './define';

const MIN = 60_000;
const DAY = 86_400_000;

export const proxySettings = {
  'proxy.port': int({
    group: 'proxy',
    label: 'Proxy port',
    description:
      'Port of the local proxy (127.0.0.1 only) that agents call; 0 picks a free port. A change moves the proxy at once. Starting the headless app with --proxy-port sets it for that run instead.',
    default: 8480,
    min: 0,
    max: 65535,
    unit: 'port',
    env: ['SWITCHYARD_PROXY_PORT'],
  }),
  'proxy.maxBodyBytes': int({
    group: 'proxy',
    label: 'Largest request body',
    description: 'Requests with a larger body are refused with 413 before anything is sent upstream.',
    default: 32 * 1024 * 1024,
    min: 1024,
    max: 256 * 1024 * 1024,
    unit: 'bytes',
    env: ['SWITCHYARD_MAX_BODY_BYTES'],
  }),
  'proxy.headersTimeoutMs': int({
    group: 'proxy',
    label: 'Time to send the request headers',
    description:
      'Time an agent may take to send the start of a request (its headers). A slower one gets a 408 timeout and is disconnected. Never longer than the time to upload a request.',
    default: 60_000,
    min: 1_000,
    max: 10 * MIN,
    unit: 'ms',
    env: ['SWITCHYARD_PROXY_HEADERS_TIMEOUT_MS'],
  }),
  'proxy.requestTimeoutMs': int({
    group: 'proxy',
    label: 'Time to upload a request',
    description:
      'Time an agent may take to send one whole request. A slower one gets a 408 timeout and is disconnected. The answer does not count: long streams are never cut by this.',
    default: 5 * MIN,
    min: 1_000,
    max: 60 * MIN,
    unit: 'ms',
    env: ['SWITCHYARD_PROXY_REQUEST_TIMEOUT_MS'],
  }),
  'proxy.maxAttempts': int({
    group: 'proxy',
    label: 'Attempts per request',
    description:
      'How many upstream attempts (the first plus failovers to other connections) one request may make before its error is returned.',
    default: 4,
    min: 1,
    max: 20,
    unit: 'count',
  }),
  'sameTargetRetry.maxRetries': int({
    group: 'proxy',
    resilience: true,
    label: 'Retries on the same connection',
    description:
      'How many times a failed attempt is sent again to the same connection and model after a short wait, instead of moving on to a different model: only when the provider asked for a wait no longer than the one below, or answered a plain server error (500, 502, 503, 529), and never after anything reached the agent. 0 turns it off. A retry counts as a wait (see "Wait out short pauses"); a combo may set its own count.',
    default: 1,
    min: 0,
    max: 5,
    unit: 'count',
    env: ['SWITCHYARD_SAME_TARGET_RETRIES'],
  }),
  'sameTargetRetry.maxHintedWaitMs': int({
    group: 'proxy',
    resilience: true,
    label: 'Longest wait the provider may ask for',
    description:
      'A retry on the same connection waits the time the provider asked for (Retry-After, or the delay in its error text) only when it is at most this long; a longer one moves on to the next connection at once.',
    default: 5_000,
    min: 0,
    max: MIN,
    unit: 'ms',
    env: ['SWITCHYARD_SAME_TARGET_RETRY_MAX_WAIT_MS'],
  }),
  'sameTargetRetry.unhintedDelayMs': int({
    group: 'proxy',
    resilience: true,
    label: 'Wait before a retry the provider gave no time for',
    description:
      'After a 500, 502, 503 or 529 that says nothing about when to retry, the same connection is tried again after this long (when retries are left). 0: such errors are never retried on the same connection.',
    default: 750,
    min: 0,
    max: 10_000,
    unit: 'ms',
    env: ['SWITCHYARD_SAME_TARGET_RETRY_DELAY_MS'],
  }),
  'upstream.connectTimeoutMs': int({
    group: 'upstream',
    label: 'Time to connect to a provider',
    description: 'Time allowed to open a connection to a provider before the attempt moves on to the next one.',
    default: 10_000,
    min: 100,
    max: 10 * MIN,
    unit: 'ms',
    env: ['SWITCHYARD_UPSTREAM_CONNECT_TIMEOUT_MS'],
    connectionOverride: 'timeouts.connectMs',
  }),
  'upstream.headersTimeoutMs': int({
    group: 'upstream',
    label: 'Time for a provider to start answering',
    description:
      'Time allowed between sending a request and the start of the provider\'s answer. Reasoning models can take minutes before their first byte.',
    default: 10 * MIN,
    min: 1_000,
    max: DAY,
    unit: 'ms',
    env: ['SWITCHYARD_UPSTREAM_HEADERS_TIMEOUT_MS'],
    connectionOverride: 'timeouts.headersMs',
  }),
  'upstream.idleTimeoutMs': int({
    group: 'upstream',
    label: 'Longest silence inside an answer',
    description: 'Longest time a provider\'s answer may send nothing at all between two pieces.',
    default: 5 * MIN,
    min: 1_000,
    max: 60 * MIN,
    unit: 'ms',
    env: ['SWITCHYARD_UPSTREAM_IDLE_TIMEOUT_MS'],
    connectionOverride: 'timeouts.idleMs',
  }),
  'logs.retentionDays': int({
    group: 'logs',
    label: 'Keep the request log for',
    description: 'Requests older than this are deleted from the log.',
    default: 7,
    min: 1,
    max: 365,
    unit: 'days',
  }),
  'logs.maxRows': int({
    group: 'logs',
    label: 'Most requests kept in the log',
    description: 'At most this many requests are kept in the log; the oldest go first.',
    default: 20_000,
    min: 100,
    max: 1_000_000,
    unit: 'count',
  }),
  'routing.strategy': oneOf({
    group: 'routing',
    label: 'Choice among connections of equal priority',
    description:
      'How a connection is chosen among the usable ones that share the best priority: round-robin takes turns, fill first always uses the first, power of two choices picks the less busy of two at random (and, if you prefer faster ones, the faster).',
    default: 'round-robin',
    options: [
      { value: 'round-robin', label: 'Round-robin' },
      { value: 'fill-first', label: 'Fill first' },
      { value: 'p2c', label: 'Power of two choices' },
    ],
    env: ['SWITCHYARD_ROUTING_STRATEGY'],
  }),
} as const;
