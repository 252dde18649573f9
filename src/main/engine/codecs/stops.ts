// Stop / finish reasons and usage between the protocols, through the neutral model.
import type { IrStop, IrUsage } from './ir';

export function stopFromAnthropic(reason: unknown): IrStop {
  switch (reason) {
    case 'max_tokens':
      return 'max_tokens';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'tool_use':
      return 'tool_use';
    case 'refusal':
      return 'refusal';
    case 'pause_turn':
      return 'pause_turn';
    case 'model_context_window_exceeded':
      return 'context_window';
    default:
      return 'end_turn';
  }
}

export function stopFromChat(reason: unknown): IrStop {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Some servers (Ollama, Gemini's OpenAI layer) say `stop` after tool calls: the calls decide. */
export function stopToAnthropic(stop: IrStop, hasToolCalls: boolean): string {
  if (hasToolCalls && (stop === 'end_turn' || stop === 'tool_use')) return 'tool_use';
  switch (stop) {
    case 'context_window':
      return 'model_context_window_exceeded';
    case 'tool_use':
      return 'end_turn';
    default:
      return stop;
  }
}

export function stopToChat(stop: IrStop, hasToolCalls: boolean): string {
  switch (stop) {
    case 'max_tokens':
    case 'context_window':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}

/** Responses: status and incomplete_details for a stop. */
export function stopToResponses(stop: IrStop): { status: 'completed' | 'incomplete'; reason: string | null } {
  if (stop === 'max_tokens' || stop === 'context_window') return { status: 'incomplete', reason: 'max_output_tokens' };
  if (stop === 'refusal') return { status: 'incomplete', reason: 'content_filter' };
  return { status: 'completed', reason: null };
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function usageFromAnthropic(u: any): Partial<IrUsage> {
  if (!u || typeof u !== 'object') return {};
  const input = num(u.input_tokens);
  const read = num(u.cache_read_input_tokens);
  const write = num(u.cache_creation_input_tokens);
  return {
    input: input === null ? null : input + (read ?? 0) + (write ?? 0),
    output: num(u.output_tokens),
    cachedInput: read,
    cacheWrite: write,
  };
}

export function usageFromChat(u: any): Partial<IrUsage> {
  if (!u || typeof u !== 'object') return {};
  return {
    input: num(u.prompt_tokens),
    output: num(u.completion_tokens),
    cachedInput: num(u.prompt_tokens_details?.cached_tokens),
    reasoning: num(u.completion_tokens_details?.reasoning_tokens),
  };
}

export function usageToAnthropic(u: IrUsage): Record<string, number> {
  const cached = u.cachedInput ?? 0;
  const write = u.cacheWrite ?? 0;
  return {
    input_tokens: Math.max(0, (u.input ?? 0) - cached - write),
    output_tokens: u.output ?? 0,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: cached,
  };
}

export function usageToChat(u: IrUsage): Record<string, unknown> {
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: u.cachedInput ?? 0 },
    completion_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
  };
}

export function usageToResponses(u: IrUsage): Record<string, unknown> {
  const input = u.input ?? 0;
  const output = u.output ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cachedInput ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: input + output,
  };
}
