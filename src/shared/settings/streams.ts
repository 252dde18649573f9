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
      'A stream with no model output (text, a tool call or thinking) this long after the request was sent is abandoned and the request moves to the next connection, before anything reached the agent. Pings do not count. 0 turns it off.',
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
    label: 'Longest stall without output',
    description:
      'Longest a stream may go without model output while it keeps sending bytes (pings and empty pieces do not count; thinking does). A stall is noted on the connection, and cools it only when "Cool a connection whose stream stalls" is on. 0 turns it off.',
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
    label: 'Longest streamed attempt',
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
    label: 'Most held back before the first output',
    description:
      'Until its first model output a stream is held back, so an error, a stall or an empty answer can still move to another connection unseen; once this much is held without output, it is sent to the agent anyway.',
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
      'Deadlines for models whose name matches a pattern (with * and ?). A connection\'s own time limits win over these. The default gives OpenAI reasoning models, whose thinking is not streamed, five minutes to their first output.',
    default: DEFAULT_MODEL_DEADLINES,
    schema: z.array(modelDeadlineSchema).max(200),
    shape: 'list of { model, firstOutputMs?, contentStallMs?, attemptDeadlineMs? }',
  }),
  'streamRecovery.enabled': bool({
    group: 'streams',
    resilience: true,
    label: 'Reopen stalled streams on the same connection',
    description:
      'When a stream is abandoned for being too slow or stalled before anything reached the agent, try it once more on the same connection before moving on.',
    default: false,
    env: ['STREAM_RECOVERY_ENABLED'],
  }),
  'streamRecovery.midstream.enabled': bool({
    group: 'streams',
    resilience: true,
    label: 'Continue broken answers on another target',
    description:
      'When a stream the agent is already reading is cut, stalls or fails inside its text, continue the answer on the next usable connection and add only the continuation to the agent\'s stream. Inside a tool call, or when nothing can continue it, the stream ends with an error.',
    default: false,
    env: ['STREAM_RECOVERY_MIDSTREAM_ENABLED'],
  }),
  'streamRecovery.throughputWatchdog.enabled': bool({
    group: 'streams',
    resilience: true,
    label: 'Slow-stream throughput watchdog',
    description:
      'Abandon a stream that keeps sending but whose text arrives slower than the minimum rate over a full window after the warm-up. Paused while the model thinks or writes a tool call.',
    default: false,
    env: ['STREAM_THROUGHPUT_WATCHDOG_ENABLED'],
  }),
  'streamRecovery.throughputWatchdog.warmupMs': int({
    group: 'streams',
    resilience: true,
    label: 'Slow-stream watchdog: warm-up',
    description: 'Time after the first output during which the slow-stream watchdog does not judge.',
    default: 15 * SEC,
    min: 0,
    max: 10 * MIN,
    unit: 'ms',
  }),
  'streamRecovery.throughputWatchdog.windowMs': int({
    group: 'streams',
    resilience: true,
    label: 'Slow-stream watchdog: measuring window',
    description: 'The stretch over which the text rate is measured; a full one must pass after the warm-up (and after each thinking or tool-call phase) before a judgement.',
    default: 30 * SEC,
    min: 1 * SEC,
    max: 10 * MIN,
    unit: 'ms',
  }),
  'streamRecovery.throughputWatchdog.minBytesPerSecond': int({
    group: 'streams',
    resilience: true,
    label: 'Slow-stream watchdog: slowest acceptable text',
    description: 'Text slower than this many characters per second over the window is too slow. Empty pieces count for nothing.',
    default: 4,
    min: 1,
    max: 100_000,
    unit: 'count',
  }),
  'streamRecovery.throughputWatchdog.minMeasurableBytes': int({
    group: 'streams',
    resilience: true,
    label: 'Slow-stream watchdog: least traffic to judge',
    description:
      'A window in which the provider sent less than this (anything, pings included) is not judged: a silent stream is for the stall limit to end.',
    default: 1,
    min: 1,
    max: 1024 * 1024,
    unit: 'bytes',
  }),
} as const;
