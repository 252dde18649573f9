// One SSE frame of an upstream stream, typed and classified for its API shape: is it model output
// (text, a tool call starting or its arguments), reasoning progress, metadata, the protocol's
// terminal event, an in-band error, or malformed. The stream-resilience logic reads the flags; the
// codecs read `json` and re-emit; native passthrough forwards the original bytes and uses frames
// only to decide.
//
// The hot frames — Anthropic text / thinking / tool-argument deltas and Chat content deltas, which
// are nearly all of a stream — are classified from their text without JSON.parse (their shape is
// fixed: a cheap prefix and substring check, then the one string is read out). Their `json` is
// parsed only when something asks for it (a translator does; a native passthrough never does),
// so a native stream pays for parsing only its few other frames.
import type { InbandError } from './errorStatus';
import { errorFromObject } from './errorStatus';
import type { ApiShape } from './shape';
import { readGeminiErrorObject } from './googleErrors';

/**
 * The frame's primary class, by precedence error > malformed > output > reasoning > terminal >
 * meta. A frame can be several things at once (a Chat chunk with text and a finish_reason is output
 * and terminal): read the flags for that, `kind` is for switching.
 */
export type FrameKind = 'error' | 'malformed' | 'output' | 'reasoning' | 'terminal' | 'meta' | 'comment';

export interface FrameUsage {
  /** Prompt tokens including cache reads and writes (Anthropic's three input counters summed). */
  inputTokens: number | null;
  outputTokens: number | null;
  /** The part of `inputTokens` read from the provider's prompt cache; absent when the frame does not say. */
  cacheReadTokens?: number;
  /** The part of `inputTokens` written to the prompt cache (Anthropic); absent when the frame does not say. */
  cacheWriteTokens?: number;
}

export interface Frame {
  readonly shape: ApiShape;
  /** The SSE `event:` field; null when the frame had none (Chat chunks). */
  readonly event: string | null;
  /** The SSE data as received (several `data:` lines joined by \n); '' for a comment. */
  readonly data: string;
  /** The text of a comment line (`: keep-alive`), null for events. */
  readonly comment: string | null;
  /** The parsed data (parsed on first read); null for comments, `[DONE]` and malformed data. */
  readonly json: any;
  /**
   * The text of a frame read on the fast path (a text delta and nothing else), so a reader that
   * needs only the text skips the JSON; null otherwise (read `json`).
   */
  readonly deltaText: string | null;
  /** `type` of the JSON (Anthropic, Responses); 'chunk' or '[DONE]' for Chat; '' otherwise. */
  readonly type: string;
  readonly kind: FrameKind;
  /** Characters of visible text (text, refusal) this frame adds. */
  readonly textChars: number;
  /** A tool call starts in this frame. */
  readonly toolStart: boolean;
  /** Characters of tool-call arguments this frame adds. */
  readonly toolArgChars: number;
  /**
   * Reasoning progress (R-CC-30): Claude thinking deltas even when empty, a non-empty
   * signature, Responses reasoning items and summary/text deltas, Chat `reasoning_content` /
   * `reasoning` deltas (an empty string counts, R-CC-33). Not model output (R-CC-31).
   */
  readonly reasoning: boolean;
  /** Model output: text, a tool call start, or tool-call arguments. */
  readonly output: boolean;
  /** The protocol's terminal event: `message_stop`; `[DONE]` or a `finish_reason`; `response.completed` / `.incomplete` / `.failed`. */
  readonly terminal: boolean;
  /** The stop / finish reason this frame carries, in the upstream's words. */
  readonly stopReason: string | null;
  /** An in-band error (Anthropic `event: error`, a Chat chunk with `error`, Responses `error` / `response.failed`). */
  readonly error: InbandError | null;
  /** Token usage this frame reports (a later frame's value replaces an earlier one). */
  readonly usage: FrameUsage | null;
}

