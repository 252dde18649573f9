// Gemini (Generative Language API) answers: read an upstream GenerateContentResponse (JSON, or
// its stream chunks as frames from geminiStream.ts) into the neutral model, and write one (JSON,
// SSE chunks for `alt=sse`, or the streamed JSON array) for a Gemini client served by any target.
//
// Parts map one to one: `text` ↔ text, `{text, thought: true}` ↔ reasoning, `functionCall {id,
// name, args}` ↔ tool call (ids kept; one made from the response id when Gemini gives none). A
// `thoughtSignature` on a thought part is that reasoning's signature; on a text or function-call
// part it is read as an empty signed reasoning just before the part, and an empty signed reasoning
// is written back onto the part that follows it (a function call, where Gemini wants it next turn,
// or text), so a Gemini answer read and written again keeps its signatures where they were.
import type { InbandError } from '../streams/errorStatus';
import type { Frame } from '../streams/frame';
import { sseComment } from '../streams/sse';
import { argumentsObject, idBase, isObject } from './content';
import type { GeminiState } from './clientState';
import { geminiErrorBody } from './geminiErrors';
import type { GeminiFraming } from './geminiStream';
import { stopFromGemini, stopToGemini, usageFromGemini, usageOfFrame, usageToGemini } from './geminiStops';
import { emptyUsage, mergeUsage, type IrContent, type IrResponse, type IrSink, type IrStop, type IrUsage, type IrWriter } from './ir';
import type { ClientWriter, InboundSide, UpstreamSide } from './translator';
import type { ResponseContext } from './types';

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const argsJson = (v: unknown): string => (v === undefined || v === null ? '{}' : JSON.stringify(v));

// ---- reading an upstream Gemini answer -----------------------------------------------------------

export function readGeminiResponse(j: any, ctx: ResponseContext): IrResponse {
  const cand = Array.isArray(j?.candidates) ? j.candidates[0] : null;
  const base = idBase(str(j?.responseId), ctx.requestId);
  const content: IrContent[] = [];
  let calls = 0;
  for (const p of Array.isArray(cand?.content?.parts) ? cand.content.parts : []) {
    if (!isObject(p)) continue;
    const sig = str(p.thoughtSignature);
    if (p.thought === true) {
      content.push({ type: 'reasoning', text: typeof p.text === 'string' ? p.text : '', signature: sig, redacted: null });
      continue;
    }
    if (sig) content.push({ type: 'reasoning', text: '', signature: sig, redacted: null });
    if (isObject(p.functionCall)) {
      const fc = p.functionCall;
      content.push({ type: 'tool_call', id: str(fc.id) ?? `call_${base}_${calls}`, name: String(fc.name ?? ''), arguments: argsJson(fc.args) });
      calls++;
    } else if (typeof p.text === 'string' && p.text) {
      const last = content[content.length - 1];
      if (last?.type === 'text') last.text += p.text;
      else content.push({ type: 'text', text: p.text });
    }
  }
  const usage = emptyUsage();
  mergeUsage(usage, usageFromGemini(j?.usageMetadata));
  const blocked = str(j?.promptFeedback?.blockReason);
  return {
    id: str(j?.responseId),
    model: str(j?.modelVersion),
    content,
    stop: cand ? stopFromGemini(cand.finishReason, calls > 0) : blocked ? 'refusal' : 'end_turn',
    stopSequence: null,
    usage,
  };
}

/**
 * Upstream Gemini chunks → the neutral sink. Each chunk carries whole parts (a function call
 * arrives complete, arguments and all); text parts are deltas. The stream has no terminal event:
 * a finishReason (or a blocked prompt) marks the answer complete, and it is finished when the body
 * ends, so usage in a later chunk still counts.
 */
export class GeminiChunkReader {
  private started = false;
  private stopped = false;
  private done = false;
  private failed = false;
  private calls = 0;
  private base = '';

  constructor(private readonly ctx: ResponseContext) {}

