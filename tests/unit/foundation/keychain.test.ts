// The desktop key provider: the data key is kept encrypted by the OS keychain (safeStorage, faked
// here), written 0600, reused across runs; without a keychain it falls back to the 0600 key file.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keychainKeyProvider } from '../../../src/main/desktop/keychain';
import { SecretBox } from '../../../src/main/engine/secrets/secretBox';

/** A stand-in for Electron's safeStorage: reversible, and clearly not the plaintext. */
const fakeSafeStorage = (available = true) => ({
  isEncryptionAvailable: () => available,
  encryptString: (s: string) => Buffer.from(`enc:${Buffer.from(s).toString('hex')}`),
  decryptString: (b: Buffer) => Buffer.from(b.toString().slice(4), 'hex').toString(),
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-keychain-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('keychainKeyProvider', () => {
  it('keeps the data key encrypted by the keychain in a 0600 file and reuses it', () => {
    const p = keychainKeyProvider(dir, fakeSafeStorage());
    const key = p.loadKey();
    expect(key).toHaveLength(32);
    const file = join(dir, 'secret.key.enc');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file).toString()).not.toContain(key.toString('base64'));
    expect(keychainKeyProvider(dir, fakeSafeStorage()).loadKey().equals(key)).toBe(true);
    expect(p.describe()).toMatch(/keychain/);
  });

  it('decrypts secrets written under an earlier run', () => {
    const enc = new SecretBox(keychainKeyProvider(dir, fakeSafeStorage())).encrypt('sk-desktop-secret-000001');
    expect(new SecretBox(keychainKeyProvider(dir, fakeSafeStorage())).decrypt(enc)).toBe('sk-desktop-secret-000001');
  });

  it('falls back to the 0600 key file when no keychain is available, and says where the key is', () => {
    const p = keychainKeyProvider(dir, fakeSafeStorage(false));
    p.loadKey();
    expect(existsSync(join(dir, 'secret.key.enc'))).toBe(false);
    expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(p.describe()).toBe(join(dir, 'secret.key'));
  });
});
