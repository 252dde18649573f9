// Gemini answers: upstream GenerateContentResponse bodies and streams (tests/fixtures/codecs/gemini/,
// written from Google's Generative Language API reference) read into the neutral model and shown
// to other clients through their SDKs; other upstreams' answers written for a Gemini client, in
// JSON, SSE chunks and the JSON-array stream; errors in Google's shape with RetryInfo.
import { describe, expect, it } from 'vitest';
import { AnthropicEventWriter, writeAnthropicMessage, readAnthropicMessage, AnthropicEventReader } from '../../../../src/main/engine/codecs/anthropicResponse';
import { ChatChunkReader, ChatChunkWriter, readChatCompletion, writeChatCompletion } from '../../../../src/main/engine/codecs/chatResponse';
import { geminiErrorBody, readGeminiError, translateErrorToGemini, durationText } from '../../../../src/main/engine/codecs/geminiErrors';
import {
  GeminiChunkReader,
  GeminiChunkWriter,
  geminiInboundSide,
  geminiUpstreamSide,
  readGeminiResponse,
  writeGeminiResponse,
} from '../../../../src/main/engine/codecs/geminiResponse';
import { stopFromGemini, stopToGemini, usageFromGemini, usageToGemini } from '../../../../src/main/engine/codecs/geminiStops';
import { GeminiFrameReader, JsonArraySplitter, type GeminiFraming } from '../../../../src/main/engine/codecs/geminiStream';
import { emptyUsage, mergeUsage, type IrSink, type IrStop, type IrUsage } from '../../../../src/main/engine/codecs/ir';
import { Translator, type InboundSide, type UpstreamSide } from '../../../../src/main/engine/codecs/translator';
import type { ResponseContext } from '../../../../src/main/engine/codecs';
import { googleQuotaFailure, retryHintFromBody } from '../../../../src/main/engine/resilience/retryHints';
import { FrameReader } from '../../../../src/main/engine/streams/frames';
import { anthropicSdkJson, anthropicSdkStream, chatSdkJson, ctx, fixture, fixtureJson, NOW, sseEvents } from '../support';

const golden = (name: string, text: string) => expect(text).toMatchFileSnapshot(`../../../fixtures/codecs/golden/gemini/${name}`);
const goldenJson = (name: string, body: unknown) => golden(`${name}.json`, JSON.stringify(body, null, 2) + '\n');

const chatUp: UpstreamSide = { readJson: (j, c) => readChatCompletion(j, c), reader: (c) => new ChatChunkReader(c) };
const anthropicUp: UpstreamSide = { readJson: (j) => readAnthropicMessage(j), reader: () => new AnthropicEventReader() };
const anthropicIn: InboundSide = { writeJson: writeAnthropicMessage, writer: (c) => new AnthropicEventWriter(c) };
const chatIn: InboundSide = { writeJson: writeChatCompletion, writer: (c) => new ChatChunkWriter(c) };

/** Every neutral event a reader produced, as plain data; usage is kept apart, as the last word on it. */
class Recorder implements IrSink {
  events: unknown[] = [];
  readonly usageSeen: IrUsage = emptyUsage();
  start(id: string | null, model: string | null) {
    this.events.push(['start', id, model]);
  }
  text(t: string) {
    const last = this.events[this.events.length - 1] as unknown[] | undefined;
    // Text deltas are joined: how a stream was cut into chunks is not part of the answer.
    if (last?.[0] === 'text') last[1] += t;
    else this.events.push(['text', t]);
  }
  reasoning(t: string) {
    this.events.push(['reasoning', t]);
  }
  signature(s: string) {
    this.events.push(['signature', s]);
  }
  redacted(d: string) {
    this.events.push(['redacted', d]);
  }
  toolStart(key: number, id: string, name: string) {
    this.events.push(['toolStart', key, id, name]);
  }
  toolArgs(key: number, json: string) {
    this.events.push(['toolArgs', key, JSON.parse(json)]);
  }
  blockEnd() {
    this.events.push(['blockEnd']);
  }
  usage(u: Partial<IrUsage>) {
    mergeUsage(this.usageSeen, u);
  }
  stop(reason: IrStop) {
    this.events.push(['stop', reason]);
  }
  finish() {
    this.events.push(['finish']);
  }
  error(e: unknown) {
    this.events.push(['error', e]);
  }
  keepalive() {}
}

function chunks(text: string, chunking: 'whole' | 'bytes'): Buffer[] {
  const b = Buffer.from(text, 'utf8');
  if (chunking === 'whole') return [b];
  return Array.from({ length: b.length }, (_, i) => b.subarray(i, i + 1));
}

