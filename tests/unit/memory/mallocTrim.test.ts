// The C allocator's free pages given back after a burst (issue 25, memory/mallocTrim.ts): glibc is
// found in the process's mappings, malloc_trim is reached through SQLite's extension loader, its
// "released" answer (which SQLite reports as a failed initialisation) is told apart from a refusal,
// and, for real in a process of its own, a fragmented malloc heap shrinks.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { glibcIn, glibcPath, mallocTrim } from '../../../src/main/engine/memory/mallocTrim';

const MAPS = [
  '55d0c0a00000-55d0c0e00000 r--p 00000000 08:01 1234    /usr/bin/node',
  '55d0c2000000-55d0c4000000 rw-p 00000000 00:00 0       [heap]',
  '7f1aa0000000-7f1aa0021000 rw-p 00000000 00:00 0 ',
  '7f1aa3800000-7f1aa3828000 r--p 00000000 08:01 5678    /usr/lib/x86_64-linux-gnu/libc.so.6',
  '7f1aa3a00000-7f1aa3a22000 r--p 00000000 08:01 9012    /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30',
].join('\n');

describe('glibcIn', () => {
  it("finds glibc among a process's mappings", () => {
    expect(glibcIn(MAPS)).toBe('/usr/lib/x86_64-linux-gnu/libc.so.6');
  });

  it('finds nothing under another C library (musl) or with no file mappings', () => {
    expect(glibcIn('7f00-7f10 r-xp 00000000 08:01 77    /lib/ld-musl-x86_64.so.1\n55d0-55e0 rw-p 00000000 00:00 0   [heap]')).toBeNull();
    expect(glibcIn('')).toBeNull();
  });
});

describe('mallocTrim', () => {
  const loader = (behave: () => unknown) => {
    const calls: [string, string | undefined][] = [];
    return {
      calls,
      loadExtension(path: string, entry?: string) {
        calls.push([path, entry]);
        return behave();
      },
    };
  };

  it("calls glibc's malloc_trim as the extension's entry point", () => {
    const db = loader(() => undefined);
    expect(mallocTrim(db, '/lib/libc.so.6')).toBe('nothing');
    expect(db.calls).toEqual([['/lib/libc.so.6', 'malloc_trim']]);
  });

  it('reads SQLite\'s "error during initialization" as memory released (malloc_trim answered 1)', () => {
    const db = loader(() => {
      throw Object.assign(new Error('error during initialization: '), { code: 'SQLITE_ERROR' });
    });
    expect(mallocTrim(db, '/lib/libc.so.6')).toBe('released');
  });

  it('is unavailable, and never throws, when loading is refused or there is no glibc', () => {
    const refused = loader(() => {
      throw new Error('not authorized');
    });
    expect(mallocTrim(refused, '/lib/libc.so.6')).toBe('unavailable');
    const untouched = loader(() => undefined);
    expect(mallocTrim(untouched, null)).toBe('unavailable');
    expect(untouched.calls).toEqual([]);
  });

  // A process of its own, so that no other test's allocations move its resident set.
  it.skipIf(glibcPath() === null)('gives a fragmented malloc heap back to the system, for real', () => {
    const script = `
      import Database from 'better-sqlite3';
      import { readFileSync } from 'node:fs';
      import { mallocTrim } from './src/main/engine/memory/mallocTrim.ts';
      const rss = () => Number(/^VmRSS:\\s+(\\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
      // Buffers above the pool size are malloc'd; keep one in fifty, so the freed ones lie between live ones.
      const keep = [];
      let drop = [];
      for (let i = 0; i < 12000; i++) {
        const b = Buffer.allocUnsafeSlow(3000 + (i % 7) * 500);
        b.fill(1);
        (i % 50 === 0 ? keep : drop).push(b);
      }
      drop = null;
      globalThis.gc(); globalThis.gc();
      await new Promise((r) => setTimeout(r, 200)); // V8 frees array buffers' memory off the main thread
      const before = rss();
      const db = new Database(':memory:');
      const result = mallocTrim(db);
      db.close();
      process.stdout.write(JSON.stringify({ before, after: rss(), result, kept: keep.length }));
    `;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as { before: number; after: number; result: string; kept: number };
    expect(out.kept).toBe(240);
    expect(out.result).toBe('released');
    // About 45 MiB were allocated and all but 1/50 freed: without the trim glibc keeps nearly all of it.
    expect(out.before - out.after).toBeGreaterThan(20);
  });
});
