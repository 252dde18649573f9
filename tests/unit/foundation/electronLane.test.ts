// Architecture invariant: the engine, the headless shell, shared/ and the renderer never import
// electron (not even for types), so they run under plain Node and in a browser.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const LANES = ['src/main/engine', 'src/main/serve.ts', 'src/main/paths.ts', 'src/shared', 'src/renderer'];

/** import ... from 'electron', import('electron'), require('electron'), export ... from 'electron/x'. */
const ELECTRON_IMPORT =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)(['"`])electron(?:\/[^'"`]*)?\1/m;

function sourceFiles(path: string): string[] {
  const abs = join(ROOT, path);
  if (statSync(abs).isFile()) return [abs];
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const p = join(abs, e.name);
    if (e.isDirectory()) return sourceFiles(relative(ROOT, p));
    return /\.(m|c)?(ts|tsx|js|jsx)$/.test(e.name) ? [p] : [];
  });
}

const electronImportsIn = (text: string) =>
  text
    .split('\n')
    .filter((line) => ELECTRON_IMPORT.test(line))
    .map((l) => l.trim());

describe('the electron lane', () => {
  it('finds the files it guards (the scan is not silently empty)', () => {
    const files = LANES.flatMap(sourceFiles).map((f) => relative(ROOT, f));
    expect(files).toContain('src/main/engine/index.ts');
    expect(files).toContain('src/main/serve.ts');
    expect(files).toContain('src/shared/contract.ts');
    expect(files.some((f) => f.startsWith('src/renderer/'))).toBe(true);
  });

  it('recognises every way of importing electron', () => {
    for (const line of [
      "import { app } from 'electron';",
      'import type { IpcMain } from "electron";',
      "import 'electron';",
      "const e = await import('electron');",
      "const { app } = require('electron');",
      "export { ipcMain } from 'electron/main';",
    ]) {
      expect(electronImportsIn(line), line).toHaveLength(1);
    }
    expect(electronImportsIn("import { x } from 'electron-vite';")).toEqual([]);
    expect(electronImportsIn('// the engine never imports electron')).toEqual([]);
  });

  it.each(LANES)('%s never imports electron', (lane) => {
    const offenders = sourceFiles(lane).flatMap((f) =>
      electronImportsIn(readFileSync(f, 'utf8')).map((line) => `${relative(ROOT, f)}: ${line}`),
    );
    expect(offenders).toEqual([]);
  });
});
