// "Sign in with Claude" against the fake OAuth server: loopback callback and pasted code, PKCE
// checked by the fake, errors that name what went wrong, and the token endpoint's answers.
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClaudeAuthError } from '../../../src/main/engine/claude/claudeAuthError';
import { createUndiciHttp } from '../../../src/main/engine/claude/http';
import { ClaudeLoginFlow } from '../../../src/main/engine/claude/loginFlow';
import { exchangeCode, refreshTokens } from '../../../src/main/engine/claude/tokenEndpoint';
import { FakeClock } from '../../support/fakeClock';
import { FakeClaudeAuth } from '../../support/fakeClaudeAuth';
import { configFor } from './support';

let fake: FakeClaudeAuth;
let clock: FakeClock;
let flow: ClaudeLoginFlow;
const http = createUndiciHttp({ timeoutMs: 5_000 });

beforeEach(async () => {
  fake = await new FakeClaudeAuth().start();
  clock = new FakeClock();
  flow = new ClaudeLoginFlow({ clock, http, config: () => configFor(fake), loopbackHost: '127.0.0.1' });
});

afterEach(async () => {
  flow.close();
  await fake.close();
});

/** What the browser does: open the authorize URL and follow its redirect. */
async function browse(url: string): Promise<{ status: number; text: string; location: string | null }> {
  const res = await request(url, { method: 'GET' });
  const text = await res.body.text();
  const loc = res.headers.location;
  return { status: res.statusCode, text, location: typeof loc === 'string' ? loc : null };
}