/** Reads a Gemini stream body (either framing) into neutral events. */
function readGeminiStream(body: string, framing: GeminiFraming, chunking: 'whole' | 'bytes' = 'whole', context: ResponseContext = ctx()) {
  const frames = new GeminiFrameReader(framing);
  const reader = new GeminiChunkReader(context);
  const sink = new Recorder();
  for (const c of chunks(body, chunking)) for (const f of frames.push(c)) reader.read(f, sink);
  for (const f of frames.end()) reader.read(f, sink);
  const outcome = reader.end(sink);
  return { events: sink.events, usage: sink.usageSeen, outcome };
}

/** Runs an upstream stream (in its SSE) through a reader into a Gemini client's stream. */
function toGeminiClient(upstream: 'openai-chat' | 'anthropic-messages', sse: string, context: ResponseContext = ctx()) {
  const t = new Translator(upstream === 'openai-chat' ? chatUp : anthropicUp, geminiInboundSide, context);
  const reader = new FrameReader(upstream);
  let out = '';
  for (const f of reader.push(sse).frames) out += t.frame(f);
  for (const f of reader.end().frames) out += t.frame(f);
  const end = t.end();
  return { out: out + end.text, end, usage: t.usage() };
}

/** Runs a Gemini upstream stream through the reader into another client's stream. */
function fromGeminiUpstream(inbound: InboundSide, body: string, framing: GeminiFraming = 'sse', context: ResponseContext = ctx()) {
  const t = new Translator(geminiUpstreamSide, inbound, context);
  const frames = new GeminiFrameReader(framing);
  let out = '';
  for (const f of frames.push(body)) out += t.frame(f);
  for (const f of frames.end()) out += t.frame(f);
  const end = t.end();
  return { out: out + end.text, end, usage: t.usage() };
}

const dataChunks = (sse: string) => sseEvents(sse).map((e) => e.data);

