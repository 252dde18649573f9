// The Claude attempt interceptor around a scripted upstream: every R-CLA checklist row at the unit
// level (the through-the-proxy versions come with the integration), plus token refresh on 401.
import { describe, expect, it } from 'vitest';
import {
  ClaudeTokenError,
  createClaudeAttemptInterceptor,
  type AttemptFn,
  type ClaudeAttempt,
  type ClaudeEvent,
  type ClaudeOutcome,
} from '../../../src/main/engine/claude/claudeInterceptor';
import type { HttpRequest } from '../../../src/main/engine/claude/http';
import { LaneController } from '../../../src/main/engine/claude/laneController';
import { LimitResetService } from '../../../src/main/engine/claude/limitReset';
import { ClaudeTokenManager } from '../../../src/main/engine/claude/tokenManager';
import { UsageBook } from '../../../src/main/engine/claude/usageWindows';
import type { Random } from '../../../src/main/engine/random';
import { FakeClock } from '../../support/fakeClock';
import { drive, json, scriptedHttp } from './support';

const SEC = 1_000;
const MIN = 60 * SEC;
const P = 'anthropic-ratelimit-unified-';
const ORG = '0b0b0b0b-3333-4c4c-8d8d-111122223333';
const TOKEN_URL = 'https://auth.test/v1/oauth/token';
const API = 'https://api.test';

interface Outcome extends ClaudeOutcome {
  tag: string;
  discarded: boolean;
}

interface Call {
  n: number;
  at: number;
  slow: boolean;
  headers: Record<string, string>;
}

const answer = (status: number, headers: Record<string, string> = {}, tag = String(status)): Outcome => ({
  status,
  headers,
  tag,
  discarded: false,
  discard() {
    this.discarded = true;
  },
});

const uh = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [`${P}${k}`, v]));
const S = (ms: number) => String(Math.floor(ms / 1000));

function setup(opts: { random?: Random; accessExpiresIn?: number; refreshToken?: string | null } = {}) {
  const clock = new FakeClock();
  const log: string[] = [];
  const resetAt = clock.now() + 2 * 60 * MIN;
  const accountHttp = {
    usage: () => json(200, { five_hour: { utilization: 100, resets_at: new Date(resetAt).toISOString() }, juniper_tide: { arm: 'reset', available: true } }),
    reset: () => json(200, { result: 'reset' }),
    token: (_req: HttpRequest, n: number) => json(200, { access_token: `access-new-${n}-xxxxxxxx`, refresh_token: `refresh-new-${n}-xxxxxxxx`, expires_in: 3600 }),
  };
  const http = scriptedHttp((req, n) => {
    if (req.url === TOKEN_URL) {
      log.push('token');
      return accountHttp.token(req, n);
    }
    if (req.url.startsWith(`${API}/api/oauth/usage`)) {
      log.push('usage');
      return accountHttp.usage();
    }
    if (req.url.endsWith('/reset_rate_limits')) {
      log.push(`reset:${new URL(req.url).pathname.split('/')[3]}`);
      return accountHttp.reset();
    }
    return json(404, {});
  });
  const tokens = new ClaudeTokenManager({
    clock,
    http,
    config: () => ({ tokenUrl: TOKEN_URL, clientId: 'client', refreshMarginMs: 5 * MIN }),
    persist: () => {},
  });
  tokens.set('A', {
    accessToken: 'access-original-xxxx',
    refreshToken: opts.refreshToken === undefined ? 'refresh-original-xxxx' : opts.refreshToken,
    expiresAt: clock.now() + (opts.accessExpiresIn ?? 60 * MIN),
  });
  const lane = new LaneController();
  const usage = new UsageBook();
  const reset = new LimitResetService({ clock, http, tokens, usage });
  const events: ClaudeEvent[] = [];
  const calls: Call[] = [];
  let script: (c: Call) => Outcome = () => answer(200);
  const send: AttemptFn<ClaudeAttempt, Outcome> = async (a) => {
    const c: Call = { n: calls.length + 1, at: clock.now(), slow: a.headers['anthropic-usage-limit'] === 'slow', headers: a.headers };
    calls.push(c);
    log.push(c.slow ? 'upstream:slow' : 'upstream');
    return script(c);
  };
  const deps = { tokens, lane, reset, usage, clock, random: opts.random ?? { next: () => 0.5 }, onEvent: (e: ClaudeEvent) => void events.push(e) };
  const run = createClaudeAttemptInterceptor<ClaudeAttempt, Outcome>(deps)(send);
  const attempt = (over: Partial<ClaudeAttempt> = {}): ClaudeAttempt => ({
    connectionId: 'A',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    features: { lowPriorityMode: true },
    organizationUUID: ORG,
    apiBase: API,
    deadlineAt: null,
    ...over,
  });
  return {
    clock,
    log,
    resetAt,
    http,
    accountHttp,
    tokens,
    lane,
    usage,
    reset,
    events,
    calls,
    deps,
    send,
    attempt,
    run: (a: Partial<ClaudeAttempt> = {}) => drive(clock, run(attempt(a))),
    script: (fn: (c: Call) => Outcome) => (script = fn),
  };
}

