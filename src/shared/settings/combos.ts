// Combo settings: the cooldown-aware waits (SPEC §4.4, R-SQ-16..25) and the tables some strategies
// read (context windows, prices, the auto strategy's weights). The tables override the engine's
// built-in model catalog entry by entry; an empty table keeps the built-in values.
import { z } from 'zod';
import { bool, int, json } from './define';

const SEC = 1_000;
const MIN = 60 * SEC;

const modelKey = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$/, 'must be a model id or id prefix');

export const contextWindowsSchema = z
  .record(modelKey, z.number().int().min(1).max(100_000_000))
  .refine((r) => Object.keys(r).length <= 1_000, { message: 'lists more than 1000 models' });

const perMillion = z.number().min(0).max(100_000);
export const modelPricesSchema = z
  .record(modelKey, z.object({ input: perMillion, output: perMillion }).strict())
  .refine((r) => Object.keys(r).length <= 1_000, { message: 'lists more than 1000 models' });

const weight = z.number().int().min(0).max(100);
export const autoWeightsSchema = z
  .object({
    health: weight.optional(),
    latency: weight.optional(),
    errorRate: weight.optional(),
    headroom: weight.optional(),
    cost: weight.optional(),
  })
  .strict();
export type AutoWeights = z.infer<typeof autoWeightsSchema>;

export const comboSettings = {
  'comboCooldownWait.enabled': bool({
    group: 'combos',
    resilience: true,
    label: 'Wait out short cooldowns',
    description:
      'When every target of a combo (or of a plain model, see below) is held back by a short, self-lifting cooldown, lockout or open breaker, wait for the earliest one and send again instead of answering 429/503. Never waits on quota exhaustion, credential or not-found errors. A combo opts out with options.comboCooldownWaitEnabled = false.',
    default: true,
  }),
  'cooldownWait.plainModels': bool({
    group: 'combos',
    resilience: true,
    label: 'Also wait for plain models',
    description:
      'Requests for a model (not a combo) wait out short cooldowns too, with the same limits below. Only while "Wait out short cooldowns" is on.',
    default: true,
    env: ['SWITCHYARD_PLAIN_MODEL_COOLDOWN_WAIT'],
  }),
  'comboCooldownWait.maxWaitMs': int({
    group: 'combos',
    resilience: true,
    label: 'Longest single wait',
    description: 'A cooldown that lifts later than this is not waited for; the client gets 429 (or 503) with Retry-After instead.',
    default: 30 * SEC,
    min: 1,
    max: 10 * MIN,
    unit: 'ms',
  }),
  'comboCooldownWait.maxAttempts': int({
    group: 'combos',
    resilience: true,
    label: 'Waits per request',
    description: 'How many times one request may wait and send again.',
    default: 2,
    min: 1,
    max: 10,
    unit: 'count',
  }),
  'comboCooldownWait.budgetMs': int({
    group: 'combos',
    resilience: true,
    label: 'Wait budget per request',
    description: 'A wait is taken only if the request, counted from its arrival, is still within this budget when the wait ends.',
    default: 60 * SEC,
    min: 1,
    max: 30 * MIN,
    unit: 'ms',
  }),
  'combos.contextWindows': json<Record<string, number>>({
    group: 'combos',
    label: 'Context windows',
    description:
      'Context window (tokens) per model or model-id prefix, over the built-in catalog. Used by context-optimized combos and by the context-length fallback (only a larger window is tried after "prompt is too long").',
    default: {},
    schema: contextWindowsSchema,
    shape: '{ "model-or-prefix": tokens }, e.g. { "my-local-model": 32768 }',
  }),
  'combos.modelPrices': json<Record<string, { input: number; output: number }>>({
    group: 'combos',
    label: 'Model prices',
    description: 'USD per million input and output tokens per model or prefix, over the built-in catalog (cost-optimized and auto combos).',
    default: {},
    schema: modelPricesSchema,
    shape: '{ "model-or-prefix": { "input": usd, "output": usd } } per million tokens',
  }),
  'combos.autoWeights': json<AutoWeights>({
    group: 'combos',
    label: 'Auto strategy weights',
    description:
      'How much each signal counts in the auto strategy\'s score (0-100 each): health (cooldown history), latency, error rate, rate-limit headroom and cost. Omitted signals keep their default weight (3, 2, 2, 2, 1).',
    default: {},
    schema: autoWeightsSchema,
    shape: '{ health?, latency?, errorRate?, headroom?, cost? } (0-100 each)',
  }),
} as const;