  read(f: Frame, sink: IrSink): void {
    if (this.done || this.failed) return;
    if (f.kind === 'comment') return sink.keepalive(f.comment ?? '');
    // A text chunk read on the fast path (streams/frame.ts): its text and running usage, no JSON.
    if (f.deltaText !== null && this.started) {
      if (f.deltaText) sink.text(f.deltaText);
      if (f.usage) sink.usage(usageOfFrame(f.usage));
      return;
    }
    const j = f.json;
    if (f.error || (j && j.error)) {
      this.failed = true;
      return sink.error(f.error ?? { status: 500, type: '', code: null, message: String(j.error?.message ?? 'upstream stream error') });
    }
    if (!j) return;
    if (!this.started) {
      this.started = true;
      this.base = idBase(str(j.responseId), this.ctx.requestId);
      sink.start(str(j.responseId), str(j.modelVersion));
    }
    const cand = Array.isArray(j.candidates) ? j.candidates[0] : null;
    const parts = cand?.content?.parts;
    if (Array.isArray(parts)) for (const p of parts) this.part(p, sink);
    if (j.usageMetadata) sink.usage(usageFromGemini(j.usageMetadata));
    if (cand && typeof cand.finishReason === 'string' && cand.finishReason) {
      this.stopped = true;
      sink.stop(stopFromGemini(cand.finishReason, this.calls > 0), null);
    } else if (!cand && str(j.promptFeedback?.blockReason)) {
      this.stopped = true;
      sink.stop('refusal', null);
    }
  }

  private part(p: unknown, sink: IrSink): void {
    if (!isObject(p)) return;
    const sig = str(p.thoughtSignature);
    if (p.thought === true) {
      sink.reasoning(typeof p.text === 'string' ? p.text : '');
      if (sig) sink.signature(sig);
      return;
    }
    if (sig) {
      sink.reasoning('');
      sink.signature(sig);
    }
    if (isObject(p.functionCall)) {
      const fc = p.functionCall;
      const key = this.calls++;
      sink.toolStart(key, str(fc.id) ?? `call_${this.base}_${key}`, String(fc.name ?? ''));
      sink.toolArgs(key, argsJson(fc.args));
      sink.blockEnd();
    } else if (typeof p.text === 'string' && p.text) sink.text(p.text);
  }

  /** The body ended: complete after a finishReason, else truncated. */
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

// ---- writing a Gemini answer for the client ------------------------------------------------------

type GeminiPart = Record<string, unknown>;

/** The parts of a neutral answer; a signature with no thought text goes onto the part after it. */
function partsOf(content: readonly IrContent[]): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let carried: string | null = null;
  const flushCarried = () => {
    if (carried) parts.push({ text: '', thought: true, thoughtSignature: carried });
    carried = null;
  };
  for (const c of content) {
    if (c.type === 'text') {
      if (!c.text) continue;
      parts.push(carried ? { text: c.text, thoughtSignature: carried } : { text: c.text });
      carried = null;
    } else if (c.type === 'reasoning') {
      flushCarried();
      // Redacted thinking has no Gemini form: it is not shown.
      if (c.redacted) continue;
      if (c.text) parts.push(c.signature ? { text: c.text, thought: true, thoughtSignature: c.signature } : { text: c.text, thought: true });
      else carried = c.signature;
    } else {
      const part: GeminiPart = { functionCall: { id: c.id, name: c.name, args: argumentsObject(c.arguments).value } };
      if (carried) part.thoughtSignature = carried;
      carried = null;
      parts.push(part);
    }
  }
  flushCarried();
  return parts;
}

export function writeGeminiResponse(r: IrResponse, ctx: ResponseContext): Record<string, unknown> {
  return {
    candidates: [{ content: { parts: partsOf(r.content), role: 'model' }, finishReason: stopToGemini(r.stop), index: 0 }],
    usageMetadata: usageToGemini(r.usage),
    modelVersion: r.model ?? ctx.model,
    responseId: idBase(r.id, ctx.requestId),
  };
}

