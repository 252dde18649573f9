// Headless composition root: `npm run serve [-- --port N --proxy-port N --data-dir D]`.
// Starts the same engine as the desktop app, serves the management API under /api and the built
// dashboard at /, on 127.0.0.1 only. Node only: never imports electron.
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createEngine, type EngineOptions } from './engine';
import { ManagementToken } from './engine/auth/managementToken';
import { ManagementHttpServer } from './engine/management/httpServer';
import { fileKeyProvider } from './engine/secrets/keyFile';
import { resolveDataDir } from './paths';
import { checkRedisUrl } from './engine/team/redisUrl';

export const DEFAULT_MANAGEMENT_PORT = 8481;

export interface HeadlessOptions {
  dataDir: string;
  port?: number;
  proxyPort?: number;
  rendererDir?: string | null;
  env?: Record<string, string | undefined>;
  engine?: Partial<EngineOptions>;
}

export async function startHeadless(o: HeadlessOptions) {
  mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  let managementPort: number | null = null;
  const engine = await createEngine({
    dataDir: o.dataDir,
    shell: 'headless',
    keyProvider: fileKeyProvider(o.dataDir),
    env: o.env ?? process.env,
    proxyPort: o.proxyPort,
    managementUrl: () => (managementPort !== null ? `http://127.0.0.1:${managementPort}` : null),
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

const USAGE = `Usage: npm run serve -- [--port N] [--proxy-port N] [--data-dir DIR]

  --port N         dashboard and management API port (default ${DEFAULT_MANAGEMENT_PORT})
  --proxy-port N   proxy port for agents (default: the "Proxy port" setting, 8480)
  --data-dir DIR   where settings, connections and logs live
                   (default: $SWITCHYARD_DATA_DIR or ~/.switchyard)
  --redis URL      team mode: share cooldowns, breakers, caps, leases and pins with every
                   Switchyard using the same Redis and team (redis:// or rediss:// for TLS;
                   default: $SWITCHYARD_REDIS_URL; none: this process alone)
  --team NAME      the team's name within that Redis (default: $SWITCHYARD_TEAM or "default")
  --ready-json     print one JSON line with the ports once listening (for scripts)
  --dashboard-link print the link that opens the dashboard (it holds the management token), then exit
`;

/** The command that prints the sign-in link, with the options this run was started with. */
function linkCommand(args: Args): string {
  const extra = [args.port !== undefined ? `--port ${args.port}` : '', args.dataDir ? `--data-dir ${JSON.stringify(args.dataDir)}` : ''].filter(Boolean);
  return ['npm run serve -- --dashboard-link', ...extra].join(' ');
}

/**
 * The start-up banner. It never holds the token (it ends up in terminal scroll-back and logs): the
 * dashboard's plain address, and the command that prints the sign-in link.
 */
export function startupBanner(o: { version: string; managementPort: number; proxyPort: number | null; proxyError: string | null; dataDir: string; args: Args }): string {
  return [
    `Switchyard ${o.version} (headless)`,
    `  Dashboard: http://127.0.0.1:${o.managementPort}/  (sign-in link: ${linkCommand(o.args)})`,
    o.proxyPort !== null
      ? `  Proxy:     http://127.0.0.1:${o.proxyPort}  (agents use a client key; see "Connect your agent" in the dashboard)`
      : `  Proxy:     not listening: ${o.proxyError}`,
    `  Data:      ${o.dataDir}`,
    '',
  ].join('\n');
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
  const dataDir = resolveDataDir(args.dataDir, process.env);
  if (args.dashboardLink) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const token = ManagementToken.loadOrCreate(dataDir).value;
    process.stdout.write(`http://127.0.0.1:${args.port ?? DEFAULT_MANAGEMENT_PORT}/?token=${encodeURIComponent(token)}\n`);
    return;
  }
  let app: Awaited<ReturnType<typeof startHeadless>>;
  try {
    app = await startHeadless({
      dataDir,
      port: args.port,
      proxyPort: args.proxyPort,
      engine: args.redis !== undefined || args.team !== undefined ? { team: { redisUrl: args.redis, name: args.team } } : undefined,
    });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    const msg =
      e.code === 'EADDRINUSE'
        ? `port ${args.port ?? DEFAULT_MANAGEMENT_PORT} is already in use; pass --port with a free port`
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
      startupBanner({ version: app.engine.version, managementPort: app.managementPort, proxyPort: app.proxyPort, proxyError: app.proxyError, dataDir, args }),
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

export const SERVE_ENTRY = join('out', 'main', 'serve.js');
