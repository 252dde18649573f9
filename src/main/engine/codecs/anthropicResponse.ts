// Anthropic Messages responses: read an upstream one (JSON or stream events) into the neutral
// model, and write one (JSON or a well-formed event sequence) for an Anthropic client.
import type { ContentBlock, Message, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages/messages';
import type { InbandError } from '../streams/errorStatus';
import type { Frame } from '../streams/frame';
import { sseComment, sseEvent } from '../streams/sse';
import { anthropicToolId, argumentsObject, idBase } from './content';
import { errorEventBody } from './errors';
import { emptyUsage, mergeUsage, type IrContent, type IrResponse, type IrSink, type IrStop, type IrUsage, type IrWriter } from './ir';
import { stopFromAnthropic, stopToAnthropic, usageFromAnthropic, usageToAnthropic } from './stops';
import type { AnthropicState } from './clientState';
import type { ResponseContext } from './types';

// ---- reading an upstream Anthropic answer --------------------------------------------------------

export function readAnthropicMessage(j: any): IrResponse {
  const content: IrContent[] = [];
  for (const b of Array.isArray(j?.content) ? j.content : []) {
    switch (b?.type) {
      case 'text':
        content.push({ type: 'text', text: typeof b.text === 'string' ? b.text : '' });
        break;
      case 'thinking':
        content.push({ type: 'reasoning', text: b.thinking ?? '', signature: b.signature || null, redacted: null });
        break;
      case 'redacted_thinking':
        content.push({ type: 'reasoning', text: '', signature: null, redacted: b.data ?? '' });
        break;
      case 'tool_use':
        content.push({ type: 'tool_call', id: String(b.id ?? ''), name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}) });
        break;
      default:
        break;
    }
  }
  const usage = emptyUsage();
  mergeUsage(usage, usageFromAnthropic(j?.usage));
  return {
    id: typeof j?.id === 'string' ? j.id : null,
    model: typeof j?.model === 'string' ? j.model : null,
    content,
    stop: stopFromAnthropic(j?.stop_reason),
    stopSequence: typeof j?.stop_sequence === 'string' ? j.stop_sequence : null,
    usage,
  };
}

/** Upstream Anthropic events → the neutral sink. */
export class AnthropicEventReader {
  private finished = false;
  private failed = false;

  read(f: Frame, sink: IrSink): void {
    if (this.finished || this.failed) return;
    if (f.kind === 'comment') return sink.keepalive(f.comment ?? '');
    if (f.error) {
      this.failed = true;
      return sink.error(f.error);
    }
    // A text delta read on the fast path (frame.ts): its text is all it carries.
    if (f.deltaText !== null) {
      if (f.deltaText) sink.text(f.deltaText);
      return;
    }
    const j = f.json;
    if (!j) return;
    switch (f.type) {
      case 'message_start':
        sink.start(j.message?.id ?? null, j.message?.model ?? null);
        sink.usage(usageFromAnthropic(j.message?.usage));
        return;
      case 'content_block_start': {
        const cb = j.content_block ?? {};
        const index = typeof j.index === 'number' ? j.index : 0;
        switch (cb.type) {
          case 'text':
            if (typeof cb.text === 'string' && cb.text) sink.text(cb.text);
            return;
          case 'thinking':
            sink.reasoning(typeof cb.thinking === 'string' ? cb.thinking : '');
            return;
          case 'redacted_thinking':
            sink.redacted(typeof cb.data === 'string' ? cb.data : '');
            return;
          case 'tool_use':
            sink.toolStart(index, String(cb.id ?? ''), String(cb.name ?? ''));
            return;
          default:
            return;
        }
      }
      case 'content_block_delta': {
        const d = j.delta ?? {};
        switch (d.type) {
          case 'text_delta':
            if (d.text) sink.text(d.text);
            return;
          case 'thinking_delta':
            sink.reasoning(typeof d.thinking === 'string' ? d.thinking : '');
            return;
          case 'signature_delta':
            if (d.signature) sink.signature(d.signature);
            return;
          case 'input_json_delta':
            if (d.partial_json) sink.toolArgs(typeof j.index === 'number' ? j.index : 0, d.partial_json);
            return;
          default:
            return;
        }
      }
      case 'content_block_stop':
        return sink.blockEnd();
      case 'message_delta':
        sink.usage(usageFromAnthropic(j.usage));
        if (j.delta?.stop_reason) sink.stop(stopFromAnthropic(j.delta.stop_reason), j.delta.stop_sequence ?? null);
        return;
      case 'message_stop':
        this.finished = true;
        return sink.finish();
      case 'ping':
        return sink.keepalive('ping');
      default:
        return;
    }
  }

