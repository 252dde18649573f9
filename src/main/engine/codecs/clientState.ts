// What a client has been sent so far on a stream, in its own protocol: enough to end the stream
// with a well-formed error event, or to resume it with another attempt's continuation (one
// message_start, consistent block indexes and sequence numbers, one terminal event). The inbound
// writers (anthropicResponse.ts, chatResponse.ts, responsesResponse.ts) snapshot and resume this
// state; for a native stream, whose bytes are forwarded as they are, a tracker reads the same state
// from the frames (below). Text is kept only when asked (`trackText`): it is what a continuation
// is sent as the answer so far.
import type { Frame } from '../streams/frame';
import type { ApiShape } from '../streams/shape';
import { emptyUsage, mergeUsage, type IrStop, type IrUsage } from './ir';
import { stopFromAnthropic, usageFromAnthropic, usageFromChat } from './stops';
import { usageFromGemini, usageOfFrame } from './geminiStops';

export type OpenBlock = 'text' | 'thinking' | 'tool' | null;

interface CommonState {
  /** The visible text sent so far (only when tracked). */
  text: string;
  /** The kind of block the client has open. */
  open: OpenBlock;
  /** Tool calls started. */
  tools: number;
  /** The stop reason was sent: the answer is complete even if the terminal event is missing. */
  stopped: boolean;
  /** The terminal (or an error) event was sent. */
  done: boolean;
  /** Usage as the client was told it. */
  usage: IrUsage;
}

export interface AnthropicState extends CommonState {
  shape: 'anthropic-messages';
  started: boolean;
  id: string;
  model: string;
  /** The next content block index. */
  next: number;
  /** Index of the open block (null when none is open). */
  openIndex: number | null;
  stopReason: IrStop | null;
  stopSequence: string | null;
}

export interface ChatState extends CommonState {
  shape: 'openai-chat';
  started: boolean;
  id: string;
  model: string;
  created: number;
}

export interface ResponsesState extends CommonState {
  shape: 'openai-responses';
  started: boolean;
  respId: string;
  /** The base of new item ids. */
  base: string;
  model: string;
  createdAt: number;
  /** The next sequence_number. */
  seq: number;
  /** Output items by output_index, serialised when done ('' while open or unknown). */
  items: string[];
  /** The open message item and its text parts. */
  message: { id: string; index: number; parts: string[] } | null;
  stopReason: IrStop | null;
}

export interface GeminiState extends CommonState {
  shape: 'gemini';
  framing: 'sse' | 'json-array';
  /** A chunk was sent (JSON array: the opening bracket with it). */
  started: boolean;
  responseId: string;
  model: string;
}

export type ClientState = AnthropicState | ChatState | ResponsesState | GeminiState;

const str = (v: unknown, d = ''): string => (typeof v === 'string' ? v : d);
const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

/** Reads a native stream's frames (the inbound shape) into the client state. */
export interface StateTracker {
  observe(f: Frame): void;
  readonly state: ClientState;
}

class AnthropicTracker implements StateTracker {
  readonly state: AnthropicState;
  constructor(private readonly trackText: boolean) {
    this.state = {
      shape: 'anthropic-messages',
      text: '',
      open: null,
      tools: 0,
      stopped: false,
      done: false,
      usage: emptyUsage(),
      started: false,
      id: 'msg_switchyard',
      model: '',
      next: 0,
      openIndex: null,
      stopReason: null,
      stopSequence: null,
    };
  }

