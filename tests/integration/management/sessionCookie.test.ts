// The management token in a browser: a `?token=` link is exchanged once for an HttpOnly,
// SameSite=Strict session cookie and the browser is sent to the same address without it; the API
// accepts the token in a header or that cookie, never in the query string; the start-up banner
// never prints the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startupBanner } from '../../../src/main/serve';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { rawRequest } from './http';

describe('the management session cookie', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.stop();
  });

  const cookieOf = (setCookie: string | string[] | undefined) => {
    const line = Array.isArray(setCookie) ? setCookie[0]! : setCookie!;
    return { line, pair: line.split(';')[0]! };
  };

  it('refuses the token in the query string of an API call', async () => {
    const r = await rawRequest(t.managementUrl, { path: `/api/monitoring/health?token=${encodeURIComponent(t.token)}` });
    expect(r.status).toBe(401);
  });

  it('exchanges a token link for a session cookie and drops the token from the address', async () => {
    const r = await rawRequest(t.managementUrl, { path: `/logs?page=2&token=${encodeURIComponent(t.token)}` });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/logs?page=2');
    const { line, pair } = cookieOf(r.headers['set-cookie']);
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Strict/);
    expect(line).not.toContain(t.token);
    const api = await rawRequest(t.managementUrl, { path: '/api/monitoring/health', headers: { cookie: `other=1; ${pair}` } });
    expect(api.status).toBe(200);
  });

  it('sets no cookie for a wrong token, and refuses a wrong cookie', async () => {
    const r = await rawRequest(t.managementUrl, { path: '/?token=not-the-token' });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/');
    expect(r.headers['set-cookie']).toBeUndefined();
    const name = cookieOf((await rawRequest(t.managementUrl, { path: `/?token=${encodeURIComponent(t.token)}` })).headers['set-cookie']).pair.split('=')[0];
    const api = await rawRequest(t.managementUrl, { path: '/api/monitoring/health', headers: { cookie: `${name}=forged` } });
    expect(api.status).toBe(401);
  });

  it('opens a session for a pasted token sent in a header, and closes it', async () => {
    const open = await rawRequest(t.managementUrl, { method: 'POST', path: '/api/session', headers: { authorization: `Bearer ${t.token}` } });
    expect(open.status).toBe(204);
    const { pair } = cookieOf(open.headers['set-cookie']);
    // The cookie alone cannot open another session (a new one needs the token itself).
    expect((await rawRequest(t.managementUrl, { method: 'POST', path: '/api/session', headers: { cookie: pair } })).status).toBe(401);
    const close = await rawRequest(t.managementUrl, { method: 'DELETE', path: '/api/session', headers: { cookie: pair } });
    expect(close.status).toBe(204);
    expect(cookieOf(close.headers['set-cookie']).line).toMatch(/Max-Age=0/);
  });

  it('prints no token in the start-up banner, only the command that prints the link', () => {
    const banner = startupBanner({ version: '1.0.0', managementPort: 8481, proxyPort: 8480, proxyError: null, dataDir: t.dataDir, args: { readyJson: false, help: false } });
    expect(banner).not.toContain(t.token);
    expect(banner).not.toContain('token=');
    expect(banner).toContain('npm run serve -- --dashboard-link');
  });
});
