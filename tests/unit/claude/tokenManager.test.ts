// Token refresh: before expiry with a margin, once after a 401, single flight per account, a dead
// grant is terminal (`expired`), network failures and 5xx are transient. Against the fake server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUndiciHttp } from '../../../src/main/engine/claude/http';
import type { ClaudeTokenBundle } from '../../../src/main/engine/claude/tokenBundle';
import { ClaudeTokenManager } from '../../../src/main/engine/claude/tokenManager';
import { SecretRedactor } from '../../../src/main/engine/logger';
import { FakeClock } from '../../support/fakeClock';
import { FakeClaudeAuth } from '../../support/fakeClaudeAuth';
import { configFor, until } from './support';

const MIN = 60_000;
let fake: FakeClaudeAuth;
let clock: FakeClock;
let persisted: { id: string; bundle: ClaudeTokenBundle }[];
let expired: { id: string; message: string }[];
let redactor: SecretRedactor;
let tm: ClaudeTokenManager;

beforeEach(async () => {
  fake = await new FakeClaudeAuth().start();
  clock = new FakeClock();
  persisted = [];
  expired = [];
  redactor = new SecretRedactor();
  tm = new ClaudeTokenManager({
    clock,
    http: createUndiciHttp({ timeoutMs: 5_000 }),
    config: () => configFor(fake),
    redactor,
    persist: (id, bundle) => void persisted.push({ id, bundle }),
    onExpired: (id, message) => void expired.push({ id, message }),
  });
});

afterEach(() => fake.close());

function account(expiresInMs: number, id = 'a'): ClaudeTokenBundle {
  const t = fake.issue();
  const b = { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: clock.now() + expiresInMs };
  tm.set(id, b);
  return b;
}

describe('refresh before expiry', () => {
  it('a token outside the margin is used as is; inside the margin it is refreshed and persisted', async () => {
    const b = account(10 * MIN);
    await expect(tm.token('a')).resolves.toEqual({ ok: true, token: b.accessToken, refreshed: false });
    expect(fake.refreshCalls).toBe(0);
    clock.advance(5 * MIN + 1);
    const r = await tm.token('a');
    expect(r).toMatchObject({ ok: true, refreshed: true });
    expect(fake.refreshCalls).toBe(1);
    const fresh = (r as { token: string }).token;
    expect(fresh).not.toBe(b.accessToken);
    expect(fake.isValidAccess(fresh)).toBe(true);
    expect(persisted).toHaveLength(1);
    expect(persisted[0]!.bundle).toMatchObject({ accessToken: fresh, expiresAt: clock.now() + 3_600_000, organizationUUID: fake.organizationUUID });
    expect(tm.bundle('a')!.accessToken).toBe(fresh);
  });

  it('an expired access token gets one refresh and the request goes on', async () => {
    account(-1000);
    const r = await tm.token('a');
    expect(r).toMatchObject({ ok: true, refreshed: true });
    expect(fake.refreshCalls).toBe(1);
  });

  it('20 concurrent callers share one refresh call', async () => {
    account(-1000);
    const release = fake.holdRefresh();
    const all = Promise.all(Array.from({ length: 20 }, () => tm.token('a')));
    await until(() => fake.refreshCalls === 1); // the one call is held at the fake
    release();
    const results = await all;
    expect(fake.refreshCalls).toBe(1);
    const tokens = new Set(results.map((r) => (r.ok ? r.token : r.kind)));
    expect(tokens.size).toBe(1);
    expect(results.every((r) => r.ok && r.refreshed)).toBe(true);
    expect(persisted).toHaveLength(1);
  });

  it('accounts refresh independently', async () => {
    account(-1, 'a');
    account(-1, 'b');
    await Promise.all([tm.token('a'), tm.token('b'), tm.token('a'), tm.token('b')]);
    expect(fake.refreshCalls).toBe(2);
  });

  it('the margin is a setting', async () => {
    const b = account(10 * MIN);
    const tight = new ClaudeTokenManager({ clock, http: createUndiciHttp(), config: () => configFor(fake, { refreshMarginMs: 15 * MIN }), persist: () => {} });
    tight.set('a', b);
    await expect(tight.token('a')).resolves.toMatchObject({ refreshed: true });
  });
});

