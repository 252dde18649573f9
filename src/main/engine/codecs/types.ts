// The codec interface the pipeline calls. A codec translates one inbound API shape to one upstream
// wire protocol and back; native pairs have none (codecFor returns null) and stay byte-for-byte.
import type { ShapedError } from '../streams/errorEvents';
import type { ClientState } from './clientState';
import type { Frame } from '../streams/frame';
import type { ApiShape } from '../streams/shape';

/** What an upstream connection speaks. (A connection serving Responses is used natively.) */
export type UpstreamShape = 'anthropic-messages' | 'openai-chat' | 'gemini';

export interface RequestOptions {
  /** The upstream model id for this attempt. */
  model: string;
  stream: boolean;
  /**
   * Chat targets: the field for the token limit. Default `max_tokens`, which every
   * OpenAI-compatible server reads; OpenAI's own reasoning models need `max_completion_tokens`.
   */
  chatMaxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Anthropic targets: max_tokens when the inbound request sets none (default: by model, anthropicModels.ts). */
  defaultMaxTokens?: number;
}

export interface TranslatedRequest {
  /** The upstream request body (`model` set, `stream` as asked). */
  body: Record<string, unknown>;
  /** Inbound fields accepted but not sent, each `path: why`, for the request log. */
  dropped: string[];
  /** Provider-hosted tools left out (their types), for the `x-switchyard-dropped-tools` header. */
  droppedTools: string[];
}

export interface ResponseContext {
  /** The inbound request JSON (Chat: stream_options; Responses: settings it echoes, include). */
  request: Record<string, unknown>;
  /** The model to report when the upstream names none. */
  model: string;
  /** Wall-clock milliseconds (clock.now()), for `created` / `created_at`. */
  now: number;
  /** The proxy's request id: the base for ids the upstream did not provide. */
  requestId: string;
  /** Keep the visible text sent so far in the client state (for mid-stream recovery). */
  trackText?: boolean;
  /** Gemini clients: the stream's framing, SSE (`alt=sse`) or one JSON array (without it). Default SSE. */
  geminiFraming?: 'sse' | 'json-array';
}

export interface StreamEnd {
  /** Inbound SSE text to send last (closing events), possibly empty. */
  text: string;
  /** The upstream ended without its terminal event and without an error: a failure, not a success. */
  truncated: boolean;
  outcome: 'complete' | 'truncated' | 'error';
}

export interface TranslatedUsage {
  /** Prompt tokens including cached ones. */
  inputTokens: number | null;
  outputTokens: number | null;
  /** The parts of `inputTokens` read from and written to the upstream's prompt cache; null when it did not say. */
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
}

/** One attempt's response translation (stateful; create one per attempt). */
export interface ResponseTranslator {
  /** A complete non-stream upstream answer (a success body) in the inbound protocol's shape. */
  json(upstream: unknown): Record<string, unknown>;
  /** One upstream frame → the inbound protocol's SSE text for it (often empty, never throws). */
  frame(f: Frame): string;
  /** The upstream body ended. */
  end(): StreamEnd;
  /**
   * Ends the client's stream with the inbound protocol's error event (closing what is open;
   * Responses: `response.failed` with the output so far). For stalls, cuts and errors the
   * pipeline decides to surface.
   */
  fail(e: ShapedError): string;
  usage(): TranslatedUsage;
  /** What the client has been sent so far (to end or resume its stream). */
  clientState(): ClientState;
}

export interface Codec {
  readonly inbound: ApiShape;
  readonly upstream: UpstreamShape;
  /** Throws CodecError (400, `field`) for what the target cannot express. */
  request(inbound: Record<string, unknown>, opts: RequestOptions): TranslatedRequest;
  response(ctx: ResponseContext): ResponseTranslator;
  /** An upstream error response (in its protocol) → status and body in the inbound protocol. */
  error(status: number, upstreamBody: string): { status: number; body: Record<string, unknown> };
}
