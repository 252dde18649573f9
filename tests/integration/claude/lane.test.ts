// The low-priority lane through the proxy (SPEC §2b R-CLA-01..15), one test per checklist row, with
// the real Anthropic SDK, the fake Anthropic upstream and the fake clock.
import { describe, expect, it } from 'vitest';
import type { AttemptInterceptor } from '../../../src/main/engine/proxy/attempt';
import {
  accountOf,
  ask,
  claudeRigPerTest,
  cooldownOf,
  laneWait,
  limit429,
  LANE,
  slowAnswer,
  slowHeader,
  slowOk,
  U,
  until,
} from './support';

const HOUR = 3_600_000;
// Tokens that outlive the test's fake hours and days (a refresh would change the key scripts match on).
const LANE_ON = { psd: { lowPriorityMode: true }, expiresInMs: 30 * 86_400_000 };

describe('Claude subscription: the low-priority lane', () => {
  const { start } = claudeRigPerTest();

  it('R-CLA-01: off by default, a limit 429 takes the normal cooldown and the upstream never sees the slow header', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A');
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt: r.clock.now() + HOUR })]);
    const answer = await ask(r.client);
    expect(answer.status).toBe(429);
    expect((await cooldownOf(r.t, a.conn.id)).status).toBe('cooling');
    expect(r.messages()).toHaveLength(1);
    expect(r.fake.requests.some((q) => q.headers[LANE] !== undefined)).toBe(false);
    expect(r.auth.usageCalls).toHaveLength(0);
  });

  it('R-CLA-02 / R-CLA-05 / R-CLA-07: the limit 429 with the offer is retried at once on the same account with the slow header; no cooldown, no rotation', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { ...LANE_ON, priority: 1 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    const resetAt = r.clock.now() + 2 * HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt)]);
    const answer = await ask(r.client);
    expect(answer).toMatchObject({ status: 200, selected: a.conn.id });
    const seen = r.messages();
    expect(seen.map((q) => [q.key, slowHeader(q)])).toEqual([
      [a.accessToken, false],
      [a.accessToken, true],
    ]);
    expect(await cooldownOf(r.t, a.conn.id)).toMatchObject({ status: 'active', backoffLevel: 0 });
    expect(r.messages(b.accessToken)).toHaveLength(0);
    expect((await accountOf(r.t, a.conn.id)).lane).toMatchObject({ state: 'active', until: resetAt + 60_000 });
    for (let i = 0; i < 3; i++) expect((await ask(r.client)).selected).toBe(a.conn.id);
    const log = (await r.t.api.listLogs({})).entries.at(-1)!;
    expect(log.attempts).toHaveLength(1); // the intercepted 429 never reached the pipeline
    expect(log.status).toBe(200);
  });

  it('R-CLA-03: nothing is sent before the first limit 429: no slow header, no usage or reset call', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { psd: { lowPriorityMode: true, autoLimitReset: true, organizationUUID: r.auth.organizationUUID } });
    for (let i = 0; i < 3; i++) expect((await ask(r.client)).status).toBe(200);
    expect(r.messages(a.accessToken).some(slowHeader)).toBe(false);
    expect(r.auth.usageCalls).toHaveLength(0);
    expect(r.auth.resetCalls).toHaveLength(0);
  });

  it('R-CLA-04: a burst 429 without the unified headers takes the normal cooldown, with no slow retry', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { ...LANE_ON, priority: 1 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    r.fake.script({ key: a.accessToken }, [
      { status: 429, headers: { 'retry-after': '12' }, json: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } } },
    ]);
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: b.conn.id });
    expect(r.messages(a.accessToken)).toHaveLength(1);
    expect(r.fake.requests.some(slowHeader)).toBe(false);
    expect(await cooldownOf(r.t, a.conn.id)).toMatchObject({ status: 'cooling', remainingMs: 12_000 });
    expect((await accountOf(r.t, a.conn.id)).lane.state).toBe('idle');
  });

  it('R-CLA-06: the lane lasts until the announced reset + 60 s; every request until then is slow, after it none is', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', LANE_ON);
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt)]);
    await ask(r.client);
    r.clock.advance(HOUR); // at T
    await ask(r.client);
    r.clock.advance(59_000); // T + 59 s
    await ask(r.client);
    r.clock.advance(1_000); // T + 60 s: over
    await ask(r.client);
    expect(r.messages(a.accessToken).map(slowHeader)).toEqual([false, true, true, true, false]);
    expect((await accountOf(r.t, a.conn.id)).lane).toMatchObject({ state: 'idle', lastEnd: { reason: 'window_over' } });
  });

  it.each(['active', 'not_needed'])('R-CLA-08: slow-status %s keeps the lane open', async (status) => {
    const r = await start();
    const a = await r.addAccount('Claude A', LANE_ON);
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt, status)]);
    for (let i = 0; i < 4; i++) expect((await ask(r.client)).status).toBe(200);
    expect(r.messages(a.accessToken).map(slowHeader)).toEqual([false, true, true, true, true]);
    expect((await accountOf(r.t, a.conn.id)).lane).toMatchObject({ state: 'active', slowStatus: status });
  });

  it.each([
    ['5', 3_500, 6_500],
    ['1', 3_500, 6_500],
    ['900', 420_000, 780_000],
  ])('R-CLA-09: slot_busy with slow-retry-after %s waits the clamped value ±30 %% before the next try', async (retryAfter, lo, hi) => {
    const r = await start();
    const a = await r.addAccount('Claude A', { ...LANE_ON, headersMs: 3 * HOUR });
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [
      limit429({ resetAt }),
      slowAnswer(429, resetAt, 'slot_busy', { [`${U}slow-retry-after`]: retryAfter }),
      slowOk(resetAt),
    ]);
    const pending = ask(r.client);
    const waitMs = await laneWait(r.t, 1);
    expect(waitMs).toBeGreaterThanOrEqual(lo);
    expect(waitMs).toBeLessThanOrEqual(hi);
    expect(r.messages(a.accessToken)).toHaveLength(2);
    r.clock.advance(waitMs - 1);
    await new Promise((res) => setTimeout(res, 30));
    expect(r.messages(a.accessToken)).toHaveLength(2); // not before the wait is over
    r.clock.advance(1);
    expect(await pending).toMatchObject({ status: 200, selected: a.conn.id });
    expect(r.messages(a.accessToken).map(slowHeader)).toEqual([false, true, true]);
    expect((await cooldownOf(r.t, a.conn.id)).status).toBe('active');
  });

  it('R-CLA-09: a 529 in the lane waits the default 20 s ±30 % and retries', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', LANE_ON);
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowAnswer(529, resetAt, null), slowOk(resetAt)]);
    const pending = ask(r.client);
    const waitMs = await laneWait(r.t, 1);
    expect(waitMs).toBeGreaterThanOrEqual(14_000);
    expect(waitMs).toBeLessThanOrEqual(26_000);
    r.clock.advance(waitMs);
    expect((await pending).status).toBe(200);
  });

  it('R-CLA-10: past max-wait the lane ends (max_wait), the busy answer takes the normal path, and the offer is refused for 10 min', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { ...LANE_ON, priority: 1 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    const resetAt = r.clock.now() + 2 * HOUR;
    const busy = slowAnswer(429, resetAt, 'slot_busy', { [`${U}slow-retry-after`]: '20', [`${U}slow-max-wait`]: '60', 'retry-after': '30' });
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), busy]);
    const t0 = r.clock.now();
    const pending = ask(r.client);
    let waited = 0;
    for (let n = 1; ; n++) {
      const w = await laneWait(r.t, n).catch(() => null);
      if (w === null) break;
      waited += w;
      r.clock.advance(w);
      if (waited >= 60_000) break;
      await until(() => r.messages(a.accessToken).length >= n + 2 || r.messages(b.accessToken).length > 0, 'next lane try');
      if (r.messages(b.accessToken).length > 0) break;
    }
    const answer = await pending;
    expect(answer).toMatchObject({ status: 200, selected: b.conn.id }); // failed over after the controlled finish
    expect(r.clock.now() - t0).toBe(60_000); // the last wait was cut to the max-wait
    expect(await cooldownOf(r.t, a.conn.id)).toMatchObject({ status: 'cooling', remainingMs: 30_000 });
    expect((await accountOf(r.t, a.conn.id)).lane).toMatchObject({ state: 'blocked', blockedBy: 'max_wait', until: r.clock.now() + 600_000 });

    // A new limit 429 within the 10 minutes is not accepted: no slow retry.
    r.clock.advance(30_000);
    const before = r.messages(a.accessToken).length;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt })]);
    expect((await ask(r.client)).selected).toBe(b.conn.id);
    expect(r.messages(a.accessToken).slice(before).map(slowHeader)).toEqual([false]);
  });

  it('R-CLA-11: the wait is capped by the fetch-start timeout minus 5 s: a controlled finish, never a timeout error', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { ...LANE_ON, headersMs: 60_000 });
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [
      limit429({ resetAt }),
      slowAnswer(429, resetAt, 'slot_busy', { [`${U}slow-retry-after`]: '20', 'retry-after': '40' }),
    ]);
    const t0 = r.clock.now();
    const pending = ask(r.client);
    let waited = 0;
    for (let n = 1; waited < 55_000; n++) {
      const w = await laneWait(r.t, n);
      waited += w;
      r.clock.advance(w);
      if (waited < 55_000) await until(() => r.messages(a.accessToken).length >= n + 2, 'next lane try');
    }
    const answer = await pending;
    expect(r.clock.now() - t0).toBe(55_000);
    expect(answer).toMatchObject({ status: 429, retryAfter: '40' });
    expect((await accountOf(r.t, a.conn.id)).lane).toMatchObject({ state: 'blocked', blockedBy: 'max_wait' });
    const entry = (await r.t.api.listLogs({})).entries[0]!;
    expect(entry.errorCode).not.toBe('RATE_LIMIT_EXECUTION_TIMEOUT');
  });

  it.each(['weekly_limit', 'budget_exhausted', 'off', 'ineligible'])(
    'R-CLA-12: slow-status %s ends the lane; the answer cools the account and the next request has no slow header',
    async (status) => {
      const r = await start();
      const a = await r.addAccount('Claude A', { ...LANE_ON, priority: 1 });
      const b = await r.addAccount('Claude B', { priority: 2 });
      const resetAt = r.clock.now() + HOUR;
      r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowAnswer(429, resetAt, status, { 'retry-after': '20' })]);
      expect(await ask(r.client)).toMatchObject({ status: 200, selected: b.conn.id });
      expect(await cooldownOf(r.t, a.conn.id)).toMatchObject({ status: 'cooling', remainingMs: 20_000 });
      expect((await accountOf(r.t, a.conn.id)).lane.lastEnd).toMatchObject({ reason: status });
      r.clock.advance(20_000);
      r.fake.script({ key: a.accessToken }, [slowOk(resetAt)]);
      expect(await ask(r.client)).toMatchObject({ status: 200, selected: a.conn.id });
      expect(slowHeader(r.messages(a.accessToken).at(-1)!)).toBe(false);
    },
  );

  it('R-CLA-12: a change of the 5-hour window ends the lane', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', LANE_ON);
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt), slowOk(resetAt + 5 * HOUR), slowOk(resetAt + 5 * HOUR)]);
    await ask(r.client); // enters, first slow answer
    await ask(r.client); // slow, but the window moved: the lane ends
    await ask(r.client);
    expect(r.messages(a.accessToken).map(slowHeader)).toEqual([false, true, true, false]);
    expect((await accountOf(r.t, a.conn.id)).lane.lastEnd).toMatchObject({ reason: 'window_changed' });
  });

  it('R-CLA-12: ineligible with overage in use ends the lane as extra_usage', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', LANE_ON);
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt, 'ineligible', { [`${U}overage-in-use`]: 'true' }), slowOk(resetAt)]);
    expect((await ask(r.client)).status).toBe(200);
    await ask(r.client);
    expect(r.messages(a.accessToken).map(slowHeader)).toEqual([false, true, false]);
    expect((await accountOf(r.t, a.conn.id)).lane.lastEnd).toMatchObject({ reason: 'extra_usage' });
  });

  it('R-CLA-13: after budget_exhausted, limit 429s before the announced budget reset do not enter the lane', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', { ...LANE_ON, priority: 1 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    const resetAt = r.clock.now() + HOUR;
    const budgetReset = r.clock.now() + 3 * 86_400_000;
    r.fake.script({ key: a.accessToken }, [
      limit429({ resetAt }),
      slowAnswer(429, resetAt, 'budget_exhausted', { [`${U}slow-budget-reset`]: String(Math.floor(budgetReset / 1000)), 'retry-after': '5' }),
      limit429({ resetAt: resetAt + 6 * HOUR }),
    ]);
    expect((await ask(r.client)).selected).toBe(b.conn.id);
    expect((await accountOf(r.t, a.conn.id)).lane).toMatchObject({ state: 'blocked', blockedBy: 'budget_exhausted', until: budgetReset });
    for (const step of [6 * HOUR, 86_400_000]) {
      r.clock.advance(step);
      const before = r.messages(a.accessToken).length;
      expect((await ask(r.client)).selected).toBe(b.conn.id);
      expect(r.messages(a.accessToken).slice(before).map(slowHeader)).toEqual([false]);
    }
    // Past the budget reset the offer is accepted again.
    r.clock.advance(budgetReset - r.clock.now());
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt: r.clock.now() + HOUR }), slowOk(r.clock.now() + HOUR)]);
    expect((await ask(r.client)).selected).toBe(a.conn.id);
    expect(slowHeader(r.messages(a.accessToken).at(-1)!)).toBe(true);
  });

  it('R-CLA-14: a limit 429 that appears only on an in-attempt retry after a 400 is still intercepted', async () => {
    // A stand-in for an in-attempt 400 retry (context editing): on a 400 it sends the attempt once more.
    const retry400: AttemptInterceptor = (next) => async (ctx) => {
      const out = await next(ctx);
      if (out.kind === 'failed' && out.failure.status === 400) return next(ctx);
      return out;
    };
    const r = await start({ interceptors: [retry400] });
    const a = await r.addAccount('Claude A', { ...LANE_ON, priority: 1 });
    const b = await r.addAccount('Claude B', { priority: 2 });
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [
      { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: context edit needed' } } },
      limit429({ resetAt }),
      slowOk(resetAt),
    ]);
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: a.conn.id });
    expect(r.messages(a.accessToken).map(slowHeader)).toEqual([false, false, true]);
    expect((await cooldownOf(r.t, a.conn.id)).status).toBe('active');
    expect(r.messages(b.accessToken)).toHaveLength(0);
  });

  it('R-CLA-15: the lane is in memory: after a restart the next request has no slow header until another limit 429', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', LANE_ON);
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt), slowOk(resetAt), limit429({ resetAt }), slowOk(resetAt)]);
    await ask(r.client);
    await r.restart();
    expect((await ask(r.client)).status).toBe(200);
    expect((await ask(r.client)).status).toBe(200);
    expect(r.messages(a.accessToken).map(slowHeader)).toEqual([false, true, false, false, true]);
  });

  it('switching the lane off forgets an active lane at once', async () => {
    const r = await start();
    const a = await r.addAccount('Claude A', LANE_ON);
    const resetAt = r.clock.now() + HOUR;
    r.fake.script({ key: a.accessToken }, [limit429({ resetAt }), slowOk(resetAt)]);
    await ask(r.client);
    expect((await accountOf(r.t, a.conn.id)).lane.state).toBe('active');
    await r.t.api.updateConnection({ id: a.conn.id, patch: { providerSpecificData: { lowPriorityMode: false } } });
    expect((await accountOf(r.t, a.conn.id)).lane.state).toBe('idle');
    await ask(r.client);
    expect(slowHeader(r.messages(a.accessToken).at(-1)!)).toBe(false);
  });
});