/** The 5-hour limit 429 with the lane offer. */
const limit429 = (resetAt: number, extra: Record<string, string> = {}) =>
  answer(429, uh({ status: 'rejected', reset: S(resetAt), '5h-reset': S(resetAt), '5h-utilization': '1', 'slow-offer': 'treatment', ...extra }), 'limit');
const busy429 = (extra: Record<string, string> = {}) => answer(429, uh({ 'slow-status': 'slot_busy', ...extra }), 'busy');
const ok = (slowStatus = 'active', resetAt?: number) =>
  answer(200, uh({ status: 'allowed', 'slow-status': slowStatus, ...(resetAt ? { '5h-reset': S(resetAt) } : {}) }), 'ok');

describe('before the limit (R-CLA-01, 03, 04)', () => {
  it('R-CLA-01: with both features off a limit 429 takes the normal path and no slow header is ever sent', async () => {
    const t = setup();
    t.script(() => limit429(t.resetAt));
    const out = await t.run({ features: {} });
    expect(out.tag).toBe('limit');
    expect(out.discarded).toBe(false);
    expect(t.calls).toHaveLength(1);
    expect(t.calls.every((c) => !c.slow && !('anthropic-usage-limit' in c.headers))).toBe(true);
    expect(t.log.filter((l) => l === 'usage' || l.startsWith('reset'))).toEqual([]);
  });

  it('R-CLA-03: nothing is sent before the first limit 429: no slow header, no usage or reset call', async () => {
    const t = setup();
    const seq = [answer(200), answer(500), answer(529), answer(400), answer(200)];
    t.script((c) => seq[c.n - 1]!);
    for (let i = 0; i < seq.length; i++) await t.run({ features: { lowPriorityMode: true, autoLimitReset: true } });
    expect(t.calls).toHaveLength(5);
    expect(t.calls.some((c) => c.slow)).toBe(false);
    expect(t.log).toEqual(['upstream', 'upstream', 'upstream', 'upstream', 'upstream']);
  });

  it('R-CLA-04: a burst 429 without unified headers is returned for the normal cooldown, without a slow retry', async () => {
    const t = setup();
    t.script(() => answer(429, { 'retry-after': '2' }, 'burst'));
    const out = await t.run({ features: { lowPriorityMode: true, autoLimitReset: true } });
    expect(out.tag).toBe('burst');
    expect(t.calls).toHaveLength(1);
    expect(t.lane.isActive('A', t.clock.now())).toBe(false);
  });
});

