// OpenAI Responses answers for a Responses client (Codex, the openai SDK), written from the neutral
// model: a Response object, or the event sequence the openai SDK's ResponseStream accumulates —
// response.created, in_progress, output items added / their deltas / done with output and content
// indexes, sequence numbers from 0, and response.completed (or .incomplete / .failed) carrying every
// output item and the usage. Finished items are serialised once and reused in the final event.
import type { Response as OpenAIResponse } from 'openai/resources/responses/responses';
import type { InbandError } from '../streams/errorStatus';
import { sseComment } from '../streams/sse';
import { idBase, isObject } from './content';
import { openaiCode } from './errors';
import { emptyUsage, mergeUsage, type IrResponse, type IrStop, type IrUsage, type IrWriter } from './ir';
import { toEnvelope } from './reasoningEnvelope';
import { stopToResponses, usageToResponses } from './stops';
import { responsesCallName, toolNameMap, type ToolNameMap } from './toolNames';
import type { ResponsesState } from './clientState';
import type { ResponseContext } from './types';

/** The request settings a Response echoes, as JSON members (serialised once per response). */
function echoMembers(req: Record<string, any>): string {
  const reasoning = isObject(req.reasoning) ? req.reasoning : {};
  const echo = {
    background: false,
    instructions: typeof req.instructions === 'string' ? req.instructions : null,
    max_output_tokens: typeof req.max_output_tokens === 'number' ? req.max_output_tokens : null,
    parallel_tool_calls: typeof req.parallel_tool_calls === 'boolean' ? req.parallel_tool_calls : true,
    previous_response_id: null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    store: false,
    temperature: typeof req.temperature === 'number' ? req.temperature : null,
    text: isObject(req.text) ? req.text : { format: { type: 'text' } },
    tool_choice: req.tool_choice ?? 'auto',
    tools: Array.isArray(req.tools) ? req.tools : [],
    top_p: typeof req.top_p === 'number' ? req.top_p : null,
    truncation: req.truncation === 'auto' ? 'auto' : 'disabled',
    user: typeof req.user === 'string' ? req.user : null,
    metadata: isObject(req.metadata) ? req.metadata : {},
  };
  return JSON.stringify(echo).slice(1, -1);
}

const wantsEncrypted = (req: Record<string, any>) => Array.isArray(req.include) && req.include.includes('reasoning.encrypted_content');

function messageItem(id: string, text: string, status: 'completed' | 'incomplete' = 'completed') {
  return { id, type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] };
}

function reasoningItem(id: string, text: string, env: string | null, encrypted: boolean) {
  const item: Record<string, unknown> = { id, type: 'reasoning', summary: text ? [{ type: 'summary_text', text }] : [] };
  if (encrypted) item.encrypted_content = env;
  return item;
}

/** A function call item; a namespaced tool's call carries `namespace` beside its own `name`, as OpenAI's do. */
function functionItem(id: string, callId: string, call: { name: string; namespace?: string }, args: string, status = 'completed') {
  const item: Record<string, unknown> = { id, type: 'function_call', status, call_id: callId, name: call.name };
  if (call.namespace !== undefined) item.namespace = call.namespace;
  item.arguments = args;
  return item;
}

// ---- JSON -------------------------------------------------------------------------------------

export function writeResponse(r: IrResponse, ctx: ResponseContext): Record<string, unknown> {
  const base = idBase(r.id, ctx.requestId);
  const encrypted = wantsEncrypted(ctx.request);
  const names = toolNameMap(ctx.request.tools);
  const output: Record<string, unknown>[] = [];
  let pendingText: string | null = null;
  const flushText = () => {
    if (pendingText !== null) output.push(messageItem(`msg_${base}_${output.length}`, pendingText));
    pendingText = null;
  };
  for (const c of r.content) {
    if (c.type === 'text') {
      if (c.text) pendingText = (pendingText ?? '') + c.text;
      continue;
    }
    flushText();
    if (c.type === 'reasoning') output.push(reasoningItem(`rs_${base}_${output.length}`, c.text, toEnvelope(c), encrypted));
    else output.push(functionItem(`fc_${base}_${output.length}`, c.id, responsesCallName(names, c.name), c.arguments));
  }
  flushText();
  const { status, reason } = stopToResponses(r.stop);
  const body = JSON.parse(
    `{"id":${JSON.stringify(`resp_${base}`)},"object":"response","created_at":${Math.floor(ctx.now / 1000)},"status":"${status}","error":null,` +
      `"incomplete_details":${reason ? JSON.stringify({ reason }) : 'null'},"model":${JSON.stringify(r.model ?? ctx.model)},"output":[],"usage":null,${echoMembers(ctx.request)}}`,
  ) as Partial<OpenAIResponse> & Record<string, unknown>;
  body.output = output as any;
  body.usage = usageToResponses(r.usage) as any;
  return body;
}

