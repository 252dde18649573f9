// The same-target retry budget: the pure decision (routing/retryBudget.ts) and one request's
// retries on the fake clock (proxy/sameTargetRetry.ts): when a failed attempt is sent again to the
// same connection and model after a short wait, and when the request moves on at once.
import { describe, expect, it } from 'vitest';
import type { AttemptEntry } from '../../../src/shared/model';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import type { AttemptVerdict, Exclusion, UpstreamFailure } from '../../../src/main/engine/resilience/port';
import { decideRetry, type RetryInput } from '../../../src/main/engine/routing/retryBudget';
import type { Target } from '../../../src/main/engine/routing/target';
import { SameTargetRetries } from '../../../src/main/engine/proxy/sameTargetRetry';
import { connectionRecord } from '../../support/builders';
import { FakeClock } from '../../support/fakeClock';

const NOW = 1_000_000;
const SETTINGS = { maxRetries: 1, maxHintedWaitMs: 5_000, unhintedDelayMs: 750 };
const hinted = (ms: number, reason = 'rate_limit_exceeded'): RetryInput['verdict'] => ({ failover: true, reason, hint: { ms, source: 'retry-after' } });
const unhinted = (reason = 'server_error'): RetryInput['verdict'] => ({ failover: true, reason, hint: null });
const lock = (ms: number, cause = 'rate_limit_exceeded'): Exclusion => ({ reason: 'model_lockout', until: NOW + ms, detail: null, cause });

const input = (over: Partial<RetryInput> = {}): RetryInput => ({
  settings: SETTINGS,
  retriesTaken: 0,
  status: 429,
  verdict: hinted(1_000),
  exclusion: lock(1_000),
  now: NOW,
  committed: false,
  attemptsLeft: 3,
  sameModelNext: false,
  budgetLeftMs: 60_000,
  ...over,
});

describe('decideRetry', () => {
  it('a 429 with Retry-After: 1 is retried after the hinted second (the hint set the lock, so both agree)', () => {
    expect(decideRetry(input())).toEqual({ retry: true, waitMs: 1_000, why: 'hinted' });
  });

  it('a hint exactly at the longest hinted wait is taken; one millisecond more fails over at once', () => {
    expect(decideRetry(input({ verdict: hinted(5_000), exclusion: lock(5_000) }))).toEqual({ retry: true, waitMs: 5_000, why: 'hinted' });
    expect(decideRetry(input({ verdict: hinted(5_001), exclusion: lock(5_001) }))).toEqual({ retry: false, why: 'hint_too_long' });
  });

  it('a plain 500 or 503 without a hint is retried after the short default delay', () => {
    for (const status of [500, 503]) {
      expect(decideRetry(input({ status, verdict: unhinted(), exclusion: null }))).toEqual({ retry: true, waitMs: 750, why: 'unhinted' });
    }
  });

  it('without a hint, a 429, a 504 or a transport failure is not retried on the same target', () => {
    expect(decideRetry(input({ status: 429, verdict: unhinted('rate_limit_exceeded'), exclusion: lock(3_000) })).retry).toBe(false);
    expect(decideRetry(input({ status: 504, verdict: unhinted('timeout'), exclusion: null }))).toEqual({ retry: false, why: 'no_hint' });
    expect(decideRetry(input({ status: null, verdict: unhinted('network'), exclusion: null }))).toEqual({ retry: false, why: 'no_hint' });
  });

  it('an unhinted delay of 0 turns the unhinted retry off, keeping the hinted one', () => {
    const settings = { ...SETTINGS, unhintedDelayMs: 0 };
    expect(decideRetry(input({ settings, status: 500, verdict: unhinted(), exclusion: null }))).toEqual({ retry: false, why: 'no_hint' });
    expect(decideRetry(input({ settings })).retry).toBe(true);
  });

  it('the hold our bookkeeping put on the target is waited out when it fits, and refuses the retry when it does not', () => {
    // The hint said 1 s but the target is held 2 s: the retry waits 2 s (it would be skipped sooner).
    expect(decideRetry(input({ exclusion: lock(2_000) }))).toEqual({ retry: true, waitMs: 2_000, why: 'hinted' });
    // A 503 that opened the breaker for 30 s: the key is known bad for longer than a retry may wait.
    const open: Exclusion = { reason: 'circuit_open', until: NOW + 30_000, detail: null };
    expect(decideRetry(input({ status: 503, verdict: unhinted(), exclusion: open }))).toEqual({ retry: false, why: 'held_back' });
    // An ejection of 10 s after a hinted 503: likewise.
    expect(decideRetry(input({ status: 503, verdict: hinted(1_000, 'server_error'), exclusion: { reason: 'cooling_down', until: NOW + 10_000, detail: null, cause: 'outlier_ejected' } }))).toEqual({ retry: false, why: 'held_back' });
    // A terminal state never lifts by itself.
    expect(decideRetry(input({ exclusion: { reason: 'terminal', until: null, detail: 'banned' } }))).toEqual({ retry: false, why: 'held_back' });
  });

  it.each([
    ['after something reached the client', { committed: true }, 'committed'],
    ['after a failure that does not fail over (a bad request)', { verdict: { failover: false, reason: 'bad_request', hint: null } }, 'not_retryable'],
    ['when the budget is 0', { settings: { ...SETTINGS, maxRetries: 0 } }, 'off'],
    ['once this target used its retries', { retriesTaken: 1 }, 'spent'],
    ['when the attempt budget is used up', { attemptsLeft: 0 }, 'attempts'],
    ['when the next target serves the same model (another key)', { sameModelNext: true }, 'same_model_next'],
    ['past the request\'s wait budget', { budgetLeftMs: 999 }, 'budget'],
    ['on quota exhaustion, even with a short hint', { verdict: hinted(2_000, 'quota_exhausted'), exclusion: lock(2_000, 'quota_exhausted') }, 'not_transient'],
  ] as const)('no retry %s', (_, over, why) => {
    expect(decideRetry(input(over as Partial<RetryInput>))).toEqual({ retry: false, why });
  });

  it('a budget of 2 allows a second retry of the same target', () => {
    expect(decideRetry(input({ settings: { ...SETTINGS, maxRetries: 2 }, retriesTaken: 1 })).retry).toBe(true);
  });
});

