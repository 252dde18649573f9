// The desktop shell loads its window and tray icons from resources/: every file it names exists.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('desktop resources', () => {
  it('has every icon the desktop shell loads', () => {
    const src = readFileSync(join('src', 'main', 'index.ts'), 'utf8');
    const names = [...src.matchAll(/join\(resources, '([^']+)'\)/g), ...src.matchAll(/icon\('([^']+)'\)/g)].map((m) => m[1]!);
    expect(names).toEqual(expect.arrayContaining(['icon.png', 'tray.png', 'tray-degraded.png']));
    for (const n of names) expect(existsSync(join('resources', n)), `resources/${n}`).toBe(true);
  });
});
