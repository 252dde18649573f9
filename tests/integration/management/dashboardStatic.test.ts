// The headless shell serves the built dashboard at / to loopback without the token (the files
// hold no data), never outside its directory, and the app shell for client-side routes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemorySink } from '../../../src/main/engine/logger';
import { startHeadless } from '../../../src/main/serve';
import { rawRequest } from './http';

describe('dashboard files', () => {
  const root = mkdtempSync(join(tmpdir(), 'switchyard-static-'));
  const dataDir = join(root, 'data');
  const rendererDir = join(root, 'renderer');
  let app: Awaited<ReturnType<typeof startHeadless>>;
  let base: string;

  beforeAll(async () => {
    mkdirSync(join(rendererDir, 'assets'), { recursive: true });
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>Switchyard</title>');
    writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log("app")');
    app = await startHeadless({
      dataDir,
      port: 0,
      proxyPort: 0,
      rendererDir,
      env: {},
      engine: { logSinks: [new MemorySink()] },
    });
    base = `http://127.0.0.1:${app.managementPort}`;
  });
  afterAll(async () => {
    await app.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves index.html and assets without the token, with security headers', async () => {
    const page = await rawRequest(base, { path: '/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.text).toContain('<title>Switchyard</title>');
    const js = await rawRequest(base, { path: '/assets/app.js' });
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
  });

  it('answers client-side routes with the app shell', async () => {
    const r = await rawRequest(base, { path: '/settings/resilience' });
    expect(r.status).toBe(200);
    expect(r.text).toContain('<title>Switchyard</title>');
  });

  it.each(['/../data/secret.key', '/%2e%2e/data/secret.key', '/..%2fdata%2fmanagement-token', '/assets/../../data/management-token'])(
    'never serves a file outside the dashboard directory (%s)',
    async (path) => {
      const r = await rawRequest(base, { path });
      expect(r.text).not.toContain(app.token);
      expect(r.status === 404 || r.text.includes('<title>Switchyard</title>')).toBe(true);
    },
  );

  it('answers 400 (not 500) for a malformed %-escape', async () => {
    expect((await rawRequest(base, { path: '/%E0%A4%A' })).status).toBe(400);
  });

  it('refuses to write to the dashboard', async () => {
    expect((await rawRequest(base, { method: 'POST', path: '/', body: {} })).status).toBe(405);
  });
});