  /** The body ended: was `message_stop` seen? */
  end(_sink: IrSink): 'complete' | 'truncated' | 'error' {
    return this.failed ? 'error' : this.finished ? 'complete' : 'truncated';
  }
}

// ---- writing an Anthropic answer for the client ------------------------------------------------

export function writeAnthropicMessage(r: IrResponse, ctx: ResponseContext): Record<string, unknown> {
  const content: ContentBlock[] = [];
  let hasTools = false;
  for (const c of r.content) {
    if (c.type === 'text') {
      if (c.text) content.push({ type: 'text', text: c.text, citations: null });
    } else if (c.type === 'reasoning') {
      if (c.redacted) content.push({ type: 'redacted_thinking', data: c.redacted });
      else content.push({ type: 'thinking', thinking: c.text, signature: c.signature ?? '' });
    } else {
      hasTools = true;
      content.push({ type: 'tool_use', id: anthropicToolId(c.id), name: c.name, input: argumentsObject(c.arguments).value } as ContentBlock);
    }
  }
  const msg: Partial<Message> & Record<string, unknown> = {
    id: `msg_${idBase(r.id, ctx.requestId)}`,
    type: 'message',
    role: 'assistant',
    model: r.model ?? ctx.model,
    content,
    stop_reason: stopToAnthropic(r.stop, hasTools) as Message['stop_reason'],
    stop_sequence: r.stopSequence,
    usage: usageToAnthropic(r.usage) as unknown as Message['usage'],
  };
  return msg;
}

type BlockKind = 'text' | 'thinking' | 'tool';

/** Neutral events → Anthropic's event sequence: message_start, indexed blocks, message_delta, message_stop. */
export class AnthropicEventWriter implements IrWriter {
  private out = '';
  private started = false;
  private done = false;
  private id: string;
  private model: string;
  private next = 0;
  private open: { kind: BlockKind; index: number } | null = null;
  private readonly toolIndex = new Map<number, number>();
  private hasTools = false;
  private tools = 0;
  private stopReason: IrStop | null = null;
  private stopSequence: string | null = null;
  private textSoFar = '';
  private readonly trackText: boolean;
  readonly usageSoFar: IrUsage = emptyUsage();

  /** `resume`: continue a stream the client has been reading (clientState.ts), after what it was sent. */
  constructor(
    private readonly ctx: ResponseContext,
    resume?: AnthropicState,
  ) {
    this.id = `msg_${idBase(null, ctx.requestId)}`;
    this.model = ctx.model;
    this.trackText = ctx.trackText === true;
    if (resume) {
      this.started = resume.started;
      this.id = resume.id;
      this.model = resume.model || ctx.model;
      this.next = resume.next;
      this.open = resume.open && resume.openIndex !== null ? { kind: resume.open, index: resume.openIndex } : null;
      this.hasTools = resume.tools > 0;
      this.tools = resume.tools;
      this.textSoFar = resume.text;
      mergeUsage(this.usageSoFar, resume.usage);
    }
  }