  observe(f: Frame): void {
    const s = this.state;
    if (f.terminal) s.done = true;
    // Deltas are most of a stream: only a text delta's text is needed (and only when tracked).
    if (f.type === 'content_block_delta') {
      if (this.trackText && f.textChars > 0) s.text += f.deltaText ?? str(f.json?.delta?.text);
      return;
    }
    const j = f.json;
    if (!j) return;
    switch (f.type) {
      case 'message_start':
        s.started = true;
        s.id = str(j.message?.id, s.id);
        s.model = str(j.message?.model, s.model);
        mergeUsage(s.usage, usageFromAnthropic(j.message?.usage));
        return;
      case 'content_block_start': {
        const index = num(j.index, s.next);
        const t = j.content_block?.type;
        s.open = t === 'text' ? 'text' : t === 'thinking' || t === 'redacted_thinking' ? 'thinking' : 'tool';
        if (s.open === 'tool') s.tools++;
        s.openIndex = index;
        s.next = Math.max(s.next, index + 1);
        if (this.trackText && s.open === 'text' && typeof j.content_block.text === 'string') s.text += j.content_block.text;
        return;
      }
      case 'content_block_stop':
        s.open = null;
        s.openIndex = null;
        return;
      case 'message_delta':
        mergeUsage(s.usage, usageFromAnthropic(j.usage));
        if (j.delta?.stop_reason) {
          s.stopped = true;
          s.stopReason = stopFromAnthropic(j.delta.stop_reason);
          s.stopSequence = typeof j.delta.stop_sequence === 'string' ? j.delta.stop_sequence : null;
        }
        return;
      default:
        return;
    }
  }
}

class ChatTracker implements StateTracker {
  readonly state: ChatState;
  private readonly toolIds = new Set<string>();
  constructor(private readonly trackText: boolean) {
    this.state = { shape: 'openai-chat', text: '', open: null, tools: 0, stopped: false, done: false, usage: emptyUsage(), started: false, id: 'chatcmpl-switchyard', model: '', created: 0 };
  }

  observe(f: Frame): void {
    const s = this.state;
    if (f.type === '[DONE]') {
      s.done = true;
      return;
    }
    if (f.deltaText !== null && s.started) {
      // A content delta read on the fast path: the text is all it carries.
      s.open = 'text';
      if (this.trackText) s.text += f.deltaText;
      return;
    }
    const j = f.json;
    if (!j || f.error) return;
    if (!s.started && typeof j.id === 'string') {
      s.started = true;
      s.id = j.id;
      s.model = str(j.model, s.model);
      s.created = num(j.created, s.created);
    }
    if (j.usage) mergeUsage(s.usage, usageFromChat(j.usage));
    const choice = Array.isArray(j.choices) ? j.choices[0] : null;
    const delta = choice?.delta;
    if (delta && typeof delta === 'object') {
      if (typeof delta.content === 'string' && delta.content) {
        s.open = 'text';
        if (this.trackText) s.text += delta.content;
      } else if (typeof delta.reasoning_content === 'string' || typeof delta.reasoning === 'string') s.open = s.open === 'tool' ? 'tool' : 'thinking';
      if (Array.isArray(delta.tool_calls)) {
        for (const tc of delta.tool_calls) {
          const key = typeof tc?.id === 'string' ? tc.id : `#${num(tc?.index, 0)}`;
          if (typeof tc?.id === 'string' && !this.toolIds.has(key)) {
            this.toolIds.add(key);
            s.tools++;
          }
          s.open = 'tool';
        }
      }
    }
    if (typeof choice?.finish_reason === 'string' && choice.finish_reason) {
      s.stopped = true;
      s.open = null;
    }
  }
}

class ResponsesTracker implements StateTracker {
  readonly state: ResponsesState;
  constructor(private readonly trackText: boolean) {
    this.state = {
      shape: 'openai-responses',
      text: '',
      open: null,
      tools: 0,
      stopped: false,
      done: false,
      usage: emptyUsage(),
      started: false,
      respId: 'resp_switchyard',
      base: 'switchyard',
      model: '',
      createdAt: 0,
      seq: 0,
      items: [],
      message: null,
      stopReason: null,
    };
  }

