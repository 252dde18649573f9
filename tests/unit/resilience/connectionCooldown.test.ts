// Connection cooldown transitions (§2.1, 2.3-2.5, 2.8) and the retry-delay precedence chain (§2.2).
import { describe, expect, it } from 'vitest';
import type { CooldownRule } from '../../../src/main/engine/resilience/classifyFailure';
import {
  backoffMs,
  clearCooldown,
  connectionStatusAt,
  EXPIRED_RETRY_MAX,
  onConnectionFailure,
  onConnectionSuccess,
  operatorReset,
  rateLimitCooldown,
  type CooldownSettings,
  type FailureEvent,
} from '../../../src/main/engine/resilience/connectionCooldown';
import {
  connectionRetrySeconds,
  MAX_HINT_COOLDOWN_MS,
  providerRetrySeconds,
  rateLimitRetryDelay,
  type RetryDelay,
} from '../../../src/main/engine/resilience/retryDelay';
import { emptyHealth, type ConnectionHealthState } from '../../../src/main/engine/store/connectionsRepo';
import { FakeClock } from '../../support/fakeClock';

const API_KEY: CooldownSettings = { baseMs: 3_000, maxBackoffSteps: 10, coolOnStall: false };
const OAUTH: CooldownSettings = { ...API_KEY, baseMs: 5_000 };

function event(rule: CooldownRule, now: number, over: Partial<FailureEvent> = {}): FailureEvent {
  return {
    rule,
    reason: 'rate_limit_exceeded',
    status: 429,
    message: 'slow down',
    now,
    delay: { source: 'backoff' },
    concurrent: false,
    disableCooling: false,
    ...over,
  };
}

const fail = (h: ConnectionHealthState, e: FailureEvent, s = API_KEY) => onConnectionFailure(h, e, s).health;
const remaining = (h: ConnectionHealthState, now: number) => (h.rateLimitedUntil ?? now) - now;

describe('connection cooldown: base and backoff', () => {
  it('cools an API-key connection 3 s and an OAuth one 5 s on the first failure, at backoff level 1', () => {
    const h = fail(emptyHealth(), event({ kind: 'backoff' }, 0));
    expect(h).toMatchObject({ testStatus: 'unavailable', rateLimitedUntil: 3_000, backoffLevel: 1, lastErrorType: 'rate_limit_exceeded', errorCode: '429' });
    expect(fail(emptyHealth(), event({ kind: 'backoff' }, 0), OAUTH).rateLimitedUntil).toBe(5_000);
  });

  it('doubles after each expiry: 3 s, 6 s, 12 s, 24 s with the level counting up', () => {
    const clock = new FakeClock(0);
    let h = emptyHealth();
    const seen: [number, number][] = [];
    for (let i = 0; i < 4; i++) {
      h = fail(h, event({ kind: 'rate_limit' }, clock.now()));
      seen.push([remaining(h, clock.now()), h.backoffLevel]);
      clock.advance(remaining(h, clock.now()));
      expect(connectionStatusAt(h, clock.now())).toBe('active'); // lazy eligibility: no timer, no clear
    }
    expect(seen).toEqual([
      [3_000, 1],
      [6_000, 2],
      [12_000, 3],
      [24_000, 4],
    ]);
  });

  it('stops doubling after maxBackoffSteps', () => {
    expect(backoffMs(3_000, 50, 10)).toBe(3_000 * 1024);
    const s = { ...API_KEY, maxBackoffSteps: 2 };
    let h = emptyHealth();
    let now = 0;
    const ms: number[] = [];
    for (let i = 0; i < 5; i++) {
      h = fail(h, event({ kind: 'backoff' }, now), s);
      ms.push(remaining(h, now));
      now = h.rateLimitedUntil!;
    }
    expect(ms).toEqual([3_000, 6_000, 12_000, 12_000, 12_000]);
    expect(h.backoffLevel).toBe(3);
  });

  it('stampede: failures of attempts already in flight neither add a step nor extend the cooldown', () => {
    let h = fail(emptyHealth(), event({ kind: 'rate_limit' }, 0));
    for (let i = 1; i <= 9; i++) {
      const next = fail(h, event({ kind: 'rate_limit' }, i * 100, { concurrent: true }));
      expect(next).toBe(h);
      h = next;
    }
    expect(h).toMatchObject({ backoffLevel: 1, rateLimitedUntil: 3_000 });
  });

  it('stampede: an in-flight failure whose upstream hint asks for longer extends, without a step', () => {
    const h = fail(emptyHealth(), event({ kind: 'rate_limit' }, 0));
    const next = fail(h, event({ kind: 'rate_limit' }, 10, { concurrent: true, delay: { source: 'hint', ms: 30_000 } }));
    expect(next).toMatchObject({ rateLimitedUntil: 30_010, backoffLevel: 1 });
  });

  it('a shorter cooldown never shortens a longer one already running', () => {
    const h = fail(emptyHealth(), event({ kind: 'rate_limit' }, 0, { delay: { source: 'hint', ms: 60_000 } }));
    expect(fail(h, event({ kind: 'fixed', ms: 1_000 }, 5, { reason: 'concurrency_limited' })).rateLimitedUntil).toBe(60_000);
  });
});

