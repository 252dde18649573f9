// The three ways a Claude subscription gets in (sign-in with PKCE, import from Claude Code, pasted
// tokens) through the management API, what is refused (typed 4xx naming the field, nothing
// written), and the usage windows recorded from every answer and on demand.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import { accountOf, ask, claudeRigPerTest, limit429, okWithUsage, until, type ClaudeRig } from './support';

const HOUR = 3_600_000;

async function refused(p: Promise<unknown>): Promise<BridgeError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof BridgeError) return e;
    throw e;
  }
  throw new Error('expected the call to be refused');
}

/** Follows the fake authorize page's redirect to the engine's loopback callback, as a browser would. */
async function browse(r: ClaudeRig, authorizeUrl: string): Promise<{ status: number; text: string }> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  const loc = new URL(res.headers.get('location')!);
  loc.hostname = '127.0.0.1';
  const cb = await fetch(loc);
  void r;
  return { status: cb.status, text: await cb.text() };
}

describe('Claude subscription: ways in', () => {
  const { start } = claudeRigPerTest();

  it('Sign in with Claude (loopback): PKCE S256 against the configured client, the callback stores the account, and it serves', async () => {
    const r = await start();
    const s = await r.t.api.startClaudeLogin({ name: 'Work Max', baseUrl: r.fake.anthropicUrl });
    expect(s).toMatchObject({ mode: 'loopback', opened: false });
    expect(s.redirectUri).toMatch(/^http:\/\/localhost:\d+\/callback$/);
    const u = new URL(s.authorizeUrl);
    expect(u.origin + u.pathname).toBe(r.auth.authorizeUrl);
    expect(Object.fromEntries(u.searchParams)).toMatchObject({
      client_id: r.auth.clientId,
      response_type: 'code',
      code_challenge_method: 'S256',
      scope: 'org:create_api_key user:profile user:inference',
      redirect_uri: s.redirectUri,
    });
    expect(await r.t.api.listConnections()).toHaveLength(0); // nothing stored yet
    const page = await browse(r, s.authorizeUrl);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Signed in');
    await until(() => r.t.engine.registry.all().length === 1, 'the account to be stored');
    const login = await r.t.api.getClaudeLogin({ loginId: s.loginId });
    expect(login).toMatchObject({ status: 'done', error: null });
    const conn = await r.t.api.getConnection({ id: login.connectionId! });
    expect(conn).toMatchObject({ name: 'Work Max', kind: 'claude-subscription', provider: 'claude', baseUrl: r.fake.anthropicUrl, health: { testStatus: 'untested' } });
    expect(r.auth.codeExchanges).toBe(1);
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: conn.id });
    expect((await accountOf(r.t, conn.id)).token).toMatchObject({ status: 'valid', canRefresh: true });
  });

  it('a sign-in pushes its result on the claudeLogin topic', async () => {
    const r = await start();
    const seen: unknown[] = [];
    const off = r.t.api.on('claudeLogin', (v) => seen.push(v));
    const s = await r.t.api.startClaudeLogin({});
    await new Promise((res) => setTimeout(res, 50)); // the event stream connects
    await browse(r, s.authorizeUrl);
    await until(() => seen.length > 0, 'a claudeLogin push');
    off();
    expect(seen[0]).toMatchObject({ loginId: s.loginId, status: 'done' });
    expect((await r.t.api.listConnections())[0]!.name).toBe('Claude');
  });

  it('a denied sign-in fails with login_denied and writes nothing', async () => {
    const r = await start();
    r.auth.authorizeMode = 'deny';
    const s = await r.t.api.startClaudeLogin({});
    const page = await browse(r, s.authorizeUrl);
    expect(page.status).toBe(400);
    await until(() => r.t.logs.lines.some((l) => l.includes('claude.sign_in_failed')), 'the failure');
    expect(await r.t.api.getClaudeLogin({ loginId: s.loginId })).toMatchObject({ status: 'failed', error: { code: 'login_denied' } });
    expect(await r.t.api.listConnections()).toHaveLength(0);
  });

  it('a forged denial (?error= without the state) on the loopback callback leaves the sign-in pending', async () => {
    const r = await start();
    const s = await r.t.api.startClaudeLogin({});
    const forged = await fetch(`${s.redirectUri.replace('localhost', '127.0.0.1')}?error=access_denied`);
    expect(forged.status).toBe(400);
    expect(await r.t.api.getClaudeLogin({ loginId: s.loginId })).toMatchObject({ status: 'pending', error: null });
    expect((await browse(r, s.authorizeUrl)).status).toBe(200);
    await until(() => r.t.logs.lines.some((l) => l.includes('claude.signed_in')), 'the sign-in');
    expect(await r.t.api.getClaudeLogin({ loginId: s.loginId })).toMatchObject({ status: 'done' });
  });

  it('a ninth open sign-in is a 429 that says how many are open, and nothing else changes', async () => {
    const r = await start();
    for (let i = 0; i < 8; i++) await r.t.api.startClaudeLogin({ mode: 'paste' });
    const e = await refused(r.t.api.startClaudeLogin({}));
    expect(e).toMatchObject({ status: 429, code: 'login_too_many' });
    expect(e.message).toMatch(/8 sign-ins are already open/);
  });

  it('the pasted-code flow: code#state finishes it; a wrong code is a 400 naming "code", nothing written, and the sign-in stays open', async () => {
    const r = await start();
    const s = await r.t.api.startClaudeLogin({ mode: 'paste', name: 'Pasted' });
    expect(s.redirectUri).toBe(r.auth.pasteRedirectUri);
    const res = await fetch(s.authorizeUrl, { redirect: 'follow' });
    const shown = /<code id="paste">([^<]+)<\/code>/.exec(await res.text())![1]!;
    expect(shown).toMatch(/^fake-code-\d+#/);

    const bad = await refused(r.t.api.completeClaudeLogin({ loginId: s.loginId, code: `wrong-code#${shown.split('#')[1]}` }));
    expect(bad).toMatchObject({ status: 400, code: 'token_invalid_grant', field: 'code' });
    const mismatch = await refused(r.t.api.completeClaudeLogin({ loginId: s.loginId, code: `${shown.split('#')[0]}#not-our-state` }));
    expect(mismatch).toMatchObject({ status: 400, code: 'login_state_mismatch', field: 'code' });
    expect(await r.t.api.listConnections()).toHaveLength(0);

    const conn = await r.t.api.completeClaudeLogin({ loginId: s.loginId, code: shown });
    expect(conn).toMatchObject({ name: 'Pasted', kind: 'claude-subscription' });
    expect(await r.t.api.listConnections()).toHaveLength(1);
    // Finishing again answers the same connection, never a second one.
    expect((await r.t.api.completeClaudeLogin({ loginId: s.loginId, code: shown })).id).toBe(conn.id);
    expect(await r.t.api.listConnections()).toHaveLength(1);
  });

  it('an unknown sign-in is a 404 naming loginId; a re-sign-in target must be a Claude subscription', async () => {
    const r = await start();
    expect(await refused(r.t.api.completeClaudeLogin({ loginId: 'nope', code: 'x#y' }))).toMatchObject({ status: 404, field: 'loginId' });
    const other = await r.t.api.createConnection({ name: 'Key', kind: 'anthropic', secret: 'sk-ant-api-key-xxxxxxxx', baseUrl: r.fake.anthropicUrl });
    expect(await refused(r.t.api.startClaudeLogin({ connectionId: other.id }))).toMatchObject({ status: 400, field: 'connectionId' });
    const a = await r.addAccount('Claude A');
    expect(await refused(r.t.api.startClaudeLogin({ connectionId: a.conn.id, name: 'x' }))).toMatchObject({ status: 400, field: 'name' });
    expect(await refused(r.t.api.startClaudeLogin({ mode: 'popup' as never }))).toMatchObject({ status: 400, field: 'mode' });
  });

  it('"Sign in again" puts the new tokens into the same connection', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A');
    const s = await r.t.api.startClaudeLogin({ connectionId: a.conn.id });
    await browse(r, s.authorizeUrl);
    await until(() => r.auth.codeExchanges === 1 && r.t.engine.registry.get(a.conn.id)!.updatedAt > 0, 'exchange');
    await until(() => r.t.logs.lines.some((l) => l.includes('claude.signed_in')), 'stored');
    expect(await r.t.api.listConnections()).toHaveLength(1);
    await ask(r.client);
    expect(r.messages().at(-1)!.key).not.toBe(a.accessToken);
  });

  it('Import from Claude Code reads claudeAiOauth from the credentials file', async () => {
    const r = await start();
    const tok = r.auth.issue();
    writeFileSync(
      join(r.dataDir, 'claude-credentials.json'),
      JSON.stringify({ claudeAiOauth: { accessToken: tok.accessToken, refreshToken: tok.refreshToken, expiresAt: r.clock.now() + HOUR, scopes: ['user:inference'], subscriptionType: 'max' } }),
    );
    const conn = await r.t.api.importClaudeCredentials({ baseUrl: r.fake.anthropicUrl });
    expect(conn).toMatchObject({ name: 'Claude Max (Claude Code)', kind: 'claude-subscription' });
    expect((await accountOf(r.t, conn.id)).subscriptionType).toBe('max');
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: conn.id });
    expect(r.messages().at(-1)!.key).toBe(tok.accessToken);
  });

  it.each([
    ['no file', null, 'credentials_not_found', 'path'],
    ['not JSON', '{"claudeAiOauth": {', 'credentials_bad_json', undefined],
    ['no claudeAiOauth entry', '{"other": {}}', 'credentials_missing_key', 'claudeAiOauth'],
    ['no access token', '{"claudeAiOauth": {"refreshToken": "rt-xxxxxxxxxxxx"}}', 'credentials_missing_field', 'claudeAiOauth.accessToken'],
    ['expired without refresh token', `{"claudeAiOauth": {"accessToken": "at-xxxxxxxxxxxx", "expiresAt": 1000}}`, 'credentials_expired', 'claudeAiOauth.expiresAt'],
  ])('a bad credentials file (%s) is a 400 that says what is wrong, and nothing is written', async (_n, text, code, field) => {
    const r = await start();
    if (text !== null) writeFileSync(join(r.dataDir, 'claude-credentials.json'), text);
    const e = await refused(r.t.api.importClaudeCredentials({}));
    expect(e.status).toBe(400);
    expect(e.code).toBe(code);
    if (field) expect(e.field).toBe(field);
    expect(e.message).not.toContain('{');
    expect(await r.t.api.listConnections()).toHaveLength(0);
  });

  it('pasted tokens: a bare access token, or the JSON of Claude Code\'s file, becomes the stored bundle', async () => {
    const r = await start();
    const t1 = r.auth.issue();
    const bare = await r.t.api.createConnection({ name: 'Bare', kind: 'claude-subscription', baseUrl: r.fake.anthropicUrl, secret: t1.accessToken });
    expect((await accountOf(r.t, bare.id)).token).toMatchObject({ status: 'valid', expiresAt: null, canRefresh: false });
    const t2 = r.auth.issue();
    const file = await r.t.api.createConnection({
      name: 'File',
      kind: 'claude-subscription',
      baseUrl: r.fake.anthropicUrl,
      secret: JSON.stringify({ claudeAiOauth: { accessToken: t2.accessToken, refreshToken: t2.refreshToken, expiresAt: new Date(r.clock.now() + HOUR).toISOString() } }),
    });
    expect((await accountOf(r.t, file.id)).token).toMatchObject({ expiresAt: r.clock.now() + HOUR, canRefresh: true });
    expect(file.secret.masked).not.toContain('{');
  });

  it.each([
    ['malformed JSON', '{"accessToken": '],
    ['a token with spaces', 'not a token at all'],
    ['an expired token without refresh', JSON.stringify({ accessToken: 'at-xxxxxxxxxxxxxxx', expiresAt: 1_000 })],
  ])('pasted tokens that are unusable (%s) are a 400 naming "secret", nothing written', async (_n, secret) => {
    const r = await start();
    const e = await refused(r.t.api.createConnection({ name: 'X', kind: 'claude-subscription', secret }));
    expect(e).toMatchObject({ status: 400, field: 'secret' });
    expect(e.message).not.toContain('at-xxxx');
    expect(await r.t.api.listConnections()).toHaveLength(0);
  });
});

