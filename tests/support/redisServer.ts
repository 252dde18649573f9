// A real redis-server for team-mode tests (issue 26): Debian's package (installed by .ci/run), started
// on a free loopback port with no persistence, stopped, killed and restarted on the same port (the
// "Redis dies mid-run" cases). Tests that need it skip themselves with a clear reason when the binary
// is missing on a developer's machine; CI always has it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export const REDIS_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';

/** Whether redis-server can run here. */
export function hasRedisServer(): boolean {
  const r = spawnSync(REDIS_BIN, ['--version'], { encoding: 'utf8' });
  return r.status === 0;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServerOptions {
  /** `requirepass`: clients must authenticate. */
  password?: string;
  /** TLS only (rediss://), with this certificate and key (tests/fixtures/tls). */
  tls?: { cert: string; key: string };
}

export class RedisServer {
  private proc: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly opts: RedisServerOptions,
  ) {}

  static async start(opts: RedisServerOptions = {}): Promise<RedisServer> {
    const s = new RedisServer(await freePort(), opts);
    await s.up();
    return s;
  }

  get url(): string {
    const scheme = this.opts.tls ? 'rediss' : 'redis';
    return this.opts.password ? `${scheme}://:${encodeURIComponent(this.opts.password)}@127.0.0.1:${this.port}` : `${scheme}://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.proc !== null;
  }

  /** Starts (again) on the same port; resolves once it accepts connections. */
  async up(): Promise<void> {
    if (this.proc) return;
    // DEBUG SLEEP (a Redis that answers too slowly) is allowed from this machine only.
    const t = this.opts.tls;
    const ports = t ? ['--port', '0', '--tls-port', String(this.port), '--tls-cert-file', t.cert, '--tls-key-file', t.key, '--tls-auth-clients', 'no'] : ['--port', String(this.port)];
    const args = [...ports, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning', '--enable-debug-command', 'local'];
    if (this.opts.password) args.push('--requirepass', this.opts.password);
    const proc = spawn(REDIS_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    const out: string[] = [];
    proc.stdout!.on('data', (d: Buffer) => out.push(d.toString()));
    proc.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
    proc.once('exit', () => {
      if (this.proc === proc) this.proc = null;
    });
    // Ready when a PING answers (bounded by tries, not by sleeping for a fixed time).
    for (let i = 0; i < 200; i++) {
      if (this.proc !== proc) throw new Error(`redis-server exited: ${out.join('').slice(-500)}`);
      if (await (t ? this.pingTls() : this.ping())) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis-server did not start on port ${this.port}: ${out.join('').slice(-500)}`);
  }

  private ping(): Promise<boolean> {
    return new Promise((resolve) => {
      const sock = new Socket();
      const done = (ok: boolean) => {
        sock.destroy();
        resolve(ok);
      };
      sock.once('error', () => done(false));
      sock.connect(this.port, '127.0.0.1', () => {
        const auth = this.opts.password ? `AUTH ${this.opts.password}\r\n` : '';
        sock.write(`${auth}PING\r\n`);
      });
      sock.on('data', (d: Buffer) => {
        if (d.toString().includes('PONG')) done(true);
        else if (d.toString().startsWith('-')) done(false);
      });
    });
  }

  private pingTls(): Promise<boolean> {
    return new Promise((resolve) => {
      const auth = this.opts.password ? `AUTH ${this.opts.password}\r\n` : '';
      const sock = tlsConnect({ host: '127.0.0.1', port: this.port, rejectUnauthorized: false }, () => sock.write(`${auth}PING\r\n`));
      const done = (ok: boolean) => {
        sock.destroy();
        resolve(ok);
      };
      sock.once('error', () => done(false));
      sock.on('data', (d: Buffer) => {
        if (d.toString().includes('PONG')) done(true);
        else if (d.toString().startsWith('-')) done(false);
      });
    });
  }

  /** SIGKILL: Redis vanishes mid-run, with whatever it held. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    });
    this.proc = null;
  }

  async stop(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGTERM');
    });
    this.proc = null;
  }
}