interface Draft {
  type: string;
  textChars: number;
  toolStart: boolean;
  toolArgChars: number;
  reasoning: boolean;
  terminal: boolean;
  stopReason: string | null;
  error: InbandError | null;
  usage: FrameUsage | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const len = (v: unknown): number => (typeof v === 'string' ? v.length : 0);

function anthropicUsage(u: any): FrameUsage | null {
  if (!u || typeof u !== 'object') return null;
  const input = num(u.input_tokens);
  const read = num(u.cache_read_input_tokens);
  const write = num(u.cache_creation_input_tokens);
  const out: FrameUsage = { inputTokens: input === null ? null : input + (read ?? 0) + (write ?? 0), outputTokens: num(u.output_tokens) };
  if (read !== null) out.cacheReadTokens = read;
  if (write !== null) out.cacheWriteTokens = write;
  return out;
}

function openaiUsage(u: any): FrameUsage | null {
  if (!u || typeof u !== 'object') return null;
  const out: FrameUsage = {
    inputTokens: num(u.prompt_tokens) ?? num(u.input_tokens),
    outputTokens: num(u.completion_tokens) ?? num(u.output_tokens),
  };
  // Chat: prompt_tokens_details.cached_tokens; Responses: input_tokens_details.cached_tokens (parts of the input).
  const read = num(u.prompt_tokens_details?.cached_tokens) ?? num(u.input_tokens_details?.cached_tokens);
  if (read !== null) out.cacheReadTokens = read;
  return out;
}

function classifyAnthropic(d: Draft, j: any, event: string | null): void {
  const type = typeof j.type === 'string' ? j.type : (event ?? '');
  d.type = type;
  switch (type) {
    case 'message_start':
      d.usage = anthropicUsage(j.message?.usage);
      return;
    case 'content_block_start': {
      const cb = j.content_block ?? {};
      switch (cb.type) {
        case 'text':
          d.textChars = len(cb.text);
          return;
        case 'thinking':
        case 'redacted_thinking':
          d.reasoning = true;
          return;
        case 'tool_use':
        case 'server_tool_use':
        case 'mcp_tool_use':
          d.toolStart = true;
          return;
        default:
          return;
      }
    }
    case 'content_block_delta': {
      const delta = j.delta ?? {};
      switch (delta.type) {
        case 'text_delta':
          d.textChars = len(delta.text);
          return;
        case 'input_json_delta':
          d.toolArgChars = len(delta.partial_json);
          return;
        case 'thinking_delta':
          d.reasoning = true;
          return;
        case 'signature_delta':
          d.reasoning = len(delta.signature) > 0;
          return;
        default:
          return;
      }
    }
    case 'message_delta':
      d.stopReason = typeof j.delta?.stop_reason === 'string' ? j.delta.stop_reason : null;
      d.usage = anthropicUsage(j.usage);
      return;
    case 'message_stop':
      d.terminal = true;
      return;
    case 'error':
      d.error = errorFromObject(j.error ?? j);
      return;
    default:
      return;
  }
}

function classifyChat(d: Draft, j: any): void {
  d.type = 'chunk';
  if (j.error) {
    d.error = errorFromObject(j.error);
    return;
  }
  const choices = j.choices;
  if (Array.isArray(choices)) {
    for (let i = 0; i < choices.length; i++) {
      const c = choices[i];
      if (!c || typeof c !== 'object') continue;
      const delta = c.delta ?? c.message;
      if (delta && typeof delta === 'object') {
        d.textChars += len(delta.content) + len(delta.refusal);
        if (typeof delta.reasoning_content === 'string' || typeof delta.reasoning === 'string') d.reasoning = true;
        else if (Array.isArray(delta.reasoning_details) && delta.reasoning_details.length > 0) d.reasoning = true;
        const calls = delta.tool_calls;
        if (Array.isArray(calls)) {
          for (let k = 0; k < calls.length; k++) {
            const tc = calls[k];
            if (!tc || typeof tc !== 'object') continue;
            if (typeof tc.id === 'string' || len(tc.function?.name) > 0) d.toolStart = true;
            d.toolArgChars += len(tc.function?.arguments);
          }
        }
      }
      if (typeof c.finish_reason === 'string' && c.finish_reason !== '') {
        d.terminal = true;
        d.stopReason = c.finish_reason;
        if (c.finish_reason === 'error' && c.error) d.error = errorFromObject(c.error);
      }
    }
  }
  if (j.usage) d.usage = openaiUsage(j.usage);
}

/** Gemini usageMetadata: tool-use prompt tokens count as input, thoughts as output. */
export function geminiUsage(u: any): FrameUsage | null {
  if (!u || typeof u !== 'object') return null;
  const prompt = num(u.promptTokenCount);
  const toolPrompt = num(u.toolUsePromptTokenCount);
  const candidates = num(u.candidatesTokenCount);
  const thoughts = num(u.thoughtsTokenCount);
  const out: FrameUsage = {
    inputTokens: prompt === null && toolPrompt === null ? null : (prompt ?? 0) + (toolPrompt ?? 0),
    outputTokens: candidates === null && thoughts === null ? null : (candidates ?? 0) + (thoughts ?? 0),
  };
  const cached = num(u.cachedContentTokenCount);
  if (cached !== null) out.cacheReadTokens = cached;
  return out;
}

/**
 * One GenerateContentResponse chunk: text parts are output, thought parts (and a signature) are
 * reasoning, a function call arrives whole (start and arguments at once); a finishReason or a
 * blocked prompt ends the answer (its word is the stop reason); `{ error }` is an in-band error.
 */
function classifyGemini(d: Draft, j: any): void {
  d.type = 'chunk';
  if (j.error) {
    d.error = readGeminiErrorObject(j.error, 500);
    return;
  }
  const cand = Array.isArray(j.candidates) ? j.candidates[0] : null;
  const parts = cand?.content?.parts;
  if (Array.isArray(parts)) {
    for (const p of parts) {
      if (!p || typeof p !== 'object') continue;
      if (p.thought === true) d.reasoning = true;
      else d.textChars += len(p.text);
      if (typeof p.thoughtSignature === 'string' && p.thoughtSignature) d.reasoning = true;
      if (p.functionCall && typeof p.functionCall === 'object') {
        d.toolStart = true;
        d.toolArgChars += p.functionCall.args ? JSON.stringify(p.functionCall.args).length : 0;
      }
    }
  }
  if (typeof cand?.finishReason === 'string' && cand.finishReason) {
    d.terminal = true;
    d.stopReason = cand.finishReason;
  } else if (typeof j.promptFeedback?.blockReason === 'string' && j.promptFeedback.blockReason) {
    d.terminal = true;
    d.stopReason = j.promptFeedback.blockReason;
  }
  d.usage = geminiUsage(j.usageMetadata);
}

const RESPONSES_TOOL_ITEMS = new Set([
  'function_call',
  'custom_tool_call',
  'mcp_call',
  'local_shell_call',
  'shell_call',
  'apply_patch_call',
  'computer_call',
]);

function classifyResponses(d: Draft, j: any, event: string | null): void {
  const type = typeof j.type === 'string' ? j.type : (event ?? '');
  d.type = type;
  switch (type) {
    case 'response.output_text.delta':
    case 'response.refusal.delta':
      d.textChars = len(j.delta);
      return;
    case 'response.function_call_arguments.delta':
    case 'response.custom_tool_call_input.delta':
    case 'response.mcp_call_arguments.delta':
      d.toolArgChars = len(j.delta);
      return;
    case 'response.output_item.added': {
      const t = j.item?.type;
      if (t === 'reasoning') d.reasoning = true;
      else if (RESPONSES_TOOL_ITEMS.has(t)) d.toolStart = true;
      return;
    }
    case 'response.output_item.done':
      if (j.item?.type === 'reasoning') d.reasoning = true;
      return;
    case 'response.reasoning_summary_part.added':
    case 'response.reasoning_summary_text.delta':
    case 'response.reasoning_text.delta':
      d.reasoning = true;
      return;
    case 'response.completed':
      d.terminal = true;
      d.stopReason = 'completed';
      d.usage = openaiUsage(j.response?.usage);
      return;
    case 'response.incomplete':
      d.terminal = true;
      d.stopReason = typeof j.response?.incomplete_details?.reason === 'string' ? j.response.incomplete_details.reason : 'incomplete';
      d.usage = openaiUsage(j.response?.usage);
      return;
    case 'response.failed':
      d.terminal = true;
      d.stopReason = 'failed';
      d.error = errorFromObject(j.response?.error ?? { message: 'the response failed' });
      d.usage = openaiUsage(j.response?.usage);
      return;
    case 'error':
      d.error = errorFromObject(j.error ?? j);
      return;
    default:
      return;
  }
}

const UNPARSED: unique symbol = Symbol('unparsed');

function parseObject(data: string): any {
  try {
    const j = JSON.parse(data);
    return j !== null && typeof j === 'object' && !Array.isArray(j) ? j : null;
  } catch {
    return null;
  }
}

class SseFrame implements Frame {
  readonly comment = null;
  readonly output: boolean;
  readonly kind: FrameKind;
  readonly type: string;
  readonly textChars: number;
  readonly toolStart: boolean;
  readonly toolArgChars: number;
  readonly reasoning: boolean;
  readonly terminal: boolean;
  readonly stopReason: string | null;
  readonly error: InbandError | null;
  readonly usage: FrameUsage | null;
  private parsed: any;

