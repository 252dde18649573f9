// An inbound request as the proxy server hands it to the pipeline: the route it came in on, the
// raw and parsed body, the client key that authenticated it, and the response to answer on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InboundProtocol, WireProtocol } from '../../../shared/model';
import type { UpstreamEndpoint } from '../upstream/headers';

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
  body: Buffer;
  json: Record<string, unknown>;
}
