// Headless composition root: `npm run serve [-- --port N --proxy-port N --data-dir D]`.
// Starts the same engine as the desktop app, serves the management API under /api and the built
// dashboard at /, on 127.0.0.1 only unless a team server opts in (`--host`, `--allowed-host`,
// `--public-url`, `--proxy-url`; net/exposure.ts). Node only: never imports electron.
import { mkdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createEngine, type EngineOptions } from './engine';
import { ManagementToken } from './engine/auth/managementToken';
import { ManagementHttpServer } from './engine/management/httpServer';
import { fileKeyProvider } from './engine/secrets/keyFile';
import { resolveDataDir } from './paths';
import { checkRedisUrl } from './engine/team/redisUrl';
import { dashboardOrigin, LOOPBACK_ONLY, proxyOrigin, resolveExposure, type Exposure, type Given } from './engine/net/exposure';

export const DEFAULT_MANAGEMENT_PORT = 8481;
export const SERVE_ENTRY = join('out', 'main', 'serve.js');

export interface HeadlessOptions {
  dataDir: string;
  port?: number;
  proxyPort?: number;
  rendererDir?: string | null;
  env?: Record<string, string | undefined>;
  engine?: Partial<EngineOptions>;
  /** Where both servers listen and which host names they answer; default loopback only. */
  exposure?: Exposure;
}

export async function startHeadless(o: HeadlessOptions) {
  mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  let managementPort: number | null = null;
  const exposure = o.exposure ?? LOOPBACK_ONLY;
  const engine = await createEngine({
    dataDir: o.dataDir,
    shell: 'headless',
    keyProvider: fileKeyProvider(o.dataDir),
    env: o.env ?? process.env,
    proxyPort: o.proxyPort,
    managementUrl: () => (managementPort !== null ? dashboardOrigin(exposure, managementPort) : null),
    exposure,
    ...o.engine,
  });
  const http = new ManagementHttpServer({
    handlers: engine.handlers,
    token: engine.token,
    bus: engine.bus,
    clock: engine.clock,
    log: engine.log.child('http'),
    rendererDir: o.rendererDir === undefined ? defaultRendererDir() : o.rendererDir,
    initialEvents: () => engine.initialEvents(),
    exposure,
  });
  const proxy = await engine.start();
  try {
    managementPort = await http.listen(o.port ?? DEFAULT_MANAGEMENT_PORT);
  } catch (err) {
    await engine.stop();
    throw err;
  }
  return {
    engine,
    managementPort,
    proxyPort: proxy.proxyPort,
    proxyError: proxy.error,
    token: engine.token.value,
    async stop() {
      await http.close();
      await engine.stop();
    },
  };
}

/** The built renderer sits beside the built main bundle: out/main/serve.js -> out/renderer. */
function defaultRendererDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, '../renderer');
}

interface Args {
  port?: number;
  proxyPort?: number;
  dataDir?: string;
  /** Team mode: the Redis address and the team's name. */
  redis?: string;
  team?: string;
  readyJson: boolean;
  help: boolean;
  /** Print the dashboard's sign-in link (with the token) and exit; starts nothing. */
  dashboardLink?: boolean;
  /** A team server's opt-in: the address to listen on and the names clients use (net/exposure.ts). */
  host?: string;
  allowedHosts?: string[];
  publicUrl?: string;
  proxyUrl?: string;
}

export function parseArgs(argv: string[]): Args | { error: string } {
  const out: Args = { readyJson: false, help: false };
  const num = (name: string, v: string | undefined) => {
    const n = Number(v);
    if (v === undefined || !/^\d+$/.test(v) || n > 65535) throw new Error(`${name} needs a port number (0-65535)`);
    return n;
  };
  try {
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i]!;
      const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
      const next = () => inline ?? argv[++i];
      switch (flag) {
        case '--port':
          out.port = num('--port', next());
          break;
        case '--proxy-port':
          out.proxyPort = num('--proxy-port', next());
          break;
        case '--data-dir': {
          const v = next();
          if (!v) throw new Error('--data-dir needs a directory');
          out.dataDir = v;
          break;
        }
        case '--redis': {
          const v = next();
          if (!v) throw new Error('--redis needs an address, e.g. redis://127.0.0.1:6379');
          const c = checkRedisUrl(v);
          if (!c.ok) throw new Error(`--redis ${c.message}`);
          out.redis = v;
          break;
        }
        case '--team': {
          const v = next();
          if (!v || !v.trim()) throw new Error('--team needs a name');
          out.team = v;
          break;
        }
        case '--host': {
          const v = next();
          if (!v) throw new Error('--host needs an IP address to listen on, e.g. 0.0.0.0');
          out.host = v;
          break;
        }
        case '--allowed-host': {
          const v = next();
          if (!v) throw new Error('--allowed-host needs a host name, e.g. switchyard.example.com');
          (out.allowedHosts ??= []).push(v);
          break;
        }
        case '--public-url':
        case '--proxy-url': {
          const v = next();
          if (!v) throw new Error(`${flag} needs an address, e.g. https://switchyard.example.com`);
          out[flag === '--public-url' ? 'publicUrl' : 'proxyUrl'] = v;
          break;
        }
        case '--ready-json':
          out.readyJson = true;
          break;
        case '--dashboard-link':
          out.dashboardLink = true;
          break;
        case '-h':
        case '--help':
          out.help = true;
          break;
        default:
          throw new Error(`unknown option ${a}`);
      }
    }
  } catch (e) {
    return { error: (e as Error).message };
  }
  return out;
}

