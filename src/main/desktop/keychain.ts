// Desktop key provider: the 32-byte data key is kept encrypted by the OS keychain (Electron
// safeStorage) in <userData>/secret.key.enc. When no keychain is available (a bare Linux session)
// it falls back to the 0600 key file the headless shell uses, and says so.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SafeStorage } from 'electron';
import type { KeyProvider } from '../engine/secrets/secretBox';
import { fileKeyProvider } from '../engine/secrets/keyFile';

export function keychainKeyProvider(dataDir: string, safeStorage: Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString'>): KeyProvider {
  const path = join(dataDir, 'secret.key.enc');
  if (!safeStorage.isEncryptionAvailable()) return fileKeyProvider(dataDir);
  return {
    loadKey() {
      if (existsSync(path)) {
        const b64 = safeStorage.decryptString(readFileSync(path));
        const key = Buffer.from(b64, 'base64');
        if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte key`);
        return key;
      }
      const key = randomBytes(32);
      writeFileSync(path, safeStorage.encryptString(key.toString('base64')), { mode: 0o600 });
      chmodSync(path, 0o600);
      return key;
    },
    describe: () => 'the OS keychain (Electron safeStorage)',
  };
}
