// Upstream transport over undici: pooled keep-alive connections per origin (one Agent per connect
// timeout value, and per outbound proxy: outboundProxy.ts), split timeouts (connect / response
// headers / idle between body chunks), and an AbortSignal that tears the socket down when the
// client goes away.
import { Agent, type Dispatcher } from './undici';
import { UpstreamExchange, type UpstreamResponse } from './body';
import { createProxyDispatcher, OutboundProxyTimeout } from './outboundProxy';

export { readBodyText, type BodySource, type UpstreamResponse } from './body';

/**
 * A request body: one buffer, or consecutive parts of one. A large body whose model is rewritten is
 * sent as its parts around the new value (proxy/body.ts rewriteModel), not copied: a copy of each
 * large body is memory outside V8's heap that V8 counts toward its next full collection, and at
 * agents' body sizes (tens to hundreds of KiB) those copies alone started one every few dozen
 * requests (docs/decisions/lean-25-large-bodies.md).
 */
export type UpstreamBody = Buffer | readonly Buffer[];

/** The byte length of a body in parts. */
export const partsLength = (parts: readonly Buffer[]): number => {
  let n = 0;
  for (const p of parts) n += p.length;
  return n;
};

export interface UpstreamRequest {
  /** e.g. "https://api.anthropic.com" */
  origin: string;
  /** Path and query, e.g. "/v1/messages" */
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: UpstreamBody;
  signal: AbortSignal;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  /** The connection's outbound proxy (http(s):// or socks5://, credentials included); null/absent: direct. */
  proxy?: string | null;
}

export type TransportFailureKind = 'connect_timeout' | 'headers_timeout' | 'idle_timeout' | 'network' | 'aborted';

export class TransportError extends Error {
  constructor(
    readonly kind: TransportFailureKind,
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

/** Maps undici / socket errors to the transport failure kinds the classifier understands. */
export function toTransportError(err: unknown, signal?: AbortSignal): TransportError {
  if (err instanceof TransportError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  // undici reports a tunnel the proxy refused (407, 403, 502 ...) as an aborted request.
  const proxyRefused = /^Proxy response \((\d+)\)/.exec(e?.message ?? '');
  if (proxyRefused && !signal?.aborted) {
    return new TransportError('network', `the outbound proxy refused the connection (${proxyRefused[1]})`, code);
  }
  if (err instanceof OutboundProxyTimeout && !signal?.aborted) return new TransportError('connect_timeout', err.message, err.code);
  if (signal?.aborted || e?.name === 'AbortError' || code === 'UND_ERR_ABORTED') {
    return new TransportError('aborted', 'request aborted', code);
  }
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new TransportError('connect_timeout', 'connecting to the upstream timed out', code);
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new TransportError('headers_timeout', 'the upstream did not send response headers in time', code);
    case 'UND_ERR_BODY_TIMEOUT':
      return new TransportError('idle_timeout', 'the upstream stream went silent for too long', code);
    default:
      return new TransportError('network', describeNetworkError(code, e?.message ?? e?.cause?.message), code);
  }
}

function describeNetworkError(code: string | undefined, message: string | undefined): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'the upstream refused the connection';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the upstream closed the connection';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the upstream host name could not be resolved';
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
      return 'the upstream TLS certificate was rejected';
    default:
      return message ? `network error: ${message}` : 'network error';
  }
}

export class UpstreamClient {
  private readonly agents = new Map<string, Dispatcher>();

  constructor(private readonly proxyDispatcher: (proxyUrl: string, connectTimeoutMs: number) => Dispatcher = createProxyDispatcher) {}

  private agentFor(connectTimeoutMs: number, proxy: string | null | undefined): Dispatcher {
    const key = proxy ? `${connectTimeoutMs} ${proxy}` : String(connectTimeoutMs);
    let a = this.agents.get(key);
    if (!a) {
      a = proxy
        ? this.proxyDispatcher(proxy, connectTimeoutMs)
        : new Agent({
            connect: { timeout: connectTimeoutMs },
            keepAliveTimeout: 30_000,
            keepAliveMaxTimeout: 600_000,
            pipelining: 1,
          });
      this.agents.set(key, a);
    }
    return a;
  }

  /** Closes the pooled sockets of a proxy no connection uses any more. */
  async forgetProxy(proxy: string): Promise<void> {
    const gone: Dispatcher[] = [];
    for (const [k, a] of this.agents) {
      if (k.endsWith(` ${proxy}`)) {
        this.agents.delete(k);
        gone.push(a);
      }
    }
    await Promise.allSettled(gone.map((a) => a.close()));
  }

  /** Resolves at the response's headers; its body is read through `attach` (upstream/body.ts). */
  request(req: UpstreamRequest): Promise<UpstreamResponse> {
    return new Promise<UpstreamResponse>((resolve, reject) => {
      if (req.signal.aborted) return reject(new TransportError('aborted', 'request aborted'));
      let agent: Dispatcher;
      try {
        agent = this.agentFor(req.connectTimeoutMs, req.proxy);
      } catch (err) {
        return reject(toTransportError(err, req.signal)); // an outbound proxy URL it refuses
      }
      const { body } = req;
      // A body in parts is written part by part (undici takes any iterable of buffers); its length
      // goes in the header, so it is never sent chunked.
      const parts = body !== undefined && !Buffer.isBuffer(body) ? (body as readonly Buffer[]) : null;
      // undici reports its own errors, a refused request included, through the handler.
      agent.dispatch(
        {
          origin: req.origin,
          path: req.path,
          method: req.method,
          headers: parts ? { ...req.headers, 'content-length': String(partsLength(parts)) } : req.headers,
          // undici's types list no iterable, but its writer takes one (tests/integration/proxy/largeBodies.test.ts).
          body: parts ? (parts as unknown as Buffer) : (body as Buffer | undefined),
          headersTimeout: req.headersTimeoutMs,
          bodyTimeout: req.idleTimeoutMs,
        },
        new UpstreamExchange(req.signal, resolve, (err) => reject(toTransportError(err, req.signal))),
      );
    });
  }

  async close(): Promise<void> {
    const all = [...this.agents.values()];
    this.agents.clear();
    await Promise.allSettled(all.map((a) => a.close()));
  }
}
