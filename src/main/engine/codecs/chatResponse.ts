// OpenAI Chat Completions responses: read an upstream one (JSON or chunks) into the neutral model,
// and write one (JSON or chunks ending in [DONE]) for a Chat client.
import type { ChatCompletion } from 'openai/resources/chat/completions/completions';
import type { InbandError } from '../streams/errorStatus';
import type { Frame } from '../streams/frame';
import { sseComment } from '../streams/sse';
import { idBase, isObject } from './content';
import { errorEventBody } from './errors';
import { emptyUsage, mergeUsage, type IrContent, type IrResponse, type IrSink, type IrStop, type IrUsage, type IrWriter } from './ir';
import { stopFromChat, stopToChat, usageFromChat, usageToChat } from './stops';
import type { ChatState, OpenBlock } from './clientState';
import type { ResponseContext } from './types';

const argsText = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

// ---- reading an upstream Chat answer -----------------------------------------------------------

export function readChatCompletion(j: any, ctx: ResponseContext): IrResponse {
  const choice = Array.isArray(j?.choices) ? j.choices[0] : null;
  const m = choice?.message ?? {};
  const content: IrContent[] = [];
  const reasoning = typeof m.reasoning_content === 'string' ? m.reasoning_content : typeof m.reasoning === 'string' ? m.reasoning : '';
  if (reasoning) content.push({ type: 'reasoning', text: reasoning, signature: null, redacted: null });
  let text = '';
  if (typeof m.content === 'string') text = m.content;
  else if (Array.isArray(m.content)) text = m.content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
  if (typeof m.refusal === 'string' && m.refusal) text += m.refusal;
  if (text) content.push({ type: 'text', text });
  const base = idBase(typeof j?.id === 'string' ? j.id : null, ctx.requestId);
  (Array.isArray(m.tool_calls) ? m.tool_calls : []).forEach((tc: any, i: number) => {
    content.push({
      type: 'tool_call',
      id: typeof tc?.id === 'string' && tc.id ? tc.id : `call_${base}_${i}`,
      name: String(tc?.function?.name ?? ''),
      arguments: argsText(tc?.function?.arguments),
    });
  });
  const usage = emptyUsage();
  mergeUsage(usage, usageFromChat(j?.usage));
  return {
    id: typeof j?.id === 'string' ? j.id : null,
    model: typeof j?.model === 'string' ? j.model : null,
    content,
    stop: stopFromChat(choice?.finish_reason),
    stopSequence: null,
    usage,
  };
}

/** Upstream Chat chunks → the neutral sink. Tool calls are keyed by their index (or position, or a new id). */
export class ChatChunkReader {
  private started = false;
  private stopped = false;
  private done = false;
  private failed = false;
  private readonly calls = new Map<number, { key: number; id: string }>();
  private nextKey = 0;
  private base: string | null = null;

  constructor(private readonly ctx: ResponseContext) {}

  read(f: Frame, sink: IrSink): void {
    if (this.done || this.failed) return;
    if (f.kind === 'comment') return sink.keepalive(f.comment ?? '');
    if (f.error) {
      this.failed = true;
      return sink.error(f.error);
    }
    if (f.type === '[DONE]') {
      this.done = true;
      if (!this.started) this.begin(null, null, sink);
      return sink.finish();
    }
    // A content delta read on the fast path (frame.ts), once the stream has begun: its text is all it carries.
    if (f.deltaText !== null && this.started) {
      if (f.deltaText) sink.text(f.deltaText);
      return;
    }
    const j = f.json;
    if (!j) return;
    if (!this.started) this.begin(typeof j.id === 'string' ? j.id : null, typeof j.model === 'string' ? j.model : null, sink);
    const choice = Array.isArray(j.choices) ? j.choices.find((c: any) => (c?.index ?? 0) === 0) : null;
    const delta = choice?.delta;
    if (isObject(delta)) {
      const r = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
      if (r) sink.reasoning(r);
      if (typeof delta.content === 'string' && delta.content) sink.text(delta.content);
      if (typeof delta.refusal === 'string' && delta.refusal) sink.text(delta.refusal);
      if (Array.isArray(delta.tool_calls)) {
        for (let k = 0; k < delta.tool_calls.length; k++) this.toolDelta(delta.tool_calls[k], k, sink);
      }
    }
    if (j.usage) sink.usage(usageFromChat(j.usage));
    if (typeof choice?.finish_reason === 'string' && choice.finish_reason) {
      this.stopped = true;
      sink.stop(stopFromChat(choice.finish_reason), null);
    }
  }

