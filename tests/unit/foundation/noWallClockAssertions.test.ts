// `npm test` asserts behaviour, not speed: a bound on a measured duration or latency (a p95, a p99,
// a `..._MS` limit, an elapsed time) belongs in `npm run bench` or a long run (RUN_*_INT), where it
// sits under `if (LONG)`. This scans every test file for such assertions outside that guard.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');
const SPEED_BOUND = /\.(toBeLessThan|toBeLessThanOrEqual)\(\s*([A-Z0-9_]*_MS(_MAX)?|[A-Za-z0-9_.]*(p9\d|p50|latency|elapsed)[A-Za-z0-9_.]*)\s*\)/;
const MEASURED = /expect(\.soft)?\(\s*[^,)]*(p9\d|p50|latency|elapsed)/i;

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...testFiles(p));
    else if (/\.(test|spec)\.ts$/.test(name)) out.push(p);
  }
  return out;
}

describe('npm test holds no wall-clock assertion', () => {
  it('keeps every bound on a measured duration under a long-run guard', () => {
    const offenders: string[] = [];
    for (const file of testFiles(ROOT)) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (!SPEED_BOUND.test(line) && !(MEASURED.test(line) && /toBeLessThan/.test(line))) return;
        const before = lines.slice(Math.max(0, i - 4), i + 1).join('\n');
        if (/if \(LONG\)/.test(before)) return;
        offenders.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
