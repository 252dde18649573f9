// The headless shell's team-server options: flags win over the environment, bad values are plain
// errors, the banner shows the addresses people use and never the token, and the container image
// starts the engine as `npm run serve` does (scripts/runtimeTuning.mjs).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENGINE_V8_FLAGS, engineEnv } from '../../../scripts/runtimeTuning.mjs';
import { parseArgs, resolveServe, SERVE_ENTRY, startupBanner } from '../../../src/main/serve';

const args = (argv: string[]) => {
  const a = parseArgs(argv);
  if ('error' in a) throw new Error(a.error);
  return a;
};

describe('serve: the team-server options', () => {
  it('reads --host, --allowed-host (repeated), --public-url and --proxy-url', () => {
    expect(
      parseArgs(['--host', '0.0.0.0', '--allowed-host=a.example.com', '--allowed-host', 'b.example.com', '--public-url', 'https://a.example.com', '--proxy-url=https://llm.example.com']),
    ).toEqual({
      readyJson: false,
      help: false,
      host: '0.0.0.0',
      allowedHosts: ['a.example.com', 'b.example.com'],
      publicUrl: 'https://a.example.com',
      proxyUrl: 'https://llm.example.com',
    });
  });

  it.each([
    [['--host'], /--host needs an IP address/],
    [['--allowed-host'], /--allowed-host needs a host name/],
    [['--public-url='], /--public-url needs an address/],
    [['--proxy-url'], /--proxy-url needs an address/],
  ])('answers an error for %j', (argv, message) => {
    const r = parseArgs(argv);
    expect('error' in r && r.error).toMatch(message);
  });

  it('without flags or environment: loopback only, the default port', () => {
    const r = resolveServe(args([]), {});
    expect(r).toMatchObject({ ok: true, port: undefined, exposure: { bindHost: '127.0.0.1', publicBind: false, allowedHosts: [] }, warnings: [] });
  });

  it('reads the environment the image sets', () => {
    const r = resolveServe(args([]), {
      SWITCHYARD_HOST: '0.0.0.0',
      SWITCHYARD_ALLOWED_HOSTS: 'gw.example.com,10.0.0.5',
      SWITCHYARD_PORT: '9481',
      SWITCHYARD_PUBLIC_URL: '',
    });
    expect(r).toMatchObject({ ok: true, port: 9481, exposure: { bindHost: '0.0.0.0', allowedHosts: ['gw.example.com', '10.0.0.5'], publicUrl: null } });
  });

  it('prefers the flags to the environment', () => {
    const r = resolveServe(args(['--host', '127.0.0.1', '--allowed-host', 'flag.example.com', '--port', '0']), {
      SWITCHYARD_HOST: '0.0.0.0',
      SWITCHYARD_ALLOWED_HOSTS: 'env.example.com',
      SWITCHYARD_PORT: '9481',
    });
    expect(r).toMatchObject({ ok: true, port: 0, exposure: { bindHost: '127.0.0.1', allowedHosts: ['flag.example.com'] } });
  });

  it.each<[string[], Record<string, string>, RegExp]>([
    [[], { SWITCHYARD_PORT: 'http' }, /^SWITCHYARD_PORT needs a port number \(0-65535\)$/],
    [[], { SWITCHYARD_PORT: '70000' }, /^SWITCHYARD_PORT needs a port number/],
    [[], { SWITCHYARD_HOST: '0.0.0.0' }, /^SWITCHYARD_HOST 0\.0\.0\.0 listens on every interface, but no host name is allowed/],
    [['--host', 'example.com'], {}, /^--host needs an IP address/],
    [[], { SWITCHYARD_ALLOWED_HOSTS: '*' }, /^SWITCHYARD_ALLOWED_HOSTS: "\*" is a wildcard/],
    [['--public-url', 'gw.example.com'], {}, /^--public-url needs an address/],
  ])('refuses %j with %j', (argv, env, message) => {
    const r = resolveServe(args(argv), env);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(message);
  });
});

describe('serve: the start-up banner of a team server', () => {
  const base = { version: '1.0.0', managementPort: 8481, proxyPort: 8480, proxyError: null, dataDir: '/data' };

  it('shows the public addresses, what it listens on and the sign-in command, never a token', () => {
    const a = args(['--public-url', 'https://gw.example.com']);
    const r = resolveServe(a, { SWITCHYARD_HOST: '0.0.0.0', SWITCHYARD_PROXY_URL: 'https://llm.example.com' });
    if (!r.ok) throw new Error(r.error);
    const banner = startupBanner({ ...base, args: a, exposure: r.exposure, command: 'node out/main/serve.js' });
    expect(banner).toContain('Dashboard: https://gw.example.com/  (sign-in link: node out/main/serve.js --dashboard-link --public-url https://gw.example.com)');
    expect(banner).toContain('Proxy:     https://llm.example.com  (agents use a client key');
    expect(banner).toContain('Listening: 0.0.0.0 (reachable from other machines); host names answered: gw.example.com, llm.example.com and loopback');
    expect(banner).not.toMatch(/token=|sym_/);
  });

  it('is unchanged without the opt-in', () => {
    const banner = startupBanner({ ...base, args: args([]) });
    expect(banner).toContain('Dashboard: http://127.0.0.1:8481/  (sign-in link: npm run serve -- --dashboard-link)');
    expect(banner).toContain('Proxy:     http://127.0.0.1:8480  (agents use a client key');
    expect(banner).not.toContain('Listening:');
  });
});

describe('the container image', () => {
  const dockerfile = readFileSync('Dockerfile', 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const instruction = (name: string) =>
    runtime
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .filter((l) => l.startsWith(`${name} `))
      .map((l) => l.slice(name.length + 1).trim());

  it('starts the built headless shell with the engine V8 flags, as npm run serve does', () => {
    const entry = JSON.parse(instruction('ENTRYPOINT')[0]!) as string[];
    expect(entry).toEqual(['node', ...ENGINE_V8_FLAGS, SERVE_ENTRY]);
  });

  it('sets the engine environment of scripts/runtimeTuning.mjs and the public bind', () => {
    const env = instruction('ENV').join(' ');
    for (const [k, v] of Object.entries(engineEnv({}))) expect(env).toContain(`${k}=${v}`);
    expect(env).toContain('SWITCHYARD_HOST=0.0.0.0');
    expect(env).toContain('SWITCHYARD_DATA_DIR=/data');
  });

  it('runs as a non-root user, keeps the data dir in a volume and checks the proxy health', () => {
    expect(instruction('USER')).toEqual(['node']);
    expect(instruction('VOLUME')).toEqual(['["/data"]']);
    expect(instruction('HEALTHCHECK')[0]).toMatch(/\/health/);
    expect(runtime).toMatch(/FROM \$\{NODE_IMAGE\} AS runtime/);
    expect(dockerfile).toMatch(/ARG NODE_IMAGE=node:20-[a-z]+-slim/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
  });
});