describe('connection cooldown: concurrency limits and stalls', () => {
  it('a concurrency limit rests the key for its fixed time and leaves backoffLevel alone', () => {
    const h0 = { ...emptyHealth(), backoffLevel: 2 };
    const h = fail(h0, event({ kind: 'fixed', ms: 1_000 }, 0, { reason: 'concurrency_limited' }));
    expect(h).toMatchObject({ rateLimitedUntil: 1_000, backoffLevel: 2, lastErrorType: 'concurrency_limited' });
  });

  it('a stall records the error but sets no cooldown', () => {
    const h = fail(emptyHealth(), event({ kind: 'stall' }, 0, { reason: 'stream_stall', status: null, message: 'idle' }));
    expect(h).toMatchObject({ rateLimitedUntil: null, lastErrorType: 'stream_stall', errorCode: 'stream_stall', backoffLevel: 0 });
    expect(connectionStatusAt(h, 0)).toBe('active');
  });

  it('with streamStallCooldown.enabled a stall cools with the normal backoff', () => {
    const h = fail(emptyHealth(), event({ kind: 'stall' }, 0, { reason: 'stream_stall', status: null }), { ...API_KEY, coolOnStall: true });
    expect(h).toMatchObject({ rateLimitedUntil: 3_000, backoffLevel: 1 });
  });

  it('provider-level errors are recorded without cooling the connection', () => {
    const h = fail(emptyHealth(), event({ kind: 'record' }, 7, { reason: 'server_error', status: 503, message: 'busy' }));
    expect(h).toMatchObject({ rateLimitedUntil: null, lastError: 'busy', errorCode: '503', lastErrorAt: 7 });
  });

  it('a connection that opted out of cooling only records the error and reports the cooldown it would have had', () => {
    const out = onConnectionFailure(emptyHealth(), event({ kind: 'rate_limit' }, 0, { disableCooling: true }), API_KEY);
    expect(out.coolMs).toBe(3_000);
    expect(out.health).toMatchObject({ rateLimitedUntil: null, backoffLevel: 0, lastErrorType: 'rate_limit_exceeded' });
  });
});