const USAGE = `Usage: npm run serve -- [options]    (the image and scripts: node out/main/serve.js [options])

  --port N         dashboard and management API port (default: $SWITCHYARD_PORT or ${DEFAULT_MANAGEMENT_PORT})
  --proxy-port N   proxy port for agents (default: the "Proxy port" setting, 8480,
                   which $SWITCHYARD_PROXY_PORT sets)
  --data-dir DIR   where settings, connections and logs live
                   (default: $SWITCHYARD_DATA_DIR or ~/.switchyard)
  --redis URL      team mode: share cooldowns, breakers, caps, leases and pins with every
                   Switchyard using the same Redis and team (redis:// or rediss:// for TLS;
                   default: $SWITCHYARD_REDIS_URL; none: this process alone)
  --team NAME      the team's name within that Redis (default: $SWITCHYARD_TEAM or "default")
  --ready-json     print one JSON line with the ports once listening (for scripts)
  --dashboard-link print the link that opens the dashboard (it holds the management token), then exit

A team server, reachable from other machines (without these, 127.0.0.1 only):
  --host ADDRESS       listen on this IP address instead of 127.0.0.1, e.g. 0.0.0.0 for every
                       interface (default: $SWITCHYARD_HOST)
  --allowed-host NAME  a host name or address clients use to reach this server; repeat for more
                       (default: $SWITCHYARD_ALLOWED_HOSTS, separated by commas). A request that
                       names another host is refused (DNS rebinding); loopback always passes
  --public-url URL     the dashboard's address as people open it, e.g. https://switchyard.example.com
                       (its name is allowed; https marks the sign-in cookie Secure;
                       default: $SWITCHYARD_PUBLIC_URL)
  --proxy-url URL      the proxy's address as agents reach it, shown on "Connect your agent"
                       (its name is allowed; default: $SWITCHYARD_PROXY_URL, else
                       http://<first allowed name>:<proxy port>)
  Every /api call and the dashboard still need the management token, the proxy a client key.
  Terminate TLS in front of it (a reverse proxy or the platform).
`;

/** The resolved run: the dashboard's port and the exposure, from the flags, else the environment. */
export function resolveServe(
  args: Args,
  env: Record<string, string | undefined>,
): { ok: true; port: number | undefined; exposure: Exposure; warnings: string[] } | { ok: false; error: string } {
  const fromEnv = (name: string): Given | undefined => (env[name]?.trim() ? { value: env[name]!, from: name } : undefined);
  const given = (flag: string, v: string | undefined, envName: string): Given | undefined => (v !== undefined ? { value: v, from: flag } : fromEnv(envName));
  let port = args.port;
  const envPort = fromEnv('SWITCHYARD_PORT');
  if (port === undefined && envPort) {
    const v = envPort.value.trim();
    if (!/^\d+$/.test(v) || Number(v) > 65535) return { ok: false, error: 'SWITCHYARD_PORT needs a port number (0-65535)' };
    port = Number(v);
  }
  const r = resolveExposure({
    host: given('--host', args.host, 'SWITCHYARD_HOST'),
    allowedHosts: given('--allowed-host', args.allowedHosts?.join(','), 'SWITCHYARD_ALLOWED_HOSTS'),
    publicUrl: given('--public-url', args.publicUrl, 'SWITCHYARD_PUBLIC_URL'),
    proxyUrl: given('--proxy-url', args.proxyUrl, 'SWITCHYARD_PROXY_URL'),
  });
  return r.ok ? { ok: true, port, exposure: r.exposure, warnings: r.warnings } : r;
}