interface OpenCall {
  id: string;
  name: string;
  args: string;
  signature: string | null;
}

/**
 * Neutral events → Gemini chunks, as SSE `data:` events or as the elements of one JSON array.
 * Text and thoughts go out as they come. Function calls are held until text follows them or the
 * answer ends, because Gemini sends a call whole and its arguments come in pieces; like Gemini,
 * the last chunk then carries the calls with the finishReason and the usage. A signature waits
 * for the part after it (see above).
 */
export class GeminiChunkWriter implements IrWriter {
  private out = '';
  private started = false;
  private done = false;
  private responseId: string;
  private model: string;
  private readonly framing: GeminiFraming;
  private readonly calls = new Map<number, OpenCall>();
  private heldSignature: string | null = null;
  private tools = 0;
  private stopReason: IrStop | null = null;
  private textSoFar = '';
  private open: GeminiState['open'] = null;
  private readonly trackText: boolean;
  /** What follows a plain text part in its chunk (the model and response id), built once per stream. */
  private textTail: string | null = null;
  readonly usageSoFar: IrUsage = emptyUsage();

  /** `resume`: continue a stream the client has been reading (clientState.ts), after what it was sent. */
  constructor(
    private readonly ctx: ResponseContext,
    resume?: GeminiState,
  ) {
    this.responseId = idBase(null, ctx.requestId);
    this.model = ctx.model;
    this.framing = resume?.framing ?? ctx.geminiFraming ?? 'sse';
    this.trackText = ctx.trackText === true;
    if (resume) {
      this.started = resume.started;
      this.responseId = resume.responseId;
      this.model = resume.model || ctx.model;
      this.tools = resume.tools;
      this.textSoFar = resume.text;
      this.open = resume.open;
      mergeUsage(this.usageSoFar, resume.usage);
    }
  }

  snapshot(): GeminiState {
    return {
      shape: 'gemini',
      framing: this.framing,
      text: this.textSoFar,
      open: this.open,
      tools: this.tools,
      stopped: this.stopReason !== null,
      done: this.done,
      usage: { ...this.usageSoFar },
      started: this.started,
      responseId: this.responseId,
      model: this.model,
    };
  }

  take(): string {
    const s = this.out;
    this.out = '';
    return s;
  }

  /** One chunk in the stream's framing (JSON array: the opening bracket before the first). */
  private emit(body: Record<string, unknown>): void {
    const json = JSON.stringify(body);
    if (this.framing === 'sse') this.out += `data: ${json}\n\n`;
    else {
      this.out += this.started ? `,\r\n${json}` : `[${json}`;
    }
    this.started = true;
  }

  private chunk(parts: GeminiPart[], finishReason: string | null = null): void {
    const cand: Record<string, unknown> = { content: { parts, role: 'model' } };
    if (finishReason) cand.finishReason = finishReason;
    cand.index = 0;
    const body: Record<string, unknown> = { candidates: [cand] };
    if (finishReason) body.usageMetadata = usageToGemini(this.usageSoFar);
    body.modelVersion = this.model;
    body.responseId = this.responseId;
    this.emit(body);
  }

  /** The held function calls (and a signature no call took) as parts, in order. */
  private heldParts(): GeminiPart[] {
    const parts: GeminiPart[] = [];
    for (const c of this.calls.values()) {
      const part: GeminiPart = { functionCall: { id: c.id, name: c.name, args: argumentsObject(c.args).value } };
      if (c.signature) part.thoughtSignature = c.signature;
      parts.push(part);
    }
    this.calls.clear();
    if (this.heldSignature) parts.push({ text: '', thought: true, thoughtSignature: this.heldSignature });
    this.heldSignature = null;
    return parts;
  }

