// The session-limit reset through the proxy (SPEC §2b R-CLA-16..21), one test per checklist row,
// with the fake OAuth server playing api.anthropic.com's account API.
import { describe, expect, it } from 'vitest';
import { accountOf, ask, claudeRigPerTest, cooldownOf, limit429, slowHeader, slowOk } from './support';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const LONG = 30 * DAY;

describe('Claude subscription: the session-limit reset', () => {
  const { start } = claudeRigPerTest();

  const both = (org?: string) => ({
    expiresInMs: LONG,
    psd: { lowPriorityMode: true, autoLimitReset: true, ...(org ? { organizationUUID: org } : {}) },
  });

  it('R-CLA-16 / R-CLA-17: with both on, the usage GET and the reset POST come before any slow retry, with the organization of the connection', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', both(r.auth.organizationUUID));
    const order: string[] = [];
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [
      (req) => (order.push(`upstream${slowHeader(req) ? ' slow' : ''}`), limit429({ resetAt })),
      (req) => (order.push(`upstream${slowHeader(req) ? ' slow' : ''}`), slowOk(resetAt)(req)),
    ]);
    r.auth.usage = { five_hour: { utilization: 100, resets_at: new Date(resetAt).toISOString() }, juniper_tide: { arm: 'reset', available: true } };
    const answer = await ask(r.client);
    expect(answer.status).toBe(200);
    const usage = r.auth.usageCalls[0]!;
    expect(usage).toMatchObject({ method: 'GET', path: '/api/oauth/usage', query: { at_wall: '1', skip_spend: '1' } });
    expect(usage.headers.authorization).toBe(`Bearer ${a.accessToken}`);
    expect(usage.headers['anthropic-beta']).toBe('oauth-2025-04-20');
    const reset = r.auth.resetCalls[0]!;
    expect(reset).toMatchObject({ method: 'POST', path: `/api/organizations/${r.auth.organizationUUID}/reset_rate_limits`, body: { program: 'juniper_tide' } });
    // Reset succeeded: the retry is at normal speed (R-CLA-18), so no slow request at all.
    expect(order).toEqual(['upstream', 'upstream']);
    expect(r.auth.usageCalls.length + r.auth.resetCalls.length).toBe(2);
  });

  it('R-CLA-16: when the reset does not succeed, the lane takes over', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', both(r.auth.organizationUUID));
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt)]);
    r.auth.resetScript.push({ status: 200, json: { result: 'already_used', next_available_at: new Date(r.clock.now() + 3 * DAY).toISOString() } });
    expect((await ask(r.client)).status).toBe(200);
    expect(r.auth.resetCalls).toHaveLength(1);
    expect(r.messages().map(slowHeader)).toEqual([false, true]);
  });

  it('R-CLA-17: without an organization on the connection, it comes from the sign-in (token endpoint) or the profile, and is stored', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', both());
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt)]);
    expect((await ask(r.client)).status).toBe(200);
    expect(r.auth.profileCalls).toHaveLength(1);
    expect(r.auth.resetCalls[0]!.path).toBe(`/api/organizations/${r.auth.organizationUUID}/reset_rate_limits`);
    const conn = await r.t.api.getConnection({ id: a.conn.id });
    expect(conn.providerSpecificData).toMatchObject({ organizationUUID: r.auth.organizationUUID, lowPriorityMode: true, autoLimitReset: true });
  });

  it('R-CLA-18: result reset → retried at normal speed without the slow header, on the same account, no cooldown', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: LONG, psd: { autoLimitReset: true, organizationUUID: r.auth.organizationUUID }, priority: 1 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt: r.clock.now() + HOUR }), slowOk(r.clock.now() + HOUR, 'off')]);
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: a.conn.id });
    expect(r.messages(a.accessToken).map(slowHeader)).toEqual([false, false]);
    expect(r.messages(b.accessToken)).toHaveLength(0);
    expect((await cooldownOf(r.t, a.conn.id)).status).toBe('active');
    expect((await accountOf(r.t, a.conn.id)).reset).toMatchObject({ lastResult: 'reset', nextAvailableAt: r.clock.now() + 7 * DAY });
  });

  it('R-CLA-19: already_used memoises next_available_at: a second limit 429 before then makes no usage or reset call', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: LONG, psd: { autoLimitReset: true, organizationUUID: r.auth.organizationUUID }, priority: 1 });
    await r.addAccount('Claude B', { priority: 2, expiresInMs: LONG });
    const next = r.clock.now() + 2 * DAY;
    r.auth.resetScript.push({ status: 200, json: { result: 'already_used', next_available_at: new Date(next).toISOString() } });
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt: r.clock.now() + HOUR })]);
    expect((await ask(r.client)).status).toBe(200); // B serves
    expect(r.auth.resetCalls).toHaveLength(1);
    expect((await accountOf(r.t, a.conn.id)).reset).toMatchObject({ lastResult: 'already_used', nextAvailableAt: next });
    for (const step of [HOUR, DAY]) {
      r.clock.advance(step);
      await ask(r.client);
    }
    expect(r.messages(a.accessToken).length).toBeGreaterThanOrEqual(3);
    expect(r.auth.usageCalls).toHaveLength(1);
    expect(r.auth.resetCalls).toHaveLength(1);
    // After next_available_at it is tried again.
    r.clock.advance(next - r.clock.now());
    await ask(r.client);
    expect(r.auth.usageCalls).toHaveLength(2);
  });

  it('R-CLA-19: not_offered (no reset in the usage answer) memoises one week', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: LONG, psd: { autoLimitReset: true, organizationUUID: r.auth.organizationUUID } });
    r.auth.usage = { five_hour: { utilization: 100 }, juniper_tide: { arm: 'reset', available: false } };
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt: r.clock.now() + HOUR })]);
    await ask(r.client);
    expect(r.auth.usageCalls).toHaveLength(1);
    expect(r.auth.resetCalls).toHaveLength(0);
    expect((await accountOf(r.t, a.conn.id)).reset).toMatchObject({ lastResult: 'not_offered', nextAvailableAt: r.clock.now() + 7 * DAY });
  });

  it('R-CLA-20: a failing reset POST backs off 15 min (then 30 min): no attempt before then', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: LONG, psd: { autoLimitReset: true, organizationUUID: r.auth.organizationUUID }});
    r.auth.resetScript.push({ status: 500, json: { error: 'boom' } }, { status: 500, json: { error: 'boom' } });
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt: r.clock.now() + 6 * HOUR })]);
    await ask(r.client);
    expect(r.auth.resetCalls).toHaveLength(1);
    expect((await accountOf(r.t, a.conn.id)).reset).toMatchObject({ lastResult: 'error', backoffUntil: r.clock.now() + 15 * 60_000 });
    const tries: number[] = [];
    for (const step of [5 * 60_000, 9 * 60_000, 60_000, 29 * 60_000, 60_000]) {
      r.clock.advance(step);
      await r.t.api.clearCooldowns({ all: true });
      await ask(r.client);
      tries.push(r.auth.resetCalls.length);
    }
    // 5 and 14 min: none; 15 min: the second (fails again, now 30 min); 44 min: none; 45 min: the third.
    expect(tries).toEqual([1, 1, 2, 2, 3]);
  });

  it('R-CLA-21: after a successful reset no other one is tried for a week, whatever the server says', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { expiresInMs: LONG, psd: { autoLimitReset: true, organizationUUID: r.auth.organizationUUID } });
    r.auth.resetScript.push({ status: 200, json: { result: 'reset', next_available_at: new Date(r.clock.now() + HOUR).toISOString() } });
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt: r.clock.now() + HOUR }), slowOk(r.clock.now() + HOUR, 'off'), limit429({ resetAt: r.clock.now() + 6 * HOUR })]);
    expect((await ask(r.client)).status).toBe(200);
    for (const step of [2 * HOUR, 2 * DAY, 4 * DAY]) {
      r.clock.advance(step);
      await r.t.api.clearCooldowns({ all: true });
      await ask(r.client);
    }
    expect(r.auth.resetCalls).toHaveLength(1);
    r.clock.advance(DAY); // a week and two hours after the reset
    await r.t.api.clearCooldowns({ all: true });
    await ask(r.client);
    expect(r.auth.resetCalls).toHaveLength(2);
  });
});
