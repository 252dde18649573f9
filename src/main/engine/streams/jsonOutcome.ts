// The non-stream counterpart of frame classification: does a complete JSON response hold model
// output, why did it stop, and is it an error wearing a 200.
import { readGeminiErrorObject } from './googleErrors';
import { errorFromObject, type InbandError } from './errorStatus';
import { geminiUsage, type FrameUsage } from './frame';
import type { ApiShape } from './shape';

export interface JsonOutcome {
  /** Visible text or a tool call. */
  output: boolean;
  /** Reasoning / thinking content (not output, R-CC-31). */
  reasoning: boolean;
  /** The stop reason in the upstream's words (`end_turn`, `stop`, `completed`, `max_output_tokens`, ...). */
  stopReason: string | null;
  /** An error body (some gateways answer 200 with `{ error }`), or a failed Responses object. */
  error: InbandError | null;
  usage: FrameUsage | null;
}

const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function jsonOutcome(shape: ApiShape, body: unknown): JsonOutcome {
  const out: JsonOutcome = { output: false, reasoning: false, stopReason: null, error: null, usage: null };
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    out.error = { status: 502, type: '', code: null, message: 'the upstream answered with a body that is not a JSON object' };
    return out;
  }
  const j = body as any;
  if (j.type === 'error' || (j.error && typeof j.error === 'object' && !('output' in j))) {
    out.error = shape === 'gemini' && j.error ? readGeminiErrorObject(j.error, 500) : errorFromObject(j.error ?? j);
    return out;
  }
  if (shape === 'anthropic-messages') {
    for (const b of Array.isArray(j.content) ? j.content : []) {
      if (b?.type === 'text' && nonEmpty(b.text)) out.output = true;
      else if (b?.type === 'tool_use' || b?.type === 'server_tool_use') out.output = true;
      else if (b?.type === 'thinking' || b?.type === 'redacted_thinking') out.reasoning = true;
    }
    out.stopReason = typeof j.stop_reason === 'string' ? j.stop_reason : null;
    const u = j.usage;
    if (u) {
      const input = num(u.input_tokens);
      const read = num(u.cache_read_input_tokens);
      const write = num(u.cache_creation_input_tokens);
      out.usage = { inputTokens: input === null ? null : input + (read ?? 0) + (write ?? 0), outputTokens: num(u.output_tokens) };
      if (read !== null) out.usage.cacheReadTokens = read;
      if (write !== null) out.usage.cacheWriteTokens = write;
    }
    return out;
  }
  if (shape === 'openai-chat') {
    const c = Array.isArray(j.choices) ? j.choices[0] : null;
    const m = c?.message;
    if (m) {
      if (nonEmpty(m.content) || nonEmpty(m.refusal)) out.output = true;
      if (Array.isArray(m.content) && m.content.some((p: any) => nonEmpty(p?.text))) out.output = true;
      if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) out.output = true;
      if (nonEmpty(m.reasoning_content) || nonEmpty(m.reasoning)) out.reasoning = true;
    }
    out.stopReason = typeof c?.finish_reason === 'string' ? c.finish_reason : null;
    if (j.usage) {
      out.usage = { inputTokens: num(j.usage.prompt_tokens), outputTokens: num(j.usage.completion_tokens) };
      const read = num(j.usage.prompt_tokens_details?.cached_tokens);
      if (read !== null) out.usage.cacheReadTokens = read;
    }
    return out;
  }
  if (shape === 'gemini') {
    const c = Array.isArray(j.candidates) ? j.candidates[0] : null;
    for (const p of Array.isArray(c?.content?.parts) ? c.content.parts : []) {
      if (p?.thought === true) out.reasoning = true;
      else if (nonEmpty(p?.text) || (p?.functionCall && typeof p.functionCall === 'object')) out.output = true;
    }
    out.stopReason = typeof c?.finishReason === 'string' ? c.finishReason : typeof j.promptFeedback?.blockReason === 'string' ? j.promptFeedback.blockReason : null;
    out.usage = geminiUsage(j.usageMetadata);
    return out;
  }
  for (const item of Array.isArray(j.output) ? j.output : []) {
    if (item?.type === 'message') {
      for (const p of Array.isArray(item.content) ? item.content : []) {
        if ((p?.type === 'output_text' && nonEmpty(p.text)) || (p?.type === 'refusal' && nonEmpty(p.refusal))) out.output = true;
      }
    } else if (item?.type === 'reasoning') out.reasoning = true;
    else if (typeof item?.type === 'string' && item.type.endsWith('_call')) out.output = true;
  }
  if (j.status === 'failed' || (j.error && typeof j.error === 'object')) out.error = errorFromObject(j.error ?? { message: 'the response failed' });
  out.stopReason =
    j.status === 'incomplete' ? (j.incomplete_details?.reason ?? 'incomplete') : typeof j.status === 'string' ? j.status : null;
  if (j.usage) {
    out.usage = { inputTokens: num(j.usage.input_tokens), outputTokens: num(j.usage.output_tokens) };
    const read = num(j.usage.input_tokens_details?.cached_tokens);
    if (read !== null) out.usage.cacheReadTokens = read;
  }
  return out;
}
