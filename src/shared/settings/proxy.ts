// Proxy, upstream transport, request log and routing settings.
import { int, oneOf } from './define';

const MIN = 60_000;
const DAY = 86_400_000;

export const proxySettings = {
  'proxy.port': int({
    group: 'proxy',
    label: 'Proxy port',
    description:
      'Port of the local proxy (127.0.0.1 only) that agents call. 0 picks a free port. Changing it moves the listener at once; the --proxy-port option of the serve command sets it for one run instead.',
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
    label: 'Request headers timeout',
    description:
      'Time a client may take to send the request line and headers. A slower client gets 408 and its connection is closed. Never longer than the request timeout.',
    default: 60_000,
    min: 1_000,
    max: 10 * MIN,
    unit: 'ms',
    env: ['SWITCHYARD_PROXY_HEADERS_TIMEOUT_MS'],
  }),
  'proxy.requestTimeoutMs': int({
    group: 'proxy',
    label: 'Request upload timeout',
    description:
      'Time a client may take to send one whole request (headers and body). A slower client gets 408 and its connection is closed. The response does not count: long streams are never cut by this.',
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
  'upstream.connectTimeoutMs': int({
    group: 'upstream',
    label: 'Connect timeout',
    description: 'Time allowed to open a TCP/TLS connection to an upstream before the attempt fails over.',
    default: 10_000,
    min: 100,
    max: 10 * MIN,
    unit: 'ms',
    env: ['SWITCHYARD_UPSTREAM_CONNECT_TIMEOUT_MS'],
    connectionOverride: 'timeouts.connectMs',
  }),
  'upstream.headersTimeoutMs': int({
    group: 'upstream',
    label: 'Response-headers (fetch-start) timeout',
    description:
      'Time allowed between sending a request and receiving the upstream response headers. Reasoning models can take minutes before their first byte.',
    default: 10 * MIN,
    min: 1_000,
    max: DAY,
    unit: 'ms',
    env: ['SWITCHYARD_UPSTREAM_HEADERS_TIMEOUT_MS'],
    connectionOverride: 'timeouts.headersMs',
  }),
  'upstream.idleTimeoutMs': int({
    group: 'upstream',
    label: 'Stream idle timeout',
    description: 'Longest silence allowed between two chunks of an upstream response body.',
    default: 5 * MIN,
    min: 1_000,
    max: 60 * MIN,
    unit: 'ms',
    env: ['SWITCHYARD_UPSTREAM_IDLE_TIMEOUT_MS'],
    connectionOverride: 'timeouts.idleMs',
  }),
  'logs.retentionDays': int({
    group: 'logs',
    label: 'Request log retention',
    description: 'Request log rows older than this are deleted.',
    default: 7,
    min: 1,
    max: 365,
    unit: 'days',
  }),
  'logs.maxRows': int({
    group: 'logs',
    label: 'Request log size',
    description: 'At most this many requests are kept in the log; the oldest go first.',
    default: 20_000,
    min: 100,
    max: 1_000_000,
    unit: 'count',
  }),
  'routing.strategy': oneOf({
    group: 'routing',
    label: 'Selection within a priority',
    description:
      'How a connection is chosen among the eligible ones that share the best priority. Round-robin takes turns; fill-first always uses the first; power-of-two-choices picks the less busy of two at random (and, with a latency weight, the faster).',
    default: 'round-robin',
    options: [
      { value: 'round-robin', label: 'Round-robin' },
      { value: 'fill-first', label: 'Fill first' },
      { value: 'p2c', label: 'Power of two choices' },
    ],
    env: ['SWITCHYARD_ROUTING_STRATEGY'],
  }),
} as const;
