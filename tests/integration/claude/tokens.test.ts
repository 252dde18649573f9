// Claude subscription accounts through the proxy (issue 13): the bearer token and OAuth beta on
// every request, refresh before expiry and once after a 401 (single flight), a dead grant turning
// the account terminal `expired` while another account serves, a failing token endpoint being
// transient, and tokens never leaving the engine (masked in answers, absent from logs).
import { describe, expect, it } from 'vitest';
import { accountOf, ask, claudeRigPerTest, cooldownOf } from './support';

describe('Claude subscription: tokens', () => {
  const { start } = claudeRigPerTest();

  it('sends Authorization: Bearer <access token> with the OAuth beta added to the client\'s betas, never the bundle or x-api-key', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A');
    const { response } = await r.client.messages
      .create({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } })
      .withResponse();
    expect(response.status).toBe(200);
    const [req] = r.messages();
    expect(req!.headers.authorization).toBe(`Bearer ${a.accessToken}`);
    expect(req!.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31,oauth-2025-04-20');
    expect(req!.headers['x-api-key']).toBeUndefined();
    expect(req!.headers['anthropic-usage-limit']).toBeUndefined();
    expect(JSON.stringify(req!.headers)).not.toContain('refreshToken');
  });

  it('keeps tokens out of every answer and every log line: the secret is masked by its access token', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A');
    expect(a.conn).toMatchObject({ kind: 'claude-subscription', provider: 'claude', authClass: 'oauth', protocol: 'anthropic' });
    expect(a.conn.secret.set).toBe(true);
    expect(a.conn.secret.masked).toMatch(/…/);
    expect(a.conn.secret.masked).not.toContain('{');
    await ask(r.client);
    r.clock.advance(3_600_000); // expired: the next request refreshes
    await ask(r.client);
    expect(r.auth.refreshCalls).toBe(1);
    const answers = JSON.stringify([await r.t.api.listConnections(), await r.t.api.listClaudeAccounts(), await r.t.api.listLogs({})]);
    const logs = r.t.logs.lines.join('');
    for (const tok of [a.accessToken, a.refreshToken, ...r.auth.tokenCalls.map((c) => String(c.body?.refresh_token ?? ''))].filter(Boolean)) {
      expect(answers).not.toContain(tok);
      expect(logs).not.toContain(tok);
    }
    expect(logs).not.toMatch(/fake-(access|refresh)-/);
  });

  it('an access token that expired is refreshed once before the request, which succeeds; the new tokens are stored', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: 60_000 });
    r.clock.advance(120_000);
    const answer = await ask(r.client);
    expect(answer.status).toBe(200);
    expect(r.auth.refreshCalls).toBe(1);
    const [req] = r.messages();
    expect(req!.key).not.toBe(a.accessToken);
    expect(r.auth.isValidAccess(req!.key!)).toBe(true);
    const acc = await accountOf(r.t, a.conn.id);
    expect(acc.token).toMatchObject({ status: 'valid', expiresAt: r.clock.now() + 3_600_000, lastRefreshAt: r.clock.now() });

    // After a restart the refreshed bundle is what the connection holds: no new refresh needed.
    await r.restart();
    expect((await ask(r.client)).status).toBe(200);
    expect(r.auth.refreshCalls).toBe(1);
    expect(r.messages().at(-1)!.key).toBe(req!.key);
  });

  it('a token within the refresh margin (5 min) is refreshed before it expires', async () => {
    const r = await start();
    await r.addAccount('Claude A', { expiresInMs: 4 * 60_000 });
    expect((await ask(r.client)).status).toBe(200);
    expect(r.auth.refreshCalls).toBe(1);
  });

  it('20 concurrent requests with an expired token share one refresh call, and all succeed', async () => {
    const r = await start();
    await r.addAccount('Claude A', { expiresInMs: 1_000 });
    r.clock.advance(5_000);
    const release = r.auth.holdRefresh();
    const all = Promise.all(Array.from({ length: 20 }, () => ask(r.client)));
    await new Promise<void>((res) => {
      const check = () => (r.auth.refreshCalls >= 1 ? res() : setTimeout(check, 5));
      check();
    });
    release();
    const answers = await all;
    expect(answers.map((x) => x.status)).toEqual(Array(20).fill(200));
    expect(r.auth.refreshCalls).toBe(1);
    expect(new Set(r.messages().map((m) => m.key)).size).toBe(1);
  });

  it('a 401 from the upstream refreshes once and retries on the same account', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A');
    r.auth.revokeAccess(a.accessToken); // still "valid" by its expiry, but the upstream refuses it
    const answer = await ask(r.client);
    expect(answer).toMatchObject({ status: 200, selected: a.conn.id });
    expect(r.auth.refreshCalls).toBe(1);
    expect(r.messages().map((m) => m.key === a.accessToken)).toEqual([true, false]);
    expect((await cooldownOf(r.t, a.conn.id)).status).toBe('active');
  });

  it('invalid_grant makes the account terminal `expired` ("Sign in again") and another account serves', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { priority: 1, expiresInMs: 1_000 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    r.auth.revokeRefresh(a.refreshToken);
    r.clock.advance(10_000);
    const first = await ask(r.client);
    expect(first).toMatchObject({ status: 200, selected: b.conn.id });
    expect(await cooldownOf(r.t, a.conn.id)).toMatchObject({ status: 'expired', terminal: true });
    expect((await accountOf(r.t, a.conn.id)).token).toMatchObject({ status: 'expired' });
    const log = (await r.t.api.listLogs({})).entries[0]!;
    expect(log.attempts[0]).toMatchObject({ connectionId: a.conn.id, errorClass: 'auth_expired', failedOver: true });

    // Later requests skip A without calling the token endpoint again.
    for (let i = 0; i < 3; i++) expect((await ask(r.client)).selected).toBe(b.conn.id);
    expect(r.auth.refreshCalls).toBe(1);
    expect(r.messages(a.accessToken)).toHaveLength(0);
  });

  it('with no other account, a dead sign-in is answered with a 401 that says to sign in again', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: 1_000 });
    r.auth.revokeRefresh(a.refreshToken);
    r.clock.advance(10_000);
    const answer = await ask(r.client);
    expect(answer.status).toBe(401);
    expect(answer.retryAfter).toBeNull();
    const entry = (await r.t.api.listLogs({})).entries[0]!;
    expect(entry.errorMessage).toContain('sign in again');
  });

  it('a token endpoint that cannot be reached is transient: the account cools until the retry, another serves, nothing is terminal', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { priority: 1, expiresInMs: 1_000 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    r.clock.advance(10_000);
    r.auth.tokenScript.push({ destroy: true });
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: b.conn.id });
    const cd = await cooldownOf(r.t, a.conn.id);
    expect(cd).toMatchObject({ status: 'cooling', terminal: false, lastErrorType: 'token_refresh_failed', remainingMs: 30_000 });
    expect((await accountOf(r.t, a.conn.id)).token).toMatchObject({ status: 'refresh_failing', retryAt: r.clock.now() + 30_000 });
    // Once the cooldown is over the refresh is tried again and A serves.
    r.clock.advance(30_000);
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: a.conn.id });
    expect(r.auth.refreshCalls).toBe(2);
    expect((await cooldownOf(r.t, a.conn.id)).status).toBe('active');
  });

  it('"Sign in again" with new credentials clears the terminal state', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: 1_000 });
    r.auth.revokeRefresh(a.refreshToken);
    r.clock.advance(10_000);
    expect((await ask(r.client)).status).toBe(401);
    expect((await cooldownOf(r.t, a.conn.id)).status).toBe('expired');
    const fresh = r.auth.issue();
    await r.t.api.updateConnection({
      id: a.conn.id,
      patch: { secret: JSON.stringify({ accessToken: fresh.accessToken, refreshToken: fresh.refreshToken, expiresAt: r.clock.now() + 3_600_000 }) },
    });
    expect((await cooldownOf(r.t, a.conn.id)).status).toBe('active');
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: a.conn.id });
    expect(r.messages().at(-1)!.key).toBe(fresh.accessToken);
  });

  it('"Test" uses the access token (refreshing it when due)', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: 1_000 });
    r.clock.advance(5_000);
    const res = await r.t.api.testConnection({ id: a.conn.id });
    expect(res.ok).toBe(true);
    const models = r.fake.requests.find((q) => q.path === '/v1/models')!;
    expect(models.headers.authorization).toMatch(/^Bearer fake-access-/);
    expect(models.headers['anthropic-beta']).toBe('oauth-2025-04-20');
    expect(r.auth.refreshCalls).toBe(1);
  });
});
