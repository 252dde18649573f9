// Protocol translation: `codecFor(inbound, upstream)` gives the codec for a pair, or null when the
// pair is native (byte-for-byte passthrough). Every codec pivots through the neutral model
// (ir.ts): inbound request → IR → upstream request; upstream response / frames → IR → inbound
// response / SSE. See docs/decisions/topic-protocol-translation.md.
import type { ApiShape } from '../streams/shape';
import { readAnthropicRequest, writeAnthropicRequest } from './anthropicRequest';
import { AnthropicEventReader, AnthropicEventWriter, readAnthropicMessage, writeAnthropicMessage } from './anthropicResponse';
import { readChatRequest, writeChatRequest } from './chatRequest';
import { readGeminiRequest, writeGeminiRequest } from './geminiRequest';
import { GeminiChunkReader, GeminiChunkWriter, geminiInboundSide, geminiUpstreamSide } from './geminiResponse';
import { ChatChunkReader, ChatChunkWriter, readChatCompletion, writeChatCompletion } from './chatResponse';
import { translateError } from './errors';
import { translateErrorToGemini } from './geminiErrors';
import type { IrRequest } from './ir';
import { readResponsesRequest } from './responsesRequest';
import { ResponsesEventReader } from './responsesEvents';
import { ResponsesEventWriter, writeResponse } from './responsesResponse';
import type { ClientState } from './clientState';
import type { ResponseContext } from './types';
import { Translator, type ClientWriter, type InboundSide, type UpstreamReader, type UpstreamSide } from './translator';
import type { Codec, RequestOptions, UpstreamShape } from './types';

export { CodecError } from './codecError';
export type { CodecErrorCode } from './codecError';
export type { ClientState } from './clientState';
export { continuable, trackerFor, type StateTracker } from './clientState';
export type { ClientWriter, UpstreamReader } from './translator';
export type {
  Codec,
  RequestOptions,
  ResponseContext,
  ResponseTranslator,
  StreamEnd,
  TranslatedRequest,
  TranslatedUsage,
  UpstreamShape,
} from './types';

const readers: Record<ApiShape, (j: Record<string, any>) => IrRequest> = {
  'anthropic-messages': readAnthropicRequest,
  'openai-chat': readChatRequest,
  'openai-responses': readResponsesRequest,
  gemini: readGeminiRequest,
};

const writers: Record<UpstreamShape, (ir: IrRequest, opts: RequestOptions) => Record<string, unknown>> = {
  'anthropic-messages': writeAnthropicRequest,
  'openai-chat': writeChatRequest,
  gemini: writeGeminiRequest,
};

const upstreamSides: Record<UpstreamShape, UpstreamSide> = {
  'anthropic-messages': { readJson: (j) => readAnthropicMessage(j), reader: () => new AnthropicEventReader() },
  'openai-chat': { readJson: (j, ctx) => readChatCompletion(j, ctx), reader: (ctx) => new ChatChunkReader(ctx) },
  gemini: geminiUpstreamSide,
};

const inboundSides: Record<ApiShape, InboundSide> = {
  'anthropic-messages': { writeJson: writeAnthropicMessage, writer: (ctx) => new AnthropicEventWriter(ctx) },
  'openai-chat': { writeJson: writeChatCompletion, writer: (ctx) => new ChatChunkWriter(ctx) },
  'openai-responses': { writeJson: writeResponse, writer: (ctx) => new ResponsesEventWriter(ctx) },
  gemini: geminiInboundSide,
};

function makeCodec(inbound: ApiShape, upstream: UpstreamShape): Codec {
  const read = readers[inbound];
  const write = writers[upstream];
  const up = upstreamSides[upstream];
  const inb = inboundSides[inbound];
  return Object.freeze({
    inbound,
    upstream,
    request(json: Record<string, unknown>, opts: RequestOptions) {
      const ir = read(json as Record<string, any>);
      const body = write(ir, opts);
      return { body, dropped: ir.dropped, droppedTools: ir.droppedTools };
    },
    response: (ctx) => new Translator(up, inb, ctx),
    error: (status: number, body: string) => (inbound === 'gemini' ? translateErrorToGemini(upstream, status, body) : translateError(upstream, inbound, status, body)),
  } satisfies Codec);
}

/** The translated pairs (inbound → upstream), one per inbound shape and upstream shape that differ. */
const codecs = new Map<string, Codec>();
for (const inbound of Object.keys(readers) as ApiShape[]) {
  for (const upstream of Object.keys(writers) as UpstreamShape[]) {
    if (inbound !== upstream) codecs.set(`${inbound}>${upstream}`, makeCodec(inbound, upstream));
  }
}
const pair = (inbound: ApiShape, upstream: UpstreamShape): Codec => codecs.get(`${inbound}>${upstream}`)!;
export const anthropicToChat = pair('anthropic-messages', 'openai-chat');
export const chatToAnthropic = pair('openai-chat', 'anthropic-messages');
export const responsesToChat = pair('openai-responses', 'openai-chat');
export const responsesToAnthropic = pair('openai-responses', 'anthropic-messages');

/**
 * A Gemini request read and written again: for a Gemini client whose stream is a JSON array (no
 * `alt=sse`) on a Gemini connection, which is always called with SSE (the frames the watchdogs and
 * hold-back read), so the answer is rewritten in the client's framing.
 */
export const geminiToGemini = makeCodec('gemini', 'gemini');

/** The codec for an inbound shape on an upstream protocol; null when they are the same (native passthrough). */
export function codecFor(inbound: ApiShape, upstream: UpstreamShape): Codec | null {
  if (inbound === upstream) return null;
  return pair(inbound, upstream);
}

/** The upstream endpoint a translated request goes to. */
export function upstreamEndpointOf(codec: Codec): 'messages' | 'chat' | 'gemini' {
  return codec.upstream === 'anthropic-messages' ? 'messages' : codec.upstream === 'gemini' ? 'gemini' : 'chat';
}

/** A reader of an upstream stream of any shape into the neutral model (continuations are read through it). */
export function upstreamReaderFor(shape: ApiShape, ctx: ResponseContext): UpstreamReader {
  if (shape === 'anthropic-messages') return new AnthropicEventReader();
  if (shape === 'openai-chat') return new ChatChunkReader(ctx);
  if (shape === 'gemini') return new GeminiChunkReader(ctx);
  return new ResponsesEventReader();
}

/**
 * The inbound writer for a shape, resumed after what the client has been sent (`state`), or fresh
 * when `state` is null: its events continue the client's stream (no second message_start, the
 * next block index and sequence number).
 */
export function clientWriterFor(shape: ApiShape, ctx: ResponseContext, state: ClientState | null): ClientWriter {
  switch (shape) {
    case 'anthropic-messages':
      return new AnthropicEventWriter(ctx, state?.shape === shape ? state : undefined);
    case 'openai-chat':
      return new ChatChunkWriter(ctx, state?.shape === shape ? state : undefined);
    case 'openai-responses':
      return new ResponsesEventWriter(ctx, state?.shape === shape ? state : undefined);
    case 'gemini':
      return new GeminiChunkWriter(ctx, state?.shape === shape ? state : undefined);
  }
}
