// The headless server for a team (issue 26), started as the container image starts it (the
// Dockerfile's ENTRYPOINT and ENV: a public bind on every interface), reached on a non-loopback
// address of this machine: the proxy and the dashboard answer there; /api needs the management
// token; a Host or Origin that is not allowed is refused; an agent is served with a client key;
// the token never appears in the output. Without the opt-in nothing changes: 127.0.0.1 only, and
// a non-loopback Host is refused as before. --help documents the options; bad values are plain
// errors with exit code 2.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, openaiCompletion } from '../../support/fakeUpstream';
import { rawRequest } from '../management/http';
import { cleanEnv, freePort, imageCommand, nonLoopbackAddress, runServe, serveCommand, startServe, type ServeProcess } from './serveProcess';

const address = nonLoopbackAddress();
const urlHost = (a: string) => (a.includes(':') ? `[${a}]` : a);
const how = serveCommand().built ? 'the built out/main/serve.js' : 'the sources through tsx (out/ is missing or older than src/)';
const PUBLIC_NAME = 'switchyard.test';

const cookieOf = (setCookie: string | string[] | undefined) => {
  const line = (Array.isArray(setCookie) ? setCookie[0] : setCookie) ?? '';
  return { line, pair: line.split(';')[0]! };
};

/** True when a TCP connection to host:port is refused (nothing listens there). */
const refusesConnections = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });

describe.skipIf(address === null)(
  `a team server started as the image starts it (${how}) on ${address ?? 'no non-loopback address: skipped, this machine has none'}`,
  () => {
    const addr = address!;
    let fake: FakeUpstream;
    let dataDir: string;
    let server: ServeProcess;
    let env: Record<string, string>;
    let token: string;
    let proxy: string;
    let dashboard: string;
    let ports: { proxy: number; dashboard: number };

    beforeAll(async () => {
      fake = await FakeUpstream.start();
      fake.script({ path: '/v1/chat/completions' }, [{ json: openaiCompletion('team-model', 'served by the team server') }]);
      dataDir = mkdtempSync(join(tmpdir(), 'switchyard-team-server-'));
      ports = { proxy: await freePort(), dashboard: await freePort() };
      // The image's environment, with this run's ports and data dir and the names clients use.
      env = {
        ...cleanEnv(),
        ...imageCommand().env,
        SWITCHYARD_DATA_DIR: dataDir,
        SWITCHYARD_PORT: String(ports.dashboard),
        SWITCHYARD_PROXY_PORT: String(ports.proxy),
        SWITCHYARD_ALLOWED_HOSTS: addr,
        SWITCHYARD_PUBLIC_URL: `https://${PUBLIC_NAME}`,
      };
      expect(env.SWITCHYARD_HOST).toBe('0.0.0.0');
      server = await startServe([], env);
      token = readFileSync(join(dataDir, 'management-token'), 'utf8').trim();
      proxy = `http://${urlHost(addr)}:${ports.proxy}`;
      dashboard = `http://${urlHost(addr)}:${ports.dashboard}`;
    });
    afterAll(async () => {
      await server?.stop();
      await fake?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    const api = (path: string, o: { method?: string; body?: object; headers?: Record<string, string> } = {}) =>
      rawRequest(dashboard, { path, method: o.method, body: o.body, headers: { authorization: `Bearer ${token}`, ...o.headers } });

    it('answers the proxy and the dashboard on the non-loopback address', async () => {
      const health = await rawRequest(proxy, { path: '/health' });
      expect(health.status).toBe(200);
      expect(health.json).toMatchObject({ status: 'ok', service: 'switchyard-proxy' });
      const page = await rawRequest(dashboard, { path: '/' });
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      expect(page.text).toMatch(/<div id="root">/);
      expect(server.output()).toContain(`Dashboard: https://${PUBLIC_NAME}/`);
    });

    it('refuses /api without the management token, and answers with it', async () => {
      const without = await rawRequest(dashboard, { path: '/api/monitoring/health' });
      expect(without.status).toBe(401);
      expect(without.json.error.code).toBe('unauthorized');
      const wrong = await rawRequest(dashboard, { path: '/api/monitoring/health', headers: { authorization: 'Bearer sym_wrong' } });
      expect(wrong.status).toBe(401);
      const ok = await api('/api/monitoring/health');
      expect(ok.status).toBe(200);
      // The dashboard shows agents the proxy's address on this network, not loopback.
      expect(ok.json.proxy).toMatchObject({ port: ports.proxy, listening: true, url: `http://${urlHost(addr)}:${ports.proxy}` });
    });

    it('prints the sign-in link only on request, at the public address, and its cookie is Secure', async () => {
      const link = await runServe(['--dashboard-link'], env);
      expect(link.code).toBe(0);
      expect(link.stdout.trim()).toBe(`https://${PUBLIC_NAME}/?token=${encodeURIComponent(token)}`);
      // TLS is terminated in front; the forwarded request names the public host.
      const exchange = await rawRequest(dashboard, { path: `/?token=${encodeURIComponent(token)}`, headers: { host: PUBLIC_NAME } });
      expect(exchange.status).toBe(303);
      const { line, pair } = cookieOf(exchange.headers['set-cookie']);
      expect(line).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
      const byCookie = await rawRequest(dashboard, { path: '/api/monitoring/health', headers: { host: PUBLIC_NAME, origin: `https://${PUBLIC_NAME}`, cookie: pair } });
      expect(byCookie.status).toBe(200);
    });

    it('refuses a Host or an Origin that is not allowed, on both servers', async () => {
      const rebound = await rawRequest(proxy, { path: '/health', headers: { host: `evil.example:${ports.proxy}` } });
      expect(rebound.status).toBe(403);
      expect(rebound.json.error).toMatchObject({ code: 'forbidden_host' });
      const mgmt = await api('/api/monitoring/health', { headers: { host: `evil.example:${ports.dashboard}` } });
      expect(mgmt.status).toBe(403);
      expect(mgmt.json.error.code).toBe('forbidden_host');
      expect(mgmt.json.error.message).toMatch(/allowed host names/);
      const page = await rawRequest(dashboard, { path: '/', headers: { host: 'evil.example' } });
      expect(page.status).toBe(403);
      const crossSite = await api('/api/monitoring/health', { headers: { origin: 'http://evil.example' } });
      expect(crossSite.status).toBe(403);
    });

    it('serves an agent that presents a client key, and refuses one without', async () => {
      const created = await api('/api/providers', {
        method: 'POST',
        body: { name: 'Fake', kind: 'openai-compatible', provider: 'fake', baseUrl: fake.openaiUrl, secret: 'sk-fake-team-server-0123', models: ['team-model'], passthroughModels: false },
      });
      expect(created.status).toBe(200);
      const keys = (await api('/api/keys')).json as { id: string }[];
      const clientKey = ((await api(`/api/keys/${keys[0]!.id}/reveal`, { method: 'POST' })).json as { secret: string }).secret;
      const body = { model: 'team-model', messages: [{ role: 'user', content: 'hello from another machine' }] };

      const anonymous = await rawRequest(proxy, { method: 'POST', path: '/v1/chat/completions', body });
      expect(anonymous.status).toBe(401);
      expect(anonymous.json.error.code).toBe('invalid_client_key');

      const served = await rawRequest(proxy, { method: 'POST', path: '/v1/chat/completions', body, headers: { authorization: `Bearer ${clientKey}` } });
      expect(served.status).toBe(200);
      expect(served.json.choices[0].message.content).toBe('served by the team server');
      expect(fake.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
    });

    it('never prints the management token', () => {
      expect(server.output()).not.toContain(token);
      expect(server.output()).not.toContain('token=');
    });
  },
);

describe('the headless server without the opt-in', () => {
  let dataDir: string;
  let server: ServeProcess;
  let ports: { proxy: number; dashboard: number };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-loopback-server-'));
    ports = { proxy: await freePort(), dashboard: await freePort() };
    server = await startServe(['--port', String(ports.dashboard), '--proxy-port', String(ports.proxy), '--data-dir', dataDir], cleanEnv());
  });
  afterAll(async () => {
    await server?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it.skipIf(address === null)('listens on loopback only: the non-loopback address refuses connections', async () => {
    expect(await refusesConnections(address!, ports.proxy)).toBe(true);
    expect(await refusesConnections(address!, ports.dashboard)).toBe(true);
  });

  it('refuses a non-loopback Host as before', async () => {
    const token = readFileSync(join(dataDir, 'management-token'), 'utf8').trim();
    const named = address ?? '192.0.2.2';
    const p = await rawRequest(`http://127.0.0.1:${ports.proxy}`, { path: '/health', headers: { host: `${urlHost(named)}:${ports.proxy}` } });
    expect(p.status).toBe(403);
    expect(p.json.error.message).toBe('requests must address 127.0.0.1 or localhost');
    const m = await rawRequest(`http://127.0.0.1:${ports.dashboard}`, {
      path: '/api/monitoring/health',
      headers: { host: `${urlHost(named)}:${ports.dashboard}`, authorization: `Bearer ${token}` },
    });
    expect(m.status).toBe(403);
    expect(m.json.error.message).toBe('the management API answers loopback only');
    expect((await rawRequest(`http://127.0.0.1:${ports.proxy}`, { path: '/health' })).status).toBe(200);
    expect(server.output()).toContain(`Dashboard: http://127.0.0.1:${ports.dashboard}/`);
    expect(server.output()).not.toContain('Listening:');
  });
});

describe('the command line of a team server', () => {
  it('documents the options in --help', async () => {
    const r = await runServe(['--help'], cleanEnv());
    expect(r.code).toBe(0);
    for (const word of ['--host ADDRESS', '--allowed-host NAME', '--public-url URL', '--proxy-url URL', '$SWITCHYARD_HOST', '$SWITCHYARD_ALLOWED_HOSTS', '$SWITCHYARD_PORT', '$SWITCHYARD_PROXY_PORT', 'TLS']) {
      expect(r.stdout).toContain(word);
    }
  });

  it.each<[string, string[], Record<string, string>, RegExp]>([
    ['a host that is not an IP address', ['--host', 'switchyard.example.com'], {}, /^--host needs an IP address to listen on/],
    ['the image without allowed names', [], { SWITCHYARD_HOST: '0.0.0.0' }, /^SWITCHYARD_HOST 0\.0\.0\.0 listens on every interface, but no host name is allowed/],
    ['a wildcard name', [], { SWITCHYARD_HOST: '0.0.0.0', SWITCHYARD_ALLOWED_HOSTS: '*' }, /^SWITCHYARD_ALLOWED_HOSTS: "\*" is a wildcard/],
    ['a public URL that is not http(s)', ['--public-url', 'ftp://switchyard.example.com'], {}, /^--public-url must start with https:\/\//],
    ['a port that is not a number', [], { SWITCHYARD_PORT: 'dashboard' }, /^SWITCHYARD_PORT needs a port number/],
  ])('refuses %s with a plain error and exit code 2', async (_what, argv, env, message) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-refused-'));
    try {
      const r = await runServe(argv, { ...cleanEnv(), SWITCHYARD_DATA_DIR: join(dataDir, 'never-created'), ...env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).toBe('');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
