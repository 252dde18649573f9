// A connection's outbound proxy (issue 15): the URL it is written as, the check the contract and
// the connection form share, and the masked form every answer shows. Plain data, no I/O.

/** Schemes a connection may route through: HTTP(S) CONNECT proxies and SOCKS5. */
export const OUTBOUND_PROXY_SCHEMES = ['http:', 'https:', 'socks5:', 'socks5h:'] as const;

export type OutboundProxyCheck =
  | { ok: true; url: URL; hasCredentials: boolean; kind: 'http' | 'socks5' }
  | { ok: false; message: string };

/** Checks an outbound proxy URL: scheme, host, a port for SOCKS, and nothing after the authority. */
export function checkOutboundProxy(text: string): OutboundProxyCheck {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { ok: false, message: 'must be a URL such as http://proxy.local:3128 or socks5://127.0.0.1:1080' };
  }
  if (!(OUTBOUND_PROXY_SCHEMES as readonly string[]).includes(url.protocol)) {
    return { ok: false, message: 'must start with http://, https://, socks5:// or socks5h://' };
  }
  if (!url.hostname) return { ok: false, message: 'must name the proxy host' };
  const kind = url.protocol.startsWith('socks') ? 'socks5' : 'http';
  if (kind === 'socks5' && !url.port) return { ok: false, message: 'a SOCKS5 proxy URL must give the port (e.g. socks5://127.0.0.1:1080)' };
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash) {
    return { ok: false, message: 'must be only scheme, optional user:password, host and port (no path or query)' };
  }
  return { ok: true, url, hasCredentials: url.username !== '' || url.password !== '', kind };
}

/** The proxy URL as answers show it: credentials replaced, host and port kept. */
export function maskOutboundProxy(text: string): string {
  const c = checkOutboundProxy(text);
  if (!c.ok) return '••••';
  const { url } = c;
  return `${url.protocol}//${c.hasCredentials ? '••••@' : ''}${url.host}`;
}
