#!/usr/bin/env node
// `npm start`: builds the app, prepares the Electron-ABI build of better-sqlite3 beside the Node
// build that tests use (in .electron-native/, loaded through better-sqlite3's nativeBinding
// option), then launches Electron. Each step is skipped when its output is current.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINE_V8_FLAGS, engineEnv } from './runtimeTuning.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const log = (m) => process.stderr.write(`[switchyard] ${m}\n`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  return r.status === 0;
}

// 1. Build main, preload and renderer.
log('building…');
if (!run(process.execPath, [join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], { cwd: root })) {
  log('the build failed');
  process.exit(1);
}

// 2. better-sqlite3 for Electron's ABI, kept apart from the Node build.
const electronVersion = JSON.parse(readFileSync(join(root, 'node_modules', 'electron', 'package.json'), 'utf8')).version;
const sqliteDir = dirname(require.resolve('better-sqlite3/package.json'));
const sqliteVersion = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')).version;
const outDir = join(root, '.electron-native');
const outFile = join(outDir, 'better_sqlite3.node');
const stampFile = join(outDir, 'stamp.json');
const stamp = JSON.stringify({ electronVersion, sqliteVersion, platform: process.platform, arch: process.arch });

if (!existsSync(outFile) || !existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== stamp) {
  log(`preparing better-sqlite3 ${sqliteVersion} for Electron ${electronVersion}…`);
  const work = join(root, '.cache', 'better-sqlite3-electron');
  rmSync(work, { recursive: true, force: true });
  cpSync(sqliteDir, work, { recursive: true, filter: (src) => !src.includes(`${join(sqliteDir, 'build')}`) });
  // The machine's npm config may point node-gyp at Node's headers (nodedir); Electron needs its own.
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^npm_config_(nodedir|target|runtime|disturl|dist_url)$/i.test(k)) delete env[k];
  const target = ['--runtime=electron', `--target=${electronVersion}`, `--arch=${process.arch}`];
  const prebuild = join(root, 'node_modules', 'prebuild-install', 'bin.js');
  let ok = existsSync(prebuild) && run(process.execPath, [prebuild, ...target, '--platform', process.platform], { cwd: work, env });
  if (!ok) {
    log('no prebuilt binary; compiling with node-gyp (needs a C++ toolchain)…');
    const gypCandidates = [
      ...(process.env.npm_execpath
        ? [join(dirname(dirname(process.env.npm_execpath)), 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')]
        : []),
      join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    ];
    const gyp = gypCandidates.find((p) => existsSync(p));
    ok =
      !!gyp &&
      run(process.execPath, [gyp, 'rebuild', '--release', ...target, '--dist-url=https://electronjs.org/headers'], {
        cwd: work,
        env,
      });
  }
  const built = join(work, 'build', 'Release', 'better_sqlite3.node');
  if (!ok || !existsSync(built)) {
    log('could not prepare the Electron build of better-sqlite3 (it needs internet access the first time).');
    log('"npm run serve" runs the same app headless, with the dashboard in your browser.');
    process.exit(1);
  }
  mkdirSync(outDir, { recursive: true });
  copyFileSync(built, outFile);
  writeFileSync(stampFile, stamp);
}

// 3. Launch Electron (the electron package fetches its binary the first time it is loaded).
let electronBinary;
try {
  electronBinary = require('electron');
} catch (err) {
  log(`the Electron binary is not available: ${err.message}`);
  log('"npm run serve" runs the same app headless, with the dashboard in your browser.');
  process.exit(1);
}
// The engine runs in Electron's main process: its V8 flags go on Electron's command line.
const child = spawn(electronBinary, [`--js-flags=${ENGINE_V8_FLAGS.join(' ')}`, root, ...process.argv.slice(2)], { stdio: 'inherit', cwd: root, env: engineEnv() });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code) => process.exit(code ?? 0));
