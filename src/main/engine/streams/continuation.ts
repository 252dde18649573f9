// The request that continues a broken answer on another target (mid-stream recovery), written in
// the inbound protocol's shape so it goes through the same native or translated path as any
// request: the client's request plus the answer so far, either
// - as an assistant prefill (the final assistant turn the model continues exactly), which only
//   Anthropic Messages takes, and only for a turn without extended thinking; trailing whitespace is
//   left out, since Anthropic refuses a prefill that ends in it (splice.ts puts it back); or
// - as a "continue" turn: the answer so far as an assistant message (a Gemini `model` turn), then a
//   user message asking to continue exactly where it stopped, for every other target (and for a
//   target that refused the prefill with a 400).
// A final assistant turn the client itself sent (its own prefill) is extended rather than repeated.
import type { ApiShape } from './shape';
import type { ContinuationMode } from './splice';

export const CONTINUE_PROMPT =
  'Your previous reply was cut off mid-answer. Continue it exactly where it stopped: do not repeat anything already written, do not start over, and add no preamble or commentary.';

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the request asks for extended thinking / reasoning (then Anthropic takes no prefill). */
export function wantsThinking(shape: ApiShape, json: Record<string, unknown>): boolean {
  if (shape === 'anthropic-messages') {
    const t = json.thinking;
    if (isObject(t) && t.type !== 'disabled') return true;
    const oc = json.output_config;
    return isObject(oc) && typeof oc.effort === 'string' && !(isObject(t) && t.type === 'disabled');
  }
  if (shape === 'openai-chat') return typeof json.reasoning_effort === 'string' && json.reasoning_effort !== 'none';
  if (shape === 'gemini') {
    const tc = isObject(json.generationConfig) ? json.generationConfig.thinkingConfig : null;
    return isObject(tc) && (tc.includeThoughts === true || (typeof tc.thinkingBudget === 'number' && tc.thinkingBudget !== 0) || typeof tc.thinkingLevel === 'string');
  }
  const r = json.reasoning;
  return isObject(r) && typeof r.effort === 'string' && r.effort !== 'none';
}

/** Prefill needs an Anthropic Messages target and a turn without thinking. */
export function prefillFits(inbound: ApiShape, target: ApiShape, json: Record<string, unknown>): boolean {
  return target === 'anthropic-messages' && !wantsThinking(inbound, json);
}

function anthropicText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  let out = '';
  for (const b of content) {
    if (!isObject(b) || b.type !== 'text' || typeof b.text !== 'string') return null;
    out += b.text;
  }
  return out;
}

/** The answer so far appended to a message list whose final turn may already be the client's prefill. */
function withAssistant(messages: unknown, soFar: string, read: (content: unknown) => string | null): any[] {
  const list = Array.isArray(messages) ? [...messages] : [];
  const last = list[list.length - 1];
  if (isObject(last) && last.role === 'assistant') {
    const own = read(last.content);
    if (own !== null) {
      list[list.length - 1] = { ...last, content: own + soFar };
      return list;
    }
  }
  list.push({ role: 'assistant', content: soFar });
  return list;
}

/**
 * The inbound request, extended with the answer so far for a continuation in `mode`. `soFar` is
 * the visible text the client already has.
 */
export function continuationRequest(shape: ApiShape, json: Record<string, unknown>, soFar: string, mode: ContinuationMode): Record<string, unknown> {
  const text = mode === 'prefill' ? soFar.trimEnd() : soFar;
  if (shape === 'anthropic-messages') {
    const messages = withAssistant(json.messages, text, anthropicText);
    if (mode === 'prefill') {
      const last = messages[messages.length - 1];
      if (isObject(last) && typeof last.content === 'string') last.content = last.content.trimEnd();
    } else messages.push({ role: 'user', content: CONTINUE_PROMPT });
    return { ...json, messages };
  }
  if (shape === 'openai-chat') {
    const messages = withAssistant(json.messages, text, (c) => (typeof c === 'string' ? c : null));
    if (mode === 'continue') messages.push({ role: 'user', content: CONTINUE_PROMPT });
    return { ...json, messages };
  }
  if (shape === 'gemini') {
    // The answer so far as a model turn (extending the client's own final model turn), then the ask.
    const contents: any[] = Array.isArray(json.contents) ? [...json.contents] : [];
    const last = contents[contents.length - 1];
    if (isObject(last) && last.role === 'model' && Array.isArray(last.parts) && last.parts.every((p: unknown) => isObject(p) && typeof p.text === 'string' && p.thought !== true)) {
      contents[contents.length - 1] = { ...last, parts: [...last.parts, { text }] };
    } else contents.push({ role: 'model', parts: [{ text }] });
    if (mode === 'continue') contents.push({ role: 'user', parts: [{ text: CONTINUE_PROMPT }] });
    return { ...json, contents };
  }
  const input: any[] = typeof json.input === 'string' ? [{ type: 'message', role: 'user', content: json.input }] : Array.isArray(json.input) ? [...json.input] : [];
  input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
  if (mode === 'continue') input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: CONTINUE_PROMPT }] });
  return { ...json, input };
}
