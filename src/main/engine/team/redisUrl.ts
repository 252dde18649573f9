// Redis addresses as people type them and as logs may show them (no client library loaded here:
// the command line checks an address before anything connects).

/** A Redis URL with its password hidden, for logs and the dashboard. */
export function maskRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'redis://(unreadable address)';
  }
}

/** Checks a Redis URL before anything connects; the error is for people. */
export function checkRedisUrl(url: string): { ok: true } | { ok: false; message: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, message: 'is not a URL (expected redis://host:6379 or rediss://host:6380)' };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return { ok: false, message: 'must start with redis:// or rediss:// (TLS)' };
  if (!u.hostname) return { ok: false, message: 'names no host' };
  if (u.pathname && u.pathname !== '/' && !/^\/\d+$/.test(u.pathname)) return { ok: false, message: 'may only name a database number after the host (e.g. /0)' };
  return { ok: true };
}
