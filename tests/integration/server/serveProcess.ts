// The headless shell as the container image starts it: the command and environment are read from
// the Dockerfile's runtime stage (ENTRYPOINT, ENV), so the tests run what the image runs. When the
// build is missing or older than the sources, the same command runs the sources through tsx instead
// (the suite says which). Also: a free port, this machine's first non-loopback address, and a
// process whose output is kept (to prove the token never appears in it).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';

const SERVE_JS = join('out', 'main', 'serve.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    newest = Math.max(newest, s.isDirectory() ? newestMtime(p) : s.mtimeMs);
  }
  return newest;
}

/** True when out/ holds a build at least as new as src/ (else the sources run through tsx). */
export const builtIsCurrent = (): boolean =>
  existsSync(SERVE_JS) && existsSync(join('out', 'renderer', 'index.html')) && statSync(SERVE_JS).mtimeMs >= newestMtime('src');

/** The runtime stage's ENTRYPOINT and ENV, read from the Dockerfile. */
export function imageCommand(): { argv: string[]; env: Record<string, string> } {
  const text = readFileSync('Dockerfile', 'utf8');
  const runtime = text.slice(text.lastIndexOf('\nFROM ')).replace(/\\\n\s*/g, ' ');
  const lines = runtime.split('\n');
  const entry = lines.find((l) => l.startsWith('ENTRYPOINT '));
  if (!entry) throw new Error('the Dockerfile has no ENTRYPOINT in its last stage');
  const argv = JSON.parse(entry.slice('ENTRYPOINT '.length)) as string[];
  const env: Record<string, string> = {};
  for (const l of lines.filter((x) => x.startsWith('ENV '))) {
    for (const m of l.slice(4).matchAll(/([A-Z_][A-Z0-9_]*)=("[^"]*"|\S+)/g)) env[m[1]!] = m[2]!.replace(/^"|"$/g, '');
  }
  return { argv, env };
}

/** The image's command, with the sources in place of the build when the build is not current. */
export function serveCommand(): { cmd: string; args: string[]; env: Record<string, string>; built: boolean } {
  const { argv, env } = imageCommand();
  const built = builtIsCurrent();
  const args = argv.slice(1).flatMap((a) => (a === SERVE_JS && !built ? ['--import', 'tsx', join('src', 'main', 'serve.ts')] : [a]));
  return { cmd: argv[0] === 'node' ? process.execPath : argv[0]!, args, env, built };
}

/** This machine's first address other machines could use (IPv4 first), or null. */
export function nonLoopbackAddress(): string | null {
  const all = Object.values(networkInterfaces()).flatMap((l) => l ?? []);
  const v4 = all.find((a) => !a.internal && a.family === 'IPv4');
  if (v4) return v4.address;
  const v6 = all.find((a) => !a.internal && a.family === 'IPv6' && !a.address.toLowerCase().startsWith('fe80'));
  return v6 ? v6.address : null;
}

/** A port free on every interface right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '0.0.0.0', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Environment without the caller's own Switchyard variables (so the test sets every one it means). */
export function cleanEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('SWITCHYARD_') && !k.startsWith('npm_')) out[k] = v;
  return out;
}

export interface ServeProcess {
  child: ChildProcess;
  /** Everything it printed, stdout and stderr. */
  output: () => string;
  stop(): Promise<void>;
}

/** Starts it and resolves once a stdout line matches `ready` (the banner's proxy line by default). */
export function startServe(extraArgs: string[], env: Record<string, string>, ready = /^\s+Proxy:\s/): Promise<ServeProcess> {
  const c = serveCommand();
  const child = spawn(c.cmd, [...c.args, ...extraArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const output = () => out.join('');
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      const text = d.toString();
      out.push(text);
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      if (lines.some((l) => ready.test(l))) resolve({ child, output, stop });
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}) before it was ready:\n${output()}`)));
  });
}

/** Runs it to the end (for --help, --dashboard-link and refused options). */
export function runServe(extraArgs: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = serveCommand();
  const child = spawn(c.cmd, [...c.args, ...extraArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout!.on('data', (d: Buffer) => stdout.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout: stdout.join(''), stderr: stderr.join('') })));
}
