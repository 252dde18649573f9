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
    label: 'Wait out short pauses',
    description:
      'When every connection of a combo (or of a plain model, see below) is held back by a short pause that ends by itself (a cooldown, a lockout or an open breaker), wait for the first to end and send again instead of answering 429 or 503. Never for a used-up quota, bad credentials or an unknown model. A combo can turn this off in its own options.',
    default: true,
  }),
  'cooldownWait.plainModels': bool({
    group: 'combos',
    resilience: true,
    label: 'Also wait for plain models',
    description:
      'Requests for a model (not a combo) wait out short pauses too, with the same limits below. Only while "Wait out short pauses" is on.',
    default: true,
    env: ['SWITCHYARD_PLAIN_MODEL_COOLDOWN_WAIT'],
  }),
  'comboCooldownWait.maxWaitMs': int({
    group: 'combos',
    resilience: true,
    label: 'Longest single wait',
    description: 'A pause that ends later than this is not waited for; the agent gets a 429 (or 503) saying when to retry instead.',
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
      'Context window (in tokens) per model or start of a model name, over the built-in list. Used by combos that pick by context size, and after "prompt is too long" (only a larger window is tried next).',
    default: {},
    schema: contextWindowsSchema,
    shape: '{ "model-or-prefix": tokens }, e.g. { "my-local-model": 32768 }',
  }),
  'combos.modelPrices': json<Record<string, { input: number; output: number }>>({
    group: 'combos',
    label: 'Model prices',
    description: 'US dollars per million input and output tokens, per model or start of a model name, over the built-in list (used by combos that pick by cost, and by auto).',
    default: {},
    schema: modelPricesSchema,
    shape: '{ "model-or-prefix": { "input": usd, "output": usd } } per million tokens',
  }),
  'combos.autoWeights': json<AutoWeights>({
    group: 'combos',
    label: 'Auto strategy weights',
    description:
      'How much each signal counts when an auto combo scores its connections (0 to 100 each): health (recent cooldowns), speed, error rate, rate-limit room left and cost. Signals left out keep their default weight (3, 2, 2, 2, 1).',
    default: {},
    schema: autoWeightsSchema,
    shape: '{ health?, latency?, errorRate?, headroom?, cost? } (0-100 each)',
  }),
} as const;