  private begin(id: string | null, model: string | null, sink: IrSink): void {
    this.started = true;
    this.base = idBase(id, this.ctx.requestId);
    sink.start(id, model);
  }

  private toolDelta(tc: any, position: number, sink: IrSink): void {
    if (!isObject(tc)) return;
    const index = typeof tc.index === 'number' ? tc.index : position;
    let call = this.calls.get(index);
    const id = typeof tc.id === 'string' && tc.id ? tc.id : null;
    // A new id on a known index is a new call (Gemini's OpenAI layer numbers parallel calls all 0).
    if (!call || (id !== null && id !== call.id)) {
      const key = this.nextKey++;
      call = { key, id: id ?? `call_${this.base}_${key}` };
      this.calls.set(index, call);
      sink.toolStart(key, call.id, String(tc.function?.name ?? ''));
    }
    const args = argsText(tc.function?.arguments);
    if (args) sink.toolArgs(call.key, args);
  }

  /** The body ended: complete after [DONE] or a finish_reason, else truncated. */
  end(sink: IrSink): 'complete' | 'truncated' | 'error' {
    if (this.failed) return 'error';
    if (this.done) return 'complete';
    if (this.stopped) {
      this.done = true;
      sink.finish();
      return 'complete';
    }
    return 'truncated';
  }
}

// ---- writing a Chat answer for the client ------------------------------------------------------

export function writeChatCompletion(r: IrResponse, ctx: ResponseContext): Record<string, unknown> {
  let text = '';
  let reasoning = '';
  const toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  for (const c of r.content) {
    if (c.type === 'text') text += c.text;
    else if (c.type === 'reasoning') reasoning += c.text;
    else toolCalls.push({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } });
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text || (toolCalls.length ? null : ''), refusal: null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  const out: Partial<ChatCompletion> & Record<string, unknown> = {
    id: `chatcmpl-${idBase(r.id, ctx.requestId)}`,
    object: 'chat.completion',
    created: Math.floor(ctx.now / 1000),
    model: r.model ?? ctx.model,
    choices: [{ index: 0, message: message as any, finish_reason: stopToChat(r.stop, toolCalls.length > 0) as any, logprobs: null }],
    usage: usageToChat(r.usage) as any,
  };
  return out;
}

/** Neutral events → Chat chunks (role first, content / reasoning / tool-call deltas, finish, usage, [DONE]). */
export class ChatChunkWriter implements IrWriter {
  private out = '';
  private started = false;
  private done = false;
  private head = '';
  private id: string;
  private model: string;
  private created: number;
  private readonly includeUsage: boolean;
  private readonly ordinal = new Map<number, number>();
  private tools = 0;
  private stopReason: IrStop | null = null;
  private textSoFar = '';
  private open: OpenBlock = null;
  private readonly trackText: boolean;
  readonly usageSoFar: IrUsage = emptyUsage();

  /** `resume`: continue a stream the client has been reading (clientState.ts), after what it was sent. */
  constructor(
    private readonly ctx: ResponseContext,
    resume?: ChatState,
  ) {
    this.id = `chatcmpl-${idBase(null, ctx.requestId)}`;
    this.model = ctx.model;
    this.created = Math.floor(ctx.now / 1000);
    const so = ctx.request.stream_options;
    this.includeUsage = isObject(so) && so.include_usage === true;
    this.trackText = ctx.trackText === true;
    if (resume) {
      this.id = resume.id;
      this.model = resume.model || ctx.model;
      this.created = resume.created;
      this.tools = resume.tools;
      this.textSoFar = resume.text;
      this.open = resume.open;
      mergeUsage(this.usageSoFar, resume.usage);
      if (resume.started) {
        this.started = true;
        this.head = this.headFor();
      }
    }
  }

