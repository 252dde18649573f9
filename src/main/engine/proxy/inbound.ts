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

/** The model the client asked for: the URL's on a Gemini route, else the body's `model`. */
export const requestedModel = (call: Pick<InboundCall, 'json' | 'gemini'>): unknown => (call.gemini ? call.gemini.model : call.json.model);

/** Whether the client asked for a stream: the Gemini method, else the body's `stream: true`. */
export const wantsStream = (call: Pick<InboundCall, 'json' | 'gemini'>): boolean => (call.gemini ? call.gemini.stream : call.json.stream === true);
