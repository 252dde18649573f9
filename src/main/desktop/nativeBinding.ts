// better-sqlite3 is compiled for Node's ABI by npm install (the tests use that build). The
// desktop app needs an Electron-ABI build: scripts/start.mjs prepares it in .electron-native/ and
// the store loads it through better-sqlite3's nativeBinding option, leaving the Node build alone.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const ELECTRON_NATIVE_DIR = '.electron-native';

export function electronNativeBinding(appRoot: string, resourcesPath?: string): string | undefined {
  const candidates = [
    join(appRoot, ELECTRON_NATIVE_DIR, 'better_sqlite3.node'),
    ...(resourcesPath ? [join(resourcesPath, 'better_sqlite3.node')] : []),
  ];
  return candidates.find((p) => existsSync(p));
}
