// The undici dispatcher for a connection that leaves through an outbound proxy: undici's own
// ProxyAgent for HTTP(S) proxies (CONNECT tunnel, Basic credentials from the URL), and
// fetch-socks' socksDispatcher (an undici Agent whose connector speaks SOCKS5 through the `socks`
// package) for SOCKS5. SOCKS destinations are sent by name, so the proxy resolves DNS for both
// socks5:// and socks5h://. Keep-alive and pipelining match the direct agents (client.ts).
import { socksDispatcher } from 'fetch-socks';
import { ProxyAgent, type Dispatcher } from 'undici';
import { checkOutboundProxy } from '../../../shared/outboundProxy';

const POOL = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, pipelining: 1 } as const;

/** A dispatcher that sends every request through `proxyUrl`; throws on a URL the contract would refuse. */
export function createProxyDispatcher(proxyUrl: string, connectTimeoutMs: number): Dispatcher {
  const c = checkOutboundProxy(proxyUrl);
  if (!c.ok) throw new Error(`outbound proxy: ${c.message}`);
  const { url } = c;
  if (c.kind === 'socks5') {
    return socksDispatcher(
      {
        type: 5,
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: Number(url.port),
        ...(url.username ? { userId: decodeURIComponent(url.username) } : {}),
        ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
      },
      { ...POOL, connect: { timeout: connectTimeoutMs } },
    );
  }
  return new ProxyAgent({
    uri: url.href,
    ...POOL,
    proxyTls: { timeout: connectTimeoutMs },
    requestTls: { timeout: connectTimeoutMs },
  });
}