describe('the low-priority lane', () => {
  it('R-CLA-02/05/07: the limit 429 is retried at once on the same account with the slow header; the 429 never comes out', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : ok()));
    const first = limit429(t.resetAt);
    t.script((c) => (c.n === 1 ? first : ok()));
    const out = await t.run();
    expect(out.tag).toBe('ok');
    expect(first.discarded).toBe(true);
    expect(t.calls.map((c) => c.slow)).toEqual([false, true]);
    expect(t.calls[1]!.at).toBe(t.calls[0]!.at);
    expect(t.events).toContainEqual({ type: 'lane_entered', connectionId: 'A', until: t.resetAt + 60 * SEC });
  });

  it('R-CLA-06: every request until the reset + 60 s carries the header; after that none does', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : ok()));
    await t.run();
    t.clock.advance(t.resetAt + 59 * SEC - t.clock.now());
    await t.run();
    expect(t.calls.at(-1)!.slow).toBe(true);
    t.clock.advance(1 * SEC);
    await t.run();
    expect(t.calls.at(-1)!.slow).toBe(false);
  });

  it('R-CLA-08: active and not_needed keep the lane', async () => {
    const t = setup();
    const statuses = ['active', 'not_needed', 'active'];
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : ok(statuses[(c.n - 2) % 3])));
    await t.run();
    await t.run();
    await t.run();
    expect(t.calls.map((c) => c.slow)).toEqual([false, true, true, true]);
  });

  it('R-CLA-09: slot_busy with retry-after 5 retries 3.5-6.5 s later; 1 and 900 are clamped to 5 and 600', async () => {
    for (const [r, announced, expected] of [
      [0, '5', 3_500],
      [0.5, '5', 5_000],
      [0.9999999, '5', 6_500],
      [0.5, '1', 5_000],
      [0.5, '900', 600_000],
      [0.5, undefined, 20_000],
    ] as const) {
      const t = setup({ random: { next: () => r } });
      t.script((c) => (c.n === 1 ? limit429(t.resetAt) : c.n === 2 ? busy429(announced ? { 'slow-retry-after': announced } : {}) : ok()));
      const out = await t.run();
      expect(out.tag).toBe('ok');
      expect(t.calls[2]!.at - t.calls[1]!.at).toBe(expected);
      expect(t.calls[2]!.slow).toBe(true);
    }
  });

  it('R-CLA-09: a 529 inside the lane waits and retries too', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : c.n === 2 ? answer(529, {}, 'overloaded') : ok()));
    const out = await t.run();
    expect(out.tag).toBe('ok');
    expect(t.calls[2]!.at - t.calls[1]!.at).toBe(20_000);
  });

  it('R-CLA-10: past the max-wait the lane ends with the busy answer (normal path) and the offer is refused for 10 min', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : busy429({ 'slow-retry-after': '20', 'slow-max-wait': '60' })));
    const start = t.clock.now();
    const out = await t.run();
    expect(out.tag).toBe('busy');
    expect(out.discarded).toBe(false);
    const last = t.calls.at(-1)!;
    expect(last.at - start).toBe(60_000); // the last wait is cut to what is left of the minute
    expect(t.lane.view('A', t.clock.now())).toMatchObject({ state: 'blocked', blockedBy: 'max_wait' });
    expect(t.events).toContainEqual({ type: 'lane_ended', connectionId: 'A', reason: 'max_wait' });
    // A new limit 429 within 10 minutes: no slow retry.
    const before = t.calls.length;
    t.script(() => limit429(t.resetAt));
    t.clock.advance(9 * MIN);
    const again = await t.run();
    expect(again.tag).toBe('limit');
    expect(t.calls.length - before).toBe(1);
    t.clock.advance(1 * MIN);
    t.script((c) => (c.n === before + 2 ? limit429(t.resetAt) : ok()));
    expect((await t.run()).tag).toBe('ok');
    expect(t.calls.at(-1)!.slow).toBe(true);
  });

  it('R-CLA-11: the waits end controlled at the request deadline minus 5 s, never by its timeout', async () => {
    const t = setup();
    const start = t.clock.now();
    const deadlineAt = start + 30 * SEC;
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : busy429({ 'slow-retry-after': '10' })));
    const out = await t.run({ deadlineAt });
    expect(out.tag).toBe('busy');
    expect(t.calls.at(-1)!.at).toBeLessThanOrEqual(deadlineAt - 5 * SEC);
    expect(t.clock.now()).toBeLessThanOrEqual(deadlineAt - 5 * SEC);
    expect(t.lane.view('A', t.clock.now()).blockedBy).toBe('max_wait');
  });

  it('R-CLA-12: weekly_limit, budget_exhausted, off, ineligible end the lane; the next request lacks the header', async () => {
    for (const st of ['weekly_limit', 'budget_exhausted', 'off', 'ineligible']) {
      const t = setup();
      t.script((c) => (c.n === 1 ? limit429(t.resetAt) : c.n === 2 ? answer(429, uh({ status: 'rejected', 'slow-status': st }), st) : answer(200)));
      const out = await t.run();
      expect(out.tag).toBe(st); // continues down the normal cooldown path
      expect(t.events).toContainEqual({ type: 'lane_ended', connectionId: 'A', reason: st });
      await t.run();
      expect(t.calls.at(-1)!.slow).toBe(false);
    }
  });

  it('R-CLA-12: ineligible + overage in use ends the lane as extra_usage; a 5-hour window change ends it too', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : answer(200, uh({ 'slow-status': 'ineligible', 'overage-in-use': 'true' }), 'paid')));
    expect((await t.run()).tag).toBe('paid');
    expect(t.events).toContainEqual({ type: 'lane_ended', connectionId: 'A', reason: 'extra_usage' });
    const w = setup();
    w.script((c) => (c.n === 1 ? limit429(w.resetAt) : ok('active', w.resetAt + 5 * 60 * MIN)));
    await w.run();
    expect(w.events).toContainEqual({ type: 'lane_ended', connectionId: 'A', reason: 'window_changed' });
    await w.run();
    expect(w.calls.at(-1)!.slow).toBe(false);
  });

  it('R-CLA-13: after budget_exhausted, limit 429s before the announced budget reset do not re-enter the lane', async () => {
    const t = setup();
    const budgetReset = t.clock.now() + 2 * 24 * 60 * MIN;
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : answer(429, uh({ status: 'rejected', 'slow-status': 'budget_exhausted', 'slow-budget-reset': S(budgetReset) }), 'be')));
    await t.run();
    t.script(() => limit429(t.clock.now() + 60 * MIN));
    t.clock.advance(24 * 60 * MIN);
    const n = t.calls.length;
    expect((await t.run()).tag).toBe('limit');
    expect(t.calls.length - n).toBe(1);
  });

  it('R-CLA-14: a limit 429 that appears only on an in-attempt 400 retry is still intercepted', async () => {
    const t = setup();
    let inner = 0;
    const retry400 =
      (next: AttemptFn<ClaudeAttempt, Outcome>): AttemptFn<ClaudeAttempt, Outcome> =>
      async (a) => {
        const first = await next(a);
        if (first.status !== 400) return first;
        first.discard();
        return next(a); // e.g. after context editing
      };
    t.script((c) => {
      inner++;
      if (c.n === 1) return answer(400, {}, 'context');
      if (c.n === 2) return limit429(t.resetAt);
      return ok();
    });
    const chain = createClaudeAttemptInterceptor<ClaudeAttempt, Outcome>(t.deps)(retry400(t.send));
    const out = await drive(t.clock, chain(t.attempt()));
    expect(out.tag).toBe('ok');
    expect(inner).toBe(3);
    expect(t.calls.map((c) => c.slow)).toEqual([false, false, true]);
  });

  it('R-CLA-15: lane state is memory only: a restarted controller sends no slow header until another limit 429', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : ok()));
    await t.run();
    const restarted = createClaudeAttemptInterceptor<ClaudeAttempt, Outcome>({ ...t.deps, lane: new LaneController() })(t.send);
    await drive(t.clock, restarted(t.attempt()));
    expect(t.calls.at(-1)!.slow).toBe(false);
  });

  it('switching lowPriorityMode off drops the header at once', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : ok()));
    await t.run();
    await t.run({ features: {} });
    expect(t.calls.at(-1)!.slow).toBe(false);
    await t.run();
    expect(t.calls.at(-1)!.slow).toBe(false);
  });

  it('a client that leaves during a busy wait ends the wait', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : busy429()));
    const ac = new AbortController();
    const p = drive(t.clock, createClaudeAttemptInterceptor<ClaudeAttempt, Outcome>(t.deps)(t.send)(t.attempt({ signal: ac.signal })), { maxMs: 10_000 }).catch((e) => e);
    await new Promise((r) => setImmediate(r));
    ac.abort(new Error('client gone'));
    expect(await p).toMatchObject({ message: 'client gone' });
  });
});