  constructor(
    readonly shape: ApiShape,
    readonly event: string | null,
    readonly data: string,
    json: any,
    d: Draft,
    malformed: boolean,
    readonly deltaText: string | null = null,
  ) {
    this.parsed = json;
    this.output = d.textChars > 0 || d.toolStart || d.toolArgChars > 0;
    this.kind = d.error ? 'error' : malformed ? 'malformed' : this.output ? 'output' : d.reasoning ? 'reasoning' : d.terminal ? 'terminal' : 'meta';
    this.type = d.type;
    this.textChars = d.textChars;
    this.toolStart = d.toolStart;
    this.toolArgChars = d.toolArgChars;
    this.reasoning = d.reasoning;
    this.terminal = d.terminal;
    this.stopReason = d.stopReason;
    this.error = d.error;
    this.usage = d.usage;
  }

  get json(): any {
    if (this.parsed === UNPARSED) this.parsed = parseObject(this.data);
    return this.parsed;
  }
}

function finish(shape: ApiShape, event: string | null, data: string, json: any, d: Draft, malformed: boolean): Frame {
  return new SseFrame(shape, event, data, json, d, malformed);
}

/**
 * Reads the JSON string that starts at `from` (just after its opening quote) when it ends the
 * data exactly as `closing` says; null when it does not (the frame is read the slow way).
 */
function stringAt(data: string, from: number, closing: string): string | null {
  const str = stringEnd(data, from);
  if (str === null || data.length - str.end - 1 !== closing.length || !data.endsWith(closing)) return null;
  return decoded(data, from, str);
}

/** The JSON string from `from` (after its opening quote) to `str.end`, its escapes read; null when they are broken. */
function decoded(data: string, from: number, str: { end: number; escaped: boolean }): string | null {
  const raw = data.slice(from, str.end);
  if (!str.escaped) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return null;
  }
}

