// An inbound request as the proxy server hands it to the pipeline: the route it came in on, the
// raw and parsed body, the client key that authenticated it, and the response to answer on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InboundProtocol, WireProtocol } from '../../../shared/model';
import type { UpstreamEndpoint } from '../upstream/headers';
import type { RequestBytes } from './requestBytes';

export interface InboundCall {
  protocol: InboundProtocol;
  endpoint: UpstreamEndpoint;
  wire: WireProtocol;
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  startedAt: number;
  startMono: number;
  clientKeyId: string | null;
  /** The raw body: one buffer, or a large body's socket chunks (requestBytes.ts). */
  body: RequestBytes;
  json: Record<string, unknown>;
  /** A top-level member of the body, read without building the body where the call can (parsedCall.ts). */
  topLevel?(key: string): unknown;
  /** The length of a top-level array member (0 when absent or not an array), likewise. */
  arrayLength?(key: string): number;
  /** A Gemini route: the model and method its URL names (a Gemini body names neither). */
  gemini?: GeminiRoute;
}

export interface GeminiRoute {
  /** The model id without its `models/` prefix. */
  model: string;
  /** streamGenerateContent. */
  stream: boolean;
  /** `alt=sse`: the stream is SSE events; without it, one JSON array. */
  sse: boolean;
}

type BodyReader = Pick<InboundCall, 'json' | 'topLevel' | 'arrayLength'>;

/** A top-level member of the call's body, without building the body where the call can. */
export const topLevelOf = (call: BodyReader, key: string): unknown => (call.topLevel ? call.topLevel(key) : call.json[key]);

/** The length of a top-level array member of the call's body (0 when absent or not an array). */
export function arrayLengthOf(call: BodyReader, key: string): number {
  if (call.arrayLength) return call.arrayLength(key);
  const v = call.json[key];
  return Array.isArray(v) ? v.length : 0;
}

/**
 * The request as routing sees it (routing/combos RequestShape): only a combo reads the body (its
 * prompt key, its token estimate), so a large one is built only then. A class rather than an
 * object literal with a getter, which would make a closure per request.
 */
export class CallShape {
  constructor(
    private readonly call: Pick<InboundCall, 'json'>,
    readonly bodyBytes: number,
  ) {}

  get json(): Record<string, unknown> {
    return this.call.json;
  }
}

/** The model the client asked for: the URL's on a Gemini route, else the body's `model`. */
export const requestedModel = (call: BodyReader & Pick<InboundCall, 'gemini'>): unknown => (call.gemini ? call.gemini.model : topLevelOf(call, 'model'));

/** Whether the client asked for a stream: the Gemini method, else the body's `stream: true`. */
export const wantsStream = (call: BodyReader & Pick<InboundCall, 'gemini'>): boolean => (call.gemini ? call.gemini.stream : topLevelOf(call, 'stream') === true);