describe('Claude subscription: usage windows', () => {
  const { start } = claudeRigPerTest();

  it('records the unified headers of every answer, success and failure, per account', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { priority: 1 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    const resetAt = r.clock.now() + 2 * HOUR;
    r.fake.script({ key: a.accessToken }, [okWithUsage(0.42, 0.1, resetAt)]);
    await ask(r.client);
    expect((await accountOf(r.t, a.conn.id)).usage).toMatchObject({
      fiveHour: { utilization: 0.42, resetsAt: Math.floor(resetAt / 1000) * 1000, source: 'headers' },
      sevenDay: { utilization: 0.1 },
      status: 'allowed',
    });
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt })]);
    await ask(r.client); // A's 429 (lane off) fails over to B
    expect((await accountOf(r.t, a.conn.id)).usage).toMatchObject({ fiveHour: { utilization: 1, status: 'rejected' }, status: 'rejected', representativeClaim: 'five_hour' });
    expect((await accountOf(r.t, b.conn.id)).usage).toBeNull(); // B's answers carried none
    // Past its reset a window reads as fresh, without any timer.
    r.clock.advance(2 * HOUR);
    expect((await accountOf(r.t, a.conn.id)).usage!.fiveHour).toMatchObject({ utilization: 0, resetsAt: null });
  });

  it('GET /api/oauth/usage reads the usage API now (R-CLA-17 step 1) and the combos read interface sees it', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A');
    r.auth.usage = {
      five_hour: { utilization: 30, resets_at: new Date(r.clock.now() + HOUR).toISOString() },
      seven_day: { utilization: 80, resets_at: new Date(r.clock.now() + 50 * HOUR).toISOString() },
    };
    const v = await r.t.api.refreshClaudeUsage({ connectionId: a.conn.id });
    expect(r.auth.usageCalls[0]!.query).toEqual({ at_wall: '1', skip_spend: '1' });
    expect(v.accounts[0]!.usage).toMatchObject({ fiveHour: { utilization: 0.3, source: 'usage_api' }, sevenDay: { utilization: 0.8 } });
    const info = r.t.engine.claude.usageFor(a.conn.id)!;
    expect(info.headroom).toMatchObject({ resetsAt: r.clock.now() + 50 * HOUR, fiveHour: { remaining: 0.7 } });
    expect(info.headroom!.remaining).toBeCloseTo(0.2, 9); // the 7-day window binds
    expect(info).toMatchObject({ laneActive: false, resetNotBefore: null, expired: false });
    expect(r.t.engine.claude.usageFor('nope')).toBeNull();

    r.auth.usageScript.push({ status: 503, json: { error: 'down' } });
    expect(await refused(r.t.api.refreshClaudeUsage({ connectionId: a.conn.id }))).toMatchObject({ status: 502, code: 'usage_unavailable' });
  });

  it('account state is pushed on the claude topic as answers arrive', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A');
    const seen: { accounts: { connectionId: string; usage: unknown }[] }[] = [];
    const off = r.t.api.on('claude', (v) => seen.push(v));
    await new Promise((res) => setTimeout(res, 50));
    r.fake.script({ key: a.accessToken }, [okWithUsage(0.5, 0.2, r.clock.now() + HOUR)]);
    await ask(r.client);
    r.clock.advance(250); // the coalesced topic's interval
    await until(() => seen.some((v) => v.accounts.some((x) => x.usage !== null)), 'a claude push with usage');
    off();
  });
});