describe('loopback sign-in', () => {
  it('the authorize page redirects to the loopback callback and the sign-in yields tokens', async () => {
    const start = await flow.start('loopback');
    expect(start.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const auth = await browse(start.authorizeUrl);
    expect(auth.status).toBe(302);
    const cb = await browse(auth.location!);
    expect(cb.status).toBe(200);
    expect(cb.text).toContain('Signed in');
    const bundle = await flow.result(start.loginId);
    expect(fake.isValidAccess(bundle.accessToken)).toBe(true);
    expect(bundle.refreshToken).toMatch(/^fake-refresh-/);
    expect(bundle.expiresAt).toBe(clock.now() + 3_600_000);
    expect(bundle.organizationUUID).toBe(fake.organizationUUID);
    expect(bundle.scopes).toContain('user:inference');
    // The fake verified S256(verifier) against the challenge and the redirect URI.
    const tokenCall = fake.tokenCalls[0]!;
    expect(tokenCall.body).toMatchObject({ grant_type: 'authorization_code', client_id: fake.clientId, redirect_uri: start.redirectUri });
    expect(flow.size).toBe(0);
  });

  it('a callback with someone else\'s state is refused and the sign-in keeps waiting', async () => {
    const start = await flow.start('loopback');
    const bad = await browse(`${start.redirectUri}?code=x&state=not-ours`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('different sign-in');
    expect(flow.size).toBe(1);
    const auth = await browse(start.authorizeUrl);
    await browse(auth.location!);
    await expect(flow.result(start.loginId)).resolves.toMatchObject({ refreshToken: expect.any(String) });
  });

  it('a denied sign-in ends with a clear error', async () => {
    fake.authorizeMode = 'deny';
    const start = await flow.start('loopback');
    const result = flow.result(start.loginId);
    const auth = await browse(start.authorizeUrl);
    const cb = await browse(auth.location!);
    expect(cb.status).toBe(400);
    await expect(result).rejects.toMatchObject({ code: 'login_denied' });
    expect(fake.codeExchanges).toBe(0);
  });

  it('a callback with ?error= and no state (or another state) ends nothing: ours still finishes', async () => {
    const mine = await flow.start('loopback');
    const other = await flow.start('loopback');
    for (const query of ['error=access_denied', 'error=access_denied&error_description=forged', `error=access_denied&state=${'x'.repeat(8)}`]) {
      for (const s of [mine, other]) {
        const forged = await browse(`${s.redirectUri}?${query}`);
        expect(forged.status).toBe(400);
        expect(forged.text).toContain('different sign-in');
      }
    }
    // The other sign-in's own denial ends only the other one.
    const otherState = new URL(other.authorizeUrl).searchParams.get('state')!;
    expect((await browse(`${mine.redirectUri}?error=access_denied&state=${otherState}`)).status).toBe(400);
    expect(flow.size).toBe(2);
    const auth = await browse(mine.authorizeUrl);
    expect((await browse(auth.location!)).status).toBe(200);
    await expect(flow.result(mine.loginId)).resolves.toMatchObject({ refreshToken: expect.any(String) });
    expect(flow.size).toBe(1);
  });

  it('at most 8 sign-ins are open at once: the ninth is refused clearly until one ends or expires', async () => {
    const open = [];
    for (let i = 0; i < 8; i++) open.push(await flow.start(i % 2 ? 'paste' : 'loopback'));
    const refused = await flow.start('loopback').catch((e) => e);
    expect(refused).toBeInstanceOf(ClaudeAuthError);
    expect(refused).toMatchObject({ code: 'login_too_many' });
    expect(refused.message).toMatch(/8 sign-ins are already open: finish or cancel one, or wait until one expires/);
    expect(refused.toApiError().status).toBe(429);
    await expect(flow.start('paste')).rejects.toMatchObject({ code: 'login_too_many' });
    // A burst started together cannot pass the cap either.
    flow.cancel(open[0]!.loginId);
    const burst = await Promise.allSettled([flow.start('loopback'), flow.start('loopback'), flow.start('loopback')]);
    expect(burst.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(flow.size).toBe(8);
    // When their time is up, they all go, listeners included, and new ones can start.
    clock.advance(10 * 60_000);
    expect(flow.size).toBe(0);
    await expect(request(open[2]!.redirectUri)).rejects.toThrow();
    await expect(flow.start('loopback')).resolves.toMatchObject({ mode: 'loopback' });
  });

  it('an unfinished sign-in times out on the clock and closes its listener', async () => {
    const start = await flow.start('loopback');
    const result = flow.result(start.loginId);
    clock.advance(10 * 60_000);
    await expect(result).rejects.toMatchObject({ code: 'login_timeout' });
    await expect(request(start.redirectUri.replace('/callback', '/callback?code=a&state=b'))).rejects.toThrow();
  });
});

describe('pasted code sign-in', () => {
  it('the provider page shows code#state; pasting it yields tokens', async () => {
    const start = await flow.start('paste');
    expect(start.redirectUri).toBe(fake.pasteRedirectUri);
    const auth = await browse(start.authorizeUrl);
    const page = await browse(auth.location!);
    const pasted = /<code id="paste">([^<]+)<\/code>/.exec(page.text)![1]!;
    expect(pasted).toContain('#');
    const bundle = await flow.completeWithCode(start.loginId, pasted);
    expect(fake.isValidAccess(bundle.accessToken)).toBe(true);
    await expect(flow.result(start.loginId)).resolves.toEqual(bundle);
    clock.advance(10 * 60_000);
    await expect(flow.result(start.loginId)).rejects.toMatchObject({ code: 'login_unknown' });
  });

  it('a wrong code gives a clear error and the sign-in stays open for another try', async () => {
    const start = await flow.start('paste');
    const err = await flow.completeWithCode(start.loginId, 'fake-code-999').catch((e) => e);
    expect(err).toBeInstanceOf(ClaudeAuthError);
    expect(err.code).toBe('token_invalid_grant');
    expect(err.field).toBe('code');
    expect(err.message).toMatch(/refused the sign-in code/);
    const auth = await browse(start.authorizeUrl);
    const page = await browse(auth.location!);
    const pasted = /<code id="paste">([^<]+)<\/code>/.exec(page.text)![1]!;
    await expect(flow.completeWithCode(start.loginId, pasted)).resolves.toMatchObject({ accessToken: expect.any(String) });
  });

  it('a code from another sign-in (state mismatch) is refused before any exchange', async () => {
    const start = await flow.start('paste');
    await expect(flow.completeWithCode(start.loginId, 'abcdef#someone-else')).rejects.toMatchObject({ code: 'login_state_mismatch', field: 'code' });
    expect(fake.codeExchanges).toBe(0);
  });

  it('an unknown sign-in id is refused', async () => {
    await expect(flow.completeWithCode('nope', 'abc#def')).rejects.toMatchObject({ code: 'login_unknown' });
  });
});

describe('token endpoint answers', () => {
  const now = () => clock.now();

  it('refresh returns a rotated pair; invalid_grant is terminal', async () => {
    const t = fake.issue();
    const prev = { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: 0, subscriptionType: 'max' };
    const next = await refreshTokens(http, configFor(fake), prev, now);
    expect(next.refreshToken).not.toBe(t.refreshToken);
    expect(next.subscriptionType).toBe('max');
    const again = await refreshTokens(http, configFor(fake), prev, now).catch((e) => e);
    expect(again).toMatchObject({ code: 'token_invalid_grant', terminal: true, upstreamStatus: 400 });
  });

  it('a refresh answer without a refresh token keeps the old one', async () => {
    fake.rotateRefresh = false;
    const t = fake.issue();
    const next = await refreshTokens(http, configFor(fake), { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: 0 }, now);
    expect(next.refreshToken).toBe(t.refreshToken);
  });

  it('5xx, 429 and 403 are transient; another 400/401 is terminal; a network failure is transient', async () => {
    const t = fake.issue();
    const prev = { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: 0 };
    const cfg = configFor(fake);
    for (const status of [500, 503, 429, 403]) {
      fake.tokenScript.push({ status, json: { error: 'server_error' } });
      await expect(refreshTokens(http, cfg, prev, now)).rejects.toMatchObject({ code: 'token_unavailable', terminal: false, upstreamStatus: status });
    }
    fake.tokenScript.push({ status: 401, json: { error: 'invalid_client' } });
    await expect(refreshTokens(http, cfg, prev, now)).rejects.toMatchObject({ code: 'token_rejected', terminal: true });
    fake.tokenScript.push({ status: 200, json: { token_type: 'Bearer' } });
    await expect(refreshTokens(http, cfg, prev, now)).rejects.toMatchObject({ code: 'token_malformed', terminal: false });
    fake.tokenScript.push({ destroy: true });
    await expect(refreshTokens(http, cfg, prev, now)).rejects.toMatchObject({ code: 'token_unavailable', terminal: false });
    await expect(refreshTokens(http, { ...cfg, tokenUrl: 'http://127.0.0.1:1/v1/oauth/token' }, prev, now)).rejects.toMatchObject({
      code: 'token_unavailable',
    });
  });

  it('error messages never carry the tokens sent', async () => {
    const t = fake.issue();
    fake.revokeRefresh(t.refreshToken);
    const e = await exchangeCode(http, configFor(fake), { code: 'c', state: 's', verifier: 'v', redirectUri: 'r' }, now).catch((x) => x);
    const r = await refreshTokens(http, configFor(fake), { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: 0 }, now).catch((x) => x);
    for (const err of [e, r]) {
      expect(err.message).not.toContain(t.refreshToken);
      expect(err.message).not.toContain(t.accessToken);
    }
  });
});