describe('the limit reset', () => {
  it('R-CLA-16/17/18: with both on, usage GET and reset POST come before any slow retry; after "reset" the retry is at normal speed', async () => {
    const t = setup();
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : answer(200)));
    const out = await t.run({ features: { lowPriorityMode: true, autoLimitReset: true } });
    expect(out.status).toBe(200);
    expect(t.log).toEqual(['upstream', 'usage', `reset:${ORG}`, 'upstream']);
    expect(t.calls[1]!.slow).toBe(false);
    expect(t.lane.isActive('A', t.clock.now())).toBe(false);
    expect(t.events.find((e) => e.type === 'limit_reset')).toMatchObject({ outcome: { kind: 'reset' } });
  });

  it('R-CLA-16: when the reset does not succeed, the lane takes over', async () => {
    const t = setup();
    t.accountHttp.reset = () => json(200, { result: 'already_used' });
    t.script((c) => (c.n === 1 ? limit429(t.resetAt) : ok()));
    const out = await t.run({ features: { lowPriorityMode: true, autoLimitReset: true } });
    expect(out.tag).toBe('ok');
    expect(t.log).toEqual(['upstream', 'usage', `reset:${ORG}`, 'upstream:slow']);
  });

  it('R-CLA-19: after already_used, a second limit 429 before next_available_at makes no usage or reset call', async () => {
    const t = setup();
    t.accountHttp.reset = () => json(200, { result: 'already_used' });
    t.script(() => limit429(t.resetAt));
    await t.run({ features: { autoLimitReset: true } });
    t.clock.advance(3 * 24 * 60 * MIN);
    const out = await t.run({ features: { autoLimitReset: true } });
    expect(out.tag).toBe('limit');
    expect(t.log.filter((l) => l !== 'token')).toEqual(['upstream', 'usage', `reset:${ORG}`, 'upstream']);
  });

  it('R-CLA-20: after a failed reset POST no reset is tried again within 15 minutes', async () => {
    const t = setup();
    t.accountHttp.reset = () => json(500, { error: 'boom' });
    t.script(() => limit429(t.resetAt));
    const out = await t.run({ features: { autoLimitReset: true } });
    expect(out.tag).toBe('limit'); // the limit 429 takes the normal path
    t.clock.advance(14 * MIN);
    await t.run({ features: { autoLimitReset: true } });
    expect(t.log.filter((l) => l.startsWith('reset'))).toHaveLength(1);
    t.clock.advance(1 * MIN);
    await t.run({ features: { autoLimitReset: true } });
    expect(t.log.filter((l) => l.startsWith('reset'))).toHaveLength(2);
  });

  it('R-CLA-21: many limit 429s in a week make at most one reset call', async () => {
    const t = setup();
    t.script((c) => (c.n % 2 === 1 ? limit429(t.resetAt) : answer(200)));
    for (let h = 0; h < 7 * 24; h += 6) {
      await t.run({ features: { autoLimitReset: true } });
      t.clock.advance(6 * 60 * MIN);
    }
    expect(t.log.filter((l) => l.startsWith('reset'))).toHaveLength(1);
  });
});