describe('dead grants and transient failures', () => {
  it('invalid_grant marks the account expired once, and no further refresh is attempted', async () => {
    const b = account(-1000);
    fake.revokeRefresh(b.refreshToken!);
    const r = await tm.token('a');
    expect(r).toMatchObject({ ok: false, kind: 'expired' });
    expect((r as { message: string }).message).toMatch(/sign in again/);
    expect(expired).toEqual([{ id: 'a', message: (r as { message: string }).message }]);
    await expect(tm.token('a')).resolves.toMatchObject({ ok: false, kind: 'expired' });
    expect(fake.refreshCalls).toBe(1);
    expect(tm.view('a', clock.now())!.status).toBe('expired');
    // New credentials (sign in again) clear it.
    account(60 * MIN);
    await expect(tm.token('a')).resolves.toMatchObject({ ok: true });
  });

  it('a 400/401 from the token endpoint is terminal too', async () => {
    account(-1000);
    fake.tokenScript.push({ status: 401, json: { error: 'unauthorized_client' } });
    await expect(tm.token('a')).resolves.toMatchObject({ ok: false, kind: 'expired' });
  });

  it('a 5xx while the token is still valid keeps using it, with a backoff before the next try', async () => {
    const b = account(2 * MIN);
    fake.tokenScript.push({ status: 503, json: { error: 'overloaded' } });
    await expect(tm.token('a')).resolves.toEqual({ ok: true, token: b.accessToken, refreshed: false });
    expect(fake.refreshCalls).toBe(1);
    expect(tm.view('a', clock.now())).toMatchObject({ status: 'refresh_failing', retryAt: clock.now() + 30_000 });
    await tm.token('a');
    expect(fake.refreshCalls).toBe(1); // within the backoff: no new call
    clock.advance(30_000);
    await expect(tm.token('a')).resolves.toMatchObject({ ok: true, refreshed: true });
    expect(fake.refreshCalls).toBe(2);
    expect(expired).toHaveLength(0);
  });

  it('a network failure after expiry is transient, never terminal', async () => {
    account(-1000);
    fake.tokenScript.push({ destroy: true });
    const r = await tm.token('a');
    expect(r).toMatchObject({ ok: false, kind: 'transient', retryAt: clock.now() + 30_000 });
    expect(expired).toHaveLength(0);
    fake.tokenScript.push({ status: 500, json: {} });
    clock.advance(30_000);
    await expect(tm.token('a')).resolves.toMatchObject({ kind: 'transient', retryAt: clock.now() + 60_000 });
    clock.advance(60_000);
    await expect(tm.token('a')).resolves.toMatchObject({ ok: true, refreshed: true });
  });

  it('an expired token without a refresh token is terminal; a valid one is used until it expires', async () => {
    tm.set('p', { accessToken: 'pasted-token-123456', refreshToken: null, expiresAt: clock.now() + 60_000 });
    await expect(tm.token('p')).resolves.toMatchObject({ ok: true, token: 'pasted-token-123456' });
    clock.advance(60_000);
    await expect(tm.token('p')).resolves.toMatchObject({ ok: false, kind: 'expired' });
    expect(fake.refreshCalls).toBe(0);
  });

  it('an account without credentials reads as expired', async () => {
    await expect(tm.token('none')).resolves.toMatchObject({ ok: false, kind: 'expired' });
  });
});

describe('refresh once after a 401', () => {
  it('refreshes the rejected token once; concurrent 401s share that refresh', async () => {
    const b = account(60 * MIN);
    const rs = await Promise.all(Array.from({ length: 5 }, () => tm.afterUnauthorized('a', b.accessToken)));
    expect(fake.refreshCalls).toBe(1);
    expect(rs.every((r) => r.ok && r.token !== b.accessToken)).toBe(true);
  });

  it('a 401 for a token that was already replaced returns the new one without a call', async () => {
    const b = account(60 * MIN);
    await tm.afterUnauthorized('a', b.accessToken);
    const r = await tm.afterUnauthorized('a', b.accessToken);
    expect(r).toMatchObject({ ok: true, refreshed: false, token: tm.bundle('a')!.accessToken });
    expect(fake.refreshCalls).toBe(1);
  });

  it('a 401 with no refresh token is terminal', async () => {
    tm.set('p', { accessToken: 'pasted-token-123456', refreshToken: null, expiresAt: null });
    await expect(tm.afterUnauthorized('p', 'pasted-token-123456')).resolves.toMatchObject({ ok: false, kind: 'expired' });
    expect(expired).toHaveLength(1);
  });

  it('a transient refresh failure after a 401 is reported as transient', async () => {
    const b = account(60 * MIN);
    fake.tokenScript.push({ status: 502, json: {} });
    await expect(tm.afterUnauthorized('a', b.accessToken)).resolves.toMatchObject({ ok: false, kind: 'transient' });
  });
});

describe('secrets', () => {
  it('every access and refresh token, old and new, is known to the redactor', async () => {
    const b = account(-1);
    await tm.token('a');
    const n = tm.bundle('a')!;
    const line = redactor.scrub(`${b.accessToken} ${b.refreshToken} ${n.accessToken} ${n.refreshToken}`);
    expect(line).toBe('[redacted] [redacted] [redacted] [redacted]');
  });

  it('a failing persist still hands out the new token and is reported', async () => {
    const errs: unknown[] = [];
    const t = new ClaudeTokenManager({
      clock,
      http: createUndiciHttp(),
      config: () => configFor(fake),
      persist: () => Promise.reject(new Error('disk full')),
      onPersistError: (_id, e) => void errs.push(e),
    });
    const b = fake.issue();
    t.set('a', { accessToken: b.accessToken, refreshToken: b.refreshToken, expiresAt: 0 });
    await expect(t.token('a')).resolves.toMatchObject({ ok: true, refreshed: true });
    expect(errs).toHaveLength(1);
  });
});