  observe(f: Frame): void {
    const s = this.state;
    const j = f.json;
    if (!j) return;
    if (typeof j.sequence_number === 'number') s.seq = Math.max(s.seq, j.sequence_number + 1);
    if (f.terminal) s.done = true;
    switch (f.type) {
      case 'response.created':
        s.started = true;
        s.respId = str(j.response?.id, s.respId);
        s.base = s.respId.replace(/^resp_/, '').replace(/[^a-zA-Z0-9_-]/g, '') || 'switchyard';
        s.model = str(j.response?.model, s.model);
        s.createdAt = num(j.response?.created_at, s.createdAt);
        return;
      case 'response.output_item.added': {
        const index = num(j.output_index, s.items.length);
        while (s.items.length <= index) s.items.push('');
        const t = j.item?.type;
        if (t === 'message') {
          s.open = 'text';
          s.message = { id: str(j.item.id, `msg_${s.base}_${index}`), index, parts: [] };
        } else if (t === 'reasoning') s.open = 'thinking';
        else {
          s.open = 'tool';
          s.tools++;
        }
        return;
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (typeof j.delta === 'string') {
          if (this.trackText) s.text += j.delta;
          if (s.message && this.trackText) s.message.parts.push(j.delta);
        }
        return;
      case 'response.output_item.done': {
        const index = num(j.output_index, -1);
        if (index >= 0 && this.trackText) {
          while (s.items.length <= index) s.items.push('');
          s.items[index] = JSON.stringify(j.item ?? {});
        }
        if (s.message && s.message.index === index) s.message = null;
        s.open = null;
        return;
      }
      case 'response.completed':
      case 'response.incomplete':
        s.stopped = true;
        return;
      default:
        return;
    }
  }
}

/**
 * A native Gemini stream (always SSE: a Gemini upstream is called with alt=sse): text parts are
 * visible text, thought parts thinking, a function call a whole tool call; a finishReason or a
 * blocked prompt ends the answer.
 */
class GeminiTracker implements StateTracker {
  readonly state: GeminiState;
  constructor(private readonly trackText: boolean) {
    this.state = { shape: 'gemini', framing: 'sse', text: '', open: null, tools: 0, stopped: false, done: false, usage: emptyUsage(), started: false, responseId: '', model: '' };
  }

  observe(f: Frame): void {
    const s = this.state;
    // A text chunk read on the fast path (streams/frame.ts), after the first: no JSON needed.
    if (f.deltaText !== null && s.started) {
      if (f.deltaText) {
        s.open = 'text';
        if (this.trackText) s.text += f.deltaText;
      }
      if (f.usage) mergeUsage(s.usage, usageOfFrame(f.usage));
      return;
    }
    const j = f.json;
    if (!j) return;
    if (f.error) {
      s.done = true;
      return;
    }
    s.started = true;
    s.responseId = str(j.responseId, s.responseId);
    s.model = str(j.modelVersion, s.model);
    const cand = Array.isArray(j.candidates) ? j.candidates[0] : null;
    for (const p of Array.isArray(cand?.content?.parts) ? cand.content.parts : []) {
      if (!p || typeof p !== 'object') continue;
      if (p.functionCall) {
        s.tools++;
        s.open = null;
      } else if (p.thought === true) s.open = 'thinking';
      else if (typeof p.text === 'string' && p.text) {
        s.open = 'text';
        if (this.trackText) s.text += p.text;
      }
    }
    if (j.usageMetadata) mergeUsage(s.usage, usageFromGemini(j.usageMetadata));
    if (f.terminal) {
      s.stopped = true;
      s.done = true;
      s.open = null;
    }
  }
}

/** A tracker for a native stream of this (inbound = upstream) shape. */
export function trackerFor(shape: ApiShape, trackText: boolean): StateTracker {
  if (shape === 'anthropic-messages') return new AnthropicTracker(trackText);
  if (shape === 'openai-chat') return new ChatTracker(trackText);
  if (shape === 'gemini') return new GeminiTracker(trackText);
  return new ResponsesTracker(trackText);
}

/**
 * Whether an answer can be continued elsewhere: it has visible text, no tool call was started, the
 * stop reason has not come, and the client is inside a text block or between blocks (R-TW-11:
 * inside a tool call, or during thinking before any text, it cannot).
 */
export function continuable(s: ClientState): boolean {
  return !s.done && !s.stopped && s.tools === 0 && s.text.length > 0 && (s.open === 'text' || s.open === null);
}
