// Stream resilience settings (SPEC §2.5, §2.7, §6, R-GEN-01/02): how long a stream may take to its
// first output and may go without output, the hard attempt deadline, the hold-back byte budget,
// the opt-in recovery switches and the throughput watchdog. The deadlines have a per-connection
// override (`timeouts.*` of the connection) and a per-model table (`streams.modelDeadlines`).
import { z } from 'zod';
import { MODEL_PATTERN_MAX_LENGTH, refinePattern } from '../modelIds';
import { bool, envNames, int, json } from './define';

const SEC = 1_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;

/** One row of the per-model deadline table: a model pattern and the deadlines it sets. */
export const modelDeadlineSchema = z
  .object({
    model: z
      .string()
      .trim()
      .min(1)
      .max(MODEL_PATTERN_MAX_LENGTH)
      .regex(/^[A-Za-z0-9*?][A-Za-z0-9._:@+/*?-]*$/, 'must be a model id or a pattern with * and ?')
      .superRefine(refinePattern),
    firstOutputMs: z.number().int().min(0).max(HOUR).optional(),
    contentStallMs: z.number().int().min(0).max(HOUR).optional(),
    attemptDeadlineMs: z.number().int().min(0).max(24 * HOUR).optional(),
  })
  .strict();
export type ModelDeadline = z.infer<typeof modelDeadlineSchema>;

/**
 * Models whose reasoning is not streamed on the Chat API (OpenAI's o-series and GPT-5): they can
 * think for minutes before their first visible token, so they get a longer first-output deadline.
 */
export const DEFAULT_MODEL_DEADLINES: ModelDeadline[] = [
  { model: 'o1*', firstOutputMs: 5 * MIN },
  { model: 'o3*', firstOutputMs: 5 * MIN },
  { model: 'o4*', firstOutputMs: 5 * MIN },
  { model: 'gpt-5*', firstOutputMs: 5 * MIN },
];

export const streamSettings = {
  'streams.firstOutputTimeoutMs': int({
    group: 'streams',
    resilience: true,
    label: 'Time to first output',
    description:
      'A stream that produces no model output (text, a tool call, or thinking progress) this long after the request was sent is abandoned and the request fails over, before anything reached the client. Pings and metadata do not count. 0 turns it off.',
    default: 60 * SEC,
    min: 0,
    max: HOUR,
    unit: 'ms',
    env: envNames('STREAM_FIRST_OUTPUT_TIMEOUT_MS'),
    connectionOverride: 'timeouts.firstOutputMs',
  }),
  'streams.contentStallTimeoutMs': int({
    group: 'streams',
    resilience: true,
    label: 'Content stall timeout',
    description:
      'Longest time a stream may go without model output while it keeps sending bytes. Heartbeats, pings and empty deltas do not reset it; thinking deltas do. A stall is recorded on the connection but cools it only when "Cool connections on stream stalls" is on. 0 turns it off.',
    default: 120 * SEC,
    min: 0,
    max: HOUR,
    unit: 'ms',
    env: envNames('STREAM_CONTENT_STALL_TIMEOUT_MS'),
    connectionOverride: 'timeouts.contentStallMs',
  }),
  'streams.attemptDeadlineMs': int({
    group: 'streams',
    resilience: true,
    label: 'Hard attempt deadline',
    description: 'No streamed upstream attempt runs longer than this, however well it is doing. 0 turns it off.',
    default: 30 * MIN,
    min: 0,
    max: 24 * HOUR,
    unit: 'ms',
    env: envNames('STREAM_ATTEMPT_DEADLINE_MS'),
    connectionOverride: 'timeouts.attemptDeadlineMs',
  }),
  'streams.holdBackBytes': int({
    group: 'streams',
    resilience: true,
    label: 'Hold-back budget',
    description:
      'Before its first model output a stream is held back (so an error, a stall or an empty answer can still fail over invisibly); once this many bytes are held without output, they are sent to the client anyway.',
    default: 64 * 1024,
    min: 1024,
    max: 16 * 1024 * 1024,
    unit: 'bytes',
  }),
  'streams.modelDeadlines': json<ModelDeadline[]>({
    group: 'streams',
    resilience: true,
    label: 'Deadlines per model',
    description:
      'Deadlines for models that match a pattern (the upstream model id, with or without its provider prefix; * and ?). A connection\'s own timeouts win over these. The default gives OpenAI reasoning models, whose thinking is not streamed, five minutes to their first output.',
    default: DEFAULT_MODEL_DEADLINES,
    schema: z.array(modelDeadlineSchema).max(200),
    shape: 'list of { model, firstOutputMs?, contentStallMs?, attemptDeadlineMs? }',
  }),
  'streamRecovery.enabled': bool({
    group: 'streams',
    resilience: true,
    label: 'Reopen stalled streams on the same connection',
    description:
      'When a stream is abandoned by a watchdog before anything reached the client, try it once more on the same connection before failing over (R-TW-10). The env var only sets the default; a saved value wins.',
    default: false,
    env: ['STREAM_RECOVERY_ENABLED'],
  }),
  'streamRecovery.midstream.enabled': bool({
    group: 'streams',
    resilience: true,
    label: 'Continue broken answers on another target',
    description:
      'When a stream the client is already reading is cut, stalls or errors inside its text, continue the answer on the next eligible target and splice only the continuation onto the client\'s stream. Inside a tool call, or when no target can continue, the stream ends with an error event. The env var only sets the default; a saved value wins.',
    default: false,
    env: ['STREAM_RECOVERY_MIDSTREAM_ENABLED'],
  }),
  'streamRecovery.throughputWatchdog.enabled': bool({
    group: 'streams',
    resilience: true,
    label: 'Slow-stream throughput watchdog',
    description:
      'Abandon a stream that keeps sending chunks but whose text arrives slower than the minimum rate over a full window after the warm-up. Suspended while the model reasons or writes a tool call. The env var only sets the default; a saved value wins.',
    default: false,
    env: ['STREAM_THROUGHPUT_WATCHDOG_ENABLED'],
  }),
  'streamRecovery.throughputWatchdog.warmupMs': int({
    group: 'streams',
    resilience: true,
    label: 'Throughput: warm-up',
    description: 'Time after the first output during which the throughput watchdog does not judge.',
    default: 15 * SEC,
    min: 0,
    max: 10 * MIN,
    unit: 'ms',
  }),
  'streamRecovery.throughputWatchdog.windowMs': int({
    group: 'streams',
    resilience: true,
    label: 'Throughput: window',
    description: 'The rolling window over which the text rate is measured; a full window must pass after the warm-up (and after each reasoning or tool-call phase) before a judgement.',
    default: 30 * SEC,
    min: 1 * SEC,
    max: 10 * MIN,
    unit: 'ms',
  }),
  'streamRecovery.throughputWatchdog.minBytesPerSecond': int({
    group: 'streams',
    resilience: true,
    label: 'Throughput: minimum rate',
    description: 'Text slower than this (characters of text deltas per second over the window) is too slow. Empty and usage-only events count for nothing.',
    default: 4,
    min: 1,
    max: 100_000,
    unit: 'count',
  }),
  'streamRecovery.throughputWatchdog.minMeasurableBytes': int({
    group: 'streams',
    resilience: true,
    label: 'Throughput: minimum measurable traffic',
    description:
      'A window in which the upstream sent fewer bytes than this (any frames, heartbeats included) is not judged: a silent stream is the content stall timeout\'s to end.',
    default: 1,
    min: 1,
    max: 1024 * 1024,
    unit: 'bytes',
  }),
} as const;