const ANTHROPIC_DELTA = '{"type":"content_block_delta","index":';
const DELTA_KINDS: [string, 'text' | 'thinking' | 'tool'][] = [
  ['"delta":{"type":"text_delta","text":"', 'text'],
  ['"delta":{"type":"thinking_delta","thinking":"', 'thinking'],
  ['"delta":{"type":"input_json_delta","partial_json":"', 'tool'],
];

function blankDraft(type: string): Draft {
  return { type, textChars: 0, toolStart: false, toolArgChars: 0, reasoning: false, terminal: false, stopReason: null, error: null, usage: null };
}

/** An Anthropic text, thinking or tool-argument delta, read without JSON.parse; null when it is any other frame. */
function fastAnthropic(event: string | null, data: string): Frame | null {
  if ((event !== null && event !== 'content_block_delta') || !data.startsWith(ANTHROPIC_DELTA)) return null;
  for (const [marker, kind] of DELTA_KINDS) {
    const at = data.indexOf(marker, ANTHROPIC_DELTA.length);
    if (at < 0) continue;
    const text = stringAt(data, at + marker.length, '}}');
    if (text === null) return null;
    const d = blankDraft('content_block_delta');
    if (kind === 'text') d.textChars = text.length;
    else if (kind === 'tool') d.toolArgChars = text.length;
    else d.reasoning = true;
    return new SseFrame('anthropic-messages', event, data, UNPARSED, d, false, kind === 'text' ? text : null);
  }
  return null;
}