  snapshot(): ChatState {
    return {
      shape: 'openai-chat',
      text: this.textSoFar,
      open: this.open,
      tools: this.tools,
      stopped: this.stopReason !== null,
      done: this.done,
      usage: { ...this.usageSoFar },
      started: this.started,
      id: this.id,
      model: this.model,
      created: this.created,
    };
  }

  private headFor(): string {
    return `{"id":${JSON.stringify(this.id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.model)},"choices":[{"index":0,"delta":`;
  }

  take(): string {
    const s = this.out;
    this.out = '';
    return s;
  }

  /** One chunk: the fixed head (id, object, created, model) is built once; only the delta is serialised. */
  private chunk(delta: string, finish: string | null = null): void {
    this.out += `data: ${this.head}${delta},"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]}\n\n`;
  }

  start(id: string | null, model: string | null): void {
    if (this.started) return;
    this.started = true;
    if (id) this.id = `chatcmpl-${idBase(id, this.ctx.requestId)}`;
    if (model) this.model = model;
    this.head = this.headFor();
    this.chunk('{"role":"assistant","content":""}');
  }

  private ensureStarted(): void {
    if (!this.started) this.start(null, null);
  }

  text(text: string): void {
    if (this.done || text === '') return;
    this.ensureStarted();
    this.open = 'text';
    if (this.trackText) this.textSoFar += text;
    this.chunk(`{"content":${JSON.stringify(text)}}`);
  }

  reasoning(text: string): void {
    if (this.done) return;
    this.ensureStarted();
    this.open = 'thinking';
    this.chunk(`{"reasoning_content":${JSON.stringify(text)}}`);
  }

  /**
   * A signed reasoning frame keeps the reasoning alive on the client's side as an empty
   * `reasoning_content` delta; the signature itself is never forwarded (R-CC-33).
   */
  signature(): void {
    if (this.done) return;
    this.ensureStarted();
    this.chunk('{"reasoning_content":""}');
  }

  redacted(): void {}

  toolStart(key: number, id: string, name: string): void {
    if (this.done) return;
    this.ensureStarted();
    this.open = 'tool';
    const n = this.tools++;
    this.ordinal.set(key, n);
    this.chunk(`{"tool_calls":[{"index":${n},"id":${JSON.stringify(id)},"type":"function","function":{"name":${JSON.stringify(name)},"arguments":""}}]}`);
  }

  toolArgs(key: number, json: string): void {
    if (this.done || json === '') return;
    const n = this.ordinal.get(key);
    if (n === undefined) return;
    this.chunk(`{"tool_calls":[{"index":${n},"function":{"arguments":${JSON.stringify(json)}}}]}`);
  }

  blockEnd(): void {}

  usage(u: Partial<IrUsage>): void {
    mergeUsage(this.usageSoFar, u);
  }

  stop(reason: IrStop): void {
    this.stopReason = reason;
  }

  finish(): void {
    if (this.done) return;
    this.ensureStarted();
    this.done = true;
    this.chunk('{}', stopToChat(this.stopReason ?? 'end_turn', this.tools > 0));
    if (this.includeUsage) {
      this.out += `data: {"id":${JSON.stringify(this.id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.model)},"choices":[],"usage":${JSON.stringify(usageToChat(this.usageSoFar))}}\n\n`;
    }
    this.out += 'data: [DONE]\n\n';
  }

  error(e: InbandError): void {
    if (this.done) return;
    this.done = true;
    this.out += `data: ${JSON.stringify(errorEventBody('openai-chat', e))}\n\n`;
  }

  keepalive(comment: string): void {
    if (!this.done) this.out += sseComment(comment || 'keepalive');
  }
}
