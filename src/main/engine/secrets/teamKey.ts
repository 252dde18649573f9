// The team key (issue 26): 32 random bytes every instance of a team holds, generated on one and
// pasted on the others. It never travels through Redis. Two keys are derived from it (HKDF), so
// one key cannot be misused for the other's job: one encrypts the connection secrets and proxy
// credentials of the published configuration (AES-256-GCM, through SecretBox), the other
// authenticates the whole publication (HMAC-SHA256), so someone who can write to Redis cannot
// point a published key at another address. A key id (also derived) tells a follower that it holds
// a different key than the publisher before anything is tried.
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { SecretBox } from './secretBox';

export const TEAM_KEY_BYTES = 32;

/** A new team key, as text (base64). */
export function generateTeamKey(): string {
  return randomBytes(TEAM_KEY_BYTES).toString('base64');
}

/** Reads a pasted key (base64, base64url or hex of 32 bytes); null when it is not one. */
export function parseTeamKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (!/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(t)) return null;
  const buf = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return buf.length === TEAM_KEY_BYTES ? buf : null;
}

/** How the key is shown: its last four characters only. */
export function maskTeamKey(key: Buffer): string {
  return `…${key.toString('base64').slice(-6, -2)}`;
}

function derive(key: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `switchyard-team:${info}`, 32));
}

/** A fingerprint people compare between workstations ("4F2A-91C0"): derived, so it reveals nothing. */
export function teamKeyFingerprint(key: Buffer): string {
  const hex = derive(key, 'fingerprint').subarray(0, 4).toString('hex').toUpperCase();
  return `${hex.slice(0, 4)}-${hex.slice(4)}`;
}

/** The publication's cipher and seal under one team key. */
export class TeamCipher {
  private readonly box: SecretBox;
  private readonly macKey: Buffer;
  /** Names the key in a publication (a follower with another key knows before trying). */
  readonly keyId: string;

  constructor(key: Buffer) {
    if (key.length !== TEAM_KEY_BYTES) throw new Error('a team key is 32 bytes');
    const enc = derive(key, 'config-secrets');
    this.box = new SecretBox({ loadKey: () => enc, describe: () => 'team key' });
    this.macKey = derive(key, 'config-seal');
    this.keyId = derive(key, 'key-id').subarray(0, 8).toString('hex');
  }

  encrypt(plain: string): string {
    return this.box.encrypt(plain);
  }

  /** null: not encrypted with this key. */
  decrypt(enc: string): string | null {
    return this.box.decrypt(enc);
  }

  seal(body: string): string {
    return createHmac('sha256', this.macKey).update(body).digest('base64');
  }

  /** True when `mac` seals `body` under this key. */
  verify(body: string, mac: string): boolean {
    const want = Buffer.from(this.seal(body), 'base64');
    const got = Buffer.from(mac, 'base64');
    return got.length === want.length && timingSafeEqual(got, want);
  }
}
