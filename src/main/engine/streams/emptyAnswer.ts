// When an answer with no model output is a failure, for streams and non-stream answers alike. A
// stream that ends properly with nothing in it is an empty answer (it fails over); so is a complete
// non-stream answer with no text, no tool call and no refusal. Reasoning alone is not output
// (R-CC-31). The exceptions are the stop reasons that say the emptiness was the request's own doing
// or a deliberate answer: its token limit or stop sequence was reached first (another target would
// do the same, at the price of another call), a filter or refusal, or a turn that ended to run a
// tool.
import { jsonOutcome } from './jsonOutcome';
import type { ApiShape } from './shape';

/** Gemini finish reasons that mean a filter stopped the answer (codecs/geminiStops.ts reads them as a refusal). */
export const GEMINI_FILTERED: ReadonlySet<string> = new Set([
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/** Stop reasons that make an answer without output a legitimate one. */
export const ASKED_FOR_EMPTY: ReadonlySet<string> = new Set([
  'max_tokens',
  'length',
  'stop_sequence',
  'max_output_tokens',
  'incomplete',
  'content_filter',
  'refusal',
  'tool_use',
  'tool_calls',
  'pause_turn',
  // Gemini's words: its token limit, and the filters and blocks that withhold an answer on purpose
  // (a finishReason, or a prompt's blockReason).
  'MAX_TOKENS',
  ...GEMINI_FILTERED,
  'OTHER',
]);

/** Whether an answer without output that stopped for `stopReason` was asked for. */
export const askedForEmpty = (stopReason: string | null): boolean => stopReason !== null && ASKED_FOR_EMPTY.has(stopReason);

/** The body is a completion of this shape at all (a bare `{}` or another object is left alone). */
function looksLikeCompletion(shape: ApiShape, j: Record<string, unknown>): boolean {
  if (shape === 'anthropic-messages') return Array.isArray(j.content);
  if (shape === 'openai-chat') return Array.isArray(j.choices);
  if (shape === 'gemini') return Array.isArray(j.candidates) || (typeof j.promptFeedback === 'object' && j.promptFeedback !== null);
  return Array.isArray(j.output);
}

/**
 * Whether a complete non-stream answer is an empty one: a completion of its shape with no error,
 * no output, not asked for. A Responses object counts only once `completed` (a queued or running
 * one has no output yet by design).
 */
export function emptyJsonAnswer(shape: ApiShape, body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body) || !looksLikeCompletion(shape, body as Record<string, unknown>)) return false;
  const o = jsonOutcome(shape, body);
  if (o.error || o.output || askedForEmpty(o.stopReason)) return false;
  return shape !== 'openai-responses' || o.stopReason === 'completed';
}
