#!/usr/bin/env node
// `npm run serve [-- --port N --proxy-port N --data-dir D]`: builds the app when the build is
// missing or older than the sources, then runs the headless shell (out/main/serve.js).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINE_V8_FLAGS, engineEnv } from './runtimeTuning.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'out', 'main', 'serve.js');

function newestMtime(dir) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    newest = Math.max(newest, s.isDirectory() ? newestMtime(p) : s.mtimeMs);
  }
  return newest;
}

const stale =
  !existsSync(entry) ||
  !existsSync(join(root, 'out', 'renderer', 'index.html')) ||
  newestMtime(join(root, 'src')) > statSync(entry).mtimeMs;
if (stale) {
  process.stderr.write('Building Switchyard…\n');
  const bin = join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
  const r = spawnSync(process.execPath, [existsSync(bin) ? bin : join(root, 'node_modules', '.bin', 'electron-vite'), 'build'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) {
    process.stderr.write('The build failed; run "npm run build" to see why.\n');
    process.exit(r.status ?? 1);
  }
}

const child = spawn(process.execPath, [...ENGINE_V8_FLAGS, entry, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', env: engineEnv() });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(signal ? 0 : (code ?? 0)));