describe('tokens', () => {
  it('an expired access token is refreshed once before the request, which goes out with the new bearer', async () => {
    const t = setup({ accessExpiresIn: -1 });
    await t.run();
    expect(t.log).toEqual(['token', 'upstream']);
    expect(t.calls[0]!.headers.authorization).toBe('Bearer access-new-1-xxxxxxxx');
  });

  it('a 401 refreshes once and retries; a second 401 is returned for the normal path', async () => {
    const t = setup();
    t.script((c) => (c.n <= 2 ? answer(401, {}, 'unauth') : answer(200)));
    const out = await t.run();
    expect(out.tag).toBe('unauth');
    expect(t.calls.map((c) => c.headers.authorization)).toEqual(['Bearer access-original-xxxx', 'Bearer access-new-1-xxxxxxxx']);
    expect(t.events).toContainEqual({ type: 'token_refreshed_after_401', connectionId: 'A' });
    t.script(() => answer(200));
    expect((await t.run()).status).toBe(200);
  });

  it('invalid_grant after a 401 throws an `expired` ClaudeTokenError (the connection shows "Sign in again")', async () => {
    const t = setup();
    t.accountHttp.token = () => json(400, { error: 'invalid_grant' });
    const first = answer(401, {}, 'unauth');
    t.script(() => first);
    const err = await t.run().catch((e) => e);
    expect(err).toBeInstanceOf(ClaudeTokenError);
    expect(err.kind).toBe('expired');
    expect(first.discarded).toBe(true);
    const again = await t.run().catch((e) => e);
    expect(again.kind).toBe('expired');
    expect(t.calls).toHaveLength(1); // an expired account sends nothing more
  });

  it('a transient refresh failure after a 401 returns the 401 for the normal path', async () => {
    const t = setup();
    t.accountHttp.token = () => json(503, {});
    t.script(() => answer(401, {}, 'unauth'));
    const out = await t.run();
    expect(out.tag).toBe('unauth');
    expect(out.discarded).toBe(false);
  });

  it('no usable token before sending: transient is thrown with its retry time, nothing is sent', async () => {
    const t = setup({ accessExpiresIn: -1 });
    t.accountHttp.token = () => json(502, {});
    const err = await t.run().catch((e) => e);
    expect(err).toMatchObject({ kind: 'transient', retryAt: t.clock.now() + 30 * SEC });
    expect(t.calls).toHaveLength(0);
  });
});

describe('headers and usage', () => {
  it('sets the bearer and the OAuth beta, drops any api key, and never forwards a client\'s slow header outside the lane', async () => {
    const t = setup();
    await t.run({ headers: { 'x-api-key': 'sk-client', 'anthropic-beta': 'tools-2024', 'anthropic-usage-limit': 'slow' } });
    const h = t.calls[0]!.headers;
    expect(h.authorization).toBe('Bearer access-original-xxxx');
    expect(h['x-api-key']).toBeUndefined();
    expect(h['anthropic-beta']).toBe('tools-2024,oauth-2025-04-20');
    expect(h['anthropic-usage-limit']).toBeUndefined();
  });

  it('every answer\'s unified headers feed the usage windows', async () => {
    const t = setup();
    t.script(() => answer(200, uh({ '5h-utilization': '0.25', '5h-reset': S(t.resetAt), '7d-utilization': '0.5', '7d-reset': S(t.resetAt + 86_400_000) })));
    await t.run();
    expect(t.usage.headroom('A', t.clock.now())).toMatchObject({ remaining: 0.5, fiveHour: { remaining: 0.75 } });
  });
});
