// A sandbox for one real agent run: a temporary HOME (and XDG dirs and a work dir) so the agent
// never reads the user's own configuration, an environment built from scratch (only PATH is taken
// from the test process), every proxy variable pointed at a loopback guard that refuses and
// records whatever the agent tries to reach beyond loopback, and a bounded child process.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Refuses every proxied request (HTTP or CONNECT) and records its target, so an agent's attempt to
 * reach the internet (telemetry, update checks, model catalogs) fails at once and is visible.
 */
export class EgressGuard {
  readonly attempts: string[] = [];
  private server: Server | null = null;
  private sockets = new Set<Socket>();

  static async start(): Promise<EgressGuard> {
    const g = new EgressGuard();
    g.server = createServer((s) => {
      g.sockets.add(s);
      s.on('close', () => g.sockets.delete(s));
      s.once('data', (d) => {
        const line = d.toString('latin1').split('\r\n')[0] ?? '';
        g.attempts.push(line.replace(/^(\S+) (\S+).*$/, '$1 $2'));
        s.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      });
      s.on('error', () => {});
    });
    await new Promise<void>((r) => g.server!.listen(0, '127.0.0.1', r));
    return g;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server!.close(() => r()));
  }
}

export interface Sandbox {
  home: string;
  /** The agent's working directory (inside the sandbox). */
  work: string;
  /** The base environment: sandbox dirs, proxy guard, telemetry and update checks off. */
  env: Record<string, string>;
  dispose(): void;
}

/** Environment switches that keep the agents we run from phoning home. */
const QUIET_ENV: Record<string, string> = {
  DO_NOT_TRACK: '1',
  CI: '1',
  NO_COLOR: '1',
  TERM: 'dumb',
  // Claude Code
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_BUG_COMMAND: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  // opencode
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_PURE: '1',
  // qwen-code
  QWEN_USAGE_STATISTICS_ENABLED: 'false',
  QWEN_TELEMETRY_ENABLED: 'false',
  QWEN_CODE_NO_RELAUNCH: '1',
  QWEN_DISABLE_AUTO_TITLE: '1',
  QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
};

export function createSandbox(guard: EgressGuard, name: string): Sandbox {
  const home = mkdtempSync(join(tmpdir(), `switchyard-agent-${name}-`));
  const work = join(home, 'work');
  const dirs = { XDG_CONFIG_HOME: '.config', XDG_DATA_HOME: '.local/share', XDG_CACHE_HOME: '.cache', XDG_STATE_HOME: '.local/state' };
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, USER: 'agent', SHELL: '/bin/bash', LANG: 'C.UTF-8', TMPDIR: join(home, 'tmp') };
  mkdirSync(work, { recursive: true });
  mkdirSync(env.TMPDIR!, { recursive: true });
  for (const [k, rel] of Object.entries(dirs)) {
    env[k] = join(home, rel);
    mkdirSync(env[k]!, { recursive: true });
  }
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) env[k] = guard.url;
  env.NO_PROXY = env.no_proxy = '127.0.0.1,localhost,::1';
  Object.assign(env, QUIET_ENV);
  return { home, work, env, dispose: () => rmSync(home, { recursive: true, force: true }) };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, killed (the whole process group) after timeoutMs. */
export function runBounded(cmd: string, args: string[], o: { cwd: string; env: Record<string, string>; timeoutMs: number; stdin?: string }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.stdin.end(o.stdin ?? '');
    const kill = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, o.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      kill();
      resolve({ code, signal, timedOut, stdout, stderr });
    });
  });
}
