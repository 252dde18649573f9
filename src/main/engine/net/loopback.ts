// Loopback checks: both servers bind 127.0.0.1, and a request whose Host header names anything
// other than a loopback name is refused, which defeats DNS-rebinding pages in a browser.

const HOST_RE = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/;

const isLoopbackIpv4 = (name: string) => {
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(name);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255);
};

/**
 * True when a Host header names this machine's loopback: localhost, 127.x.x.x or [::1], with an
 * optional port. Anything else (other names, trailing text, a bad port) is refused.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const m = HOST_RE.exec(host.trim().toLowerCase());
  if (!m) return false;
  const [, ipv6, name, port] = m;
  if (port !== undefined && Number(port) > 65535) return false;
  if (ipv6 !== undefined) return ipv6 === '::1';
  return name === 'localhost' || isLoopbackIpv4(name!);
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
