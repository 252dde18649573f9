// Secrets at rest and the management token: AES-256-GCM round trip, a wrong key reads as null,
// masks hide the middle, key and token files are 0600 and stable across loads.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MANAGEMENT_TOKEN_FILE, ManagementToken, tokenFromRequest } from '../../../src/main/engine/auth/managementToken';
import { fileKeyProvider } from '../../../src/main/engine/secrets/keyFile';
import { maskSecret, SecretBox, type KeyProvider } from '../../../src/main/engine/secrets/secretBox';
import { seededRandom } from '../../../src/main/engine/random';

const fixedKey = (key: Buffer): KeyProvider => ({ loadKey: () => key, describe: () => 'test key' });
const mode = (p: string) => statSync(p).mode & 0o777;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-secrets-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('SecretBox', () => {
  const box = new SecretBox(fixedKey(randomBytes(32)));

  it.each(['sk-ant-api03-abcdefghijklmnop', '', 'ünïcødé 🔑 key', 'x'.repeat(10_000)])('round-trips %j', (plain) => {
    const enc = box.encrypt(plain);
    expect(box.decrypt(enc)).toBe(plain);
  });

  it('never stores the plaintext and never repeats a ciphertext for the same secret', () => {
    const secret = 'sk-openai-secret-1234567890';
    const a = box.encrypt(secret);
    const b = box.encrypt(secret);
    expect(a).not.toContain(secret);
    expect(a).not.toBe(b);
  });

  it('answers null (not a throw) for another key, tampering or garbage', () => {
    const enc = box.encrypt('sk-live-abcdefghijklmnop');
    const other = new SecretBox(fixedKey(randomBytes(32)));
    expect(other.decrypt(enc)).toBeNull();
    const raw = Buffer.from(enc.slice(3), 'base64');
    raw[raw.length - 1]! ^= 1;
    expect(box.decrypt(`v1.${raw.toString('base64')}`)).toBeNull();
    expect(box.decrypt('not encrypted')).toBeNull();
    expect(box.decrypt('v1.')).toBeNull();
    expect(box.decrypt('v1.@@@')).toBeNull();
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new SecretBox(fixedKey(randomBytes(16)))).toThrow(/32 bytes/);
  });
});

describe('maskSecret', () => {
  it('shows a short prefix and the last four characters of a long key', () => {
    expect(maskSecret('sk-ant-api03-abcdefghijklmnopqrstuvwxyz-1234')).toBe('sk-ant…1234');
  });

  it('hides short secrets completely', () => {
    for (const s of ['', 'a', 'abcd', 'short-key12']) expect(maskSecret(s)).not.toMatch(/[a-z0-9]{2,}/i);
  });

  it('never reveals the middle of a secret, nor more than a third of it, at any length', () => {
    const rnd = seededRandom(7);
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    for (let len = 1; len <= 80; len++) {
      for (const prefix of ['', 'sk-', 'sk-ant-']) {
        let s = prefix;
        while (s.length < len) s += alphabet[Math.floor(rnd.next() * alphabet.length)];
        s = s.slice(0, len);
        const masked = maskSecret(s);
        const shown = masked.replace(/[•…]/g, '');
        expect(shown.length, `${s} -> ${masked}`).toBeLessThanOrEqual(Math.floor(len / 3));
        // No run of 4 characters from the secret's middle third appears in the mask.
        const middle = s.slice(Math.floor(len / 3), Math.ceil((2 * len) / 3));
        for (let i = 0; i + 4 <= middle.length; i++) {
          expect(masked.includes(middle.slice(i, i + 4)), `${s} -> ${masked}`).toBe(false);
        }
      }
    }
  });
});

describe('fileKeyProvider', () => {
  it('creates a 0600 key file on first use and reuses the same key afterwards', () => {
    const p = fileKeyProvider(dir);
    const key = p.loadKey();
    expect(key).toHaveLength(32);
    const file = join(dir, 'secret.key');
    expect(mode(file)).toBe(0o600);
    expect(fileKeyProvider(dir).loadKey().equals(key)).toBe(true);
    expect(p.describe()).toBe(file);
  });

  it('decrypts values written under an earlier run', () => {
    const enc = new SecretBox(fileKeyProvider(dir)).encrypt('sk-persisted-secret-0001');
    expect(new SecretBox(fileKeyProvider(dir)).decrypt(enc)).toBe('sk-persisted-secret-0001');
  });

  it('refuses a key file that does not hold 32 bytes rather than silently making a new key', () => {
    writeFileSync(join(dir, 'secret.key'), 'too short');
    expect(() => fileKeyProvider(dir).loadKey()).toThrow(/32-byte/);
    expect(readFileSync(join(dir, 'secret.key'), 'utf8')).toBe('too short');
  });
});

describe('the management token', () => {
  it('is created 0600 at first run and stays the same across loads', () => {
    const t1 = ManagementToken.loadOrCreate(dir);
    const file = join(dir, MANAGEMENT_TOKEN_FILE);
    expect(mode(file)).toBe(0o600);
    expect(t1.value.length).toBeGreaterThanOrEqual(32);
    expect(ManagementToken.loadOrCreate(dir).value).toBe(t1.value);
    expect(readFileSync(file, 'utf8').trim()).toBe(t1.value);
  });

  it('tightens a token file that was left readable by others', () => {
    const t1 = ManagementToken.loadOrCreate(dir);
    const file = join(dir, MANAGEMENT_TOKEN_FILE);
    writeFileSync(file, `${t1.value}\n`, { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(ManagementToken.loadOrCreate(dir).value).toBe(t1.value);
    expect(mode(file)).toBe(0o600);
  });

  it('is different in another data dir', () => {
    const other = mkdtempSync(join(tmpdir(), 'switchyard-secrets-'));
    try {
      expect(ManagementToken.loadOrCreate(other).value).not.toBe(ManagementToken.loadOrCreate(dir).value);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('matches only the exact token', () => {
    const t = ManagementToken.loadOrCreate(dir);
    expect(t.matches(t.value)).toBe(true);
    for (const wrong of [null, undefined, '', t.value.slice(0, -1), `${t.value}x`, t.value.toUpperCase(), ' ']) {
      expect(t.matches(wrong), String(wrong)).toBe(false);
    }
  });

  it('is read from Authorization: Bearer or X-Switchyard-Token, never from the URL', () => {
    expect(tokenFromRequest({ authorization: 'Bearer abc' })).toBe('abc');
    expect(tokenFromRequest({ authorization: 'bearer  abc ' })).toBe('abc');
    expect(tokenFromRequest({ 'x-switchyard-token': 'def' })).toBe('def');
    expect(tokenFromRequest({ authorization: 'Basic abc' })).toBeNull();
  });
});
