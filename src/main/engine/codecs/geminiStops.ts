// Gemini finish reasons and usage metadata to and from the neutral model (one table, documented in
// docs/decisions/gemini-24-response-codec.md). Kept apart from the reader and writer so a native
// Gemini stream tracker can use it without importing either.
import { GEMINI_FILTERED } from '../streams/emptyAnswer';
import type { FrameUsage } from '../streams/frame';
import type { IrStop, IrUsage } from './ir';

/**
 * A Gemini `finishReason` (or `promptFeedback.blockReason`) as a neutral stop. Gemini says STOP
 * after function calls too: the calls decide (`hasToolCalls`). MALFORMED_FUNCTION_CALL and the other
 * broken-call reasons come with no usable content: they end the turn, and an answer with nothing in
 * it is then handled as an empty answer (it fails over) rather than shown as a stop reason.
 */
export function stopFromGemini(reason: unknown, hasToolCalls: boolean): IrStop {
  if (reason === 'MAX_TOKENS') return 'max_tokens';
  if (typeof reason === 'string' && GEMINI_FILTERED.has(reason)) return 'refusal';
  return hasToolCalls ? 'tool_use' : 'end_turn';
}

/** A neutral stop as a Gemini `finishReason`. */
export function stopToGemini(stop: IrStop): 'STOP' | 'MAX_TOKENS' | 'SAFETY' {
  switch (stop) {
    case 'max_tokens':
    case 'context_window':
      return 'MAX_TOKENS';
    case 'refusal':
      return 'SAFETY';
    default:
      return 'STOP';
  }
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * Gemini usage → neutral. The prompt count already includes cached content; tool-use prompt tokens
 * (results of tool executions fed back to the model) are prompt tokens too. Gemini counts thoughts
 * apart from the candidates; the neutral output includes reasoning (as Chat and Anthropic count it).
 */
export function usageFromGemini(u: any): Partial<IrUsage> {
  if (!u || typeof u !== 'object') return {};
  const prompt = num(u.promptTokenCount);
  const toolPrompt = num(u.toolUsePromptTokenCount);
  const candidates = num(u.candidatesTokenCount);
  const thoughts = num(u.thoughtsTokenCount);
  const out: Partial<IrUsage> = {};
  if (prompt !== null || toolPrompt !== null) out.input = (prompt ?? 0) + (toolPrompt ?? 0);
  if (candidates !== null || thoughts !== null) out.output = (candidates ?? 0) + (thoughts ?? 0);
  if (thoughts !== null) out.reasoning = thoughts;
  const cached = num(u.cachedContentTokenCount);
  if (cached !== null) out.cachedInput = cached;
  return out;
}

/** Neutral usage → Gemini `usageMetadata` (thoughts and cached content only when there are some). */
export function usageToGemini(u: IrUsage): Record<string, number> {
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  const thoughts = Math.min(u.reasoning ?? 0, output);
  const out: Record<string, number> = { promptTokenCount: input, candidatesTokenCount: output - thoughts };
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  if ((u.cachedInput ?? 0) > 0) out.cachedContentTokenCount = u.cachedInput!;
  out.totalTokenCount = input + output;
  return out;
}

/** A fast-path frame's usage (no thoughts count: such chunks take the slow path) as neutral usage. */
export function usageOfFrame(u: FrameUsage): Partial<IrUsage> {
  const out: Partial<IrUsage> = {};
  if (u.inputTokens !== null) out.input = u.inputTokens;
  if (u.outputTokens !== null) out.output = u.outputTokens;
  if (u.cacheReadTokens !== undefined) out.cachedInput = u.cacheReadTokens;
  return out;
}