describe('reading a Gemini answer', () => {
  it('a text answer: text, STOP as end_turn, usage, modelVersion and responseId', async () => {
    const ir = readGeminiResponse(fixtureJson('gemini/text.json'), ctx());
    expect(ir).toEqual({
      id: 'mK9aaPqLC9fPz7IP3ae8gQE',
      model: 'gemini-2.5-flash',
      content: [{ type: 'text', text: 'The capital of France is Paris.' }],
      stop: 'end_turn',
      stopSequence: null,
      usage: { input: 8, output: 7, cachedInput: null, cacheWrite: null, reasoning: null },
    });
    // An Anthropic client sees it through its SDK.
    const body = new Translator(geminiUpstreamSide, anthropicIn, ctx()).json(fixtureJson('gemini/text.json'));
    const m = await anthropicSdkJson(body);
    expect(m).toMatchObject({ id: 'msg_mK9aaPqLC9fPz7IP3ae8gQE', model: 'gemini-2.5-flash', stop_reason: 'end_turn', usage: { input_tokens: 8, output_tokens: 7 } });
    expect(m.content).toEqual([{ type: 'text', text: 'The capital of France is Paris.', citations: null }]);
  });

  it('a thinking answer: thought parts are reasoning; thoughts count as output and reasoning; cached content is cached input', async () => {
    const ir = readGeminiResponse(fixtureJson('gemini/thinking.json'), ctx());
    expect(ir.content).toEqual([
      { type: 'reasoning', text: '**Comparing decimals**\n\nLine the numbers up: 9.11 and 9.80. The tenths digit decides.', signature: null, redacted: null },
      { type: 'reasoning', text: '', signature: 'CiQB0e2Kb7hs3vQ0yrXlQyqzOZvdmJc2n7S2gGk7gQZ8ryBxXL8=', redacted: null },
      { type: 'text', text: '9.8 is larger than 9.11.' },
    ]);
    expect(ir.usage).toEqual({ input: 1210, output: 167, cachedInput: 1024, cacheWrite: null, reasoning: 156 });
    const t = new Translator(geminiUpstreamSide, chatIn, ctx());
    const c = await chatSdkJson(t.json(fixtureJson('gemini/thinking.json')));
    expect(c.choices[0]!.message.content).toBe('9.8 is larger than 9.11.');
    expect((c.choices[0]!.message as any).reasoning_content).toMatch(/^\*\*Comparing decimals\*\*/);
    expect(c.usage).toMatchObject({ prompt_tokens: 1210, completion_tokens: 167, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 156 } });
    expect(t.usage()).toEqual({ inputTokens: 1210, outputTokens: 167, cacheReadTokens: 1024, cacheWriteTokens: null });
  });

  it('function calls keep their ids (one is made when Gemini gives none), args become JSON arguments, the stop is tool_use', async () => {
    const ir = readGeminiResponse(fixtureJson('gemini/function-call.json'), ctx());
    expect(ir.content).toEqual([
      { type: 'text', text: "I'll check both cities." },
      { type: 'reasoning', text: '', signature: 'EpYCCpMCAdHtim9sig+ABC/xyz==', redacted: null },
      { type: 'tool_call', id: 'fc_boston_1', name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' },
      { type: 'tool_call', id: 'call_fc_resp_7_1', name: 'get_current_weather', arguments: '{"location":"Paris"}' },
    ]);
    expect(ir.stop).toBe('tool_use');
    const m = await anthropicSdkJson(new Translator(geminiUpstreamSide, anthropicIn, ctx()).json(fixtureJson('gemini/function-call.json')));
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content.filter((b) => b.type === 'tool_use')).toEqual([
      { type: 'tool_use', id: 'fc_boston_1', name: 'get_current_weather', input: { location: 'Boston, MA', unit: 'celsius' } },
      { type: 'tool_use', id: 'call_fc_resp_7_1', name: 'get_current_weather', input: { location: 'Paris' } },
    ]);
  });

  it('MAX_TOKENS is max_tokens (Chat: length); SAFETY and a blocked prompt are refusals (Chat: content_filter)', async () => {
    expect(readGeminiResponse(fixtureJson('gemini/max-tokens.json'), ctx()).stop).toBe('max_tokens');
    const len = await chatSdkJson(new Translator(geminiUpstreamSide, chatIn, ctx()).json(fixtureJson('gemini/max-tokens.json')));
    expect(len.choices[0]!.finish_reason).toBe('length');
    expect(len.choices[0]!.message.content).toBe('Once upon a time, in a');

    const safety = readGeminiResponse(fixtureJson('gemini/safety.json'), ctx());
    expect(safety).toMatchObject({ content: [], stop: 'refusal', usage: { input: 12, output: null } });
    const blocked = readGeminiResponse(fixtureJson('gemini/blocked-prompt.json'), ctx());
    expect(blocked).toMatchObject({ content: [], stop: 'refusal', id: 'blocked_1' });
    const c = await chatSdkJson(new Translator(geminiUpstreamSide, chatIn, ctx()).json(fixtureJson('gemini/safety.json')));
    expect(c.choices[0]!.finish_reason).toBe('content_filter');
    const a = await anthropicSdkJson(new Translator(geminiUpstreamSide, anthropicIn, ctx()).json(fixtureJson('gemini/blocked-prompt.json')));
    expect(a.stop_reason).toBe('refusal');
  });

  it.each([
    ['STOP', false, 'end_turn'],
    ['STOP', true, 'tool_use'],
    ['MAX_TOKENS', false, 'max_tokens'],
    ['SAFETY', false, 'refusal'],
    ['RECITATION', false, 'refusal'],
    ['BLOCKLIST', false, 'refusal'],
    ['PROHIBITED_CONTENT', false, 'refusal'],
    ['SPII', false, 'refusal'],
    ['LANGUAGE', false, 'refusal'],
    ['MALFORMED_FUNCTION_CALL', false, 'end_turn'],
    ['OTHER', false, 'end_turn'],
    ['FINISH_REASON_UNSPECIFIED', false, 'end_turn'],
    [undefined, false, 'end_turn'],
  ] as const)('finishReason %s (calls: %s) → %s', (reason, calls, stop) => {
    expect(stopFromGemini(reason, calls)).toBe(stop);
  });

  it.each([
    ['end_turn', 'STOP'],
    ['tool_use', 'STOP'],
    ['stop_sequence', 'STOP'],
    ['pause_turn', 'STOP'],
    ['max_tokens', 'MAX_TOKENS'],
    ['context_window', 'MAX_TOKENS'],
    ['refusal', 'SAFETY'],
  ] as const)('neutral %s → finishReason %s', (stop, reason) => {
    expect(stopToGemini(stop)).toBe(reason);
  });

  it('usage both ways: candidates + thoughts are the output, tool-use prompt tokens are input, totals add up', () => {
    expect(usageFromGemini({ promptTokenCount: 100, toolUsePromptTokenCount: 20, candidatesTokenCount: 30, thoughtsTokenCount: 50, cachedContentTokenCount: 64, totalTokenCount: 200 })).toEqual({
      input: 120,
      output: 80,
      reasoning: 50,
      cachedInput: 64,
    });
    expect(usageToGemini({ ...emptyUsage(), input: 120, output: 80, reasoning: 50, cachedInput: 64 })).toEqual({
      promptTokenCount: 120,
      candidatesTokenCount: 30,
      thoughtsTokenCount: 50,
      cachedContentTokenCount: 64,
      totalTokenCount: 200,
    });
    // No thoughts, no cache: those counts are left out, as Gemini leaves them out.
    expect(usageToGemini({ ...emptyUsage(), input: 8, output: 7 })).toEqual({ promptTokenCount: 8, candidatesTokenCount: 7, totalTokenCount: 15 });
  });
});

