// Loopback checks: both servers bind 127.0.0.1, and a request whose Host header names anything
// other than a loopback name is refused, which defeats DNS-rebinding pages in a browser.

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const h = host.trim().toLowerCase();
  let name = h;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    name = end > 0 ? h.slice(0, end + 1) : h;
  } else {
    const colon = h.lastIndexOf(':');
    if (colon > 0) name = h.slice(0, colon);
  }
  return LOOPBACK_NAMES.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
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