/** How this process was started, for the commands it suggests: npm run serve, or node on the built file (the image). */
function launcher(): string {
  if (process.env.npm_lifecycle_event === 'serve') return 'npm run serve --';
  const script = process.argv[1] ? relative(process.cwd(), process.argv[1]) : SERVE_ENTRY;
  return `node ${script.startsWith('..') ? process.argv[1] : script}`;
}

/** The command that prints the sign-in link, with the options this run was started with. */
function linkCommand(args: Args, command = 'npm run serve --'): string {
  const q = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : JSON.stringify(v));
  const extra = [
    args.port !== undefined ? `--port ${args.port}` : '',
    args.dataDir ? `--data-dir ${JSON.stringify(args.dataDir)}` : '',
    args.host ? `--host ${q(args.host)}` : '',
    ...(args.allowedHosts ?? []).map((h) => `--allowed-host ${q(h)}`),
    args.publicUrl ? `--public-url ${q(args.publicUrl)}` : '',
  ].filter(Boolean);
  return [`${command} --dashboard-link`, ...extra].join(' ');
}

/**
 * The start-up banner. It never holds the token (it ends up in terminal scroll-back and logs): the
 * dashboard's plain address, and the command that prints the sign-in link.
 */
export function startupBanner(o: {
  version: string;
  managementPort: number;
  proxyPort: number | null;
  proxyError: string | null;
  dataDir: string;
  args: Args;
  exposure?: Exposure;
  /** How to run this program again (default: npm run serve --). */
  command?: string;
}): string {
  const e = o.exposure ?? LOOPBACK_ONLY;
  const lines = [
    `Switchyard ${o.version} (headless)`,
    `  Dashboard: ${dashboardOrigin(e, o.managementPort)}/  (sign-in link: ${linkCommand(o.args, o.command)})`,
    o.proxyPort !== null
      ? `  Proxy:     ${proxyOrigin(e, o.proxyPort)}  (agents use a client key; see "Connect your agent" in the dashboard)`
      : `  Proxy:     not listening: ${o.proxyError}`,
  ];
  if (e.publicBind || e.allowedHosts.length > 0) {
    const where = e.publicBind ? `${e.bindHost} (reachable from other machines)` : `${e.bindHost} (this machine; a reverse proxy forwards to it)`;
    lines.push(`  Listening: ${where}; host names answered: ${e.allowedHosts.join(', ')} and loopback`);
  }
  lines.push(`  Data:      ${o.dataDir}`, '');
  return lines.join('\n');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if ('error' in args) {
    process.stderr.write(`${args.error}\n\n${USAGE}`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  const run = resolveServe(args, process.env);
  if (!run.ok) {
    process.stderr.write(`${run.error}\n\n${USAGE}`);
    process.exit(2);
  }
  const port = run.port ?? DEFAULT_MANAGEMENT_PORT;
  const dataDir = resolveDataDir(args.dataDir, process.env);
  if (args.dashboardLink) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const token = ManagementToken.loadOrCreate(dataDir).value;
    process.stdout.write(`${dashboardOrigin(run.exposure, port)}/?token=${encodeURIComponent(token)}\n`);
    return;
  }
  for (const w of run.warnings) process.stderr.write(`Warning: ${w}\n`);
  let app: Awaited<ReturnType<typeof startHeadless>>;
  try {
    app = await startHeadless({
      dataDir,
      port,
      proxyPort: args.proxyPort,
      exposure: run.exposure,
      engine: args.redis !== undefined || args.team !== undefined ? { team: { redisUrl: args.redis, name: args.team } } : undefined,
    });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    const msg =
      e.code === 'EADDRINUSE'
        ? `port ${port} is already in use; pass --port with a free port`
        : e.code === 'EADDRNOTAVAIL'
          ? `${run.exposure.bindHost} is not an address of this machine; pass --host with one of its addresses, or 0.0.0.0`
          : (e.message ?? String(err));
    process.stderr.write(`Switchyard could not start: ${msg}\n`);
    process.exit(1);
  }
  if (args.readyJson) {
    process.stdout.write(
      `${JSON.stringify({ ready: true, managementPort: app.managementPort, proxyPort: app.proxyPort, proxyError: app.proxyError, dataDir })}\n`,
    );
  } else {
    process.stdout.write(
      startupBanner({
        version: app.engine.version,
        managementPort: app.managementPort,
        proxyPort: app.proxyPort,
        proxyError: app.proxyError,
        dataDir,
        args,
        exposure: run.exposure,
        command: launcher(),
      }),
    );
  }
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await app.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

const invokedDirectly = process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) void main();
