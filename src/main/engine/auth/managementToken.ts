// The local management token: generated at first run, kept 0600 in the data dir, required by
// every /api call. Compared in constant time. A browser holds it as a session cookie instead
// (HttpOnly, SameSite=Strict): its value is derived from the token, so it dies when the token does.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { randomToken } from '../random';
import { loadOrCreateTokenFile } from '../secrets/keyFile';

export const MANAGEMENT_TOKEN_FILE = 'management-token';

export class ManagementToken {
  private readonly digest: Buffer;

  constructor(readonly value: string) {
    this.digest = createHash('sha256').update(value).digest();
  }

  static loadOrCreate(dataDir: string): ManagementToken {
    return new ManagementToken(loadOrCreateTokenFile(join(dataDir, MANAGEMENT_TOKEN_FILE), () => `sym_${randomToken(32)}`));
  }

  matches(candidate: string | null | undefined): boolean {
    if (!candidate) return false;
    const d = createHash('sha256').update(candidate).digest();
    return timingSafeEqual(d, this.digest);
  }

  /** The browser session cookie's value: an HMAC of a fixed label under the token (not the token). */
  sessionValue(): string {
    return createHmac('sha256', this.value).update('switchyard.dashboard-session').digest('base64url');
  }

  matchesSession(candidate: string | null | undefined): boolean {
    if (!candidate) return false;
    const a = createHash('sha256').update(candidate).digest();
    const b = createHash('sha256').update(this.sessionValue()).digest();
    return timingSafeEqual(a, b);
  }
}

/** Reads the token from `Authorization: Bearer` or `X-Switchyard-Token` (never from the URL). */
export function tokenFromRequest(headers: Record<string, string | string[] | undefined>): string | null {
  const auth = headers['authorization'];
  if (typeof auth === 'string' && auth.toLowerCase().startsWith('bearer ')) return auth.slice(7).trim();
  const h = headers['x-switchyard-token'];
  if (typeof h === 'string' && h) return h.trim();
  return null;
}

/** The session cookie's name; the port is in it, so two instances on one machine keep apart. */
export const sessionCookieName = (port: number | null) => `switchyard_session_${port ?? 0}`;

/** One cookie's value from a Cookie header, or null. */
export function cookieFromRequest(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const raw = headers['cookie'];
  if (typeof raw !== 'string') return null;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Set-Cookie for the session (no Max-Age: it lasts until the browser closes), or to clear it. */
export function sessionCookie(name: string, value: string | null): string {
  const attrs = 'Path=/; HttpOnly; SameSite=Strict';
  return value === null ? `${name}=; ${attrs}; Max-Age=0` : `${name}=${value}; ${attrs}`;
}