const STREAM_EVENTS = [
  ['start', 'strm_42', 'gemini-2.5-flash'],
  ['reasoning', '**Planning**\n\nThe user wants the weather.'],
  ['text', 'Let me look that up for Zürich — ☀️.'],
  ['reasoning', ''],
  ['signature', 'CsQBAdHtim8streamSig=='],
  ['toolStart', 0, 'fc_zrh', 'get_current_weather'],
  ['toolArgs', 0, { location: 'Zürich', unit: 'celsius' }],
  ['blockEnd'],
  ['stop', 'tool_use'],
  ['finish'],
];
const STREAM_USAGE = { input: 96, output: 54, reasoning: 30, cachedInput: null, cacheWrite: null };

describe('Gemini streams read into events', () => {
  it.each(['whole', 'bytes'] as const)('SSE chunks (alt=sse), chunked %s: thoughts, text, a signed call, usage, then finish at the end of the body', (chunking) => {
    const { events, outcome, usage } = readGeminiStream(fixture('gemini/stream.sse'), 'sse', chunking);
    expect(outcome).toBe('complete');
    expect(events).toEqual(STREAM_EVENTS);
    expect(usage).toEqual(STREAM_USAGE);
  });

  it.each(['whole', 'bytes'] as const)('the JSON-array stream (no alt=sse), chunked %s, reads into the same events', (chunking) => {
    const { events, outcome, usage } = readGeminiStream(fixture('gemini/stream.json'), 'json-array', chunking);
    expect(outcome).toBe('complete');
    expect(events).toEqual(STREAM_EVENTS);
    expect(usage).toEqual(STREAM_USAGE);
  });

  it('the array splitter skips braces and brackets inside strings, and escaped quotes', () => {
    const s = new JsonArraySplitter();
    const body = '[{"a":"}]{[\\"x"},\r\n{"b":[1,{"c":"\\\\"}]}\n]';
    const out = [...body].flatMap((c) => s.push(c));
    expect(out.map((e) => JSON.parse(e))).toEqual([{ a: '}]{["x' }, { b: [1, { c: '\\' }] }]);
  });

  it('frames are classified for stream resilience: output, reasoning, terminal with the finishReason, usage', () => {
    const frames = new GeminiFrameReader('sse').push(fixture('gemini/stream.sse'));
    expect(frames.map((f) => [f.kind, f.textChars, f.toolStart, f.terminal, f.stopReason])).toEqual([
      ['reasoning', 0, false, false, null],
      ['output', 20, false, false, null],
      ['output', 16, false, false, null],
      ['output', 0, true, true, 'STOP'],
    ]);
    expect(frames[3]!.usage).toEqual({ inputTokens: 96, outputTokens: 54 });
  });

  it('an in-band error chunk is an error (status from its code), never text; a stream without a finishReason is truncated', async () => {
    const { events, outcome } = readGeminiStream(fixture('gemini/stream-error.sse'), 'sse');
    expect(outcome).toBe('error');
    expect(events.at(-1)).toEqual(['error', { status: 503, type: 'UNAVAILABLE', code: null, message: 'The model is overloaded. Please try again later.' }]);
    const anthropic = fromGeminiUpstream(anthropicIn, fixture('gemini/stream-error.sse'));
    await expect(anthropicSdkStream(anthropic.out)).rejects.toThrow(/overloaded/);
    expect(readGeminiStream(fixture('gemini/stream-truncated.sse'), 'sse').outcome).toBe('truncated');
  });

  it('an Anthropic client reads a Gemini stream through its SDK: thinking, text, tool_use with the Gemini id', async () => {
    const r = fromGeminiUpstream(anthropicIn, fixture('gemini/stream.json'), 'json-array');
    expect(r.end.outcome).toBe('complete');
    const { message } = await anthropicSdkStream(r.out);
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text', 'thinking', 'tool_use']);
    expect(message.content[3]).toEqual({ type: 'tool_use', id: 'fc_zrh', name: 'get_current_weather', input: { location: 'Zürich', unit: 'celsius' } });
    expect(message.stop_reason).toBe('tool_use');
    expect(r.usage).toEqual({ inputTokens: 96, outputTokens: 54, cacheReadTokens: null, cacheWriteTokens: null });
  });
});

