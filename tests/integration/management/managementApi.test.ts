// The headless shell's management API over real HTTP: health, the token, loopback-only Host and
// Origin, settings validation that names the field and writes nothing, persistence across restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { rawRequest } from './http';

describe('management API', () => {
  let t: TestEngine;
  const auth = () => ({ authorization: `Bearer ${t.token}` });
  const get = (path: string, headers: Record<string, string> = auth()) => rawRequest(t.managementUrl, { path, headers });
  const send = (method: string, path: string, body?: string | object, headers: Record<string, string> = auth()) =>
    rawRequest(t.managementUrl, { method, path, body, headers });

  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('GET /api/monitoring/health', () => {
    it('answers {status, version, uptime, proxy: {port}} with the token', async () => {
      const r = await get('/api/monitoring/health');
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/application\/json/);
      expect(r.json).toMatchObject({
        status: expect.stringMatching(/^(ok|degraded)$/),
        version: t.engine.version,
        uptime: expect.any(Number),
        proxy: { port: Number(new URL(t.proxyUrl).port), listening: true },
      });
      expect(r.json.uptime).toBeGreaterThanOrEqual(0);
    });

    it('answers 401 without the token, with a wrong token, and never leaks data', async () => {
      const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${t.token}x` }, { 'x-switchyard-token': '' }];
      for (const headers of attempts) {
        const r = await get('/api/monitoring/health', headers);
        expect(r.status).toBe(401);
        expect(r.json).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
      }
    });

    it('accepts the token in X-Switchyard-Token too', async () => {
      expect((await get('/api/monitoring/health', { 'x-switchyard-token': t.token })).status).toBe(200);
    });
  });

  describe('loopback only', () => {
    it.each(['evil.example', 'evil.example:8481', 'localhost.evil.example', '192.168.1.2:8481'])(
      'refuses Host %s with 403, even with the token',
      async (host) => {
        const r = await get('/api/monitoring/health', { ...auth(), host });
        expect(r.status).toBe(403);
        expect(r.json.error.code).toBe('forbidden_host');
      },
    );

    it('refuses a cross-site Origin with 403', async () => {
      const r = await get('/api/monitoring/health', { ...auth(), origin: 'http://evil.example' });
      expect(r.status).toBe(403);
    });

    it('accepts loopback Host names and a loopback Origin', async () => {
      const port = new URL(t.managementUrl).port;
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
        expect((await get('/api/monitoring/health', { ...auth(), host, origin: `http://${host}` })).status).toBe(200);
      }
    });

    it('refuses a non-loopback Host for the dashboard too', async () => {
      expect((await get('/', { host: 'evil.example' })).status).toBe(403);
    });
  });

  describe('routing and bodies', () => {
    it('answers 404 for an unknown /api route and 405 for a wrong method', async () => {
      expect((await get('/api/nope')).status).toBe(404);
      const r = await send('DELETE', '/api/monitoring/health');
      expect(r.status).toBe(405);
      expect(r.json.error.code).toBe('method_not_allowed');
    });

    it('answers 400 for a body that is not JSON, naming the body', async () => {
      const r = await send('PATCH', '/api/settings', '{"requestQueue": ');
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_json', field: '(body)' });
    });

    it('answers 400 (not 500) for a malformed %-escape in a path parameter', async () => {
      const r = await get('/api/providers/%E0%A4%A');
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('invalid_input');
    });

    it('answers 413 for a body over 1 MiB', async () => {
      const r = await send('POST', '/api/keys', JSON.stringify({ name: 'x'.repeat(1_100_000) }));
      expect(r.status).toBe(413);
    });

    it('serves the dashboard route without the token (no data there) and a clear notice when it is not built', async () => {
      const r = await get('/', {});
      expect(r.status).toBe(503);
      expect(r.text).toMatch(/npm run build/);
    });
  });

  describe('settings', () => {
    it('PATCH with an invalid field answers 400 naming it, and a follow-up GET shows nothing changed', async () => {
      const before = (await get('/api/settings')).json;
      const r = await send('PATCH', '/api/settings', { requestQueue: { maxWaitMs: 5000, maxQueueDepth: 'lots' } });
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_input', field: 'requestQueue.maxQueueDepth' });
      expect(r.json.error.message).toContain('requestQueue.maxQueueDepth');
      const unknown = await send('PATCH', '/api/settings', { 'requestQueue.maxWaitMs': 5000, colour: 'red' });
      expect(unknown.status).toBe(400);
      expect(unknown.json.error.field).toBe('colour');
      expect((await get('/api/settings')).json).toEqual(before);
      const stored = t.engine.db.prepare("SELECT COUNT(*) AS n FROM key_value WHERE namespace = 'settings'").get() as { n: number };
      expect(stored.n).toBe(0);
    });

    it('PATCH /api/resilience refuses a non-resilience setting, naming it', async () => {
      const r = await send('PATCH', '/api/resilience', { proxy: { port: 1234 } });
      expect(r.status).toBe(400);
      expect(r.json.error.field).toBe('proxy.port');
    });

    it('PATCH answers clamps under adjusted', async () => {
      const r = await send('PATCH', '/api/resilience', { requestQueue: { maxQueueDepth: 200_000 } });
      expect(r.status).toBe(200);
      expect(r.json.adjusted).toEqual([{ key: 'requestQueue.maxQueueDepth', from: 200_000, to: 100_000 }]);
      expect(r.json.values.requestQueue.maxQueueDepth).toBe(100_000);
      await send('PATCH', '/api/resilience', { requestQueue: { maxQueueDepth: null } });
    });
  });
});

describe('settings across an engine restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps a valid PATCH (source "persisted"), the management token and the client keys', async () => {
    const first = await startTestEngine({ dataDir });
    let token: string;
    let keys: string[];
    try {
      const r = await rawRequest(first.managementUrl, {
        method: 'PATCH',
        path: '/api/settings',
        headers: { authorization: `Bearer ${first.token}` },
        body: { requestQueue: { maxWaitMs: 4321 }, 'routing.strategy': 'fill-first' },
      });
      expect(r.status).toBe(200);
      token = first.token;
      keys = (await first.api.listClientKeys()).map((k) => k.id);
    } finally {
      await first.stop();
    }

    const second = await startTestEngine({ dataDir, env: { RATE_LIMIT_MAX_WAIT_MS: '9999' } });
    try {
      expect(second.token).toBe(token);
      const s = await second.api.getSettings();
      const wait = s.settings.find((x) => x.key === 'requestQueue.maxWaitMs')!;
      expect(wait).toMatchObject({ value: 4321, source: 'persisted', envValue: 9999 });
      expect(s.settings.find((x) => x.key === 'routing.strategy')).toMatchObject({ value: 'fill-first', source: 'persisted' });
      expect((await second.api.listClientKeys()).map((k) => k.id)).toEqual(keys);
    } finally {
      await second.stop();
    }
  });
});
