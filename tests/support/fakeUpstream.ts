// A fake upstream provider on 127.0.0.1, port 0. It answers in OpenAI, Anthropic and Gemini shapes
// (JSON or SSE), can be scripted per key, model or path (status, headers, body, streamed chunks
// with delays, stalls, hangs, dropped sockets, a concurrency cap) and records every request it
// receives (and when its response ended), the most requests in flight at once, and requests whose
// client went away.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  seq: number;
  method: string;
  path: string;
  /** The query string, without the "?" ('' when there is none). */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  key: string | null;
  model: string | null;
  body: Record<string, unknown> | null;
  rawBody: string;
  receivedAt: number;
  /** A Gemini call: its method (generateContent, streamGenerateContent, countTokens) and whether it asked for SSE. */
  gemini: { method: string; sse: boolean } | null;
  /** True when the client closed the connection before the response finished. */
  clientClosed: boolean;
  /** When the response ended or the connection closed (Date.now()); null while it is open. */
  finishedAt: number | null;
}

export interface Chunk {
  data: string;
  delayMs?: number;
  /** Written only once this settles (lets a test prove chunks flow before the stream ends). */
  gate?: Promise<unknown>;
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string;
  /** Raw body pieces written one by one (for SSE, include the "event:/data:" framing). */
  chunks?: Chunk[];
  /** Wait before sending headers. */
  delayMs?: number;
  /** Send headers, then nothing until the client goes away. */
  stallAfterHeaders?: boolean;
  /** Never answer at all (until the client goes away). */
  hang?: boolean;
  /** Destroy the socket instead of answering. */
  destroy?: boolean;
  /**
   * What happens once `chunks` are written: end the response (default), keep it open and send
   * nothing more until the client goes away (a mid-stream stall), or destroy the socket (a
   * stream that dies mid-way; `cut` does the same once every chunk written has left, so the
   * client surely read them first).
   */
  afterChunks?: 'end' | 'stall' | 'destroy' | 'cut';
  /** A stream the test writes frame by frame (LiveStream): headers now, then whatever it sends. */
  live?: LiveStream;
}

/**
 * A streamed answer under the test's control, frame by frame: the fake sends the headers when the
 * request arrives, then writes what `send` gives it, until `end` (a clean end), `cut` (the socket
 * dies) or the client goes away. `attached` resolves when the request has arrived.
 */
export class LiveStream {
  private res: ServerResponse | null = null;
  private req: IncomingMessage | null = null;
  private queue: string[] = [];
  private onAttach!: () => void;
  readonly attached: Promise<void> = new Promise((r) => (this.onAttach = r));
  /** The request this stream answers (set once it arrived). */
  request: RecordedRequest | null = null;

  /** @internal the fake hands the response over */
  attach(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): void {
    this.req = req;
    this.res = res;
    this.request = rec;
    for (const d of this.queue) res.write(d);
    this.queue = [];
    this.onAttach();
  }

  /** Writes frames (raw SSE text or Chunks) now, or as soon as the request arrives. */
  send(...data: (string | Chunk)[]): this {
    for (const d of data) {
      const text = typeof d === 'string' ? d : d.data;
      if (this.res) {
        if (!this.res.destroyed) this.res.write(text);
      } else this.queue.push(text);
    }
    return this;
  }

  /** Ends the response cleanly (whatever was sent is all there is). */
  end(): void {
    if (this.res && !this.res.destroyed) this.res.end();
  }

  /** The connection dies mid-stream. */
  cut(): void {
    this.req?.socket.destroy();
  }

  /** The proxy closed the connection (it gave up on this stream, or its client left). */
  get closedByClient(): boolean {
    return this.request?.clientClosed ?? false;
  }
}

export type Responder = ScriptedResponse | ((req: RecordedRequest) => ScriptedResponse | undefined);

export interface Match {
  key?: string;
  model?: string;
  path?: string | RegExp;
}

