// Headless key provider: a 32-byte key in <dataDir>/secret.key, created 0600 on first run.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyProvider } from './secretBox';

export function fileKeyProvider(dataDir: string, fileName = 'secret.key'): KeyProvider {
  const path = join(dataDir, fileName);
  return {
    loadKey() {
      if (existsSync(path)) {
        const raw = readFileSync(path);
        const key = raw.length === 32 ? raw : Buffer.from(raw.toString('utf8').trim(), 'base64');
        if (key.length !== 32) throw new Error(`${path} is not a 32-byte key; move it away to create a new one`);
        return key;
      }
      const key = randomBytes(32);
      writeFileSync(path, key.toString('base64'), { mode: 0o600, flag: 'wx' });
      chmodSync(path, 0o600);
      return key;
    },
    describe: () => path,
  };
}

/** Reads or creates a 0600 text file holding a random token (the management token). */
export function loadOrCreateTokenFile(path: string, make: () => string): string {
  if (existsSync(path)) {
    const t = readFileSync(path, 'utf8').trim();
    if (t.length >= 16) {
      // The file is a credential: keep it private even if it was loosened since it was made.
      chmodSync(path, 0o600);
      return t;
    }
  }
  const token = make();
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return token;
}