const CHAT_CONTENT = '"choices":[{"index":0,"delta":{"content":"';
/** What may follow a content-only delta in its choice (logprobs either side of finish_reason). */
const CHAT_CHOICE_ENDS = ['},"finish_reason":null}]', '},"logprobs":null,"finish_reason":null}]', '},"finish_reason":null,"logprobs":null}]'];

/** The end of the JSON string that starts at `from` (index of its closing quote), and whether it has escapes. */
function stringEnd(data: string, from: number): { end: number; escaped: boolean } | null {
  for (let i = from; ; ) {
    const q = data.indexOf('"', i);
    if (q < 0) return null;
    let bs = 0;
    for (let k = q - 1; k >= from && data.charCodeAt(k) === 92 /* backslash */; k--) bs++;
    if (bs % 2 === 0) {
      const b = data.indexOf('\\', from);
      return { end: q, escaped: b >= 0 && b < q };
    }
    i = q + 1;
  }
}

/**
 * A Chat chunk whose only news is content text in its one choice, read without JSON.parse: the
 * choice is exactly `{"index":0,"delta":{"content":"…"}, [logprobs,] "finish_reason":null}` and
 * nothing after the choices carries usage or an error. Null for any other chunk.
 */
function fastChat(data: string): Frame | null {
  const at = data.indexOf(CHAT_CONTENT);
  if (at < 0) return null;
  const from = at + CHAT_CONTENT.length;
  const str = stringEnd(data, from);
  if (str === null) return null;
  const after = str.end + 1;
  let rest = -1;
  for (const e of CHAT_CHOICE_ENDS) {
    if (data.startsWith(e, after)) {
      rest = after + e.length;
      break;
    }
  }
  if (rest < 0) return null;
  const tail = data.slice(rest);
  if (tail.includes('"usage":{') || tail.includes('"error"')) return null;
  const text = decoded(data, from, str);
  if (text === null) return null;
  const d = blankDraft('chunk');
  d.textChars = text.length;
  return new SseFrame('openai-chat', null, data, UNPARSED, d, false, text);
}

/** Beside a chunk's one text part: what makes it more than text and counts (read the slow way). */
const GEMINI_SLOW = ['"finishReason"', '"blockReason"', '"thoughtsTokenCount"', '"error"'];
const GEMINI_COUNTS = /"(promptTokenCount|candidatesTokenCount|cachedContentTokenCount|toolUsePromptTokenCount)"\s*:\s*(\d+)/g;

const skipSpaces = (data: string, i: number): number => {
  while (data.charCodeAt(i) === 32) i++;
  return i;
};

/**
 * A Gemini chunk whose only news is one text part (and, as Google sends on every chunk, running
 * usage counts), read without JSON.parse: its parts are exactly `[{"text": "…"}]` (so no call, no
 * thought, no signature, no media), nothing before them is an error, and nothing after them
 * finishes the answer, blocks it, adds a candidate or counts thoughts. Null for any other chunk.
 */