interface Script {
  match: Match;
  responses: Responder[];
  repeatLast: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class FakeUpstream {
  private server: Server | null = null;
  private scripts: Script[] = [];
  private sockets = new Set<Socket>();
  readonly requests: RecordedRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private cap: { limit: number; over: ScriptedResponse } | null = null;
  private seq = 0;
  private waiters: (() => void)[] = [];

  static async start(): Promise<FakeUpstream> {
    const f = new FakeUpstream();
    await f.listen();
    return f;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  /** Base URL for Anthropic-protocol connections (the SDK convention: no /v1). */
  get anthropicUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Base URL for Gemini connections (the Google convention: no /v1beta). */
  get geminiUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Base URL for OpenAI-protocol connections (with /v1). */
  get openaiUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Starts listening (FakeUpstream.start() does this for you). */
  listen(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    return new Promise((resolve) => {
      server.listen(0, '127.0.0.1', () => {
        this.server = server;
        resolve();
      });
    });
  }

  /**
   * Scripts responses for requests that match. Responses are used in order; with repeatLast (the
   * default) the last one keeps answering. Later scripts win over earlier ones.
   */
  script(match: Match, responses: Responder[], opts: { repeatLast?: boolean } = {}): this {
    this.scripts.unshift({ match, responses: [...responses], repeatLast: opts.repeatLast ?? true });
    return this;
  }

  /** Answers `over` to requests beyond `limit` in flight. */
  capConcurrency(limit: number, over: ScriptedResponse = { status: 429, json: { error: { type: 'rate_limit_error', message: 'too many concurrent requests' } } }): this {
    this.cap = { limit, over };
    return this;
  }

  reset(): void {
    this.scripts = [];
    this.requests.length = 0;
    this.cap = null;
    this.maxInFlight = this.inFlight;
  }

  requestsFor(match: Match): RecordedRequest[] {
    return this.requests.filter((r) => matches(match, r));
  }

  /** Resolves when cond() holds (checked on every request event), or rejects after timeoutMs. */
  async waitFor(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
    const start = Date.now();
    while (!cond()) {
      if (Date.now() - start > timeoutMs) throw new Error('fake upstream: condition not met in time');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 20);
      });
    }
  }

  private notify() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((fn) => fn());
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private pick(rec: RecordedRequest): ScriptedResponse | undefined {
    for (const s of this.scripts) {
      if (!matches(s.match, rec)) continue;
      const r = s.responses.length > 1 || !s.repeatLast ? s.responses.shift() : s.responses[0];
      if (r === undefined) continue;
      const resolved = typeof r === 'function' ? r(rec) : r;
      if (resolved) return resolved;
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> | null = null;
    try {
      body = rawBody ? (JSON.parse(rawBody) as Record<string, unknown>) : null;
    } catch {
      body = null;
    }
    const auth = req.headers['authorization'];
    const url = req.url ?? '/';
    const gemini = GEMINI_PATH.exec(url.split('?')[0]!);
    const goog = req.headers['x-goog-api-key'];
    const key =
      (typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : null) ??
      (typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : null) ??
      (typeof goog === 'string' ? goog : null) ??
      new URLSearchParams(url.split('?')[1] ?? '').get('key');
    const rec: RecordedRequest = {
      seq: ++this.seq,
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0]!,
      query: url.split('?')[1] ?? '',
      headers: { ...req.headers },
      key,
      // A Gemini call names its model in the path (models/{model}:generateContent).
      model: gemini ? decodeURIComponent(gemini[1]!) : typeof body?.model === 'string' ? body.model : null,
      gemini: gemini ? { method: gemini[2]!, sse: /[?&]alt=sse\b/.test(url) } : null,
      body,
      rawBody,
      receivedAt: Date.now(),
      clientClosed: false,
      finishedAt: null,
    };
    this.requests.push(rec);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let finished = false;
    res.on('close', () => {
      if (!res.writableFinished) rec.clientClosed = true;
      rec.finishedAt = Date.now();
      if (!finished) {
        finished = true;
        this.inFlight--;
      }
      this.notify();
    });
    this.notify();

    const overCap = this.cap !== null && this.inFlight > this.cap.limit;
    const scripted = overCap ? this.cap!.over : this.pick(rec);
    const r = scripted ?? defaultResponse(rec);
    try {
      await this.respond(req, res, rec, r);
    } catch {
      res.destroy();
    }
  }

  private async respond(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, r: ScriptedResponse) {
    if (r.delayMs) await sleep(r.delayMs);
    if (r.destroy) {
      req.socket.destroy();
      return;
    }
    if (r.hang) return; // stays open until the client goes away
    const status = r.status ?? 200;
    const headers: Record<string, string> = { ...r.headers };
    if (r.live) {
      res.writeHead(status, { 'content-type': 'text/event-stream', ...headers });
      res.flushHeaders();
      r.live.attach(req, res, rec);
      return; // stays open until the test ends or cuts it, or the client goes away
    }
    if (r.chunks) {
      headers['content-type'] ??= 'text/event-stream';
      res.writeHead(status, headers);
      res.flushHeaders();
      for (const c of r.chunks) {
        if (c.delayMs) await sleep(c.delayMs);
        if (c.gate) await c.gate;
        if (res.destroyed) return;
        res.write(c.data);
      }
      if (r.afterChunks === 'stall') return; // stays open until the client goes away
      if (r.afterChunks === 'destroy') {
        req.socket.destroy();
        return;
      }
      if (r.afterChunks === 'cut') {
        // Close the connection gracefully (FIN after the written bytes) before the body is complete.
        req.socket.end();
        return;
      }
      res.end();
      return;
    }
    if (r.stallAfterHeaders) {
      res.writeHead(status, { 'content-type': 'text/event-stream', ...headers });
      res.flushHeaders();
      return;
    }
    const body = r.json !== undefined ? JSON.stringify(r.json) : (r.body ?? '');
    if (r.json !== undefined) headers['content-type'] ??= 'application/json';
    res.writeHead(status, headers);
    res.end(body);
    void rec;
  }
}

