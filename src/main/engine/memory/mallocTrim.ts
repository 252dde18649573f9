// The C allocator's free memory given back to the system (issue 25). Node's socket reads, Buffers,
// SQLite and the HTTP parsers allocate through malloc; under a burst glibc's main arena grows by
// tens of MiB and, once the burst has passed, keeps nearly all of it: freed chunks sit between live
// ones, and free() returns memory only from the arena's top. glibc's `malloc_trim` hands every
// free page back (madvise), wherever it lies. Node has no FFI, so it is reached through the one
// native door the engine already has: SQLite loads an extension with a named entry point, which it
// calls as `entry(db, &errmsg, api)`. `malloc_trim(size_t pad)` reads the first argument as the
// padding to keep at the arena's top; whatever its value, the free pages between live chunks are
// released (glibc's mtrim), and the top is trimmed only when it exceeds it. It returns 1 when it
// released memory, which SQLite reports as a failed initialisation: expected, and ignored. Linux
// with glibc only (the library is found in this process's own mappings); elsewhere, or where the
// runtime refuses, nothing happens. docs/decisions/lean-25-malloc-trim.md.
import { readFileSync } from 'node:fs';

/** What the trim needs of a SQLite connection (better-sqlite3's Database). */
export interface ExtensionLoader {
  loadExtension(path: string, entryPoint?: string): unknown;
}

export type MallocTrimResult = 'released' | 'nothing' | 'unavailable';

/** glibc's path among a process's mappings (`/proc/<pid>/maps`), or null (another C library, e.g. musl). */
export function glibcIn(maps: string): string | null {
  for (const line of maps.split('\n')) {
    const slash = line.indexOf('/');
    if (slash < 0) continue;
    const path = line.slice(slash).trim();
    if (/\/libc\.so\.6$/.test(path)) return path;
  }
  return null;
}

let libcPath: string | null | undefined;

/** This process's glibc (null: not Linux, no /proc, or another C library); read once. */
export function glibcPath(): string | null {
  if (libcPath !== undefined) return libcPath;
  libcPath = null;
  if (process.platform !== 'linux') return libcPath;
  try {
    libcPath = glibcIn(readFileSync('/proc/self/maps', 'utf8'));
  } catch {
    // no /proc: nothing to trim through
  }
  return libcPath;
}

/** Calls glibc's malloc_trim(0) through `db`; never throws. */
export function mallocTrim(db: ExtensionLoader, libc: string | null = glibcPath()): MallocTrimResult {
  if (!libc) return 'unavailable';
  try {
    db.loadExtension(libc, 'malloc_trim');
    return 'nothing'; // returned 0: no page could be released
  } catch (err) {
    // 1 (memory released) reads to SQLite as a failed initialisation.
    if (err instanceof Error && /error during initialization/i.test(err.message)) return 'released';
    return 'unavailable'; // extension loading refused, or no such symbol
  }
}