// ---- stream -----------------------------------------------------------------------------------

interface Item {
  kind: 'message' | 'reasoning' | 'tool';
  index: number;
  id: string;
  parts: string[];
  callId: string;
  name: string;
  namespace?: string;
  key: number;
  signature: string | null;
  redacted: string | null;
}

export class ResponsesEventWriter implements IrWriter {
  private out = '';
  private seq = 0;
  private started = false;
  private done = false;
  private respId: string;
  private base: string;
  private model: string;
  private createdAt: number;
  private readonly echo: string;
  private readonly encrypted: boolean;
  private readonly names: ToolNameMap | null;
  /** Finished items, serialised once, by output index. */
  private readonly finished: string[] = [];
  private message: Item | null = null;
  private thinking: Item | null = null;
  private readonly tools = new Map<number, Item>();
  private last: Item | null = null;
  private stopReason: IrStop | null = null;
  private toolCount = 0;
  private textSoFar = '';
  private readonly trackText: boolean;
  readonly usageSoFar: IrUsage = emptyUsage();

  /** `resume`: continue a stream the client has been reading (clientState.ts), after what it was sent. */
  constructor(
    private readonly ctx: ResponseContext,
    resume?: ResponsesState,
  ) {
    this.base = idBase(null, ctx.requestId);
    this.respId = `resp_${this.base}`;
    this.model = ctx.model;
    this.createdAt = Math.floor(ctx.now / 1000);
    this.echo = echoMembers(ctx.request);
    this.encrypted = wantsEncrypted(ctx.request);
    this.names = toolNameMap(ctx.request.tools);
    this.trackText = ctx.trackText === true;
    if (resume) {
      this.seq = resume.seq;
      this.started = resume.started;
      this.respId = resume.respId;
      this.base = resume.base;
      this.model = resume.model || ctx.model;
      this.createdAt = resume.createdAt;
      this.finished.push(...resume.items);
      this.toolCount = resume.tools;
      this.textSoFar = resume.text;
      mergeUsage(this.usageSoFar, resume.usage);
      const m = resume.message;
      if (m) {
        while (this.finished.length <= m.index) this.finished.push('');
        this.message = { kind: 'message', index: m.index, id: m.id, parts: [...m.parts], callId: '', name: '', key: -1, signature: null, redacted: null };
        this.last = this.message;
      }
    }
  }

  snapshot(): ResponsesState {
    const m = this.message;
    return {
      shape: 'openai-responses',
      text: this.textSoFar,
      open: m ? 'text' : this.thinking ? 'thinking' : this.tools.size > 0 ? 'tool' : null,
      tools: this.toolCount,
      stopped: this.stopReason !== null,
      done: this.done,
      usage: { ...this.usageSoFar },
      started: this.started,
      respId: this.respId,
      base: this.base,
      model: this.model,
      createdAt: this.createdAt,
      seq: this.seq,
      items: [...this.finished],
      message: m ? { id: m.id, index: m.index, parts: [...m.parts] } : null,
      stopReason: this.stopReason,
    };
  }

  take(): string {
    const s = this.out;
    this.out = '';
    return s;
  }

  /** One event; `members` are its JSON members after `type` (without braces). */
  private ev(type: string, members: string): void {
    this.out += `event: ${type}\ndata: {"type":"${type}",${members},"sequence_number":${this.seq++}}\n\n`;
  }

