// Protocol translation: `codecFor(inbound, upstream)` gives the codec for a pair, or null when the
// pair is native (byte-for-byte passthrough). Every codec pivots through the neutral model
// (ir.ts): inbound request → IR → upstream request; upstream response / frames → IR → inbound
// response / SSE. See docs/decisions/topic-protocol-translation.md.
import type { ApiShape } from '../streams/shape';
import { readAnthropicRequest, writeAnthropicRequest } from './anthropicRequest';
import { AnthropicEventReader, AnthropicEventWriter, readAnthropicMessage, writeAnthropicMessage } from './anthropicResponse';
import { readChatRequest, writeChatRequest } from './chatRequest';
import { ChatChunkReader, ChatChunkWriter, readChatCompletion, writeChatCompletion } from './chatResponse';
import { translateError } from './errors';
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
};

const writers: Record<UpstreamShape, (ir: IrRequest, opts: RequestOptions) => Record<string, unknown>> = {
  'anthropic-messages': writeAnthropicRequest,
  'openai-chat': writeChatRequest,
};

const upstreamSides: Record<UpstreamShape, UpstreamSide> = {
  'anthropic-messages': { readJson: (j) => readAnthropicMessage(j), reader: () => new AnthropicEventReader() },
  'openai-chat': { readJson: (j, ctx) => readChatCompletion(j, ctx), reader: (ctx) => new ChatChunkReader(ctx) },
};

const inboundSides: Record<ApiShape, InboundSide> = {
  'anthropic-messages': { writeJson: writeAnthropicMessage, writer: (ctx) => new AnthropicEventWriter(ctx) },
  'openai-chat': { writeJson: writeChatCompletion, writer: (ctx) => new ChatChunkWriter(ctx) },
  'openai-responses': { writeJson: writeResponse, writer: (ctx) => new ResponsesEventWriter(ctx) },
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
    error: (status: number, body: string) => translateError(upstream, inbound, status, body),
  } satisfies Codec);
}

/** The four translated pairs (inbound → upstream). */
export const anthropicToChat = makeCodec('anthropic-messages', 'openai-chat');
export const chatToAnthropic = makeCodec('openai-chat', 'anthropic-messages');
export const responsesToChat = makeCodec('openai-responses', 'openai-chat');
export const responsesToAnthropic = makeCodec('openai-responses', 'anthropic-messages');

/** The codec for an inbound shape on an upstream protocol; null when they are the same (native passthrough). */
export function codecFor(inbound: ApiShape, upstream: UpstreamShape): Codec | null {
  if (inbound === upstream) return null;
  if (inbound === 'anthropic-messages') return anthropicToChat;
  if (inbound === 'openai-chat') return chatToAnthropic;
  return upstream === 'openai-chat' ? responsesToChat : responsesToAnthropic;
}

/** The upstream endpoint a translated request goes to. */
export function upstreamEndpointOf(codec: Codec): 'messages' | 'chat' {
  return codec.upstream === 'anthropic-messages' ? 'messages' : 'chat';
}

/** A reader of an upstream stream of any shape into the neutral model (continuations are read through it). */
export function upstreamReaderFor(shape: ApiShape, ctx: ResponseContext): UpstreamReader {
  if (shape === 'anthropic-messages') return new AnthropicEventReader();
  if (shape === 'openai-chat') return new ChatChunkReader(ctx);
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
  }
}