function matches(m: Match, r: RecordedRequest): boolean {
  if (m.key !== undefined && r.key !== m.key) return false;
  if (m.model !== undefined && r.model !== m.model) return false;
  if (m.path !== undefined) {
    if (typeof m.path === 'string' ? r.path !== m.path : !m.path.test(r.path)) return false;
  }
  return true;
}

// ---- default protocol-shaped answers -----------------------------------------------------------

export const sse = (event: string | null, data: unknown, delayMs?: number): Chunk => ({
  data: `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
  delayMs,
});

export function anthropicMessage(model: string, text = 'Hello from the fake upstream.') {
  return {
    id: 'msg_fake_1',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 7 },
  };
}

export function anthropicStream(model: string, pieces = ['Hello', ' from', ' the', ' stream.'], delayMs?: number): Chunk[] {
  return [
    sse('message_start', {
      type: 'message_start',
      message: { id: 'msg_fake_s', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
    }),
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...pieces.map((p) => sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: p } }, delayMs)),
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: pieces.length } }),
    sse('message_stop', { type: 'message_stop' }),
  ];
}

export function openaiCompletion(model: string, text = 'Hello from the fake upstream.') {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 },
  };
}

export function openaiStream(model: string, pieces = ['Hello', ' from', ' the', ' stream.'], delayMs?: number): Chunk[] {
  const base = { id: 'chatcmpl-fake-s', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  return [
    sse(null, { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
    ...pieces.map((p) => sse(null, { ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] }, delayMs)),
    sse(null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    sse(null, { ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: pieces.length, total_tokens: 9 + pieces.length } }),
    sse(null, '[DONE]'),
  ];
}

export function responsesResult(model: string, text = 'Hello from the fake upstream.') {
  return {
    id: 'resp_fake',
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    model,
    output: [
      { type: 'message', id: 'msg_fake', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] },
    ],
    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  };
}

/** A tool call as the fakes script it: the id the model gives it, the tool name, the JSON arguments. */
export interface FakeToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** A Chat completion whose answer calls tools (finish_reason tool_calls), optionally after some text. */
export function openaiToolCompletion(model: string, calls: FakeToolCall[], text: string | null = null) {
  return {
    id: 'chatcmpl-fake-tools',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text,
          tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 },
  };
}

/**
 * A Chat stream that calls tools the way OpenAI streams them: a role chunk, optional text, then per
 * call a chunk with its id and name and its arguments split over two chunks, then finish_reason
 * tool_calls, a usage chunk and [DONE]. `terminal: false` leaves out the finish and [DONE] (a
 * stream cut before its end).
 */
export function openaiToolStream(model: string, calls: FakeToolCall[], opts: { text?: string; terminal?: boolean } = {}): Chunk[] {
  const base = { id: 'chatcmpl-fake-tools-s', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => sse(null, { ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out: Chunk[] = [chunk({ role: 'assistant', content: opts.text ? '' : null })];
  if (opts.text) out.push(chunk({ content: opts.text }));
  calls.forEach((c, index) => {
    const args = JSON.stringify(c.arguments);
    const half = Math.floor(args.length / 2);
    out.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
    out.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
    out.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
  });
  if (opts.terminal === false) return out;
  out.push(chunk({}, 'tool_calls'));
  out.push(sse(null, { ...base, choices: [], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } }));
  out.push(sse(null, '[DONE]'));
  return out;
}

/** An Anthropic message whose answer calls tools (stop_reason tool_use), optionally after some text. */
export function anthropicToolMessage(model: string, calls: FakeToolCall[], text: string | null = null) {
  return {
    id: 'msg_fake_tools',
    type: 'message',
    role: 'assistant',
    model,
    content: [...(text ? [{ type: 'text', text }] : []), ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments }))],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 40, output_tokens: 15 },
  };
}

/** An Anthropic stream that calls tools: text block (optional), one tool_use block per call with input_json_delta pieces. */
export function anthropicToolStream(model: string, calls: FakeToolCall[], text: string | null = null): Chunk[] {
  const out: Chunk[] = [
    sse('message_start', {
      type: 'message_start',
      message: { id: 'msg_fake_tools_s', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 40, output_tokens: 1 } },
    }),
  ];
  let index = 0;
  if (text) {
    out.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }));
    out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  for (const c of calls) {
    const args = JSON.stringify(c.arguments);
    const half = Math.floor(args.length / 2);
    out.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } }));
    out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(0, half) } }));
    out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(half) } }));
    out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  out.push(sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 15 } }));
  out.push(sse('message_stop', { type: 'message_stop' }));
  return out;
}

function defaultResponse(rec: RecordedRequest): ScriptedResponse {
  const model = rec.model ?? 'unknown';
  const stream = rec.body?.stream === true;
  if (rec.gemini) {
    if (rec.gemini.method === 'countTokens') return { json: { totalTokens: 42 } };
    if (rec.gemini.method === 'generateContent') return { json: geminiResult(model) };
    return rec.gemini.sse ? { chunks: geminiStream(model) } : { body: `[${geminiStreamChunks(model).map((c) => JSON.stringify(c)).join(',\r\n')}]`, headers: { 'content-type': 'application/json' } };
  }
  if (rec.path === '/v1beta/models') {
    return { json: { models: [{ name: 'models/fake-model-a', supportedGenerationMethods: ['generateContent'] }, { name: 'models/fake-model-b', supportedGenerationMethods: ['generateContent'] }] } };
  }
  if (rec.path.endsWith('/models')) {
    return { json: { object: 'list', data: [{ id: 'fake-model-a', object: 'model' }, { id: 'fake-model-b', object: 'model' }] } };
  }
  if (rec.path === '/v1/messages/count_tokens') return { json: { input_tokens: 42 } };
  if (rec.path === '/v1/messages') return stream ? { chunks: anthropicStream(model) } : { json: anthropicMessage(model) };
  if (rec.path === '/v1/chat/completions') return stream ? { chunks: openaiStream(model) } : { json: openaiCompletion(model) };
  if (rec.path === '/v1/responses') {
    if (!stream) return { json: responsesResult(model) };
    const done = responsesResult(model);
    return {
      chunks: [
        sse('response.created', { type: 'response.created', response: { ...done, status: 'in_progress', output: [] } }),
        sse('response.output_text.delta', { type: 'response.output_text.delta', item_id: 'msg_fake', output_index: 0, content_index: 0, delta: 'Hello from the fake upstream.' }),
        sse('response.completed', { type: 'response.completed', response: done }),
      ],
    };
  }
  return { status: 404, json: { error: { type: 'not_found_error', message: `fake upstream has no ${rec.path}` } } };
}

// ---- frame builders (streams scripted frame by frame) --------------------------------------------

/** Anthropic Messages events, one builder per event. */
export const anthropicEvents = {
  messageStart: (model: string, id = 'msg_fake_live', inputTokens = 12) =>
    sse('message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: inputTokens, output_tokens: 1 } },
    }),
  textStart: (index = 0) => sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
  text: (text: string, index = 0) => sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
  thinkingStart: (index = 0) => sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  thinking: (thinking: string, index = 0) => sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } }),
  signature: (signature: string, index = 0) => sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } }),
  toolStart: (id: string, name: string, index = 0) => sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
  toolArgs: (json: string, index = 0) => sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json } }),
  blockStop: (index = 0) => sse('content_block_stop', { type: 'content_block_stop', index }),
  messageDelta: (stopReason = 'end_turn', outputTokens = 10) =>
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } }),
  messageStop: () => sse('message_stop', { type: 'message_stop' }),
  ping: () => sse('ping', { type: 'ping' }),
  error: (type: string, message: string) => sse('error', { type: 'error', error: { type, message } }),
};

/** A whole Anthropic text answer as events (message_start through message_stop). */
export function anthropicText(model: string, pieces: string[], opts: { id?: string; outputTokens?: number } = {}): Chunk[] {
  const e = anthropicEvents;
  return [e.messageStart(model, opts.id), e.textStart(), ...pieces.map((p) => e.text(p)), e.blockStop(), e.messageDelta('end_turn', opts.outputTokens ?? pieces.length), e.messageStop()];
}

/** OpenAI Chat Completions chunks. */
export const chatEvents = {
  role: (model: string, id = 'chatcmpl-live') => sse(null, { id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
  text: (model: string, content: string, id = 'chatcmpl-live') => sse(null, { id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] }),
  reasoning: (model: string, reasoning: string, id = 'chatcmpl-live') =>
    sse(null, { id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta: { reasoning_content: reasoning }, finish_reason: null }] }),
  finish: (model: string, reason = 'stop', id = 'chatcmpl-live') => sse(null, { id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta: {}, finish_reason: reason }] }),
  usage: (model: string, prompt: number, completion: number, id = 'chatcmpl-live') =>
    sse(null, { id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } }),
  error: (message: string, type = 'server_error', code: string | null = null) => sse(null, { error: { message, type, code } }),
  done: () => sse(null, '[DONE]'),
  comment: (text = 'keep-alive') => ({ data: `: ${text}\n\n` }) as Chunk,
};

/** A whole Chat text answer as chunks. */
export function chatText(model: string, pieces: string[], opts: { id?: string; completionTokens?: number } = {}): Chunk[] {
  const e = chatEvents;
  return [e.role(model, opts.id), ...pieces.map((p) => e.text(model, p, opts.id)), e.finish(model, 'stop', opts.id), e.usage(model, 9, opts.completionTokens ?? pieces.length, opts.id), e.done()];
}

/** OpenAI Responses events (with sequence numbers from `seq`). */
export function responsesEvents(model: string, id = 'resp_live') {
  let seq = 0;
  const ev = (type: string, body: Record<string, unknown>) => sse(type, { type, ...body, sequence_number: seq++ });
  const response = (status: string, output: unknown[] = [], usage: unknown = null) => ({ id, object: 'response', created_at: 1_700_000_000, status, model, output, usage });
  return {
    created: () => ev('response.created', { response: response('in_progress') }),
    /** The message item and its output_text part (what the SDK's accumulator needs before deltas). */
    messageAdded: (index = 0, itemId = 'msg_live'): Chunk => ({
      data:
        ev('response.output_item.added', { output_index: index, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } }).data +
        ev('response.content_part.added', { item_id: itemId, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }).data,
    }),
    text: (delta: string, index = 0, itemId = 'msg_live') => ev('response.output_text.delta', { item_id: itemId, output_index: index, content_index: 0, delta }),
    messageDone: (text: string, index = 0, itemId = 'msg_live') =>
      ev('response.output_item.done', { output_index: index, item: { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] } }),
    reasoningAdded: (index = 0) => ev('response.output_item.added', { output_index: index, item: { id: 'rs_live', type: 'reasoning', summary: [] } }),
    reasoningDelta: (delta: string, index = 0) => ev('response.reasoning_summary_text.delta', { item_id: 'rs_live', output_index: index, summary_index: 0, delta }),
    completed: (text: string, outputTokens = 5) =>
      ev('response.completed', {
        response: response('completed', [{ id: 'msg_live', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }], {
          input_tokens: 10,
          output_tokens: outputTokens,
          total_tokens: 10 + outputTokens,
        }),
      }),
    failed: (code: string, message: string) => ev('response.failed', { response: { ...response('failed'), error: { code, message } } }),
  };
}

// ---- Gemini (Generative Language API) ----------------------------------------------------------

/** `/v1beta/models/{model}:{method}` (also under /v1). */
const GEMINI_PATH = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

const geminiUsage = (prompt: number, out: number) => ({ promptTokenCount: prompt, candidatesTokenCount: out, totalTokenCount: prompt + out });

/** A generateContent answer: one candidate with text (and function calls, when given). */
export function geminiResult(model: string, text: string | null = 'Hello from the fake upstream.', calls: FakeToolCall[] = []) {
  const parts: Record<string, unknown>[] = [];
  if (text !== null) parts.push({ text });
  for (const c of calls) parts.push({ functionCall: { id: c.id, name: c.name, args: c.arguments } });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: geminiUsage(11, 6),
    modelVersion: model,
    responseId: 'gem_fake_1',
  };
}

/** The chunks of a streamGenerateContent answer: text pieces, then (optionally) whole function calls, the finish and usage last. */
export function geminiStreamChunks(model: string, pieces = ['Hello', ' from', ' the', ' stream.'], calls: FakeToolCall[] = []) {
  const base = { modelVersion: model, responseId: 'gem_fake_s' };
  const out: Record<string, unknown>[] = pieces.map((p) => ({ ...base, candidates: [{ content: { role: 'model', parts: [{ text: p }] }, index: 0 }] }));
  const last: Record<string, unknown>[] = calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: c.arguments } }));
  out.push({ ...base, candidates: [{ content: { role: 'model', parts: last.length ? last : [{ text: '' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: geminiUsage(11, pieces.length + calls.length) });
  return out;
}

/** A streamGenerateContent?alt=sse answer as SSE chunks. */
export function geminiStream(model: string, pieces?: string[], calls: FakeToolCall[] = [], delayMs?: number): Chunk[] {
  return geminiStreamChunks(model, pieces, calls).map((c) => sse(null, c, delayMs));
}

/** A Google error body, optionally with a RetryInfo delay ("86399s"). */
export function geminiError(code: number, status: string, message: string, retryDelay?: string) {
  const details: Record<string, unknown>[] = [];
  if (retryDelay) details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay });
  return { error: { code, message, status, ...(details.length ? { details } : {}) } };
}