describe('connection cooldown: terminal states', () => {
  it.each(['banned', 'credits_exhausted'] as const)('%s is set by its body and never overwritten by a later cooldown', (status) => {
    const h = fail(emptyHealth(), event({ kind: 'terminal', status }, 0, { reason: status }));
    expect(h).toMatchObject({ testStatus: status, rateLimitedUntil: null });
    const after = fail(h, event({ kind: 'rate_limit' }, 10, { delay: { source: 'hint', ms: 1_000 } }));
    expect(after).toBe(h);
    expect(connectionStatusAt(after, 5_000)).toBe(status);
  });

  it(`credential rejections cool with backoff, then turn the connection expired at ${EXPIRED_RETRY_MAX}`, () => {
    let h = emptyHealth();
    let now = 0;
    const statuses: string[] = [];
    for (let i = 0; i < EXPIRED_RETRY_MAX; i++) {
      h = fail(h, event({ kind: 'credential' }, now, { reason: 'auth_error', status: 401 }));
      statuses.push(connectionStatusAt(h, now));
      now = (h.rateLimitedUntil ?? now) + 1;
    }
    expect(statuses).toEqual(['cooling', 'cooling', 'expired']);
    expect(h.expiredRetries).toBe(EXPIRED_RETRY_MAX);
  });

  it('concurrent credential rejections count once', () => {
    let h = fail(emptyHealth(), event({ kind: 'credential' }, 0, { status: 401 }));
    for (let i = 0; i < 5; i++) h = fail(h, event({ kind: 'credential' }, 1, { status: 401, concurrent: true }));
    expect(h.expiredRetries).toBe(1);
    expect(connectionStatusAt(h, 1)).toBe('cooling');
  });

  it('a success clears every error field (clearAccountError) but not a terminal state', () => {
    const cooled = fail(fail(emptyHealth(), event({ kind: 'credential' }, 0, { status: 401 })), event({ kind: 'backoff' }, 5_000));
    expect(onConnectionSuccess(cooled)).toMatchObject({
      testStatus: 'active',
      rateLimitedUntil: null,
      backoffLevel: 0,
      lastError: null,
      lastErrorType: null,
      errorCode: null,
      expiredRetries: 0,
    });
    const clean = { ...emptyHealth(), testStatus: 'active' as const };
    expect(onConnectionSuccess(clean)).toBe(clean);
    const banned = fail(emptyHealth(), event({ kind: 'terminal', status: 'banned' }, 0));
    expect(onConnectionSuccess(banned)).toBe(banned);
  });

  it('the cooldown manager’s clear lifts cooldowns and leaves terminal states; an operator reset lifts both', () => {
    const cooled = fail(emptyHealth(), event({ kind: 'backoff' }, 0));
    expect(clearCooldown(cooled)).toMatchObject({ rateLimitedUntil: null, backoffLevel: 0, testStatus: 'active' });
    const expired = { ...emptyHealth(), testStatus: 'expired' as const, expiredRetries: 3 };
    expect(clearCooldown(expired)).toBe(expired);
    expect(operatorReset(expired)).toMatchObject({ testStatus: 'active', expiredRetries: 0 });
  });
});

