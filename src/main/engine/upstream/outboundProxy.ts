// The undici dispatcher for a connection that leaves through an outbound proxy: undici's own
// ProxyAgent for HTTP(S) proxies (CONNECT tunnel, Basic credentials from the URL), and an undici
// Agent whose connector speaks SOCKS5 through fetch-socks / `socks` for SOCKS5. SOCKS destinations
// are sent by name, so the proxy resolves DNS for both socks5:// and socks5h://. Keep-alive and
// pipelining match the direct agents (client.ts).
//
// Every proxy step is bounded by the connection's connect timeout: the TCP connect to the proxy,
// the TLS handshake with an https:// proxy, the proxy's answer to the CONNECT (undici would wait
// its default 300 s for it), the SOCKS handshake, and the TLS handshake through the tunnel. A step
// that runs out fails with an `OutboundProxyTimeout` naming it.
import { createRequire } from 'node:module';
import type { socksConnector as SocksConnector } from 'fetch-socks';
import { Agent, Pool, ProxyAgent, type Dispatcher } from './undici';
import { checkOutboundProxy } from '../../../shared/outboundProxy';

const POOL = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, pipelining: 1 } as const;

/** A proxy step that did not finish within the connection's connect timeout. */
export class OutboundProxyTimeout extends Error {
  readonly code = 'SWY_OUTBOUND_PROXY_TIMEOUT';
  constructor(message: string) {
    super(message);
    this.name = 'OutboundProxyTimeout';
  }
}

/** "0.3 s", "10 s": the limit as the error names it. */
const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

const codeOf = (err: unknown) => (err as { code?: unknown } | null)?.code;

/** The CONNECT's own failures, renamed after the step that ran out. */
function connectStepError(err: unknown, ms: number): unknown {
  switch (codeOf(err)) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new OutboundProxyTimeout(`the outbound proxy did not answer the CONNECT within ${seconds(ms)}`);
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new OutboundProxyTimeout(`connecting to the outbound proxy timed out after ${seconds(ms)}`);
    default:
      return err;
  }
}

/**
 * The client ProxyAgent sends its CONNECT with: the proxy's answer is awaited at most `ms` (its
 * headers timeout), and a timeout comes back named after the CONNECT.
 */
function boundedConnectClient(ms: number) {
  return (origin: URL, opts: object): Dispatcher => {
    const pool = new Pool(origin, { ...opts, headersTimeout: ms, bodyTimeout: ms });
    const connect = pool.connect.bind(pool) as (o: Dispatcher.ConnectOptions) => Promise<Dispatcher.ConnectData>;
    const bounded = (o: Dispatcher.ConnectOptions) =>
      connect(o).catch((err: unknown) => {
        throw connectStepError(err, ms);
      });
    Object.assign(pool, { connect: bounded });
    return pool;
  };
}

/** fetch-socks (and the `socks` package and all of undici under it), loaded with the first SOCKS proxy only. */
let socks: typeof SocksConnector | null = null;
const socksConnector: typeof SocksConnector = (...args) => {
  socks ??= (createRequire(import.meta.url)('fetch-socks') as { socksConnector: typeof SocksConnector }).socksConnector;
  return socks(...args);
};

/** The SOCKS connector, its handshake bounded by `ms` and a timeout named after it. */
function boundedSocksConnector(proxy: Parameters<typeof SocksConnector>[0], ms: number): ReturnType<typeof SocksConnector> {
  const inner = socksConnector(proxy, { timeout: ms });
  return (opts, callback) =>
    inner(opts, (err, socket) => {
      if (err && /timed out/i.test(err.message)) {
        callback(new OutboundProxyTimeout(`the outbound proxy did not answer the SOCKS handshake within ${seconds(ms)}`), null);
      } else if (err) callback(err, null);
      else callback(null, socket!);
    });
}

/** A dispatcher that sends every request through `proxyUrl`; throws on a URL the contract would refuse. */
export function createProxyDispatcher(proxyUrl: string, connectTimeoutMs: number): Dispatcher {
  const c = checkOutboundProxy(proxyUrl);
  if (!c.ok) throw new Error(`outbound proxy: ${c.message}`);
  const { url } = c;
  if (c.kind === 'socks5') {
    const proxy = {
      type: 5 as const,
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port),
      ...(url.username ? { userId: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    };
    return new Agent({ ...POOL, connect: boundedSocksConnector(proxy, connectTimeoutMs) });
  }
  return new ProxyAgent({
    uri: url.href,
    ...POOL,
    clientFactory: boundedConnectClient(connectTimeoutMs),
    proxyTls: { timeout: connectTimeoutMs },
    requestTls: { timeout: connectTimeoutMs },
  });
}