describe('Gemini streams written for a Gemini client', () => {
  it('the events of a Gemini stream written back as SSE read into the same events (alt=sse)', async () => {
    const { events, usage } = readGeminiStream(fixture('gemini/stream.sse'), 'sse');
    const w = new GeminiChunkWriter(ctx({}, { geminiFraming: 'sse' }));
    replay(events, w, usage);
    const sse = w.take();
    await golden('stream-rewritten.sse', sse);
    expect(readGeminiStream(sse, 'sse')).toMatchObject({ events: STREAM_EVENTS, usage: STREAM_USAGE, outcome: 'complete' });
    expect(dataChunks(sse).map((c) => c.candidates[0].finishReason ?? null)).toEqual([null, null, 'STOP']);
    const last = dataChunks(sse).at(-1);
    expect(last.candidates[0]).toMatchObject({ finishReason: 'STOP', content: { role: 'model', parts: [{ functionCall: { id: 'fc_zrh' }, thoughtSignature: 'CsQBAdHtim8streamSig==' }] } });
    expect(last.usageMetadata).toEqual({ promptTokenCount: 96, candidatesTokenCount: 24, thoughtsTokenCount: 30, totalTokenCount: 150 });
  });

  it('the JSON-array framing: the whole body is one JSON array of chunks, and reads back into the same events', async () => {
    const { events, usage } = readGeminiStream(fixture('gemini/stream.sse'), 'sse');
    const w = new GeminiChunkWriter(ctx({}, { geminiFraming: 'json-array' }));
    w.usage(usage);
    let body = '';
    // Taken piece by piece, as the proxy sends it.
    for (const e of events) {
      replay([e], w);
      body += w.take();
    }
    await golden('stream-rewritten.json', body);
    const arr = JSON.parse(body);
    expect(Array.isArray(arr)).toBe(true);
    expect(arr.map((c: any) => c.candidates[0].finishReason ?? null)).toEqual([null, null, 'STOP']);
    expect(readGeminiStream(body, 'json-array', 'bytes')).toMatchObject({ events: STREAM_EVENTS, usage: STREAM_USAGE, outcome: 'complete' });
  });

  it('text deltas are written exactly as the chunk object serialises (escapes, non-ASCII, the upstream model and id), in both framings', () => {
    const texts = ['say "hi"\n\tback\\', 'Zürich — ☀️ \u2028', '</script>'];
    const chunkOf = (text: string) => JSON.stringify({ candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0 }], modelVersion: 'gemini-"2.5"', responseId: 'up_7' });
    const sse = new GeminiChunkWriter(ctx({}, { geminiFraming: 'sse' }));
    const arr = new GeminiChunkWriter(ctx({}, { geminiFraming: 'json-array' }));
    for (const w of [sse, arr]) {
      w.start('up_7', 'gemini-"2.5"');
      for (const t of texts) w.text(t);
    }
    expect(sse.take()).toBe(texts.map((t) => `data: ${chunkOf(t)}\n\n`).join(''));
    expect(arr.take()).toBe(`[${texts.map(chunkOf).join(',\r\n')}`);
  });

  it('an error mid-stream closes the JSON array with a Google error object; in SSE it is a data event', () => {
    const arr = new GeminiChunkWriter(ctx({}, { geminiFraming: 'json-array' }));
    arr.text('Hello');
    arr.error({ status: 529, type: 'overloaded_error', code: null, message: 'Overloaded' });
    expect(JSON.parse(arr.take())).toEqual([
      { candidates: [{ content: { parts: [{ text: 'Hello' }], role: 'model' }, index: 0 }], modelVersion: 'client-model', responseId: 'req_0001' },
      { error: { code: 529, message: 'Overloaded', status: 'UNAVAILABLE' } },
    ]);
    const sse = new GeminiChunkWriter(ctx());
    sse.error({ status: 429, type: '', code: null, message: 'slow down' });
    expect(dataChunks(sse.take())).toEqual([{ error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } }]);
  });
});

function replay(events: unknown[], w: IrSink, usage?: IrUsage): void {
  if (usage) w.usage(usage);
  for (const e of events as any[]) {
    const [k, ...a] = e;
    if (k === 'toolArgs') w.toolArgs(a[0], JSON.stringify(a[1]));
    else (w as any)[k](...a);
  }
}