describe('retry delay precedence (R-CC-12)', () => {
  const all = { hint: { ms: 7_000, source: 'retry-after' as const }, useUpstreamRetryHints: true, connectionSeconds: 45, providerSeconds: 120, globalSeconds: 200 };

  it('hint > per-connection > per-provider > global > backoff', () => {
    const chain: RetryDelay[] = [
      rateLimitRetryDelay(all),
      rateLimitRetryDelay({ ...all, hint: null }),
      rateLimitRetryDelay({ ...all, hint: null, connectionSeconds: null }),
      rateLimitRetryDelay({ ...all, hint: null, connectionSeconds: null, providerSeconds: null }),
      rateLimitRetryDelay({ ...all, hint: null, connectionSeconds: null, providerSeconds: null, globalSeconds: null }),
    ];
    expect(chain).toEqual([
      { source: 'hint', ms: 7_000 },
      { source: 'connection', ms: 45_000 },
      { source: 'provider', ms: 120_000 },
      { source: 'global', ms: 200_000 },
      { source: 'backoff' },
    ]);
  });

  it('ignores hints when the setting is off, a zero hint, and caps a huge hint at a day', () => {
    expect(rateLimitRetryDelay({ ...all, useUpstreamRetryHints: false }).source).toBe('connection');
    expect(rateLimitRetryDelay({ ...all, hint: { ms: 0, source: 'retry-after' } }).source).toBe('connection');
    expect(rateLimitRetryDelay({ ...all, hint: { ms: 86_400_000 * 3, source: 'retry-after' } })).toEqual({ source: 'hint', ms: MAX_HINT_COOLDOWN_MS });
  });

  it('a configured delay replaces the backoff and resets backoffLevel to 0; a hint takes a step', () => {
    const h0 = { ...emptyHealth(), backoffLevel: 4 };
    expect(fail(h0, event({ kind: 'rate_limit' }, 0, { delay: { source: 'provider', ms: 120_000 } }))).toMatchObject({ rateLimitedUntil: 120_000, backoffLevel: 0 });
    expect(fail(h0, event({ kind: 'rate_limit' }, 0, { delay: { source: 'connection', ms: 45_000 } })).backoffLevel).toBe(0);
    expect(fail(h0, event({ kind: 'rate_limit' }, 0, { delay: { source: 'hint', ms: 7_000 } }))).toMatchObject({ rateLimitedUntil: 7_000, backoffLevel: 5 });
  });

  it('never applies to terminal states (R-CC-13)', () => {
    const h = fail(emptyHealth(), event({ kind: 'terminal', status: 'credits_exhausted' }, 0, { delay: { source: 'provider', ms: 120_000 } }));
    expect(h).toMatchObject({ testStatus: 'credits_exhausted', rateLimitedUntil: null });
  });

  it('reads the per-connection and per-provider values defensively', () => {
    expect(connectionRetrySeconds({ providerSpecificData: { rotationOverrides: { rateLimitResetSeconds: 45 } } })).toBe(45);
    expect(connectionRetrySeconds({ providerSpecificData: { rotationOverrides: { rateLimitResetSeconds: 99_999 } } })).toBe(21_600);
    expect(connectionRetrySeconds({ providerSpecificData: { rotationOverrides: { rateLimitResetSeconds: 'soon' as unknown as number } } })).toBeNull();
    expect(connectionRetrySeconds({ providerSpecificData: {} })).toBeNull();
    expect(providerRetrySeconds([{ provider: 'glm', rateLimitCooldownSeconds: 120 }], 'glm')).toBe(120);
    expect(providerRetrySeconds([{ provider: 'glm', rateLimitCooldownSeconds: 120 }], 'kimi')).toBeNull();
  });
});

describe('the rate-limit cooldown narrowed to a model (rateLimitCooldown)', () => {
  it('follows the connection rules: base · 2^level, a hint takes a step, a configured delay resets the level', () => {
    const clock = new FakeClock();
    let st = { until: null as number | null, level: 0 };
    const lengths: number[] = [];
    for (let i = 0; i < 3; i++) {
      const out = rateLimitCooldown(st, { now: clock.now(), delay: { source: 'backoff' }, concurrent: false }, API_KEY)!;
      lengths.push(out.state.until! - clock.now());
      st = out.state;
      clock.advance(out.ms);
    }
    expect(lengths).toEqual([3_000, 6_000, 12_000]);
    expect(st.level).toBe(3);
    const hinted = rateLimitCooldown(st, { now: clock.now(), delay: { source: 'hint', ms: 3_600_000 }, concurrent: false }, API_KEY)!;
    expect(hinted).toMatchObject({ ms: 3_600_000, state: { level: 4 } });
    const configured = rateLimitCooldown(st, { now: clock.now(), delay: { source: 'provider', ms: 45_000 }, concurrent: false }, API_KEY)!;
    expect(configured.state).toEqual({ until: clock.now() + 45_000, level: 0 });
  });

  it('stampede: an attempt already in flight changes nothing, unless its hint asks for longer', () => {
    const st = { until: 10_000, level: 1 };
    expect(rateLimitCooldown(st, { now: 1_000, delay: { source: 'backoff' }, concurrent: true }, API_KEY)).toBeNull();
    expect(rateLimitCooldown(st, { now: 1_000, delay: { source: 'hint', ms: 60_000 }, concurrent: true }, API_KEY)!.state).toEqual({ until: 61_000, level: 1 });
  });
});