describe('SameTargetRetries (one request, fake clock)', () => {
  const clock = new FakeClock(NOW);
  const log = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => clock.now() });
  const target = (id: string, model: string): Target => ({ conn: connectionRecord({ id, name: id }), model, requestedModel: 'pool' });
  const failure = (status: number, headers: Record<string, string> = {}): UpstreamFailure => ({ kind: 'http', status, headers, body: '', message: `${status}` });
  const verdict = (hintMs: number | null): AttemptVerdict => ({ failover: true, reason: hintMs === null ? 'server_error' : 'rate_limit_exceeded', retryAfterMs: hintMs, hint: hintMs === null ? null : { ms: hintMs, source: 'retry-after' } });
  const entry = (): AttemptEntry => ({ attempt: 1, connectionId: 'x', connectionName: 'x', provider: 'p', model: 'm', startedAt: 0, status: null, errorClass: null, errorCode: null, errorMessage: null, ttfbMs: null, durationMs: null, failedOver: false, queuedMs: 0 });
  const held = new Map<Target, Exclusion>();
  const resilience = { exclusion: (t: Target) => held.get(t) ?? null };
  const walk = { committed: false, roundAttempts: 1, spent: new Set<Target>() };

  it('plans one retry, waits the hinted time on the clock, and marks the retrying attempt', async () => {
    const a = target('a', 'model-x');
    const b = target('b', 'model-y');
    const r = new SameTargetRetries({ resilience, clock, log }, SETTINGS, [a, b], 4, 60_000, 'req-1');
    expect(r.offer(a, failure(429), verdict(1_000), walk)).toBe(true);
    expect(r.planned(a)).toBe(true);
    let woke = false;
    const waited = r.wait(new AbortController().signal).then((ok) => (woke = ok));
    clock.advance(999);
    await Promise.resolve();
    expect(woke).toBe(false);
    clock.advance(1);
    await waited;
    expect(woke).toBe(true);
    const e = entry();
    r.mark(a, e);
    expect(e.retry).toEqual({ waitedMs: 1_000, why: 'hinted', afterStatus: 429 });
    // One retry per target: the retry's own failure moves on.
    expect(r.offer(a, failure(429), verdict(1_000), walk)).toBe(false);
    expect(r.planned(a)).toBe(false);
  });

  it('does not wait when the next target is another key of the same model', () => {
    const a = target('a', 'model-x');
    const a2 = target('a2', 'model-x');
    const r = new SameTargetRetries({ resilience, clock, log }, SETTINGS, [a, a2], 4, 60_000, 'req-2');
    expect(r.offer(a, failure(500), verdict(null), walk)).toBe(false);
    // ... unless that key is held back or already failed: then the same model is only here.
    held.set(a2, { reason: 'cooling_down', until: clock.now() + 60_000, detail: null });
    expect(r.offer(a, failure(500), verdict(null), walk)).toBe(true);
    held.clear();
  });

  it('counts the retry against the attempt budget', () => {
    const a = target('a', 'model-x');
    const r = new SameTargetRetries({ resilience, clock, log }, SETTINGS, [a], 2, 60_000, 'req-3');
    expect(r.offer(a, failure(503), verdict(null), { ...walk, roundAttempts: 2 })).toBe(false);
  });

  it('a client that leaves during the wait ends it at once, with nothing planned any more', async () => {
    const a = target('a', 'model-x');
    const r = new SameTargetRetries({ resilience, clock, log }, SETTINGS, [a], 4, 60_000, 'req-4');
    expect(r.offer(a, failure(503), verdict(null), walk)).toBe(true);
    const ctl = new AbortController();
    const waited = r.wait(ctl.signal);
    ctl.abort(new Error('client gone'));
    expect(await waited).toBe(false);
    expect(r.planned(a)).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('an attempt on another target drops the plan (its entry is not marked)', () => {
    const a = target('a', 'model-x');
    const b = target('b', 'model-y');
    const r = new SameTargetRetries({ resilience, clock, log }, SETTINGS, [a, b], 4, 60_000, 'req-5');
    expect(r.offer(a, failure(503), verdict(null), walk)).toBe(true);
    const e = entry();
    r.mark(b, e);
    expect(e.retry).toBeUndefined();
    expect(r.planned(a)).toBe(false);
  });
});
