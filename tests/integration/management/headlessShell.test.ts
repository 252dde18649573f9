// The headless shell's start-up as a user meets it: a busy proxy port is reported in health (the
// dashboard still answers), a busy management port fails cleanly, the data dir is private, and
// changing the proxy-port setting moves the listener at once.
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemorySink } from '../../../src/main/engine/logger';
import { startHeadless } from '../../../src/main/serve';
import { rawRequest } from './http';

const occupy = (): Promise<{ server: Server; port: number }> =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
const freePort = async () => {
  const { server, port } = await occupy();
  await new Promise((r) => server.close(r));
  return port;
};

describe('headless shell start-up', () => {
  const root = mkdtempSync(join(tmpdir(), 'switchyard-headless-'));
  let blocker: { server: Server; port: number };
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    blocker = await occupy();
  });
  afterEach(async () => {
    for (const s of stops.splice(0)) await s();
  });
  afterAll(async () => {
    await new Promise((r) => blocker.server.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  const start = async (name: string, o: { port?: number; proxyPort?: number; env?: Record<string, string> } = {}) => {
    const app = await startHeadless({
      dataDir: join(root, name),
      port: o.port ?? 0,
      proxyPort: o.proxyPort,
      rendererDir: null,
      env: o.env ?? {},
      engine: { logSinks: [new MemorySink()] },
    });
    stops.push(() => app.stop());
    return app;
  };
  const health = async (app: Awaited<ReturnType<typeof startHeadless>>) =>
    (
      await rawRequest(`http://127.0.0.1:${app.managementPort}`, {
        path: '/api/monitoring/health',
        headers: { authorization: `Bearer ${app.token}` },
      })
    ).json;

  it('creates a private data dir', async () => {
    await start('private', { proxyPort: 0 });
    expect(statSync(join(root, 'private')).mode & 0o077).toBe(0);
  });

  it('keeps the dashboard up and reports a busy proxy port in health', async () => {
    const app = await start('busy-proxy', { proxyPort: blocker.port });
    expect(app.proxyPort).toBeNull();
    expect(app.proxyError).toMatch(new RegExp(`port ${blocker.port} is already in use`));
    const h = await health(app);
    expect(h).toMatchObject({ status: 'degraded', proxy: { port: null, listening: false, error: expect.stringContaining(String(blocker.port)) } });
  });

  it('fails with EADDRINUSE on a busy management port and leaves the data dir usable', async () => {
    await expect(
      startHeadless({ dataDir: join(root, 'busy-mgmt'), port: blocker.port, proxyPort: 0, rendererDir: null, env: {}, engine: { logSinks: [new MemorySink()] } }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
    // The failed start closed its store and proxy: a second start on the same dir works.
    const app = await start('busy-mgmt', { proxyPort: 0 });
    expect((await health(app)).proxy.listening).toBe(true);
  });

  it('shows a --proxy-port override as the command line, listens there, and refuses to save the setting over it', async () => {
    const pinned = await freePort();
    const app = await start('cli-port', { proxyPort: pinned, env: { SWITCHYARD_PROXY_PORT: '0' } });
    const api = (method: string, path: string, body?: object) =>
      rawRequest(`http://127.0.0.1:${app.managementPort}`, { method, path, headers: { authorization: `Bearer ${app.token}` }, body });
    expect((await health(app)).proxy.port).toBe(pinned);
    const view = (await api('GET', '/api/settings')).json as { settings: { key: string; value: unknown; source: string; cliFlag: string | null }[] };
    expect(view.settings.find((s) => s.key === 'proxy.port')).toMatchObject({ value: pinned, source: 'cli', cliFlag: '--proxy-port' });

    const r = await api('PATCH', '/api/settings', { proxy: { port: await freePort() } });
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'set_on_command_line', field: 'proxy.port' });
    expect(r.json.error.message).toBe('proxy.port is set by --proxy-port for this run; start without --proxy-port to change it here');
    // Nothing was saved: the next run without the flag uses the env value, not a stale saved one.
    const after = (await api('GET', '/api/settings')).json as { settings: { key: string; persisted: unknown }[] };
    expect(after.settings.find((s) => s.key === 'proxy.port')!.persisted).toBeNull();
    expect((await health(app)).proxy.port).toBe(pinned);
  });

  it('moves the proxy listener when the proxy-port setting changes (not pinned on the command line)', async () => {
    const app = await start('rebind', { env: { SWITCHYARD_PROXY_PORT: '0' } });
    const first = (await health(app)).proxy.port as number;
    expect(first).toBeGreaterThan(0);
    const target = await freePort();
    const r = await rawRequest(`http://127.0.0.1:${app.managementPort}`, {
      method: 'PATCH',
      path: '/api/settings',
      headers: { authorization: `Bearer ${app.token}` },
      body: { proxy: { port: target } },
    });
    expect(r.status).toBe(200);
    let h = await health(app);
    for (let i = 0; i < 100 && h.proxy.port !== target; i++) {
      await new Promise((res) => setTimeout(res, 20));
      h = await health(app);
    }
    expect(h.proxy).toMatchObject({ port: target, listening: true });
    const ping = await rawRequest(`http://127.0.0.1:${target}`, { path: '/health' });
    expect(ping.json).toMatchObject({ status: 'ok' });
  });
});
