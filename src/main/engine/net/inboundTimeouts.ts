// Time limits on what a client sends to one of our HTTP servers (proxy and management), and the
// typed answer to a client that breaks them. Node enforces both limits itself:
// - headersTimeout: the request line and headers must arrive within this time;
// - requestTimeout: the whole request (headers and body) must arrive within this time. It never
//   counts the response, so a long streamed answer is not cut by it.
// A slow client (slow-loris) gets a 408 in the server's error shape and its socket is closed; a
// malformed request a 400 (431 for oversized headers). Node checks the limits every
// CHECK_INTERVAL_MS, so a limit may be passed by up to that much, never cut short.
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface InboundTimeouts {
  headersMs: number;
  requestMs: number;
}

export const CHECK_INTERVAL_MS = 1_000;

/** What goes on the wire for a client error: status, stable code and message, rendered by the server. */
export interface ClientErrorAnswer {
  status: 400 | 408 | 431;
  code: 'request_timeout' | 'invalid_request' | 'headers_too_large';
  message: string;
}

/** Headers may not take longer than the whole request (Node refuses that combination). */
const headersLimit = (t: InboundTimeouts) => Math.min(t.headersMs, t.requestMs);

export function timeoutServerOptions(t: InboundTimeouts): ServerOptions {
  return { headersTimeout: headersLimit(t), requestTimeout: t.requestMs, connectionsCheckingInterval: CHECK_INTERVAL_MS };
}

/** Changes the limits of a listening server; they apply from Node's next check. */
export function setServerTimeouts(server: Server, t: InboundTimeouts): void {
  server.requestTimeout = t.requestMs;
  server.headersTimeout = headersLimit(t);
}

function answerFor(err: NodeJS.ErrnoException): ClientErrorAnswer {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, code: 'request_timeout', message: 'the request (headers and body) did not arrive in time; send it again' };
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, code: 'headers_too_large', message: 'the request headers are too large' };
  }
  return { status: 400, code: 'invalid_request', message: 'malformed HTTP request' };
}

const REASONS: Record<ClientErrorAnswer['status'], string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Answers client errors (timeouts, malformed requests) with a typed JSON body and closes the
 * socket. `render` builds the body; it gets the request in progress on that socket, if any (a
 * client that stalls in its headers has none yet). A response already started is just cut.
 */
export function answerClientErrors(
  server: Server,
  render: (answer: ClientErrorAnswer, req: IncomingMessage | null) => string,
): void {
  const current = new WeakMap<Socket, { req: IncomingMessage; res: ServerResponse }>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => current.set(req.socket, { req, res }));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const inFlight = current.get(socket);
    const open = inFlight && !inFlight.res.writableEnded ? inFlight : null;
    if (socket.writable && !(open && open.res.headersSent)) {
      const answer = answerFor(err);
      const body = render(answer, open?.req ?? null);
      socket.write(
        `HTTP/1.1 ${answer.status} ${REASONS[answer.status]}\r\n` +
          'content-type: application/json\r\n' +
          `content-length: ${Buffer.byteLength(body)}\r\n` +
          'connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy();
  });
}