  snapshot(): AnthropicState {
    return {
      shape: 'anthropic-messages',
      text: this.textSoFar,
      open: this.open?.kind ?? null,
      tools: this.tools,
      stopped: this.stopReason !== null,
      done: this.done,
      usage: { ...this.usageSoFar },
      started: this.started,
      id: this.id,
      model: this.model,
      next: this.next,
      openIndex: this.open?.index ?? null,
      stopReason: this.stopReason,
      stopSequence: this.stopSequence,
    };
  }

  take(): string {
    const s = this.out;
    this.out = '';
    return s;
  }

  private emit(type: RawMessageStreamEvent['type'] | 'ping', payload: Record<string, unknown>): void {
    this.out += sseEvent(type, JSON.stringify({ type, ...payload }));
  }

  start(id: string | null, model: string | null): void {
    if (this.started) return;
    this.started = true;
    if (id) this.id = `msg_${idBase(id, this.ctx.requestId)}`;
    if (model) this.model = model;
    this.emit('message_start', {
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageToAnthropic(this.usageSoFar),
      },
    });
  }

  private ensureStarted(): void {
    if (!this.started) this.start(null, null);
  }

  private closeOpen(): void {
    if (!this.open) return;
    this.emit('content_block_stop', { index: this.open.index });
    this.open = null;
  }

  private openBlock(kind: BlockKind, block: Record<string, unknown>): number {
    this.ensureStarted();
    this.closeOpen();
    const index = this.next++;
    this.emit('content_block_start', { index, content_block: block });
    this.open = { kind, index };
    return index;
  }

  text(text: string): void {
    if (this.done || text === '') return;
    if (this.open?.kind !== 'text') this.openBlock('text', { type: 'text', text: '' });
    if (this.trackText) this.textSoFar += text;
    this.out += `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.open!.index},"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}\n\n`;
  }

  reasoning(text: string): void {
    if (this.done) return;
    if (this.open?.kind !== 'thinking') this.openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
    this.out += `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.open!.index},"delta":{"type":"thinking_delta","thinking":${JSON.stringify(text)}}}\n\n`;
  }

  signature(signature: string): void {
    if (this.done || this.open?.kind !== 'thinking') return;
    this.emit('content_block_delta', { index: this.open.index, delta: { type: 'signature_delta', signature } });
  }

  redacted(data: string): void {
    if (this.done) return;
    this.openBlock('thinking', { type: 'redacted_thinking', data });
    this.closeOpen();
  }

  toolStart(key: number, id: string, name: string): void {
    if (this.done) return;
    this.hasTools = true;
    this.tools++;
    const index = this.openBlock('tool', { type: 'tool_use', id: anthropicToolId(id), name, input: {} });
    this.toolIndex.set(key, index);
  }

  toolArgs(key: number, json: string): void {
    if (this.done || json === '') return;
    const index = this.toolIndex.get(key);
    if (index === undefined) return;
    // A delta for an earlier call (interleaved parallel calls) still goes to that call's index.
    this.out += `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(json)}}}\n\n`;
  }

  blockEnd(): void {
    if (!this.done) this.closeOpen();
  }

  usage(u: Partial<IrUsage>): void {
    mergeUsage(this.usageSoFar, u);
  }

  stop(reason: IrStop, stopSequence: string | null): void {
    this.stopReason = reason;
    this.stopSequence = stopSequence;
  }

  finish(): void {
    if (this.done) return;
    this.ensureStarted();
    this.closeOpen();
    this.done = true;
    this.emit('message_delta', {
      delta: { stop_reason: stopToAnthropic(this.stopReason ?? 'end_turn', this.hasTools), stop_sequence: this.stopSequence },
      usage: usageToAnthropic(this.usageSoFar),
    });
    this.emit('message_stop', {});
  }

  error(e: InbandError): void {
    if (this.done) return;
    this.done = true;
    this.out += sseEvent('error', JSON.stringify(errorEventBody('anthropic-messages', e)));
  }

  /** Heartbeats become pings; before message_start (which must come first) an SSE comment. */
  keepalive(): void {
    if (this.done) return;
    if (this.started) this.emit('ping', {});
    else this.out += sseComment('keepalive');
  }
}