function fastGemini(data: string): Frame | null {
  const p = data.indexOf('"parts":');
  if (p < 0) return null;
  // Before the parts (a short head, whatever order the keys come in) and after them.
  for (const m of GEMINI_SLOW) if (data.lastIndexOf(m, p) >= 0) return null;
  let i = skipSpaces(data, p + 8);
  if (data.charCodeAt(i) !== 91 /* [ */ || data.charCodeAt(i + 1) !== 123 /* { */) return null;
  i = skipSpaces(data, i + 2);
  if (!data.startsWith('"text":', i)) return null;
  i = skipSpaces(data, i + 7);
  if (data.charCodeAt(i) !== 34 /* " */) return null;
  const str = stringEnd(data, i + 1);
  if (str === null) return null;
  const after = skipSpaces(data, str.end + 1);
  if (data.charCodeAt(after) !== 125 /* } */ || data.charCodeAt(skipSpaces(data, after + 1)) !== 93 /* ] */) return null;
  for (const m of GEMINI_SLOW) if (data.indexOf(m, after) >= 0) return null;
  if (data.indexOf('"content"', after) >= 0) return null;
  const text = decoded(data, i + 1, str);
  if (text === null) return null;
  const d = blankDraft('chunk');
  d.textChars = text.length;
  const u = data.indexOf('"usageMetadata"');
  if (u >= 0) {
    // The counts read off the text, then the same sums as a parsed usageMetadata gets.
    const counts: Record<string, number> = {};
    GEMINI_COUNTS.lastIndex = u;
    for (let m = GEMINI_COUNTS.exec(data); m; m = GEMINI_COUNTS.exec(data)) counts[m[1]!] = Number(m[2]);
    d.usage = geminiUsage(counts);
  }
  return new SseFrame('gemini', null, data, UNPARSED, d, false, text);
}

/**
 * Whether `f` is the last event its protocol sends: `message_stop`, Chat's `[DONE]` (a
 * finish_reason is not: the usage chunk and `[DONE]` follow it), or a Responses terminal event.
 * Nothing after it belongs to the answer.
 */
export function endsStream(f: Frame): boolean {
  if (!f.terminal) return false;
  if (f.shape === 'anthropic-messages') return f.type === 'message_stop';
  if (f.shape === 'openai-chat') return f.type === '[DONE]';
  return true;
}

/** Classifies one SSE event of the given shape. Never throws: bad JSON is a `malformed` frame. */
export function classifyFrame(shape: ApiShape, event: string | null, data: string): Frame {
  const d: Draft = {
    type: '',
    textChars: 0,
    toolStart: false,
    toolArgChars: 0,
    reasoning: false,
    terminal: false,
    stopReason: null,
    error: null,
    usage: null,
  };
  if (shape === 'openai-chat' && data.charCodeAt(0) === 91 /* [ */ && data.trim() === '[DONE]') {
    d.type = '[DONE]';
    d.terminal = true;
    return finish(shape, event, data, null, d, false);
  }
  const fast =
    shape === 'anthropic-messages' ? fastAnthropic(event, data) : shape === 'openai-chat' ? fastChat(data) : shape === 'gemini' ? fastGemini(data) : null;
  if (fast) return fast;
  let json: any = null;
  try {
    json = JSON.parse(data);
  } catch {
    json = null;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    // An `event: error` whose data is not JSON is still an error.
    if (event === 'error') d.error = { status: 500, type: '', code: null, message: data.slice(0, 500) || 'upstream stream error' };
    d.type = event ?? '';
    return finish(shape, event, data, null, d, true);
  }
  if (shape === 'anthropic-messages') classifyAnthropic(d, json, event);
  else if (shape === 'openai-chat') classifyChat(d, json);
  else if (shape === 'gemini') classifyGemini(d, json);
  else classifyResponses(d, json, event);
  return finish(shape, event, data, json, d, false);
}

/** A comment line (`: keep-alive`, `: OPENROUTER PROCESSING`): a heartbeat, never progress. */
export function commentFrame(shape: ApiShape, text: string): Frame {
  return {
    shape,
    event: null,
    data: '',
    comment: text,
    json: null,
    deltaText: null,
    type: '',
    kind: 'comment',
    textChars: 0,
    toolStart: false,
    toolArgChars: 0,
    reasoning: false,
    output: false,
    terminal: false,
    stopReason: null,
    error: null,
    usage: null,
  };
}
