// The local management token: generated at first run, kept 0600 in the data dir, required by
// every /api call. Compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
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
}

/** Reads the token from `Authorization: Bearer`, `X-Switchyard-Token` or (for links) `?token=`. */
export function tokenFromRequest(headers: Record<string, string | string[] | undefined>, url?: URL): string | null {
  const auth = headers['authorization'];
  if (typeof auth === 'string' && auth.toLowerCase().startsWith('bearer ')) return auth.slice(7).trim();
  const h = headers['x-switchyard-token'];
  if (typeof h === 'string' && h) return h.trim();
  return url?.searchParams.get('token') ?? null;
}