describe('a Gemini client served by Chat and Anthropic upstreams', () => {
  it('Chat JSON with parallel tool calls → Gemini JSON: functionCall parts with the Chat ids, args objects, STOP, usage', async () => {
    const t = new Translator(chatUp, geminiInboundSide, ctx());
    const body = t.json(fixtureJson('upstream/chat-completion-tools.json'));
    await goldenJson('from-chat-completion-tools', body);
    const cand = (body.candidates as any[])[0];
    expect(cand.content.parts).toEqual([
      { functionCall: { id: 'call_abc123', name: 'get_current_weather', args: { location: 'Boston, MA' } } },
      { functionCall: { id: 'call_def456', name: 'get_current_weather', args: { location: 'Paris' } } },
    ]);
    expect(cand.finishReason).toBe('STOP');
    expect(body.usageMetadata).toEqual({ promptTokenCount: 82, candidatesTokenCount: 17, totalTokenCount: 99 });
    expect(body.modelVersion).toBe('gpt-4.1-2025-04-14');
    // Read back by the Gemini reader, the answer is what the Chat upstream said.
    const parsed = (content: any[]) => content.map((c) => ({ ...c, arguments: JSON.parse(c.arguments) }));
    expect(parsed(readGeminiResponse(body, ctx()).content)).toEqual(parsed(readChatCompletion(fixtureJson('upstream/chat-completion-tools.json'), ctx()).content));
  });

  it('Chat length → MAX_TOKENS', () => {
    const body = new Translator(chatUp, geminiInboundSide, ctx()).json(fixtureJson('upstream/chat-completion-length.json'));
    expect((body.candidates as any[])[0]).toMatchObject({ finishReason: 'MAX_TOKENS', content: { parts: [{ text: 'Once upon a' }] } });
  });

  it('Anthropic thinking → thought parts with the signature; redacted thinking is not shown; cache reads are cached content', async () => {
    const up = fixtureJson('upstream/anthropic-message-thinking.json');
    const body = new Translator(anthropicUp, geminiInboundSide, ctx()).json(up);
    await goldenJson('from-anthropic-message-thinking', body);
    const parts = (body.candidates as any[])[0].content.parts;
    expect(parts[0]).toEqual({ text: "To approach this, let's think about what we know about prime numbers...", thought: true, thoughtSignature: 'zbbJhbGciOiJFUzI1NiIsImtpZCI6ImtleS0xMjM0In0' });
    expect(parts.at(-1)).toEqual({ text: 'Yes, there are infinitely many prime numbers such that...' });
    expect(JSON.stringify(body)).not.toContain('EmwKAhgB');
  });

  it('Anthropic tool_use JSON → a functionCall with the toolu id; cache reads and writes count in the prompt', () => {
    const body = new Translator(anthropicUp, geminiInboundSide, ctx()).json(fixtureJson('upstream/anthropic-message-tools.json'));
    const parts = (body.candidates as any[])[0].content.parts;
    expect(parts.map((p: any) => Object.keys(p)[0])).toEqual(['text', 'functionCall']);
    expect(parts[1].functionCall).toEqual({ id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', args: { location: 'San Francisco, CA', unit: 'celsius' } });
    expect(body.usageMetadata).toMatchObject({ promptTokenCount: 1584, cachedContentTokenCount: 1200 });
  });

  it('a Chat stream of parallel tool calls → Gemini SSE: text first, calls held until whole, one final chunk with finishReason and usage', async () => {
    const r = toGeminiClient('openai-chat', fixture('upstream/chat-tools-parallel.sse'));
    expect(r.end.outcome).toBe('complete');
    await golden('from-chat-tools-parallel.sse', r.out);
    const all = dataChunks(r.out);
    const calls = all.flatMap((c) => c.candidates[0].content.parts.filter((p: any) => p.functionCall).map((p: any) => p.functionCall));
    const chat = readChatCompletionStream(fixture('upstream/chat-tools-parallel.sse'));
    expect(calls.map((c: any) => [c.id, c.name, c.args])).toEqual(chat.map((c) => [c.id, c.name, JSON.parse(c.arguments)]));
    expect(all.filter((c) => c.candidates[0].finishReason).length).toBe(1);
    expect(all.at(-1).candidates[0].finishReason).toBe('STOP');
    // Read back by the Gemini reader: the same calls, ids kept.
    const back = readGeminiStream(r.out, 'sse').events.filter((e: any) => e[0] === 'toolStart');
    expect(back.map((e: any) => e[2])).toEqual(chat.map((c) => c.id));
  });

  it('an Anthropic thinking stream → Gemini JSON-array: thought text, then text carrying the signature; outcome complete', async () => {
    const r = toGeminiClient('anthropic-messages', fixture('upstream/anthropic-thinking.sse'), ctx({}, { geminiFraming: 'json-array' }));
    expect(r.end.outcome).toBe('complete');
    await golden('from-anthropic-thinking.json', r.out);
    const arr = JSON.parse(r.out);
    const parts = arr.flatMap((c: any) => c.candidates[0].content.parts);
    const thoughts = parts.filter((p: any) => p.thought === true);
    expect(thoughts.length).toBeGreaterThan(0);
    expect(thoughts.every((p: any) => typeof p.text === 'string' && p.text.length > 0)).toBe(true);
    const firstText = parts.findIndex((p: any) => !p.thought && p.text);
    expect(firstText).toBeGreaterThan(parts.findLastIndex((p: any) => p.thought));
    // The signature goes onto the part after the thinking, as Gemini places it.
    expect(parts[firstText].thoughtSignature).toBe('EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds');
    expect(parts.filter((p: any) => p.thoughtSignature).length).toBe(1);
    // Read back by the Gemini reader: thinking, then the signature, then text, as Anthropic sent them.
    const back = readGeminiStream(r.out, 'json-array').events.map((e: any) => e[0]);
    expect(back.slice(back.indexOf('signature') - 1, back.indexOf('signature') + 2)).toEqual(['reasoning', 'signature', 'text']);
    expect(arr.at(-1).usageMetadata.totalTokenCount).toBeGreaterThan(0);
  });

  it('an Anthropic tool stream → a functionCall whose args are the whole input_json, once', () => {
    const r = toGeminiClient('anthropic-messages', fixture('upstream/anthropic-tools.sse'));
    const calls = dataChunks(r.out).flatMap((c) => c.candidates[0].content.parts.filter((p: any) => p.functionCall));
    const anthropic = readAnthropicStreamCalls(fixture('upstream/anthropic-tools.sse'));
    expect(calls.map((p: any) => p.functionCall)).toEqual(anthropic.map((c) => ({ id: c.id, name: c.name, args: c.input })));
  });

  it('a truncated Chat stream stays unfinished (no finishReason) until fail() ends it with a Google error', () => {
    const t = new Translator(chatUp, geminiInboundSide, ctx());
    const reader = new FrameReader('openai-chat');
    let out = '';
    for (const f of [...reader.push(fixture('upstream/chat-truncated.sse')).frames, ...reader.end().frames]) out += t.frame(f);
    const end = t.end();
    expect(end.outcome).toBe('truncated');
    expect(out + end.text).not.toContain('finishReason');
    const failed = t.fail({ status: 502, message: 'the upstream stream was cut' });
    expect(dataChunks(failed)).toEqual([{ error: { code: 502, message: 'the upstream stream was cut', status: 'UNAVAILABLE' } }]);
  });
});

/** The calls of a Chat stream, through the existing reader (the reference for ids and arguments). */
function readChatCompletionStream(sse: string): { id: string; name: string; arguments: string }[] {
  const reader = new ChatChunkReader(ctx());
  const frames = new FrameReader('openai-chat');
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  const sink = new Recorder();
  sink.toolStart = (key, id, name) => void calls.set(key, { id, name, arguments: '' });
  sink.toolArgs = (key, json) => void (calls.get(key)!.arguments += json);
  for (const f of [...frames.push(sse).frames, ...frames.end().frames]) reader.read(f, sink);
  return [...calls.values()];
}

function readAnthropicStreamCalls(sse: string): { id: string; name: string; input: unknown }[] {
  const reader = new AnthropicEventReader();
  const frames = new FrameReader('anthropic-messages');
  const calls = new Map<number, { id: string; name: string; json: string }>();
  const sink = new Recorder();
  sink.toolStart = (key, id, name) => void calls.set(key, { id, name, json: '' });
  sink.toolArgs = (key, json) => void (calls.get(key)!.json += json);
  for (const f of [...frames.push(sse).frames, ...frames.end().frames]) reader.read(f, sink);
  return [...calls.values()].map((c) => ({ id: c.id, name: c.name, input: c.json ? JSON.parse(c.json) : {} }));
}

describe('errors in Google’s shape', () => {
  const daily = fixture('gemini/error-429-daily.json');

  it('a daily-quota 429 with RetryInfo 86399s: a typed hint of 86,399 s, and a per-model daily QuotaFailure', () => {
    expect(retryHintFromBody(daily, NOW)).toEqual({ ms: 86_399_000, source: 'google_rpc_retry_info' });
    // A JSON-array stream's error comes as a one-element array: read the same.
    expect(retryHintFromBody(`[${daily}]`, NOW)).toEqual({ ms: 86_399_000, source: 'google_rpc_retry_info' });
    expect(googleQuotaFailure(daily)).toEqual([
      {
        quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
        quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
        model: 'gemini-2.5-pro',
        perModel: true,
        window: 'day',
      },
    ]);
    const perMinute = JSON.stringify({
      error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'x', details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId: 'GenerateContentInputTokensPerModelPerMinute-FreeTier' }] }] },
    });
    expect(googleQuotaFailure(perMinute)).toMatchObject([{ perModel: true, window: 'minute', model: null }]);
    expect(googleQuotaFailure('{"error":{"code":429}}')).toEqual([]);
  });

  it('a Gemini upstream error reads into the engine’s error: status from the code, Google’s status word as the type', () => {
    expect(readGeminiError(429, daily)).toMatchObject({ status: 429, type: 'RESOURCE_EXHAUSTED', message: expect.stringMatching(/^You exceeded your current quota/) });
    expect(readGeminiError(400, '{"error":{"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}')).toEqual({
      status: 400,
      type: 'INVALID_ARGUMENT',
      code: 'API_KEY_INVALID',
      message: 'API key not valid. Please pass a valid API key.',
    });
    expect(readGeminiError(502, '<html>Bad Gateway</html>')).toEqual({ status: 502, type: '', code: null, message: '<html>Bad Gateway</html>' });
  });

  it('a Gemini client gets a Gemini upstream’s error with its details kept', () => {
    const out = translateErrorToGemini('gemini', 429, daily);
    expect(out.status).toBe(429);
    expect(out.body).toEqual(JSON.parse(daily));
  });

  it('other upstreams’ errors become Google errors: the status kept, its word, a RetryInfo when the wait is known', () => {
    const chat429 = JSON.stringify({ error: { message: 'Rate limit reached for gpt-4.1. Please try again in 20s.', type: 'requests', code: 'rate_limit_exceeded' } });
    expect(translateErrorToGemini('openai-chat', 429, chat429)).toEqual({
      status: 429,
      body: { error: { code: 429, message: 'Rate limit reached for gpt-4.1. Please try again in 20s.', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '20s' }] } },
    });
    const overloaded = JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(translateErrorToGemini('anthropic-messages', 529, overloaded).body).toEqual({ error: { code: 529, message: 'Overloaded', status: 'UNAVAILABLE' } });
    const auth = JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    expect(translateErrorToGemini('anthropic-messages', 401, auth).body).toEqual({ error: { code: 401, message: 'invalid x-api-key', status: 'UNAUTHENTICATED' } });
    // An absolute reset time needs the clock: without it no RetryInfo is made up.
    const resetAt = JSON.stringify({ error: { message: 'limited', resets_at: 1767323105 } });
    expect((translateErrorToGemini('openai-chat', 429, resetAt).body as any).error.details).toBeUndefined();
    expect((translateErrorToGemini('openai-chat', 429, resetAt, NOW).body as any).error.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '60s' }]);
  });

  it.each([
    [400, 'INVALID_ARGUMENT'],
    [401, 'UNAUTHENTICATED'],
    [403, 'PERMISSION_DENIED'],
    [404, 'NOT_FOUND'],
    [429, 'RESOURCE_EXHAUSTED'],
    [500, 'INTERNAL'],
    [503, 'UNAVAILABLE'],
    [504, 'DEADLINE_EXCEEDED'],
  ])('the engine’s %i is written as %s, with RetryInfo for a known wait', (status, word) => {
    expect(geminiErrorBody({ status, message: 'm' })).toEqual({ error: { code: status, message: 'm', status: word } });
    expect((geminiErrorBody({ status, message: 'm' }, 1500) as any).error.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' }]);
  });

  it('durations are written as Google writes them and read back by the hint parser', () => {
    expect(durationText(86_399_000)).toBe('86399s');
    expect(durationText(1500)).toBe('1.5s');
    expect(durationText(250)).toBe('0.25s');
    const body = JSON.stringify(geminiErrorBody({ status: 429, message: 'wait' }, 86_399_000));
    expect(retryHintFromBody(body, NOW)).toEqual({ ms: 86_399_000, source: 'google_rpc_retry_info' });
  });
});

