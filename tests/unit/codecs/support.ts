// Shared helpers for codec tests: fixtures, driving a translator with a chunking, and feeding
// translated output to the real SDKs' stream parsers (through their `fetch` option, no network).
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Codec, ResponseContext, StreamEnd } from '../../../src/main/engine/codecs';
import { FrameReader } from '../../../src/main/engine/streams/frames';

export const FIXTURES = join(__dirname, '../../fixtures/codecs');

export const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
export const fixtureJson = <T = any>(name: string): T => JSON.parse(fixture(name)) as T;

export const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);

export function ctx(request: Record<string, unknown> = {}, over: Partial<ResponseContext> = {}): ResponseContext {
  return { request, model: 'client-model', now: NOW, requestId: 'req_0001', ...over };
}

export type Chunking = 'whole' | 'bytes' | number;

function chunksOf(bytes: Buffer, chunking: Chunking): Buffer[] {
  if (chunking === 'whole') return [bytes];
  const size = chunking === 'bytes' ? 1 : chunking;
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** Runs an upstream SSE transcript through a codec's translator, as the pipeline will. */
export function translateStream(
  codec: Codec,
  context: ResponseContext,
  upstreamSse: string,
  chunking: Chunking = 'whole',
): { out: string; end: StreamEnd; usage: { inputTokens: number | null; outputTokens: number | null } } {
  const reader = new FrameReader(codec.upstream);
  const t = codec.response(context);
  let out = '';
  for (const c of chunksOf(Buffer.from(upstreamSse, 'utf8'), chunking)) {
    for (const f of reader.push(c).frames) out += t.frame(f);
  }
  for (const f of reader.end().frames) out += t.frame(f);
  const end = t.end();
  out += end.text;
  return { out, end, usage: t.usage() };
}

const sseResponse = (body: string) =>
  new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'x-request-id': 'req_test' } });
const jsonResponse = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

const anthropicClient = (reply: () => Response) =>
  new Anthropic({ apiKey: 'test', baseURL: 'http://sdk.test', maxRetries: 0, fetch: async () => reply() });
const openaiClient = (reply: () => Response) =>
  new OpenAI({ apiKey: 'test', baseURL: 'http://sdk.test/v1', maxRetries: 0, fetch: async () => reply() });

/** The Anthropic SDK's MessageStream over our SSE: throws on an out-of-order sequence or an error event. */
export async function anthropicSdkStream(sse: string) {
  const client = anthropicClient(() => sseResponse(sse));
  const stream = client.messages.stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
  const events: string[] = [];
  stream.on('streamEvent', (e) => events.push(e.type));
  const message = await stream.finalMessage();
  return { message, events };
}

export async function anthropicSdkJson(body: unknown) {
  const client = anthropicClient(() => jsonResponse(body));
  return client.messages.create({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
}

/** The openai SDK's ChatCompletionStream accumulator over our SSE. */
export async function chatSdkStream(sse: string) {
  const client = openaiClient(() => sseResponse(sse));
  const stream = client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
  return stream.finalChatCompletion();
}

export async function chatSdkJson(body: unknown) {
  const client = openaiClient(() => jsonResponse(body));
  return client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
}

/** The openai SDK's ResponseStream (accumulateResponse) over our SSE, with the events it emitted. */
export async function responsesSdkStream(sse: string) {
  const client = openaiClient(() => sseResponse(sse));
  const stream = client.responses.stream({ model: 'm', input: 'x' });
  const events: string[] = [];
  stream.on('event', (e) => events.push(e.type));
  const response = await stream.finalResponse();
  return { response, events };
}

export async function responsesSdkJson(body: unknown) {
  const client = openaiClient(() => jsonResponse(body));
  return client.responses.create({ model: 'm', input: 'x' });
}

/** Parses SSE text into [event, data] pairs (data parsed when it is JSON). */
export function sseEvents(text: string): { event: string | null; data: any }[] {
  const out: { event: string | null; data: any }[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim() || block.startsWith(':')) continue;
    let event: string | null = null;
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    let parsed: any = data;
    try {
      parsed = JSON.parse(data);
    } catch {
      // [DONE]
    }
    out.push({ event, data: parsed });
  }
  return out;
}