  private response(status: string, extra: { error?: string; incomplete?: string | null; usage?: boolean } = {}): string {
    return (
      `{"id":${JSON.stringify(this.respId)},"object":"response","created_at":${this.createdAt},"status":"${status}",` +
      `"error":${extra.error ?? 'null'},"incomplete_details":${extra.incomplete ?? 'null'},"model":${JSON.stringify(this.model)},` +
      `"output":[${this.finished.filter((s) => s !== '').join(',')}],"usage":${extra.usage ? JSON.stringify(usageToResponses(this.usageSoFar)) : 'null'},${this.echo}}`
    );
  }

  start(id: string | null, model: string | null): void {
    if (this.started) return;
    this.started = true;
    if (id) {
      this.base = idBase(id, this.ctx.requestId);
      this.respId = `resp_${this.base}`;
    }
    if (model) this.model = model;
    const r = this.response('in_progress');
    this.ev('response.created', `"response":${r}`);
    this.ev('response.in_progress', `"response":${r}`);
  }

  private ensureStarted(): void {
    if (!this.started) this.start(null, null);
  }

  private newItem(kind: Item['kind'], prefix: string): Item {
    const index = this.finished.length;
    this.finished.push('');
    const item: Item = { kind, index, id: `${prefix}_${this.base}_${index}`, parts: [], callId: '', name: '', key: -1, signature: null, redacted: null };
    this.last = item;
    return item;
  }

  private closeMessage(): void {
    const m = this.message;
    if (!m) return;
    this.message = null;
    const text = m.parts.join('');
    const at = `"item_id":${JSON.stringify(m.id)},"output_index":${m.index},"content_index":0`;
    this.ev('response.output_text.done', `${at},"text":${JSON.stringify(text)},"logprobs":[]`);
    this.ev('response.content_part.done', `${at},"part":{"type":"output_text","text":${JSON.stringify(text)},"annotations":[],"logprobs":[]}`);
    const item = JSON.stringify(messageItem(m.id, text));
    this.finished[m.index] = item;
    this.ev('response.output_item.done', `"output_index":${m.index},"item":${item}`);
  }

  private closeThinking(): void {
    const r = this.thinking;
    if (!r) return;
    this.thinking = null;
    const text = r.parts.join('');
    if (!r.redacted) {
      const at = `"item_id":${JSON.stringify(r.id)},"output_index":${r.index},"summary_index":0`;
      this.ev('response.reasoning_summary_text.done', `${at},"text":${JSON.stringify(text)}`);
      this.ev('response.reasoning_summary_part.done', `${at},"part":{"type":"summary_text","text":${JSON.stringify(text)}}`);
    }
    const item = JSON.stringify(reasoningItem(r.id, text, toEnvelope(r), this.encrypted));
    this.finished[r.index] = item;
    this.ev('response.output_item.done', `"output_index":${r.index},"item":${item}`);
  }

  private closeTool(t: Item): void {
    this.tools.delete(t.key);
    const args = t.parts.join('');
    this.ev(
      'response.function_call_arguments.done',
      `"item_id":${JSON.stringify(t.id)},"output_index":${t.index},"name":${JSON.stringify(t.name)},"arguments":${JSON.stringify(args)}`,
    );
    const item = JSON.stringify(functionItem(t.id, t.callId, t, args));
    this.finished[t.index] = item;
    this.ev('response.output_item.done', `"output_index":${t.index},"item":${item}`);
  }

  private closeTools(): void {
    const open = [...this.tools.values()].sort((a, b) => a.index - b.index);
    for (const t of open) this.closeTool(t);
  }

  private closeAll(): void {
    const open: Item[] = [...this.tools.values()];
    if (this.message) open.push(this.message);
    if (this.thinking) open.push(this.thinking);
    open.sort((a, b) => a.index - b.index);
    for (const it of open) {
      if (it.kind === 'message') this.closeMessage();
      else if (it.kind === 'reasoning') this.closeThinking();
      else this.closeTool(it);
    }
  }