describe('the written JSON answer', () => {
  it('round trip: a Gemini answer read and written again keeps its parts, finish reason and usage', async () => {
    for (const name of ['text', 'thinking', 'function-call', 'max-tokens']) {
      const up = fixtureJson(`gemini/${name}.json`);
      const written = writeGeminiResponse(readGeminiResponse(up, ctx()), ctx());
      const cand = (written.candidates as any[])[0];
      expect(cand.finishReason).toBe(up.candidates[0].finishReason);
      expect(written.usageMetadata).toMatchObject({ promptTokenCount: up.usageMetadata.promptTokenCount, totalTokenCount: up.usageMetadata.totalTokenCount });
      expect(written.responseId).toBe(up.responseId);
      expect(written.modelVersion).toBe(up.modelVersion);
      const partsOf = (ps: any[]) => ps.map((p) => ({ ...p, ...(p.functionCall ? { functionCall: { ...p.functionCall, id: p.functionCall.id ?? 'made' } } : {}) }));
      expect(partsOf(cand.content.parts).map((p: any) => Object.keys(p).sort())).toEqual(partsOf(up.candidates[0].content.parts).map((p: any) => Object.keys(p).sort()));
    }
  });

  it('the context’s model and the request id stand in when the upstream names neither', () => {
    const w = writeGeminiResponse({ id: null, model: null, content: [{ type: 'text', text: 'hi' }], stop: 'end_turn', stopSequence: null, usage: emptyUsage() }, ctx());
    expect(w).toEqual({
      candidates: [{ content: { parts: [{ text: 'hi' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 },
      modelVersion: 'client-model',
      responseId: 'req_0001',
    });
  });
});
