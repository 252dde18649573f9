// Encryption at rest for provider keys, OAuth tokens and client keys: AES-256-GCM under a 32-byte
// data key. Where the data key comes from is the shell's business (a 0600 key file headless, the
// OS keychain via Electron safeStorage on the desktop); the engine only sees the KeyProvider.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface KeyProvider {
  /** The 32-byte data key. Called once at start. */
  loadKey(): Buffer;
  /** Where the key lives, for the UI ("keychain" or a file path). */
  describe(): string;
}

const PREFIX = 'v1.';

export class SecretBox {
  private readonly key: Buffer;

  constructor(provider: KeyProvider) {
    const key = provider.loadKey();
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
    this.key = key;
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return PREFIX + Buffer.concat([iv, tag, ct]).toString('base64');
  }

  /** Returns null when the value cannot be decrypted with this key (another machine's key, tampering). */
  decrypt(enc: string): string | null {
    if (!enc.startsWith(PREFIX)) return null;
    try {
      const raw = Buffer.from(enc.slice(PREFIX.length), 'base64');
      const iv = raw.subarray(0, 12);
      const tag = raw.subarray(12, 28);
      const ct = raw.subarray(28);
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

/**
 * Masks a secret for display: a short prefix and the last four characters, never more than a third
 * of the secret (a shorter secret loses the prefix first, then shows nothing).
 */
export function maskSecret(secret: string): string {
  const tail = secret.slice(-4);
  const head = secret.startsWith('sk-') ? secret.slice(0, 6) : secret.slice(0, 3);
  if (secret.length >= 12 && head.length + tail.length <= secret.length / 3) return `${head}…${tail}`;
  if (secret.length >= 12) return `…${tail}`;
  return '••••';
}