  text(text: string): void {
    if (this.done || text === '') return;
    this.ensureStarted();
    if (!this.message) {
      this.closeThinking();
      this.closeTools();
      const m = (this.message = this.newItem('message', 'msg'));
      this.ev('response.output_item.added', `"output_index":${m.index},"item":${JSON.stringify({ id: m.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] })}`);
      this.ev(
        'response.content_part.added',
        `"item_id":${JSON.stringify(m.id)},"output_index":${m.index},"content_index":0,"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}`,
      );
    }
    const m = this.message;
    m.parts.push(text);
    if (this.trackText) this.textSoFar += text;
    this.ev('response.output_text.delta', `"item_id":${JSON.stringify(m.id)},"output_index":${m.index},"content_index":0,"delta":${JSON.stringify(text)},"logprobs":[]`);
  }

  private openThinking(): Item {
    this.closeMessage();
    this.closeTools();
    const r = (this.thinking = this.newItem('reasoning', 'rs'));
    this.ev('response.output_item.added', `"output_index":${r.index},"item":${JSON.stringify({ id: r.id, type: 'reasoning', summary: [] })}`);
    this.ev(
      'response.reasoning_summary_part.added',
      `"item_id":${JSON.stringify(r.id)},"output_index":${r.index},"summary_index":0,"part":{"type":"summary_text","text":""}`,
    );
    return r;
  }

  reasoning(text: string): void {
    if (this.done) return;
    this.ensureStarted();
    const r = this.thinking && !this.thinking.redacted ? this.thinking : this.openThinking();
    r.parts.push(text);
    this.ev('response.reasoning_summary_text.delta', `"item_id":${JSON.stringify(r.id)},"output_index":${r.index},"summary_index":0,"delta":${JSON.stringify(text)}`);
  }

  signature(signature: string): void {
    if (this.thinking) this.thinking.signature = signature;
  }

  redacted(data: string): void {
    if (this.done) return;
    this.ensureStarted();
    this.closeMessage();
    this.closeThinking();
    this.closeTools();
    const r = (this.thinking = this.newItem('reasoning', 'rs'));
    r.redacted = data;
    this.ev('response.output_item.added', `"output_index":${r.index},"item":${JSON.stringify({ id: r.id, type: 'reasoning', summary: [] })}`);
    this.closeThinking();
  }

  toolStart(key: number, id: string, name: string): void {
    if (this.done) return;
    this.ensureStarted();
    this.closeMessage();
    this.closeThinking();
    const t = this.newItem('tool', 'fc');
    this.toolCount++;
    t.callId = id;
    const call = responsesCallName(this.names, name);
    t.name = call.name;
    t.namespace = call.namespace;
    t.key = key;
    this.tools.set(key, t);
    this.ev('response.output_item.added', `"output_index":${t.index},"item":${JSON.stringify(functionItem(t.id, id, t, '', 'in_progress'))}`);
  }

  toolArgs(key: number, json: string): void {
    if (this.done || json === '') return;
    const t = this.tools.get(key);
    if (!t) return;
    t.parts.push(json);
    this.ev('response.function_call_arguments.delta', `"item_id":${JSON.stringify(t.id)},"output_index":${t.index},"delta":${JSON.stringify(json)}`);
  }

  blockEnd(): void {
    const it = this.last;
    if (this.done || !it) return;
    if (it === this.message) this.closeMessage();
    else if (it === this.thinking) this.closeThinking();
    else if (it.kind === 'tool' && this.tools.get(it.key) === it) this.closeTool(it);
  }

  usage(u: Partial<IrUsage>): void {
    mergeUsage(this.usageSoFar, u);
  }

  stop(reason: IrStop): void {
    this.stopReason = reason;
  }

  finish(): void {
    if (this.done) return;
    this.ensureStarted();
    this.closeAll();
    this.done = true;
    const { status, reason } = stopToResponses(this.stopReason ?? 'end_turn');
    if (status === 'incomplete') {
      this.ev('response.incomplete', `"response":${this.response('incomplete', { incomplete: JSON.stringify({ reason }), usage: true })}`);
    } else {
      this.ev('response.completed', `"response":${this.response('completed', { usage: true })}`);
    }
  }

  error(e: InbandError): void {
    if (this.done) return;
    this.ensureStarted();
    this.done = true;
    const code = openaiCode(e);
    this.ev('response.failed', `"response":${this.response('failed', { error: JSON.stringify({ code, message: e.message }), usage: true })}`);
  }

  keepalive(comment: string): void {
    if (!this.done) this.out += sseComment(comment || 'keepalive');
  }
}