  /** Held calls out before other content; a signature no part took goes out as an empty signed thought. */
  private flush(keepSignature: boolean): void {
    // The usual case, between two text deltas: nothing held, nothing to write.
    if (this.calls.size === 0 && (keepSignature || this.heldSignature === null)) return;
    const sig = keepSignature ? this.heldSignature : null;
    if (keepSignature) this.heldSignature = null;
    const parts = this.heldParts();
    if (parts.length) this.chunk(parts);
    this.heldSignature = sig;
  }

  start(id: string | null, model: string | null): void {
    if (this.started) return;
    if (id) this.responseId = idBase(id, this.ctx.requestId);
    if (model) this.model = model;
    this.textTail = null;
  }

  /**
   * A chunk of one plain text part, written from a template (only the text is serialised): the
   * same bytes as `chunk([{ text }])`, which costs a JSON.stringify of the whole chunk per delta.
   */
  private textChunk(text: string): void {
    if (typeof this.model !== 'string' || typeof this.responseId !== 'string') return this.chunk([{ text }]);
    this.textTail ??= `}],"role":"model"},"index":0}],"modelVersion":${JSON.stringify(this.model)},"responseId":${JSON.stringify(this.responseId)}}`;
    const json = `{"candidates":[{"content":{"parts":[{"text":${JSON.stringify(text)}${this.textTail}`;
    if (this.framing === 'sse') this.out += `data: ${json}\n\n`;
    else this.out += this.started ? `,\r\n${json}` : `[${json}`;
    this.started = true;
  }

  text(text: string): void {
    if (this.done || text === '') return;
    this.flush(true);
    this.open = 'text';
    if (this.trackText) this.textSoFar += text;
    if (!this.heldSignature) return this.textChunk(text);
    const part: GeminiPart = { text, thoughtSignature: this.heldSignature };
    this.heldSignature = null;
    this.chunk([part]);
  }

  reasoning(text: string): void {
    if (this.done) return;
    this.flush(false);
    this.open = 'thinking';
    if (text) this.chunk([{ text, thought: true }]);
  }

  /** Held: it goes onto the next function call, or out as an empty signed thought. */
  signature(signature: string): void {
    if (this.done || !signature) return;
    if (this.heldSignature) this.flush(false);
    this.heldSignature = signature;
  }

  redacted(): void {}

  toolStart(key: number, id: string, name: string): void {
    if (this.done) return;
    this.open = 'tool';
    this.tools++;
    this.calls.set(key, { id, name, args: '', signature: this.heldSignature });
    this.heldSignature = null;
  }

  toolArgs(key: number, json: string): void {
    if (this.done || json === '') return;
    const c = this.calls.get(key);
    if (c) c.args += json;
  }

  blockEnd(): void {
    if (!this.done) this.open = null;
  }

  usage(u: Partial<IrUsage>): void {
    mergeUsage(this.usageSoFar, u);
  }

  stop(reason: IrStop): void {
    this.stopReason = reason;
  }

  finish(): void {
    if (this.done) return;
    const parts = this.heldParts();
    this.chunk(parts.length ? parts : [{ text: '' }], stopToGemini(this.stopReason ?? 'end_turn'));
    this.done = true;
    if (this.framing === 'json-array') this.out += ']';
  }

  error(e: InbandError): void {
    if (this.done) return;
    this.calls.clear();
    this.emit(geminiErrorBody(e));
    this.done = true;
    if (this.framing === 'json-array') this.out += ']';
  }

  /** SSE: a comment. JSON array: whitespace, which JSON allows between elements. */
  keepalive(comment: string): void {
    if (this.done) return;
    this.out += this.framing === 'sse' ? sseComment(comment || 'keepalive') : '\n';
  }
}

/** The Gemini sides for the codec table (the wiring step plugs them in beside the others). */
export const geminiUpstreamSide: UpstreamSide = {
  readJson: (j, ctx) => readGeminiResponse(j, ctx),
  reader: (ctx) => new GeminiChunkReader(ctx),
};

export const geminiInboundSide: InboundSide = {
  writeJson: writeGeminiResponse,
  writer: (ctx): ClientWriter => new GeminiChunkWriter(ctx),
};
