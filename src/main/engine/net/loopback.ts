// Loopback checks: by default both servers bind 127.0.0.1, and a request whose Host header names
// anything other than a loopback name is refused, which defeats DNS-rebinding pages in a browser.
// A team server opts in to more names (exposure.ts); the parsing is shared.

const HOST_RE = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/;

const isLoopbackIpv4 = (name: string) => {
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(name);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255);
};

/**
 * The name a Host header (or an origin's host) addresses: lower case, without the port, an IPv6
 * address without its brackets. Null when it is not a plain host[:port].
 */
export function hostNameOf(host: string | undefined): { name: string; ipv6: boolean } | null {
  if (!host) return null;
  const m = HOST_RE.exec(host.trim().toLowerCase());
  if (!m) return null;
  const [, ipv6, name, port] = m;
  if (port !== undefined && Number(port) > 65535) return null;
  if (ipv6 !== undefined) return { name: ipv6, ipv6: true };
  return { name: name!, ipv6: false };
}

/** True for a loopback name as `hostNameOf` returns it: localhost, 127.x.x.x or ::1. */
export function isLoopbackName(h: { name: string; ipv6: boolean }): boolean {
  if (h.ipv6) return h.name === '::1';
  return h.name === 'localhost' || isLoopbackIpv4(h.name);
}

/** The last Host header `isLoopbackHost` judged, and its answer. */
let lastHost: string | undefined;
let lastVerdict = false;

/**
 * True when a Host header names this machine's loopback: localhost, 127.x.x.x or [::1], with an
 * optional port. Anything else (other names, trailing text, a bad port) is refused.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  // Every request asks, nearly always with the same header: the last answer is kept (a pure function
  // of the string, so the memo cannot go stale).
  if (host === lastHost && host !== undefined) return lastVerdict;
  const h = hostNameOf(host);
  const verdict = h !== null && isLoopbackName(h);
  lastHost = host;
  lastVerdict = verdict;
  return verdict;
}

/** True when an Origin header (if any) is a loopback origin. */
export function isLoopbackOrigin(origin: string | undefined): boolean {
  if (!origin) return true;
  try {
    const u = new URL(origin);
    return isLoopbackHost(u.host);
  } catch {
    return false;
  }
}
